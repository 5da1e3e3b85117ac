import assert from "node:assert/strict";
import lifecycleText from "../fixtures/memprof_lifecycle/lifecycle_0.001_600000_1000.txt" with {
  type: "text",
};
import { Runtime } from "../../lib/runtime/mod.ts";
import { checkDomainInvariants } from "../../lib/memprof/invariants.ts";

/**
 * The program of fixtures/memprof_lifecycle, step by step: what OCaml code and the runtime
 * allocate on the minor heap, which blocks the `keep` array holds.
 */
function runLifecycle(rate: number, n: number, k: number) {
  const rt = new Runtime();
  const d = rt.mainDomain;
  // `keep` is allocated and promoted before the profile starts; its slots are roots.
  const keep = Array.from({ length: k }, () => rt.root());
  d.fullMajor();
  d.minorGc();
  // Gc.quick_stat: a 17-field record and three boxed floats.
  d.allocFromRuntime(17);
  for (let j = 0; j < 3; j++) d.allocFromRuntime(1);
  let iter = 0;
  const log: string[] = [];
  const minorBefore = rt.minorCollections;
  const p = d.memprofStart({
    samplingRate: rate,
    callstackSize: 0,
    tracker: {
      allocMinor: () => {
        log.push(`${iter} alloc_minor id=${iter}`);
        d.alloc(1); // Some i
        return iter;
      },
      allocMajor: () => {
        log.push(`${iter} alloc_major id=${iter}`);
        d.alloc(1);
        return iter;
      },
      promote: (id: number) => {
        log.push(`${iter} promote id=${id}`);
        d.alloc(1); // Some id
        return id;
      },
      deallocMinor: (id: number) => {
        log.push(`${iter} dealloc_minor id=${id}`);
      },
      deallocMajor: (id: number) => {
        log.push(`${iter} dealloc_major id=${id}`);
      },
    },
  });
  for (iter = 1; iter <= n; iter++) {
    const r = d.alloc(1);
    if (iter % 3 === 0) keep[Math.floor(iter / 3) % k].set(r, 1);
    if (iter % 10_000 === 0) checkDomainInvariants(d.memprof);
  }
  const zero = d.alloc(1); // ref 0
  for (const slot of keep) slot.set(zero, 1);
  d.fullMajor();
  d.memprofStop();
  d.memprofDiscard(p);
  checkDomainInvariants(d.memprof);
  return { log, minors: rt.minorCollections - minorBefore };
}

Deno.test("lifecycle: every callback at the same iteration as the real OCaml 5.3 runtime", () => {
  const lines = lifecycleText.split("\n").filter((l) => l.length > 0);
  assert.ok(lines[0].startsWith("# program=lifecycle"));
  const expected = lines.slice(1);
  const { log, minors } = runLifecycle(0.001, 600_000, 1000);
  // The header's minor_collections: 4 in the loop, 2 per major cycle of Gc.full_major.
  assert.ok(lines[0].includes("minor_collections=10"));
  assert.equal(minors, 10);
  const firstDiff = log.findIndex((l, i) => l !== expected[i]);
  assert.equal(firstDiff === -1 ? null : [firstDiff, log[firstDiff], expected[firstDiff]], null);
  assert.deepEqual(log, expected);
});
