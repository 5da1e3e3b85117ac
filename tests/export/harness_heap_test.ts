import assert from "node:assert/strict";
import { harnessBlocks, harnessMajorHeap } from "../../lib/export/_harness_heap.ts";
import { EXPORTED_HARNESS_STATE } from "../../lib/runtime/major_gc.ts";
import { MajorHeap } from "../../lib/runtime/_major_heap.ts";

const base = { domains: 1, maxDepth: 1, profiles: 1, exceptions: 0 };

/** Figures read from OCaml 5.3.0's debug runtime at the scenario's start (work counter minus
 * allocation counter, heap words, marking work of the cycle then running). */
const measured = [
  {
    name: "reference (array_loop_300)",
    sites: [2],
    minor: 262_144,
    ahead: 138_625,
    heap: 53_507,
    mark: 554,
  },
  {
    name: "two 300-slot sites (array_loop_5000)",
    sites: [300],
    minor: 262_144,
    ahead: 138_636,
    heap: 54_113,
    mark: 1150,
  },
  {
    name: "1,000-slot site (lifecycle)",
    sites: [1, 1000, 1],
    minor: 262_144,
    ahead: 138_589,
    heap: 55_513,
    mark: 2562,
  },
  {
    name: "20,000-slot site, 32,768-word minor heap (growing_set)",
    sites: [20_000, 80],
    minor: 32_768,
    maxDepth: 3,
    ahead: 370_246,
    heap: 97_609,
    mark: 40_714,
  },
  {
    name: "100,000-slot site (bigarray_custom)",
    sites: [100_000],
    minor: 262_144,
    ahead: 1_088_214,
    heap: 253_513,
    mark: 200_550,
  },
];

Deno.test("the reference harness gives the state measured in its program", () => {
  const s = harnessMajorHeap(harnessBlocks({ ...base, sites: [2] }), 262_144);
  assert.equal(s.workAhead, EXPORTED_HARNESS_STATE.workAhead);
  assert.equal(s.markWork, EXPORTED_HARNESS_STATE.markWork);
  assert.deepEqual(s.large, EXPORTED_HARNESS_STATE.large);
});

for (const m of measured) {
  Deno.test(`harness heap of ${m.name}: heap and marking exact, work ahead within 50 words or 0.01 %`, () => {
    const s = harnessMajorHeap(
      harnessBlocks({ ...base, maxDepth: m.maxDepth ?? 1, sites: m.sites }),
      m.minor,
    );
    assert.equal(new MajorHeap(s.pools, s.large).heapWords, m.heap);
    assert.equal(s.markWork, m.mark);
    const bound = Math.max(50, m.ahead * 1e-4);
    assert.ok(Math.abs(s.workAhead - m.ahead) <= bound, `${s.workAhead} vs ${m.ahead}`);
  });
}
