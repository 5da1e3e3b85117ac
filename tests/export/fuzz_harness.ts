/**
 * Fuzzing the scenario validator and the OCaml exporter (the path `deno task diff` exports
 * scenarios through: `exportOCaml`, which validates first, then again with a larger callback log)
 * with mutants of the library's scenarios, shared by the CI campaign (fuzz_campaign_test.ts) and
 * the long one (`deno task fuzz --target scenario`).
 *
 * A scenario is plain data but for its `threads` Map: each seed is taken as JSON (threads as an
 * array of pairs, made a Map again after mutation when it still is one), and mutated where it
 * matters: numbers (0, −1, fractions, −0, NaN, ±Infinity, 2^31, 2^53 and beyond, 1e308, the
 * smallest double, the value ± 1 or × 1000), strings (hostile text: quotes, comment and quoted
 * string delimiters, backslashes, newlines, NUL, lone surrogates, OCaml code, 10,000 characters,
 * another name of the scenario), structure (keys removed, added or set to null, an array, an
 * object, a string or a number; array elements duplicated, dropped or swapped; a step's kind
 * changed; steps nested 10 to 2,000 deep; 5,000 copies of a step; subtrees from other scenarios).
 *
 * Every case must end with a program or with `ScenarioError` / `ExportError` (anything else is an
 * escape, {@linkcode ScenarioFuzzFailure}); a program must lex as OCaml (tests/export/ocaml_lexer.ts)
 * with every hostile text inside a literal or a comment (a marker of them never reaches the code),
 * and its size is bounded per byte of the scenario's JSON and in all ({@linkcode programBound}).
 * @module
 */
import { ExportError, exportOCaml } from "../../lib/export/mod.ts";
import { MAX_PROGRAM_CHARS } from "../../lib/export/ocaml.ts";
import { type Scenario, ScenarioError, validateScenario } from "../../lib/scenario/mod.ts";
import { scenarios } from "../../scenarios/index.ts";
import { Rng } from "../prng.ts";
import { scanOCaml } from "./ocaml_lexer.ts";

/** Most program characters: `[base, per byte of the scenario's JSON]`, and at most
 * `MAX_PROGRAM_CHARS` of steps' code plus {@linkcode PRELUDE_CHARS} whatever the size. A drawn
 * size is a `match` over up to 257 sizes where the block is allocated: about 110 KB of OCaml for
 * a geometric allocation step of 140 characters of JSON. */
export const PROGRAM_BOUND: [number, number] = [1 << 18, 4096];
/** Room for what the program holds besides the steps' code (prelude, harness, tables). */
export const PRELUDE_CHARS = 1 << 20;

/** The marker hostile strings hold: it may appear in the program only inside literals or
 * comments (no identifier can hold its space and brackets, so it is never a name made safe). */
export const MARKER = "<PWN 3D>";

// deno-lint-ignore no-explicit-any
type Json = any;

/** A seed: a library scenario as JSON (threads as an array of pairs). */
export interface ScenarioSeed {
  name: string;
  json: Json;
  /** Size of its JSON text. */
  size: number;
}

let cache: ScenarioSeed[] | undefined;

/** The library's scenarios as seeds (made once). */
export function scenarioSeeds(): ScenarioSeed[] {
  cache ??= scenarios.map((sc) => {
    const text = JSON.stringify({ ...sc, threads: [...sc.threads] });
    return { name: sc.settings.name, json: JSON.parse(text), size: text.length };
  });
  return cache;
}

/** The scenario a (mutated) JSON stands for: `threads` a Map again when it is a list of pairs. */
export function scenarioOf(json: Json): Scenario {
  if (json === null || typeof json !== "object") return json;
  const t = json.threads;
  if (Array.isArray(t) && t.every((p) => Array.isArray(p) && p.length === 2)) {
    return { ...json, threads: new Map(t) };
  }
  return json;
}

const HOSTILE_STRINGS = [
  "",
  '"',
  "\\",
  "*)",
  "(*",
  "{|",
  "|}",
  "{x|",
  "|x}",
  "\n",
  "\r\n",
  "\u0000",
  "\ud800",
  "\udfff\ud800",
  "\u2028",
  "é",
  "\u{1F600}",
  "%s%d%!",
  '"; let () = Sys.command "touch /tmp/pwned" |> ignore; let _ = "',
  "*) let () = exit 3 (*",
  "|} let () = exit 4 {|",
  "'",
  "`",
  "$(id)",
  "..",
  "a/b",
  "-rf",
  ".hidden",
  "Ut.f@ut.ml:1:0-9",
  "f@a.ml:1:2-3\n",
  "main",
  "p1",
];

/** A hostile string holding {@linkcode MARKER}, from `rng`. */
function hostileString(rng: Rng, original: string, names: readonly string[]): string {
  switch (rng.int(6)) {
    case 0:
      return rng.pick(HOSTILE_STRINGS) + MARKER;
    case 1:
      return original + rng.pick(HOSTILE_STRINGS) + MARKER;
    case 2:
      return MARKER + rng.pick(HOSTILE_STRINGS) + original;
    case 3:
      return rng.pick(HOSTILE_STRINGS) + MARKER + "x".repeat(rng.pick([100, 1000, 10_000]));
    case 4: // another name of the scenario: collisions, no marker
      return names.length > 0 ? rng.pick(names) : original;
    default:
      return rng.pick(HOSTILE_STRINGS);
  }
}

const NUMBERS = [
  0,
  -0,
  -1,
  1,
  0.5,
  1.5,
  NaN,
  Infinity,
  -Infinity,
  2 ** 31,
  2 ** 32,
  2 ** 53,
  2 ** 53 + 2,
  2 ** 62,
  1e308,
  5e-324,
  Number.MAX_SAFE_INTEGER,
  256,
  257,
  1000,
  1_000_000,
];

/** Paths to every node of `json` (arrays and objects included), with their values. */
function nodes(json: Json): { parent: Json; key: string | number; value: Json }[] {
  const out: { parent: Json; key: string | number; value: Json }[] = [];
  const walk = (v: Json, depth: number) => {
    if (v === null || typeof v !== "object" || depth > 200) return;
    if (Array.isArray(v)) {
      v.forEach((x, i) => {
        out.push({ parent: v, key: i, value: x });
        walk(x, depth + 1);
      });
    } else {
      for (const k of Object.keys(v)) {
        out.push({ parent: v, key: k, value: v[k] });
        walk(v[k], depth + 1);
      }
    }
  };
  walk(json, 0);
  return out;
}

/** Step-like objects of `json` (objects with a string `kind` and an `at`). */
function steps(json: Json) {
  return nodes(json).filter((n) =>
    n.value !== null && typeof n.value === "object" && typeof n.value.kind === "string" &&
    "at" in n.value
  );
}

const STEP_KINDS = [
  "alloc",
  "allocCombined",
  "unmarshal",
  "gc",
  "poll",
  "spawn",
  "terminate",
  "threadCreate",
  "threadSwitch",
  "threadExit",
  "threadSpawn",
  "yieldTo",
  "threadJoin",
  "threadYield",
  "blocking",
  "attempt",
  "memprofStart",
  "memprofStop",
  "memprofDiscard",
  "call",
  "repeat",
  "when",
  "join",
  "extAlloc",
  "userEvent",
  "release",
  "eventsStart",
  "eventsPause",
  "eventsResume",
  "nonsense",
];

type Mutator = (rng: Rng, json: Json, all: readonly ScenarioSeed[]) => string;

const MUTATORS: [number, string, Mutator][] = [
  [8, "number", (rng, json) => {
    const ns = nodes(json).filter((n) => typeof n.value === "number");
    if (ns.length === 0) return "no number";
    const n = rng.pick(ns);
    const v = rng.chance(0.7)
      ? rng.pick(NUMBERS)
      : rng.pick([n.value + 1, n.value - 1, n.value * 1000, -n.value, n.value / 3]);
    n.parent[n.key] = v;
    return `${String(n.key)} = ${v}`;
  }],
  [8, "string", (rng, json) => {
    const all = nodes(json);
    const ss = all.filter((n) => typeof n.value === "string");
    if (ss.length === 0) return "no string";
    const names = ss.map((n) => n.value as string).filter((s) => s.length < 60);
    const n = rng.pick(ss);
    const v = hostileString(rng, n.value, names);
    n.parent[n.key] = v;
    return `${String(n.key)} = ${JSON.stringify(v.slice(0, 40))}`;
  }],
  [4, "value replaced", (rng, json) => {
    const n = rng.pick(nodes(json));
    const v = rng.pick([null, undefined, [], {}, "x", 42, true, [1, 2], { kind: "x" }]);
    n.parent[n.key] = v;
    return `${String(n.key)} = ${JSON.stringify(v)}`;
  }],
  [3, "key removed or added", (rng, json) => {
    const objs = nodes(json).filter((n) =>
      n.value !== null && typeof n.value === "object" && !Array.isArray(n.value)
    );
    if (objs.length === 0) return "no object";
    const o = rng.pick(objs).value;
    const keys = Object.keys(o);
    if (keys.length > 0 && rng.chance(0.6)) {
      const k = rng.pick(keys);
      delete o[k];
      return `key ${k} removed`;
    }
    const k = rng.pick(["extra", "__proto__", "constructor", "kind", "body", "count", MARKER]);
    o[k] = rng.pick([1, "x", [], {}, null]);
    return `key ${k} added`;
  }],
  [4, "array", (rng, json) => {
    const arrs = nodes(json).filter((n) => Array.isArray(n.value) && n.value.length > 0);
    if (arrs.length === 0) return "no array";
    const a = rng.pick(arrs).value as Json[];
    const i = rng.int(a.length), j = rng.int(a.length);
    switch (rng.int(4)) {
      case 0:
        // The same object twice, as a module may alias steps (and a clone of a subtree nested
        // 2,000 deep would overflow the stack).
        a.splice(i, 0, a[j]);
        return `element ${j} duplicated at ${i}`;
      case 1:
        a.splice(i, 1);
        return `element ${i} dropped`;
      case 2:
        [a[i], a[j]] = [a[j], a[i]];
        return `elements ${i} and ${j} swapped`;
      default: {
        // Long lists: 150,000 copies of a number (more than a call may take as arguments).
        // At most 4 MB more of JSON: inputs stay under 10 MB.
        const each = JSON.stringify(a[i])?.length ?? 4;
        const k = Math.min(
          typeof a[i] === "number" ? rng.pick([5000, 150_000]) : rng.pick([100, 5000]),
          Math.floor(4e6 / Math.max(1, each)),
        );
        const tail = a.splice(i);
        for (let n = 0; n < k; n++) a.push(tail[0]);
        for (const x of tail) a.push(x);
        return `${k} copies of element ${i}`;
      }
    }
  }],
  [4, "step kind", (rng, json) => {
    const ss = steps(json);
    if (ss.length === 0) return "no step";
    const s = rng.pick(ss).value;
    const k = rng.pick(STEP_KINDS);
    s.kind = k;
    return `step ${s.at} kind = ${k}`;
  }],
  [3, "nesting", (rng, json) => {
    const ss = steps(json).filter((n) => Array.isArray(n.parent));
    if (ss.length === 0) return "no step";
    const n = rng.pick(ss);
    const depth = rng.pick([10, 100, 999, 1000, 1001, 2000]);
    const wrapper = rng.pick(["repeat", "call", "attempt", "blocking", "when"]);
    let v = n.value;
    for (let i = 0; i < depth; i++) {
      v = {
        at: `${n.value.at}.${i}`,
        kind: wrapper,
        domain: n.value.domain ?? "main",
        ...(wrapper === "repeat" ? { count: 2 } : {}),
        ...(wrapper === "call" ? { frame: `F${i}.f@f.ml:${i}:0-1` } : {}),
        ...(wrapper === "when" ? { loop: 1, every: 2, offset: 0 } : {}),
        body: [v],
      };
    }
    n.parent[n.key] = v;
    return `step ${n.value.at} nested in ${depth} ${wrapper}s`;
  }],
  [3, "subtree from another scenario", (rng, json, all) => {
    const other = rng.pick(all);
    const from = steps(other.json);
    const to = steps(json).filter((n) => Array.isArray(n.parent));
    if (from.length === 0 || to.length === 0) return "no step";
    const a = rng.pick(from), b = rng.pick(to);
    b.parent[b.key] = structuredClone(a.value);
    return `step ${a.value.at} of ${other.name} over step ${b.value.at}`;
  }],
  [2, "settings", (rng, json) => {
    const s = json.settings;
    if (s === null || typeof s !== "object") return "no settings";
    const k = rng.pick([
      "samplingRate",
      "callstackSize",
      "minorHeapWords",
      "ringLog2",
      "clockTickNs",
      "maxDomains",
      "pid",
      "seed",
      "externalSamplingRate",
      "log",
      "gcTime",
      "name",
      "description",
    ]);
    const v = rng.pick<Json>([
      0,
      -1,
      1e-300,
      1,
      2,
      64,
      4097,
      2 ** 31,
      2 ** 53,
      NaN,
      { format: "memprof_lifecycle", program: MARKER + '"', keep: 3 },
      { format: "memprof_exact", program: "x" },
      { minorFixedNs: -5 },
      { minorFixedNs: 5000, nonsense: 1 },
      MARKER + "*)",
    ]);
    s[k] = v;
    return `settings.${k} = ${JSON.stringify(v)}`;
  }],
];

const TOTAL = MUTATORS.reduce((n, [w]) => n + w, 0);

/** Most JSON a mutant may have: larger ones are drawn again (inputs stay under 10 MB). */
export const MAX_SCENARIO_JSON = 10_000_000;

/** About the size of `json` as JSON text, or Infinity once it is over `limit` (walked without
 * recursion, and without expanding aliased subtrees into text). */
export function jsonSizeAtMost(json: Json, limit: number): number {
  let n = 0;
  const stack: Json[] = [json];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === "string") n += v.length + 2;
    else if (v === null || typeof v !== "object") n += String(v).length;
    else if (Array.isArray(v)) {
      n += 1 + v.length;
      for (const x of v) stack.push(x);
    } else {
      for (const k of Object.keys(v)) {
        n += k.length + 4;
        stack.push(v[k]);
      }
    }
    if (n > limit) return Infinity;
  }
  return n;
}

/** Case `index`: 1 to 3 mutations of a library scenario, determined by (campaign seed, index).
 * A mutant over {@linkcode MAX_SCENARIO_JSON} is drawn again (twice at most; then the seed is
 * taken as it is). */
export function scenarioCase(
  campaignSeed: number,
  index: number,
): { seed: ScenarioSeed; json: Json; desc: string } {
  const all = scenarioSeeds();
  const rng = new Rng((campaignSeed ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0);
  const seed = all[rng.int(all.length)];
  for (let attempt = 0; attempt < 3; attempt++) {
    const json = structuredClone(seed.json);
    const steps: string[] = [];
    let small = true;
    for (let k = rng.chance(0.7) ? 1 : 2 + rng.int(2); k > 0 && small; k--) {
      const m = rng.weighted(MUTATORS, TOTAL);
      steps.push(`${m[1]}: ${m[2](rng, json, all)}`);
      small = jsonSizeAtMost(json, MAX_SCENARIO_JSON) <= MAX_SCENARIO_JSON;
    }
    if (small) return { seed, json, desc: `${seed.name}: ${steps.join("; ")}` };
  }
  return { seed, json: structuredClone(seed.json), desc: `${seed.name}: unmutated (over 10 MB)` };
}

/** Thrown for an escape or a broken bound. */
export class ScenarioFuzzFailure extends Error {
  override name = "ScenarioFuzzFailure";
}

/** How a case ended. */
export interface ScenarioOutcome {
  /** The typed error's class and problem (numbers as N), or null when both exports succeeded. */
  error: string | null;
  /** Characters of the (first) program. */
  programChars: number;
  /** Size of the mutated scenario's JSON (0 when it has none). */
  jsonChars: number;
}

/** Validates and exports a mutated scenario as `deno task diff` does; throws
 * {@linkcode ScenarioFuzzFailure} on an escape or a broken bound. */
export function exerciseScenario(json: Json, where: string, logCapacity: number): ScenarioOutcome {
  const fail = (what: string, cause?: unknown): never => {
    throw new ScenarioFuzzFailure(`${where}: ${what}`, { cause });
  };
  let jsonChars = 0;
  try {
    jsonChars = JSON.stringify(json)?.length ?? 0;
  } catch { /* a cycle cannot be made by the mutators; leave 0 */ }
  const sc = scenarioOf(json);
  const out: ScenarioOutcome = { error: null, programChars: 0, jsonChars };
  try {
    validateScenario(sc);
    const program = exportOCaml(sc);
    out.programChars = program.source.length;
    check(program.source, jsonChars, fail);
    // diffScenario's second export, its callback log sized from the simulation.
    // (The same program but for its log's capacity: its size is checked, not its text again.)
    const bigger = exportOCaml(sc, { logCapacity });
    const bound = programBound(jsonChars);
    if (bigger.source.length > bound) {
      fail(`a program of ${bigger.source.length} characters, bound ${bound}`);
    }
  } catch (e) {
    if (e instanceof ScenarioFuzzFailure) throw e;
    if (e instanceof ScenarioError || e instanceof ExportError) {
      out.error = `${e.name}: ${
        (e instanceof ScenarioError ? e.problem : e.reason).replace(/\d+/g, "N").slice(0, 80)
      }`;
    } else {
      const what = e instanceof Error ? `${e.name}: ${e.message}\n${e.stack}` : String(e);
      fail(`escape: ${what}`, e);
    }
  }
  return out;
}

/** The most characters a program of a scenario of `jsonChars` characters of JSON may have. */
export function programBound(jsonChars: number): number {
  return Math.min(
    PROGRAM_BOUND[0] + PROGRAM_BOUND[1] * jsonChars,
    MAX_PROGRAM_CHARS + PRELUDE_CHARS,
  );
}

function check(source: string, jsonChars: number, fail: (what: string) => never): void {
  const bound = programBound(jsonChars);
  if (source.length > bound) fail(`a program of ${source.length} characters, bound ${bound}`);
  let code: string;
  try {
    code = scanOCaml(source).code;
  } catch (e) {
    return fail(`the program does not lex: ${e}`);
  }
  const at = code.indexOf(MARKER);
  if (at >= 0) fail(`user text outside a literal: …${code.slice(Math.max(0, at - 80), at + 40)}…`);
}
