// User text is data, never code (issue 23): every text of a scenario that reaches an exported
// program (its name and description, frames, the names of profiles, kept-block groups and
// threads, user event names) is either refused with a ScenarioError or an ExportError, or written
// only inside OCaml string literals that OCaml reads back as exactly that text. Checked with a
// reader of OCaml source written for the tests (ocaml_lexer.ts): the program's code (without
// comments and literals) does not change with the text, and a literal decodes to the text. With
// an OCaml 5.3 toolchain (tests/real_toolchain.ts), some of the programs are compiled and run as
// `deno task diff` does, and OCaml itself prints their literals back.
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  keep,
  type Scenario,
  scenario,
  ScenarioError,
  validateScenario,
} from "../../lib/scenario/mod.ts";
import { defName, ExportError, exportOCaml } from "../../lib/export/mod.ts";
import { ocamlBytesLiteral, ocamlString } from "../../lib/export/_ocaml_text.ts";
import { diffScenario } from "../../lib/differential/mod.ts";
import { type OCamlLiteral, readStringLiteral, scanOCaml } from "./ocaml_lexer.ts";
import { DIFF_CACHE, REAL_OCAML, skipNotice } from "../real_toolchain.ts";
import { sized } from "../tier.ts";

const enc = new TextEncoder();

/** The texts of the template scenario, one per place where text reaches the program. */
interface Texts {
  readonly name: string;
  readonly description: string;
  readonly profile: string;
  readonly callFrame: string;
  readonly allocFrame: string;
  readonly combinedFrame: string;
  readonly unmarshalFrame: string;
  readonly threadFrame: string;
  readonly until: string;
  readonly list: string;
  readonly ring: string;
  readonly steps: string;
  readonly thread: string;
  readonly event: string;
}

const BENIGN: Texts = {
  name: "usertext",
  description: "d",
  profile: "zp",
  callFrame: "Ut.call@ut.ml:1:0-9",
  allocFrame: "Ut.alloc@ut.ml:2:0-9",
  combinedFrame: "Ut.comb@ut.ml:3:0-9",
  unmarshalFrame: "Ut.unm@ut.ml:4:0-9",
  threadFrame: "Ut.thr@ut.ml:5:0-9",
  until: "zu",
  list: "zl",
  ring: "zr",
  steps: "zs",
  thread: "zt",
  event: "ze",
};

/** Names of the template: a text equal to another field's would merge two of its sites. */
const TAKEN = new Set(["main", ...Object.values(BENIGN)]);

/** The template: every text of `t` in the place it names, each reaching the program. */
function build(t: Texts): Scenario {
  return scenario({ name: t.name, description: t.description, minorHeapWords: 8192 }, (s) => {
    const m = s.main;
    m.memprof.start({ name: t.profile, samplingRate: 1, callstackSize: 8 });
    m.call(t.callFrame, () => {
      m.alloc(2, { at: t.allocFrame, lifetime: keep.until(t.until) });
      m.alloc(3, { lifetime: keep.list(t.list) });
    });
    m.allocCombined([2, 3], { at: t.combinedFrame, lifetime: keep.ring(4, t.ring) });
    m.unmarshal([2, 1], { at: t.unmarshalFrame, lifetime: keep.steps(3, t.steps) });
    m.userEvent(t.event, { type: "int", value: 7 });
    const th = m.thread(t.thread, (w) => w.alloc(4, { at: t.threadFrame }));
    m.join(th);
    s.release(t.until);
    s.release(t.list);
    s.release(t.ring);
    s.release(t.steps);
    m.memprof.stop();
  });
}

/** A text expected in the program: inside a comment's literal or the code's. */
interface Expected {
  readonly text: string;
  readonly inComment: boolean;
}

/** Where each field's text is expected. Frames: in a comment (lone surrogates there as U+FFFD),
 * and their definition names in the program's frame map. */
function expected(t: Texts): Expected[] {
  const comment = (text: string) => ({ text: text.toWellFormed(), inComment: true });
  return [
    comment(t.name),
    ...(t.description === "" ? [] : [comment(t.description)]),
    comment(t.profile),
    comment(t.callFrame),
    comment(t.allocFrame),
    comment(t.combinedFrame),
    comment(t.unmarshalFrame),
    comment(t.threadFrame),
    comment(t.until),
    comment(t.list),
    comment(t.ring),
    comment(t.steps),
    comment(t.thread),
    { text: t.event, inComment: false },
  ];
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

const BENIGN_CODE = scanOCaml(exportOCaml(build(BENIGN)).source).code;

/** Exports `t`'s scenario; undefined when it is refused with a typed error. Otherwise checks
 * that the program's code is the benign program's, that each text is in one of its literals,
 * and that the frame map gives each frame's definition name back exactly. */
function exportChecked(
  t: Texts,
): { source: string; literals: readonly OCamlLiteral[] } | undefined {
  let source: string;
  let frames: ReadonlyMap<string, string>;
  try {
    const p = exportOCaml(build(t));
    source = p.source;
    frames = p.frames;
  } catch (e) {
    if (e instanceof ScenarioError || e instanceof ExportError) return undefined;
    throw e;
  }
  const scan = scanOCaml(source);
  assert.equal(scan.code, BENIGN_CODE, "the text changed the program's code");
  for (const { text, inComment } of expected(t)) {
    const bytes = enc.encode(text);
    assert.ok(
      scan.literals.some((l) => l.inComment === inComment && sameBytes(l.bytes, bytes)),
      `no literal${inComment ? " in a comment" : ""} gives back ${JSON.stringify(text)}`,
    );
  }
  const defs = [t.callFrame, t.allocFrame, t.combinedFrame, t.unmarshalFrame, t.threadFrame]
    .map(defName);
  assert.deepEqual([...frames.values()].sort(), defs.sort());
  return { source, literals: scan.literals };
}

// ---- the texts the properties try -------------------------------------------------------------

/** Pieces that mean something to OCaml's lexer, or to a reader of the program. */
const PIECES = [
  '"',
  "\\",
  "(*",
  "*)",
  "(*)",
  "{|",
  "|}",
  "{id|",
  "|id}",
  "{%ext|",
  "'",
  "'\"'",
  "\n",
  "\r\n",
  "\r",
  "\t",
  "\0",
  "\u0001",
  "\f",
  "\x7f",
  "\u0080",
  "\u00ff",
  "é",
  "…",
  "\u{1F600}",
  "\uD800",
  "\uDFFF",
  "\u202E",
  "\uFEFF",
  "%s",
  "@",
  ":",
  " ",
  "\\n",
  '\\"',
  "\\u{41}",
  "\\065",
  "let () = exit 3",
];

const hostile: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: "binary", maxLength: 12 }),
  fc.string({ unit: "binary-ascii", maxLength: 12 }),
  fc.array(
    fc.oneof(fc.constantFrom(...PIECES), fc.string({ unit: "grapheme-ascii", maxLength: 3 })),
    { maxLength: 8 },
  ).map((a) => a.join("")),
);

/** Texts that fit a name (so that the accepted path is taken too). */
const plainName = fc.stringMatching(/^[A-Za-z0-9_.-]{1,12}$/);

const anyText = fc.oneof(hostile, plainName).filter((x) => !TAKEN.has(x));

interface Field {
  readonly what: string;
  readonly set: (t: Texts, x: string) => Texts;
  /** Arbitrary texts are almost never accepted there (a whole frame). */
  readonly rarelyAccepted?: boolean;
}

const FIELDS: readonly Field[] = [
  { what: "the scenario's name", set: (t, x) => ({ ...t, name: x }) },
  { what: "the description", set: (t, x) => ({ ...t, description: x }) },
  { what: "a profile name", set: (t, x) => ({ ...t, profile: x }) },
  { what: "a call frame", set: (t, x) => ({ ...t, callFrame: x }), rarelyAccepted: true },
  {
    what: "a call frame's definition name",
    set: (t, x) => ({ ...t, callFrame: `${x}@ut.ml:1:0-9` }),
  },
  {
    what: "an allocation frame's file",
    set: (t, x) => ({ ...t, allocFrame: `Ut.alloc@${x}:2:0-9` }),
  },
  {
    what: "a combined allocation's frame",
    set: (t, x) => ({ ...t, combinedFrame: `${x}@${x}:3:0-9` }),
  },
  { what: "an unmarshal frame", set: (t, x) => ({ ...t, unmarshalFrame: `${x}@u.ml:4:0-9` }) },
  { what: "a thread's frame", set: (t, x) => ({ ...t, threadFrame: `${x}@t.ml:5:0-9` }) },
  { what: "a keep.until and release name", set: (t, x) => ({ ...t, until: x }) },
  { what: "a keep.list name", set: (t, x) => ({ ...t, list: x }) },
  { what: "a keep.ring name", set: (t, x) => ({ ...t, ring: x }) },
  { what: "a keep.steps name", set: (t, x) => ({ ...t, steps: x }) },
  { what: "a thread name", set: (t, x) => ({ ...t, thread: x }) },
  { what: "a user event name", set: (t, x) => ({ ...t, event: x }) },
];

// ---- ocamlString ------------------------------------------------------------------------------

Deno.test("ocamlString writes printable ASCII on one line that decodes to the text's UTF-8 bytes", () => {
  fc.assert(
    fc.property(hostile.filter((x) => x.isWellFormed()), (x) => {
      const lit = ocamlString(x);
      assert.match(lit, /^"[\x20-\x7e]*"$/);
      const src = enc.encode(lit);
      const { bytes, end } = readStringLiteral(src, 0);
      assert.equal(end, src.length);
      assert.ok(sameBytes(bytes, enc.encode(x)), JSON.stringify(x));
    }),
    { seed: 23, numRuns: sized(2000, 500) }, // tests/tier.ts: 500 in the quick tier
  );
  assert.equal(ocamlString('a"b\\c'), '"a\\"b\\\\c"');
  assert.equal(ocamlString("\f\u0001\n\x7f"), '"\\012\\001\\010\\127"');
  assert.equal(ocamlString("é"), '"\\195\\169"');
  assert.throws(() => ocamlString("\uD800"), RangeError);
  const all = Uint8Array.from({ length: 256 }, (_, i) => i);
  assert.ok(sameBytes(readStringLiteral(enc.encode(ocamlBytesLiteral(all)), 0).bytes, all));
});

// ---- the injections of issue 23 ----------------------------------------------------------------

/** OCaml code that writes the file `path` (no blank in it: frames have none). */
const payload = (path: string) => `"*)let()=close_out(open_out"${path}")(*"`;
/** The same with a shell command, as the issue reports it. */
const shellPayload = (path: string) => `" *) let () = ignore (Sys.command "touch ${path}") (* "`;

Deno.test("a release name, keep.list, keep.ring and keep.steps name carrying OCaml code are refused, naming the step", () => {
  const code = shellPayload("/tmp/x");
  const cases: [string, (t: Texts) => Texts][] = [
    ["keep.until and release", (t) => ({ ...t, until: code })],
    ["keep.list", (t) => ({ ...t, list: code })],
    ["keep.ring", (t) => ({ ...t, ring: code })],
    ["keep.steps", (t) => ({ ...t, steps: code })],
  ];
  for (const [what, set] of cases) {
    assert.throws(
      () => build(set(BENIGN)),
      (e: unknown) =>
        e instanceof ScenarioError && /step \d+/.test(e.message) &&
        /name of one or more letters, digits|release name .* is invalid/.test(e.message),
      what,
    );
  }
  // s.release alone: refused at its step.
  assert.throws(
    () => scenario({ name: "rel" }, (s) => s.release(code)),
    /scenario rel, step 1: release name .* is invalid: names are one or more/,
  );
});

Deno.test("a scenario object made without the builder is checked by the validator, and by exportOCaml, as the builder checks", () => {
  const sc = build(BENIGN);
  const code = shellPayload("/tmp/x");
  const retitled = (steps: Scenario["steps"], more: Partial<Scenario> = {}): Scenario => ({
    ...sc,
    steps,
    ...more,
  });
  const mapSteps = (f: (st: Scenario["steps"][number]) => Scenario["steps"][number]) =>
    sc.steps.map(f);
  const cases: [string, Scenario, RegExp][] = [
    [
      "a thread name",
      retitled(
        mapSteps((st) =>
          st.kind === "threadSpawn" || st.kind === "threadJoin" ? { ...st, thread: code } : st
        ),
        { threads: new Map([["main", "main"], [code, "main"]]) },
      ),
      /settings: thread name .* is invalid: names are one or more letters/,
    ],
    [
      "a release name",
      retitled(mapSteps((st) => st.kind === "release" ? { ...st, name: code } : st)),
      /step \d+: release name .* is invalid/,
    ],
    [
      "a keep.until name",
      retitled(
        mapSteps((st) =>
          st.kind === "call"
            ? {
              ...st,
              body: st.body.map((b) =>
                b.kind === "alloc" && b.lifetime.kind === "until"
                  ? { ...b, lifetime: { kind: "until", name: code } }
                  : b
              ),
            }
            : st
        ),
      ),
      /step 2\.1: keep\.until needs a name of one or more letters/,
    ],
    [
      "a frame",
      retitled(mapSteps((st) => st.kind === "call" ? { ...st, frame: code } : st)),
      /step 2: frame .* is not of the form defname@file:line:start-end/,
    ],
    [
      "a profile name",
      retitled(
        mapSteps((st) =>
          st.kind === "memprofStart" ? { ...st, profile: { ...st.profile, name: code } } : st
        ),
      ),
      /step 1: profile name .* is invalid/,
    ],
    [
      "a domain name",
      retitled(sc.steps, { domains: ["main", code] }),
      /settings: domain name .* is invalid/,
    ],
    [
      "a user event name with a lone surrogate",
      retitled(mapSteps((st) => st.kind === "userEvent" ? { ...st, name: "a\uD800" } : st)),
      /step 5: user event names .* well-formed Unicode/,
    ],
  ];
  for (const [what, bad, want] of cases) {
    for (const check of [() => validateScenario(bad), () => exportOCaml(bad)]) {
      assert.throws(check, (e: unknown) => {
        assert.ok(e instanceof ScenarioError, `${what}: ${e}`);
        assert.match(e.message, want, what);
        return true;
      }, what);
    }
  }
});

Deno.test("a description, frames and a user event name carrying OCaml code stay inside string literals", () => {
  const cases: Texts[] = [
    { ...BENIGN, description: shellPayload("/tmp/x") },
    { ...BENIGN, description: payload("/tmp/x") },
    { ...BENIGN, callFrame: `${payload("/tmp/x")}@a.ml:1:2-3` },
    { ...BENIGN, allocFrame: `Ut.f@${payload("/tmp/x")}:1:2-3` },
    { ...BENIGN, event: shellPayload("/tmp/x") },
    { ...BENIGN, description: 'a (* b " c {|d|} \f\u0001' },
    { ...BENIGN, callFrame: 'A.(*)"@a"(*.ml:1:2-3', allocFrame: 'B.f\\"{|@b.ml:1:2-3' },
  ];
  for (const t of cases) {
    const r = exportChecked(t);
    assert.ok(r !== undefined, `refused: ${JSON.stringify(t)}`);
    const { code } = scanOCaml(r.source);
    assert.ok(!code.includes("Sys.command") && !code.includes('open_out"'), JSON.stringify(t));
  }
});

// ---- every text field, arbitrary text ----------------------------------------------------------

for (const [k, field] of FIELDS.entries()) {
  Deno.test(`any text in ${field.what} is refused with a typed error or stays data in the program`, () => {
    let accepted = 0;
    fc.assert(
      fc.property(anyText, (x) => {
        if (exportChecked(field.set(BENIGN, x)) !== undefined) accepted++;
      }),
      // 40 texts in the quick tier (tests/tier.ts): each field but the call frame's still accepts
      // some.
      { seed: 2300 + k, numRuns: sized(150, 40) },
    );
    assert.ok(accepted > 0 || field.rarelyAccepted, `${field.what}: every text was refused`);
  });
}

// ---- on the real OCaml 5.3 ----------------------------------------------------------------------

const skip = REAL_OCAML.toolchain === undefined ? REAL_OCAML.why : undefined;
if (skip !== undefined) {
  skipNotice("the user-text programs on the real OCaml 5.3", skip);
}

/** Texts a frame's parts can hold (no blank; no `@` in the definition name). */
const frameDef = hostile.map((x) => x.replace(/[\s@]/g, "")).filter((x) => x !== "");
const frameFile = hostile.map((x) => x.replace(/\s/g, "")).filter((x) => x !== "");
/** Texts a user event name can hold. */
const eventName = hostile.filter((x) => {
  const n = enc.encode(x).length;
  return n >= 1 && n <= 127 && !x.includes("\0") && x.isWellFormed() && !TAKEN.has(x);
});

/** Scenarios whose every text is hostile where the scenario accepts it: the first ones carry
 * OCaml code writing a file in `dir`. */
function realCases(dir: string, count: number): Texts[] {
  const fixed: Texts[] = [
    {
      ...BENIGN,
      name: "inject-0",
      description: shellPayload(`${dir}/description`),
      event: shellPayload(`${dir}/event`),
      callFrame: `${payload(`${dir}/frame`)}@a.ml:1:2-3`,
      allocFrame: `Ut.f@${payload(`${dir}/file`)}:1:2-3`,
    },
    {
      ...BENIGN,
      name: "inject-1",
      description: payload(`${dir}/description`),
      event: payload(`${dir}/event`),
      combinedFrame: 'A.(*)"@a"(*.ml:1:2-3',
      threadFrame: 'B.f\\"{|@b.ml:1:2-3',
    },
  ];
  const random = fc.record({
    description: hostile,
    event: eventName,
    callDef: frameDef,
    allocFile: frameFile,
    combinedDef: frameDef,
    unmarshalDef: frameDef,
    threadFile: frameFile,
    names: fc.uniqueArray(plainName.filter((x) => !TAKEN.has(x)), { minLength: 7, maxLength: 7 }),
  });
  const drawn = fc.sample(random, { seed: 2323, numRuns: count - fixed.length }).map((r, i) => ({
    name: `random-${i}`,
    description: r.description,
    event: r.event,
    callFrame: `${r.callDef}@c.ml:1:0-9`,
    allocFrame: `Ut.alloc@${r.allocFile}:2:0-9`,
    combinedFrame: `${r.combinedDef}@m.ml:3:0-9`,
    unmarshalFrame: `${r.unmarshalDef}@u.ml:4:0-9`,
    threadFrame: `Ut.thr@${r.threadFile}:5:0-9`,
    profile: r.names[0],
    until: r.names[1],
    list: r.names[2],
    ring: r.names[3],
    steps: r.names[4],
    thread: r.names[5],
  }));
  return [...fixed, ...drawn];
}

Deno.test({
  name:
    "programs full of hostile text compile, run as the simulation does, write no file, and OCaml reads their literals back",
  ignore: skip !== undefined,
  async fn() {
    const ocamlopt = REAL_OCAML.toolchain!.ocamlopt;
    const dir = await Deno.makeTempDir({ prefix: "memprof-lab-usertext-" });
    try {
      const ownCache = `${dir}/cache`;
      const literals = new Map<string, Uint8Array>();
      for (const t of realCases(dir, 20)) {
        const checked = exportChecked(t);
        assert.ok(checked !== undefined, `refused: ${JSON.stringify(t)}`);
        for (const l of checked.literals) literals.set(l.raw, l.bytes);
        // The drawn cases are the same programs every time (a fixed seed): compiled once into the
        // folder `deno task diff` uses, where one is found again by its source, arguments and
        // compiler (and runs as ever). The injecting ones name this run's folder: compiled here.
        const cacheDir = DIFF_CACHE !== undefined && !JSON.stringify(t).includes(dir)
          ? DIFF_CACHE
          : ownCache;
        const r = await diffScenario(build(t), { ocamlopt, cacheDir, firstRuns: 1 });
        assert.equal(
          r.status,
          "agree",
          `${t.name}: ${JSON.stringify(r.status === "error" ? r.message : r)}`,
        );
      }
      const written = [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) => n !== "cache");
      assert.deepEqual(written, [], "the programs ran code from the scenarios' text");
      // OCaml prints every literal of the programs (those of comments too): the bytes must be
      // what the tests' reader decoded, so the texts found in them above are what OCaml reads.
      const raws = [...literals.keys()];
      const program = "let p s = print_string (string_of_int (String.length s)); " +
        "print_char ':'; print_string s\n" + raws.map((raw) => `let () = p ${raw}\n`).join("");
      await Deno.writeTextFile(`${dir}/literals.ml`, program);
      const [cmd, ...pre] = ocamlopt;
      const built = await new Deno.Command(cmd, {
        args: [...pre, "literals.ml", "-o", "literals"],
        cwd: dir,
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.ok(built.success, new TextDecoder().decode(built.stderr));
      const ran = await new Deno.Command(`${dir}/literals`, { stdout: "piped" }).output();
      assert.ok(ran.success);
      const out = ran.stdout;
      let i = 0;
      for (const raw of raws) {
        const colon = out.indexOf(0x3a, i);
        const n = Number(new TextDecoder().decode(out.subarray(i, colon)));
        const got = out.subarray(colon + 1, colon + 1 + n);
        assert.ok(sameBytes(got, literals.get(raw)!), `OCaml reads ${raw} otherwise`);
        i = colon + 1 + n;
      }
      assert.equal(i, out.length);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
