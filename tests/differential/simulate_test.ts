// The simulation's side of a differential run, and diffScenario's answers that need no
// toolchain.
import assert from "node:assert/strict";
import { diffScenario, simulateCanonical } from "../../lib/differential/mod.ts";
import { scenario } from "../../lib/scenario/mod.ts";
import { scenarios } from "../../scenarios/index.ts";
import { twoDomains } from "./helpers.ts";

const refLoop = scenarios.find((s) => s.settings.name === "ref_loop")!;

/** The fixture of the real runtime's ref loop, wherever this checkout keeps it. */
function refFixture(): string | undefined {
  for (const rel of ["../fixtures/", "../../../shared/fixtures/"]) {
    const url = new URL(`${rel}memprof_exact/ref_0.01.txt`, import.meta.url);
    try {
      return Deno.readTextFileSync(url);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
  }
  return undefined;
}

const LINE = /^alloc_minor d0 i=(\d+) size=1 n=([12]) src=normal id=(\d+) stack=\[\] -> none$/;

Deno.test("simulateCanonical of ref_loop gives its 387 samples, one line each", () => {
  const log = simulateCanonical(refLoop);
  assert.equal(log.lines.length, 387);
  const iterations: number[] = [];
  log.lines.forEach((l, k) => {
    const m = LINE.exec(l);
    assert.ok(m, l);
    assert.equal(Number(m[3]), k + 1, "allocations numbered from 1");
    iterations.push(Number(m[1]));
  });
  for (let k = 1; k < iterations.length; k++) {
    assert.ok(iterations[k] > iterations[k - 1], "one sample per iteration at most, in order");
  }
  assert.ok(iterations[0] >= 1 && iterations[386] <= 20_000);
  // The minorGc step before the profile; nothing else collects.
  assert.equal(log.minorCollections, 1);
  assert.equal(log.majorCycles, 0);
  assert.equal(log.minorHeapWords, 262_144);
  assert.equal(log.overflow, false);
});

Deno.test("simulateCanonical of ref_loop samples the iterations the real runtime sampled", () => {
  // "iteration n_samples" of each alloc callback.
  const samples = simulateCanonical(refLoop).lines.map((l) => {
    const m = LINE.exec(l);
    return m ? `${m[1]} ${m[2]}` : l;
  });
  const fixture = refFixture();
  if (fixture === undefined) {
    // Without the fixture: the samples the simulation's own golden log records.
    const golden = Deno.readTextFileSync(
      new URL("../golden/ref_loop/callbacks.txt", import.meta.url),
    ).split("\n").flatMap((l) => {
      const m = /^(\d+) minor size=1 n=(\d+)$/.exec(l);
      return m ? [`${m[1]} ${m[2]}`] : [];
    });
    assert.equal(golden.length, 387);
    assert.deepEqual(samples, golden);
    return;
  }
  const rows = fixture.split("\n").filter((l) => l !== "" && !l.startsWith("#"));
  assert.equal(rows.length, 387);
  assert.deepEqual(
    samples,
    rows.map((l) => {
      const m = /^(\d+) minor size=1 n=(\d+)$/.exec(l);
      return m ? `${m[1]} ${m[2]}` : l;
    }),
  );
});

Deno.test("simulateCanonical adds the export's harness frames: 3 on main, 2 on spawned domains", () => {
  const lines = simulateCanonical(twoDomains).lines.filter((l) => l.startsWith("alloc_minor"));
  assert.deepEqual(lines.map((l) => / stack=\[([^\]]*)\]/.exec(l)?.[1]), [
    "Two.main <harness> <harness> <harness>",
    "Two.work <harness> <harness>",
    "Two.work <harness> <harness>",
    "Two.work <harness> <harness>",
    "<harness> <harness> <harness>",
  ]);
  assert.ok(lines.slice(1, 4).every((l) => l.startsWith("alloc_minor d1 i=")));
});

Deno.test("simulateCanonical takes the minor heap size from the scenario", () => {
  const sc = scenario({ name: "heap", minorHeapWords: 8192 }, (s) => void s.main.alloc(1));
  assert.deepEqual(simulateCanonical(sc), {
    lines: [],
    minorCollections: 0,
    majorCycles: 0,
    minorHeapWords: 8192,
    overflow: false,
  });
});

Deno.test("diffScenario answers not exportable, with the reason, before looking for a compiler", async () => {
  const sc = scenario(
    { name: "ext_only" },
    (s) => void s.main.userEvent("ev", { type: "custom", bytes: [1] }),
  );
  const r = await diffScenario(sc, {
    ocamlopt: ["/nonexistent/ocamlopt"],
    cacheDir: "/nonexistent/cache",
  });
  assert.equal(r.scenario, "ext_only");
  assert.equal(r.status, "not exportable");
  assert.ok(r.status === "not exportable");
  assert.match(r.reason, /^custom user events are not exported/);
});
