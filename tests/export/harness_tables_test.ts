// The harness's tables as the prelude writes them (lib/export/_prelude.ts) and as the heap model
// counts them (lib/export/_harness_tables.ts): the written OCaml is read back here, on its own,
// and every global it allocates and keeps must be a described table whose blocks are the ones
// the OCaml text allocates, in the model's order; nothing else. (tests/export/harness_heap_real_test.ts checks the model's heap against
// the real program's.)
import assert from "node:assert/strict";
import {
  countedWaitsPrelude,
  prelude,
  type PreludeParams,
  threadsPrelude,
} from "../../lib/export/_prelude.ts";
import { HARNESS_TABLES, type HarnessShape } from "../../lib/export/_harness_tables.ts";

/** Globals of the prelude that allocate nothing the model counts: constants, and the callback
 * log, whose Bigarray is allocated before the harness's tables (see `TABLES_START`). */
const NOT_TABLES = new Set([
  "z",
  "expected_minor_heap_words",
  "ring_log2",
  "log_capacity",
  "stride",
  "max_depth",
  "max_frames",
  "cblog",
]);

const SHAPES: (HarnessShape & { readonly threads: number; readonly fifoSites: number[] })[] = [
  { domains: 1, maxDepth: 1, profiles: 1, sites: [2], fifoSites: [0], exceptions: 0, threads: 0 },
  {
    domains: 3,
    maxDepth: 4,
    profiles: 3,
    sites: [1, 1000, 300, 0],
    fifoSites: [0, 2],
    exceptions: 2,
    threads: 0,
  },
  { domains: 1, maxDepth: 1, profiles: 0, sites: [], fifoSites: [], exceptions: 0, threads: 0 },
  { domains: 1, maxDepth: 2, profiles: 2, sites: [5, 7], fifoSites: [], exceptions: 1, threads: 3 },
  // Threads of spawned domains: one of the main domain, two of domain 1, one of domain 2.
  {
    domains: 3,
    maxDepth: 2,
    profiles: 1,
    sites: [4],
    fifoSites: [],
    exceptions: 0,
    threads: 4,
    initThreads: 1,
    batonOrds: [1, 2],
    threadDomains: [0, 1, 1, 2],
  },
];

function params(s: (typeof SHAPES)[number]): PreludeParams {
  return {
    ...s,
    logCapacity: 1000,
    maxFrames: 16,
    seed: 42,
    minorHeapWords: 262_144,
    ringLog2: 16,
  };
}

/** The value of an integer expression of the prelude (`+`, `*`, parentheses, `max_depth`,
 * `Array.length site_capacity`). */
function evaluate(text: string, s: HarnessShape): number {
  const replaced = text
    .replaceAll("Array.length site_capacity", String(s.sites.length))
    .replaceAll("max_depth", String(s.maxDepth));
  const tokens = replaced.match(/\d+|[-+*()]/g) ?? [];
  assert.equal(tokens.join(""), replaced.replace(/\s+/g, ""), `unknown expression ${text}`);
  let i = 0;
  const atom = (): number => {
    const t = tokens[i++];
    if (t === "(") {
      const v = sum();
      assert.equal(tokens[i++], ")");
      return v;
    }
    if (t === "-") return -atom();
    assert.match(t, /^\d+$/, `unexpected ${t} in ${text}`);
    return Number(t);
  };
  const product = (): number => {
    let v = atom();
    while (tokens[i] === "*") {
      i++;
      v *= atom();
    }
    return v;
  };
  const sum = (): number => {
    let v = product();
    while (tokens[i] === "+") {
      i++;
      v += product();
    }
    return v;
  };
  const v = sum();
  assert.equal(i, tokens.length, `trailing tokens in ${text}`);
  return v;
}

/** What a global's OCaml definition allocates, read from its text: block sizes in words, or
 * undefined when it allocates nothing (a constant). */
function allocated(rhs: string, s: HarnessShape): number[] | undefined {
  let m: RegExpExecArray | null;
  if ((m = /^Array\.make (\(.*\)|\d+) (0|\(-1\)|\(Obj\.repr 0\))$/.exec(rhs))) {
    return [evaluate(m[1], s)];
  }
  if ((m = /^Array\.init (\d+) \(fun _ -> Condition\.create \(\)\)$/.exec(rhs))) {
    const n = Number(m[1]);
    return [n, ...Array(n).fill(2)]; // the array, and a custom block (ops, pointer) per element
  }
  if (
    /^Array\.map \(fun n -> Array\.make \(max n 1\) (0|\(Obj\.repr 0\))\) site_capacity$/.test(rhs)
  ) {
    return s.sites.length === 0 ? [] : [s.sites.length, ...s.sites.map((n) => Math.max(n, 1))];
  }
  if (rhs === "[||]") return []; // the static atom
  if ((m = /^\[\| (.*) \|\]$/.exec(rhs))) return [m[1].split(";").length];
  if (/^ref /.test(rhs)) return [1];
  if ((m = /^Array\.make (\d+) baton$/.exec(rhs))) return [Number(m[1])];
  if (/^(Mutex|Condition)\.create \(\)$/.test(rhs)) return [2];
  if ((m = /^Weak\.create (\d+)$/.exec(rhs))) return [Number(m[1]) + 2];
  return undefined;
}

/** The prelude's top-level values (`let name = …` without parameters), in order. */
function globalsOf(text: string): { name: string; rhs: string }[] {
  const out: { name: string; rhs: string }[] = [];
  for (const line of text.split("\n")) {
    const m = /^let ([a-z_0-9]+)\s*(?::[^=]*)?=\s*(.*)$/.exec(line);
    if (m !== null) out.push({ name: m[1], rhs: m[2].trim() });
  }
  return out;
}

const sorted = (xs: readonly number[]) => [...xs].sort((a, b) => a - b);

for (const [k, s] of SHAPES.entries()) {
  Deno.test(`the prelude allocates the described tables and nothing else (shape ${k})`, () => {
    const p = params(s);
    const parts = [
      { text: prelude(p), part: "base" },
      { text: threadsPrelude({ ...s, spin: s.domains > 1 }), part: "threads" },
      { text: countedWaitsPrelude({ domains: s.domains }), part: "counted" },
    ];
    const partOf = (t: (typeof HARNESS_TABLES)[number]) =>
      t.countedOnly ? "counted" : t.threadsOnly ? "threads" : "base";
    for (const { text, part } of parts) {
      const globals = globalsOf(text);
      const tables = HARNESS_TABLES.filter((t) => partOf(t) === part);
      let last = -1;
      for (const t of tables) {
        const found = globals.filter((g) => g.name === t.name);
        if (t.decl(s) === "") {
          // A table this shape has no use for (th_lock without spawned domains' threads).
          assert.equal(found.length, 0, `${t.name} not declared`);
          assert.deepEqual(t.blocks(s), [], `${t.name} allocates nothing`);
          continue;
        }
        assert.equal(found.length, 1, `${t.name} declared once`);
        const at = globals.indexOf(found[0]);
        assert(at > last, `${t.name} is allocated in the model's order`);
        last = at;
        const blocks = allocated(found[0].rhs, s);
        assert(blocks !== undefined, `${t.name} = ${found[0].rhs} allocates`);
        // The mutexes th_lock's initialisation stores in it, one per `let m = Mutex.create ()`.
        if (t.name === "th_lock") {
          blocks.push(...Array(text.split("let m = Mutex.create () in").length - 1).fill(2));
        }
        assert.deepEqual(
          sorted(t.blocks(s).map((b) => b.wosize)),
          sorted(blocks),
          `${t.name} = ${found[0].rhs}`,
        );
      }
      for (const g of globals) {
        if (tables.some((t) => t.name === g.name)) continue;
        const blocks = allocated(g.rhs, s);
        assert(
          blocks === undefined,
          `${g.name} = ${g.rhs} allocates ${blocks?.join(", ")} words: describe it`,
        );
        assert(NOT_TABLES.has(g.name), `${g.name} = ${g.rhs}: neither a table nor a constant`);
      }
    }
  });
}

Deno.test("each described table's declaration is the prelude's line", () => {
  for (const s of [SHAPES[3], SHAPES[4]]) {
    const text = prelude(params(s)) + threadsPrelude({ ...s, spin: s.domains > 1 }) +
      countedWaitsPrelude({ domains: s.domains });
    for (const t of HARNESS_TABLES) {
      const decl = t.decl(params(s));
      if (decl === "") continue;
      assert(text.includes(`\n${decl}\n`), t.name);
    }
  }
});
