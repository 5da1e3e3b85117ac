// The profile's classes group lengths into size classes (issue 29: one class per exact length
// made nearly one per allocation on deep traces). Every output that does not show a length must
// be byte-identical to the one from exact lengths; the size filter stays exact (applied to each
// object's length while reading); pprof, which shows lengths, refuses grouped ones.
import assert from "node:assert/strict";
import { Reader } from "../../lib/memtrace/mod.ts";
import { runScenario, scenario } from "../../lib/scenario/mod.ts";
import {
  aggregateTrace,
  analyzeTrace,
  buildReport,
  diffOf,
  foldedStacks,
  pprofOf,
  speedscopeOf,
  topOf,
  TraceAnalysisError,
} from "../../lib/trace_analysis/mod.ts";
import { EXACT_LENGTHS_UP_TO, sizeClassOf } from "../../lib/trace_analysis/aggregate.ts";
import { naiveGroups, naiveObjects } from "./_naive.ts";
import { syntheticTrace } from "./_synthetic.ts";

const FIXTURES = new URL("../fixtures/memtrace/", import.meta.url);
const single = Deno.readFileSync(new URL("single_1e-4.ctf", FIXTURES));
const multi = Deno.readFileSync(new URL("multi_mdtrace_3e-4.renumbered.ctf", FIXTURES));
const synthetic = syntheticTrace({ events: 20_000, domains: 2, seed: 9 });

/** At rate 1, one site allocating every length from 1 to 300 words, twice. */
function manyLengths(): Uint8Array {
  return runScenario(
    scenario({ name: "lengths", seed: 5 }, (s) => {
      const m = s.main;
      m.memprof.start({ samplingRate: 1 });
      m.call("Len.main@len.ml:1:0-9", () => {
        for (let k = 0; k < 2; k++) {
          for (let w = 1; w <= 300; w++) {
            const major = w > 256 ? { source: "major" as const } : {};
            m.alloc(w, { ...major, at: "Len.a@len.ml:2:0-9" });
          }
        }
      });
      m.memprof.stop();
    }),
  ).ctf;
}

Deno.test("sizeClassOf: exact up to 16 words, then (2^(k-1), 2^k]", () => {
  assert.equal(EXACT_LENGTHS_UP_TO, 16);
  for (let w = 0; w <= 16; w++) assert.deepEqual(sizeClassOf(w), { min: w, max: w });
  assert.deepEqual(sizeClassOf(17), { min: 17, max: 32 });
  assert.deepEqual(sizeClassOf(32), { min: 17, max: 32 });
  assert.deepEqual(sizeClassOf(33), { min: 33, max: 64 });
  assert.deepEqual(sizeClassOf(2 ** 31), { min: 2 ** 30 + 1, max: 2 ** 31 });
  assert.deepEqual(sizeClassOf(2 ** 31 + 1), { min: 2 ** 31 + 1, max: 2 ** 32 });
  assert.deepEqual(sizeClassOf(2 ** 40 + 1), { min: 2 ** 40 + 1, max: 2 ** 41 });
  for (let w = 17; w < 5000; w++) {
    const c = sizeClassOf(w);
    assert.ok(c.min <= w && w <= c.max && Number.isInteger(Math.log2(c.max)), `${w}`);
  }
});

Deno.test("classes are bounded by stacks and size classes, not by allocations", () => {
  const bytes = manyLengths();
  const exact = aggregateTrace(Reader.fromBytes(bytes), { lengths: "exact" });
  const grouped = aggregateTrace(Reader.fromBytes(bytes));
  // 300 lengths at one stack: 300 exact classes; 16 + (17..32, ..., 257..512) = 21 grouped.
  assert.equal(exact.classes.node.length, 300);
  assert.equal(grouped.classes.node.length, 16 + 5);
  assert.equal(exact.classes.lengthMax, undefined);
  assert.deepEqual(Array.from(grouped.classes.lengthMax!).slice(14), [
    15,
    16,
    32,
    64,
    128,
    256,
    512,
  ]);
  assert.deepEqual(Array.from(grouped.classes.length).slice(14), [15, 16, 17, 33, 65, 129, 257]);
  assert.equal(grouped.stats.samples, exact.stats.samples);
});

Deno.test("outputs that show no length are byte-identical with size classes", () => {
  for (const bytes of [single, multi, synthetic, manyLengths()]) {
    for (const liveAt of [undefined, "peak" as const, "end" as const]) {
      const e = analyzeTrace(Reader.fromBytes(bytes), { liveAt, lengths: "exact" });
      const g = analyzeTrace(Reader.fromBytes(bytes), { liveAt });
      assert.ok(g.data.classes.node.length <= e.data.classes.node.length);
      for (const by of ["site", "function", "stack"] as const) {
        assert.equal(
          JSON.stringify(topOf(g.data, g.selector, { by, limit: 0 })),
          JSON.stringify(topOf(e.data, e.selector, { by, limit: 0 })),
        );
        assert.equal(
          JSON.stringify(diffOf(g.data, e.data, g.selector, e.selector, { by, show: "all" })),
          JSON.stringify(diffOf(e.data, e.data, e.selector, e.selector, { by, show: "all" })),
        );
      }
      assert.deepEqual(foldedStacks(g.data, g.selector), foldedStacks(e.data, e.selector));
      assert.equal(
        JSON.stringify(speedscopeOf(g.data, g.selector)),
        JSON.stringify(speedscopeOf(e.data, e.selector)),
      );
    }
    assert.equal(
      buildReport(aggregateTrace(Reader.fromBytes(bytes))),
      buildReport(aggregateTrace(Reader.fromBytes(bytes), { lengths: "exact" })),
    );
  }
});

Deno.test("the size filter stays exact inside a size class", () => {
  const cases = [
    { bytes: manyLengths(), sizes: [[20, 25], [17, 17], [300, 300], [1, 40], [33, 300]] },
    { bytes: synthetic, sizes: [[300, 310], [10, 11], [513, 700], [17, 4000], [3, 3]] },
  ];
  for (const { bytes, sizes } of cases) {
    const objects = naiveObjects(bytes);
    for (const [sizeMin, sizeMax] of sizes) {
      const want = naiveGroups(objects, "site", { sizeMin, sizeMax });
      assert.ok(want.total.samples > 0, `${sizeMin}..${sizeMax} selects something`);
      const g = analyzeTrace(Reader.fromBytes(bytes), { sizeMin, sizeMax });
      const e = analyzeTrace(Reader.fromBytes(bytes), { sizeMin, sizeMax, lengths: "exact" });
      const top = topOf(g.data, g.selector, { limit: 0 });
      assert.equal(top.totals.samples, want.total.samples, `${sizeMin}..${sizeMax}`);
      assert.equal(top.totals.promotedSamples, want.total.promoted);
      assert.equal(top.totals.liveEndBytes / top.trace.bytesPerSample, want.total.liveEnd);
      for (const row of top.rows) assert.equal(row.samples, want.groups.get(row.key)?.samples);
      assert.equal(
        JSON.stringify(top),
        JSON.stringify(topOf(e.data, e.selector, { limit: 0 })),
      );
      assert.deepEqual(foldedStacks(g.data, g.selector), foldedStacks(e.data, e.selector));
    }
  }
});

Deno.test("pprof, which shows each sample's length, refuses grouped lengths", () => {
  const g = analyzeTrace(Reader.fromBytes(synthetic));
  assert.throws(
    () => pprofOf(g.data, g.selector),
    (e) => e instanceof TraceAnalysisError && e.option === "lengths",
  );
  const e = analyzeTrace(Reader.fromBytes(synthetic), { lengths: "exact" });
  assert.ok(pprofOf(e.data, e.selector).length > 0);
  assert.throws(
    () => aggregateTrace(Reader.fromBytes(single), { sizeMin: 1.5 }),
    (x) => x instanceof TraceAnalysisError && x.option === "size",
  );
});
