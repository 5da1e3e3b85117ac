// `deno task scenario PATH`: modules are type-checked before they run, a module that is not a
// usable scenario gives one error naming the file, and the exit status follows one rule:
// 0 ok, 1 failure (invalid scenario included), 2 wrong command line.
import assert from "node:assert/strict";
import { readableCheckOutput, run } from "../../cli/scenario.ts";
import { scenario, ScenarioError, type Step } from "../../lib/scenario/mod.ts";
import { scenarios } from "../../scenarios/index.ts";
import { stub } from "./cli_stub.ts";

const tiny = scenario({ name: "tiny" }, (s) => {
  s.main.memprof.start({ samplingRate: 1 });
  s.main.repeat(10, () => s.main.alloc(2));
  s.main.memprof.stop();
});

/** A module whose import throws `e`, thrown at line 3 of `url`. */
function throwing(e: Error, url: string) {
  e.stack = `${e.name}: ${e.message}\n    at ${url}:3:9\n    at somewhere:1:1`;
  return () => Promise.reject(e);
}

Deno.test("a module that is not a usable scenario gives one error naming the file, exit 1", async () => {
  const invalid = new ScenarioError("bad", "3", "Gc.Memprof.stop: no profile running.");
  const byHand = { settings: { ...tiny.settings, name: ".." }, steps: [], domains: ["main"] };
  let deep: Step[] = [{ at: "x", kind: "poll", domain: "main" }];
  for (let k = 0; k < 20_000; k++) {
    deep = [{ at: "1", kind: "call", domain: "main", frame: "A.f@a.ml:1:2-3", body: deep }];
  }
  const cases: [string, unknown, RegExp][] = [
    [
      "./none.ts",
      {},
      /^error: \.\/none\.ts has no default export made with scenario\(\.\.\.\): it has no default export\n$/,
    ],
    [
      "./steps.ts",
      { default: { steps: 5 } },
      /^error: \.\/steps\.ts has no default export made with scenario\(\.\.\.\): its default export is an object with keys steps\n$/,
    ],
    [
      "./throws.ts",
      throwing(new TypeError("s.main.allok is not a function"), "file:///home/u/throws.ts"),
      /^error: cannot load \.\/throws\.ts: TypeError: s\.main\.allok is not a function \(at \.\/throws\.ts:3:9\)\n$/,
    ],
    [
      "./invalid.ts",
      throwing(invalid, "file:///home/u/invalid.ts"),
      /^error: \.\/invalid\.ts: scenario bad, step 3: Gc\.Memprof\.stop: no profile running\.\n$/,
    ],
    [
      "./byhand.ts",
      { default: { ...byHand, threads: new Map([["main", "main"]]), profiles: [] } },
      /^error: \.\/byhand\.ts: scenario \.\., settings: name must be letters/,
    ],
    [
      "./broken.ts",
      { default: { settings: { name: "x" }, steps: [] } },
      /^error: \.\/broken\.ts: scenario x, settings: not a scenario: steps, domains and profiles must be arrays\n$/,
    ],
    [
      "./deep.ts",
      { default: { ...tiny, steps: deep } },
      /^error: \.\/deep\.ts: scenario tiny, step 1: steps nest more than 1000 deep/,
    ],
  ];
  for (const [path, mod, want] of cases) {
    const io = stub({ modules: { [path]: mod as never } });
    assert.equal(await run([path, "--out", "/o"], io), 1, path);
    assert.match(io.err, want, path);
    assert.equal(io.kind("/o"), undefined, `${path}: nothing is written`);
  }
});

Deno.test("one rule for exit statuses: 2 for the command line, 1 for failures, 0 for success", async () => {
  const usage: string[][] = [
    ["--frob"],
    ["nope"],
    ["./missing.ts"],
    ["--seed", ""],
    ["--seed", "0x10"],
    ["--seed", " 7"],
    ["--seed", "-1"],
    ["--rate", ""],
    ["--rate", "NaN"],
    ["--rate", "Infinity"],
    ["--rate", "0x1"],
    ["--rate", "-0.1"],
    ["--max-steps", "0"],
    ["--max-steps", "1.5"],
    ["--max-steps", "NaN"],
    ["--max-steps", "-5"],
    ["--max-steps", "1e400"],
    ["--check", "--update"],
    ["--check", "--seed", "2"],
    ["--out", ""],
  ];
  for (const args of usage) {
    const io = stub();
    assert.equal(await run([...args, "ref_loop"], io), 2, args.join(" "));
    assert.match(io.err, /^error: /, args.join(" "));
  }
  const ok = stub({ modules: { "./tiny.ts": { default: tiny } } });
  assert.equal(await run(["./tiny.ts", "--out", "/o", "--rate", "0.5", "--seed", "1e3"], ok), 0);
  assert.equal(ok.err, "");
});

Deno.test("modules are type-checked before they are imported; --no-check skips it", async () => {
  const output = "TS2561 [ERROR]: … 'lifetme' does not exist in type 'AllocOptions'.\n" +
    "    at ./mine.ts:5:21\n";
  let imported = 0;
  const modules = {
    "./mine.ts": () => {
      imported++;
      return Promise.resolve({ default: tiny }) as never;
    },
  };
  const io = stub({ modules, typeCheck: { ok: false, output } });
  assert.equal(await run(["./mine.ts", "ref_loop", "--out", "/o"], io), 1);
  assert.deepEqual(io.typeChecked, [["./mine.ts"]], "only modules are checked");
  assert.equal(imported, 0);
  assert.equal(
    io.err,
    "error: ./mine.ts: type errors (deno check; --no-check skips this check):\n" + output,
  );
  const skip = stub({ modules, typeCheck: { ok: false, output } });
  assert.equal(await run(["./mine.ts", "--no-check", "--out", "/o"], skip), 0);
  assert.deepEqual(skip.typeChecked, []);
  assert.equal(imported, 1);
  const library = stub();
  assert.equal(await run(["ref_loop", "--out", "/o"], library), 0);
  assert.deepEqual(library.typeChecked, []);
});

Deno.test("deno check output shows paths with their line and column", () => {
  const raw = "TS2561 [ERROR]: Object literal may only specify known properties\n" +
    "  s.main.alloc(8, { lifetme: keep.forever });\n" +
    "    at file:///home/u/lab/my%20dir/bad.ts:5:21\n" +
    "    at file:///elsewhere/x.ts:1:2\n\nerror: Type checking failed.\n\nStack backtrace:\n   0: <unknown>\n";
  assert.equal(
    readableCheckOutput(raw, "/home/u/lab"),
    "TS2561 [ERROR]: Object literal may only specify known properties\n" +
      "  s.main.alloc(8, { lifetme: keep.forever });\n" +
      "    at my dir/bad.ts:5:21\n    at /elsewhere/x.ts:1:2\n",
  );
});

Deno.test("scenarios expected to run more steps than --max-steps are refused before running", async () => {
  // repeat(1e15): with the default tick its clock overflows (refused when built); with a 1 ns
  // tick it is a valid scenario that --max-steps refuses.
  assert.throws(
    () => scenario({ name: "huge" }, (s) => s.main.repeat(1e15, () => s.main.alloc(1))),
    /the virtual clock would reach about 1,000,000,000,000,000,000 ns/,
  );
  const huge = scenario({ name: "huge", clockTickNs: 1 }, (s) => {
    s.main.repeat(1e15, () => s.main.alloc(1));
  });
  const io = stub({ modules: { "./huge.ts": { default: huge }, "./tiny.ts": { default: tiny } } });
  assert.equal(await run(["./huge.ts", "./tiny.ts", "--out", "/o"], io), 1);
  assert.equal(
    io.err,
    "error: scenario huge would run about 1,000,000,000,000,000 steps, more than --max-steps " +
      "1,000,000,000 (raise --max-steps to run it anyway)\n1 scenario(s) failed\n",
  );
  assert.match(io.out, /^tiny +12 /m, "the others still run");
  assert.equal(io.kind("/o/huge"), undefined);
  const low = stub({ modules: { "./tiny.ts": { default: tiny } } });
  assert.equal(await run(["./tiny.ts", "--max-steps", "11", "--out", "/o"], low), 1);
  assert.match(low.err, /would run about 12 steps, more than --max-steps 11/);
  const exp = stub({ modules: { "./huge.ts": { default: huge } } });
  assert.equal(await run(["./huge.ts", "--export-ocaml", "/ml"], exp), 1);
  assert.match(exp.err, /more than --max-steps/);
});

Deno.test("progress starts at 0% and moves: a bar on a terminal, lines with --progress", async () => {
  const sc = scenarios.find((s) => s.settings.name === "remembered_set")!;
  const term = stub({ terminal: true });
  assert.equal(await run(["remembered_set", "--out", "/o"], term), 0);
  const frames = term.err.split("\r").filter((f) => f.includes("%"));
  assert.match(frames[0], /\[-{30}\] +0% remembered_set \(0\/60,006 steps\)/);
  assert.ok(frames.length > 50, `${frames.length} updates`);
  assert.match(frames[frames.length - 1], /\[#{30}\] 100% remembered_set \(60,006\/60,006 steps/);
  const lines = stub();
  assert.equal(await run(["remembered_set", "--progress", "--out", "/o"], lines), 0);
  const got = lines.err.trimEnd().split("\n");
  assert.equal(got.length, 11);
  assert.equal(got[0], "  remembered_set:   0% (0/60,006 steps)");
  assert.match(got[5], /^ {2}remembered_set: +50% \(\d{2},\d{3}\/60,006 steps\)$/);
  assert.equal(got[10], "  remembered_set: 100% (60,006/60,006 steps)");
  const quiet = stub();
  assert.equal(await run(["remembered_set", "--out", "/o"], quiet), 0);
  assert.equal(quiet.err, "");
  assert.equal(sc.settings.name, "remembered_set");
});
