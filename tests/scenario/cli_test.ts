// The `scenario` command, run in-process with files and consoles stubbed (no permissions).
import assert from "node:assert/strict";
import { HELP, NO_PROFILE_NOTE, run, UNTRACED_NOTE } from "../../cli/scenario.ts";
import { scenario } from "../../lib/scenario/mod.ts";
import { goldens } from "../golden/index.ts";
import { GOLDEN_FILES } from "../../lib/scenario/golden.ts";
import { stub } from "./cli_stub.ts";

const encoder = new TextEncoder();

Deno.test("scenario --help and --list", async () => {
  const io = stub();
  assert.equal(await run(["--help"], io), 0);
  assert.equal(io.out, HELP + "\n");
  const list = stub();
  assert.equal(await run(["--list"], list), 0);
  assert.match(list.out, /^ref_loop +fixtures\/memprof_exact ref loop/m);
  assert.match(list.out, /^service +request loop/m);
});

Deno.test("scenario NAME writes every output, compares with its golden, prints the table", async () => {
  const io = stub();
  assert.equal(await run(["exception_comballoc", "--out", "/o"], io), 0);
  for (const f of ["trace.ctf", "trace.txt", "events.txt", "callbacks.txt", "summary.json"]) {
    assert.ok(io.files.has(`/o/exception_comballoc/${f}`), f);
  }
  assert.deepEqual(
    io.files.get("/o/exception_comballoc/callbacks.txt"),
    encoder.encode(goldens.exception_comballoc.callbackLog),
  );
  const summary = JSON.parse(
    new TextDecoder().decode(io.files.get("/o/exception_comballoc/summary.json")),
  );
  assert.equal(summary.scenario, "exception_comballoc");
  assert.match(io.out, /^scenario +steps +allocs/m);
  assert.match(io.out, /^exception_comballoc +45 .* ok +same +\d+$/m);
  assert.match(io.out, /outputs in \/o\/<scenario>\//);
  assert.equal(io.err, "");
});

Deno.test("samples without trace events are marked 0* and explained below the table", async () => {
  // ref_loop's tracker returns None (as the fixture program's does): memprof samples, the
  // tracer writes nothing. The mark and the note say so; a traced scenario has neither.
  const io = stub();
  assert.equal(await run(["ref_loop", "exception_comballoc", "--out", "/o"], io), 0);
  assert.match(io.out, /^ref_loop +20004 +20000 +40000 +389 +387 +0\* +0 +0 +0 +ok +same +\d+$/m);
  assert.match(io.out, /^exception_comballoc +45 +23 +105 +250 +119 +111 +0 /m);
  assert.ok(io.out.includes("\n" + UNTRACED_NOTE + "\noutputs in /o/<scenario>/\n"), io.out);
  const traced = stub();
  assert.equal(await run(["exception_comballoc", "--out", "/o"], traced), 0);
  assert.ok(!traced.out.includes("*"), traced.out);
});

Deno.test("a scenario that never starts a profile is marked 0!, explained, and warned about", async () => {
  const quiet = scenario(
    { name: "no_profile", description: "allocates, never starts memprof" },
    (s) => s.main.repeat(10, () => s.main.alloc(4, { at: "No_profile.f@np.ml:1:0-10" })),
  );
  const io = stub({ modules: { "./np.ts": { default: quiet } } });
  assert.equal(await run(["./np.ts", "exception_comballoc", "--out", "/o"], io), 0);
  assert.match(io.out, /^no_profile +10 +10 +50 +0! +0 +0 /m);
  assert.match(io.out, /^exception_comballoc +45 +23 +105 +250 +119 /m);
  assert.ok(io.out.includes("\n" + NO_PROFILE_NOTE + "\noutputs in /o/<scenario>/\n"), io.out);
  assert.equal(
    io.err,
    "warning: 1 scenario(s) never start a profile, so nothing was sampled: no_profile\n",
  );
  // Its outputs are written all the same (the report of an empty trace).
  assert.ok(io.files.has("/o/no_profile/report.html"));
  const profiled = stub();
  assert.equal(await run(["exception_comballoc", "--out", "/o"], profiled), 0);
  assert.ok(!profiled.out.includes("!"), profiled.out);
});

Deno.test("a scenario refused by --max-steps prints its error only: no table, no outputs line", async () => {
  const io = stub();
  assert.equal(await run(["ref_loop", "--max-steps", "10", "--out", "/o"], io), 1);
  assert.equal(io.out, "");
  assert.equal(
    io.err,
    "error: scenario ref_loop would run about 20,004 steps, more than --max-steps 10 (raise " +
      "--max-steps to run it anyway)\n",
  );
  assert.equal(io.kind("/o/ref_loop"), undefined, "nothing written");
  // With another scenario that ran, the table has its row and the tally counts the refusal.
  const two = stub();
  assert.equal(
    await run(["ref_loop", "alloc_counts", "--max-steps", "20000", "--out", "/o"], two),
    1,
  );
  assert.match(two.out, /^alloc_counts /m);
  assert.doesNotMatch(two.out, /^ref_loop /m);
  assert.match(two.out, /outputs in \/o\/<scenario>\//);
  assert.match(two.err, /^error: scenario ref_loop would run .*\n1 scenario\(s\) failed\n$/s);
});

Deno.test("a golden that differs is reported with its first differing line, and exits 1", async () => {
  const io = stub();
  const path = `/golden/ref_loop/${GOLDEN_FILES.callbackLog}`;
  io.files.set(path, encoder.encode(goldens.ref_loop.callbackLog.replace("38 minor", "39 minor")));
  assert.equal(await run(["ref_loop", "--out", "/o"], io), 1);
  assert.match(io.out, /^ref_loop .* DIFFERS/m);
  assert.match(io.err, /ref_loop: callbacks\.txt differs at line 2:/);
});

Deno.test("--update rewrites the goldens and the index", async () => {
  const io = stub();
  assert.equal(await run(["alloc_counts", "--update", "--out", "/o"], io), 0);
  assert.match(io.out, /^alloc_counts .* updated/m);
  const index = new TextDecoder().decode(io.files.get("/golden/index.ts"));
  assert.match(index, /import g_alloc_counts_ctf from "\.\/alloc_counts\/trace\.ctf"/);
  assert.ok(index.includes('"ref_loop": {'));
});

Deno.test("--seed and --rate override; bad arguments exit 2 with a message", async () => {
  const io = stub();
  assert.equal(
    await run(["arrays_in_major", "--seed", "99", "--rate", "0.5", "--out", "/o"], io),
    0,
  );
  assert.match(io.out, /^arrays_in_major .* ok +- +\d+$/m);
  for (
    const [args, msg] of [
      [["--rate", "1.5"], /--rate must be within \[0, 1\], got '1.5'/],
      [["--seed", "1.5"], /--seed must be an integer/],
      [["--update", "--seed", "3"], /--update records goldens with each scenario's own/],
      [["nope"], /no scenario named "nope"/],
      [
        ["--frob"],
        /^error: unknown option --frob\nRun 'memprof-lab scenario --help' for usage\.\n$/,
      ],
      [["missing.ts"], /cannot load missing\.ts: no such file/],
    ] as const
  ) {
    const bad = stub();
    assert.equal(await run([...args], bad), 2, args.join(" "));
    assert.match(bad.err, msg);
  }
});

Deno.test("a PATH loads a scenario module; an invalid module is refused", async () => {
  const { default: sc } = await import("../../scenarios/alloc_counts.ts");
  const io = stub({ modules: { "./mine.ts": { default: sc }, "./bad.ts": { default: 42 } } });
  assert.equal(await run(["./mine.ts", "--out", "/o"], io), 0);
  assert.match(io.out, /^alloc_counts .* ok +same/m);
  const bad = stub({ modules: { "./bad.ts": { default: 42 } } });
  assert.equal(await run(["./bad.ts"], bad), 1);
  assert.match(bad.err, /has no default export made with scenario/);
});
