// `diff --random N`: the command line, the report, the modules written for failures, the known
// differences and the exit status, with the campaign's workers replaced by an in-process run
// whose "real runtime" is the simulation with a fault injected.
import assert from "node:assert/strict";
import { type DiffCliIO, run } from "../../cli/diff.ts";
import { type CampaignOptions, judgeRandom, planIndices } from "../../lib/differential/mod.ts";
import type { Scenario } from "../../lib/scenario/mod.ts";
import { judgedBySimulation } from "./helpers.ts";
import { sized } from "../tier.ts";

/** The simulation judged by itself, with a fault: every promote callback of the simulation
 * returns none. */
const faultyDiff = (sc: Scenario) =>
  judgedBySimulation(
    sc,
    (l) => l.startsWith("promote") ? l.replace(/-> some$/, "-> none") : l,
  );

/** The campaign, run in this process one scenario after the other. */
async function inProcess(opts: CampaignOptions): Promise<void> {
  for (const index of planIndices(opts.plan)) {
    const outcome = await judgeRandom(opts.plan.seed, index, {
      diff: faultyDiff,
      shrink: opts.config.shrink,
      // Enough to shrink a little (the test checks the result is no larger and still fails);
      // the suite's time goes here otherwise. A second in the quick tier (tests/tier.ts).
      shrinkMs: sized(5_000, 1_000),
    });
    opts.onItem({ kind: "outcome", outcome });
  }
}

function stub(files: Record<string, string> = {}): DiffCliIO & { out: string; err: string } {
  const io = {
    out: "",
    err: "",
    stdout(t: string) {
      io.out += t;
    },
    stderr(t: string) {
      io.err += t;
    },
    isTerminal: () => false,
    env: (name: string) => ({ HOME: "/home/u" } as Record<string, string>)[name],
    readTextFile: (path: string) => files[path],
    importModule: () => Promise.reject(new Error("no modules")),
    toolchain: () =>
      Promise.resolve({ ocamlopt: ["/bin/ocamlopt"], version: "5.3.0", origin: "user" as const }),
    diff: () => Promise.reject(new Error("not called by --random")),
    runCampaign: inProcess,
  };
  return io;
}

Deno.test("--random options that do not fit are usage errors", async () => {
  for (
    const [args, text] of [
      [["--seed", "3"], "--seed goes with --random N"],
      [["--random", "5", "ref_loop"], "name no scenario with it"],
      [["--random", "0"], "--random must be an integer ≥ 1, got '0'"],
      [["--random", "5", "--shard", "3/2"], "--shard must be I/K"],
      [["--random", "5", "--shard", "x"], "--shard must be I/K"],
      [["--random", "5", "--seed", "x"], "--seed must be an integer ≥ 0, got 'x'"],
      [["--random", "9007199254740993"], "--random must be at most 2^53 - 1"],
    ] as const
  ) {
    const io = stub();
    assert.equal(await run([...args], io), 2, args.join(" "));
    assert.match(io.err, new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")));
  }
});

Deno.test("a campaign reports each scenario, writes shrunk failures as modules, exits 1", async () => {
  const out = Deno.makeTempDirSync({ prefix: "memprof-lab-random-cli-" });
  try {
    const io = stub();
    const status = await run(
      ["--random", "12", "--seed", "4", "--out", out, "--stats", "--no-known"],
      io,
    );
    const failures = io.out.split("\n").filter((l) => / differs at /.test(l));
    assert(failures.length > 0, io.out);
    assert.equal(status, 1, io.err);
    assert.equal(io.err, "");
    for (const line of failures) {
      const m = / -> minimal: (\S+) \((\d+) steps, from (\d+)/.exec(line);
      assert(m !== null, line);
      assert(Number(m[2]) <= Number(m[3]));
      // The written module reproduces the failure.
      const sc = (await import(`file://${m[1]}`)).default as Scenario;
      assert.equal((await faultyDiff(sc)).status, "differs");
    }
    assert.match(io.out, /^random campaign: seed 4, scenarios 0-11, 2 jobs$/m);
    assert.match(io.out, /^ {2}step:alloc +\d+ +[\d.]+ %$/m, io.out.slice(-3000));
    assert.match(io.out, /^12 scenarios: \d+ agree, \d+ differ \(0 known\), 0 refused, 0 errors;/m);
  } finally {
    Deno.removeSync(out, { recursive: true });
  }
});

Deno.test("a random scenario's listed difference is tolerated; a shard runs its part", async () => {
  const out = Deno.makeTempDirSync({ prefix: "memprof-lab-random-cli-" });
  try {
    // Find the failures of the first six scenarios, then list them as known.
    const first = stub();
    await run(
      ["--random", "6", "--seed", "4", "--out", out, "--no-known", "--json", "--no-shrink"],
      first,
    );
    const results = JSON.parse(first.out).results as {
      scenario: string;
      status: string;
      line: string;
    }[];
    const differing = results.filter((r) => r.status === "differs");
    assert(differing.length > 0);
    const known = differing.map((r) => ({
      scenario: r.scenario,
      at: /differs at (callback \d+|collections)/.exec(r.line)![1],
      reason: "injected fault",
    }));
    const io = stub({ "/k.json": JSON.stringify(known) });
    assert.equal(
      await run(
        ["--random", "6", "--seed", "4", "--out", out, "--known", "/k.json", "--no-shrink"],
        io,
      ),
      0,
      io.out,
    );
    assert.match(io.out, /\(known: injected fault\)/);
    const shard = stub({ "/k.json": JSON.stringify(known) });
    await run(
      [
        "--random",
        "6",
        "--seed",
        "4",
        "--shard",
        "2/3",
        "--known",
        "/k.json",
        "--json",
        "--no-shrink",
      ],
      shard,
    );
    assert.deepEqual(
      JSON.parse(shard.out).results.map((r: { index: number }) => r.index),
      [1, 4],
    );
  } finally {
    Deno.removeSync(out, { recursive: true });
  }
});
