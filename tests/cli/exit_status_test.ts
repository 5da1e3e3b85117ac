// Every sub-command through `memprof-lab`, run in a temporary folder with relative paths: 0 when
// it did its job (its output lands in the caller's folder), 1 for a file it cannot use, 2 for a
// wrong command line (no file, an unknown option).
import assert from "node:assert/strict";
import { join } from "node:path";
import { memprofLab, type Ran, root } from "./helpers.ts";

/** Runs every case in `dir` (in parallel) and checks its exit status. */
async function expectStatus(dir: string, want: number, cases: string[][]): Promise<Ran[]> {
  const ran = await Promise.all(cases.map((args) => memprofLab(args, dir)));
  for (const [k, args] of cases.entries()) {
    assert.equal(ran[k].code, want, `memprof-lab ${args.join(" ")}: ${ran[k].stderr}`);
    if (want !== 0) assert.match(ran[k].stderr, /^error: |^sampler: /, args.join(" "));
  }
  return ran;
}

const TRACE_READERS = ["dump", "info", "flamegraph", "hotspots", "identify", "top", "report"];
const TRACE_WRITERS = ["copy", "strip-names"];
const EVENTS_READERS = ["dump", "stats", "gc-stats"];

async function withFolder(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "memprof-lab-status-" });
  try {
    await Deno.copyFile(join(root, "tests/fixtures/memtrace/single_1e-4.ctf"), join(dir, "in.ctf"));
    await Deno.copyFile(
      join(root, "tests/fixtures/runtime_events/d8/18440.events"),
      join(dir, "ring.events"),
    );
    await Deno.writeTextFile(join(dir, "bad.ctf"), "not a trace\n");
    await Deno.writeTextFile(join(dir, "bad.events"), "not a ring\n");
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("trace sub-commands exit 0 on success, writing beside the caller", async () => {
  await withFolder(async (dir) => {
    await expectStatus(dir, 0, [
      ...TRACE_READERS.filter((c) => c !== "report").map((c) => ["trace", c, "in.ctf"]),
      ["trace", "report", "in.ctf", "-o", "r.html"],
      ["trace", "copy", "in.ctf", "c.ctf"],
      ["trace", "strip-names", "in.ctf", "n.ctf"],
      ["trace", "subsample", "in.ctf", "s.ctf", "2"],
      ["trace", "diff", "in.ctf", "in.ctf"],
      ["trace", "export", "in.ctf", "--format", "folded", "-o", "f.txt"],
    ]);
    for (const f of ["r.html", "c.ctf", "n.ctf", "s.ctf", "f.txt"]) {
      assert.ok((await Deno.stat(join(dir, f))).size > 0, f);
    }
  });
});

Deno.test("trace sub-commands exit 1 for a bad or missing file, 2 for a wrong command line", async () => {
  await withFolder(async (dir) => {
    const all = [...TRACE_READERS, ...TRACE_WRITERS, "subsample", "diff", "export"];
    await expectStatus(dir, 1, [
      ...TRACE_READERS.map((c) => ["trace", c, "bad.ctf"]),
      ...TRACE_READERS.map((c) => ["trace", c, "missing.ctf"]),
      ...TRACE_WRITERS.map((c) => ["trace", c, "bad.ctf", "o.ctf"]),
      ["trace", "subsample", "bad.ctf", "o.ctf", "2"],
      ["trace", "diff", "in.ctf", "bad.ctf"],
      ["trace", "export", "bad.ctf", "--format", "folded"],
    ]);
    await expectStatus(dir, 2, [
      ["trace"],
      ["trace", "frob"],
      ...all.map((c) => ["trace", c]),
      ...all.map((c) => ["trace", c, "in.ctf", "--frob"]),
    ]);
    // Nothing was written by the failures.
    const names = [...Deno.readDirSync(dir)].map((e) => e.name).sort();
    assert.deepEqual(names, ["bad.ctf", "bad.events", "in.ctf", "ring.events"]);
  });
});

Deno.test("events sub-commands exit 0, 1 for a bad or missing file, 2 for a wrong command line", async () => {
  await withFolder(async (dir) => {
    await expectStatus(dir, 0, [
      ...EVENTS_READERS.map((c) => ["events", c, "ring.events"]),
      ["events", "export", "ring.events", "--format", "chrome", "-o", "c.json"],
    ]);
    assert.ok((await Deno.stat(join(dir, "c.json"))).size > 0);
    await expectStatus(dir, 1, [
      ...EVENTS_READERS.map((c) => ["events", c, "bad.events"]),
      ...EVENTS_READERS.map((c) => ["events", c, "missing.events"]),
      ["events", "export", "bad.events", "--format", "chrome"],
    ]);
    const all = [...EVENTS_READERS, "export", "watch"];
    await expectStatus(dir, 2, [
      ["events"],
      ["events", "frob"],
      ...all.map((c) => ["events", c]),
      ...all.map((c) => ["events", c, "ring.events", "--frob"]),
    ]);
  });
});

Deno.test("scenario, sampler and ocaml exit 0, 1 and 2 as documented", async () => {
  await withFolder(async (dir) => {
    await Deno.writeTextFile(join(dir, "bad.ts"), "export default 42;\n");
    const [, sampler] = await expectStatus(dir, 0, [
      ["scenario", "--export-ocaml", "ml", "ref_loop"],
      ["sampler", "--rate", "0.01", "--count", "3"],
      ["scenario", "--list"],
    ]);
    assert.match(sampler.stdout, /^domain 0 lambda 0\.01/);
    // The program lands in the caller's folder.
    assert.ok((await Deno.stat(join(dir, "ml", "ref_loop.ml"))).size > 0);
    await expectStatus(dir, 1, [
      ["scenario", "--no-check", "./bad.ts"],
      ["ocaml", "status", "--ocamlopt", "./missing-ocamlopt"],
    ]);
    await expectStatus(dir, 2, [
      ["scenario", "no_such_scenario"],
      ["scenario", "./missing.ts"],
      ["scenario", "--frob"],
      ["sampler"],
      ["sampler", "--rate", "2"],
      ["ocaml"],
      ["ocaml", "frob"],
      ["diff", "--frob"],
      ["diff", "no_such_scenario"],
      ["diff", "--known", "missing.json"],
    ]);
  });
});
