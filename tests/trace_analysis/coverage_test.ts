// Ground truth for the error bars: the engine knows every allocation of its runs, so the
// intervals of `trace top` can be checked against the truth, and `trace diff` between runs of
// one program must find (almost) nothing. CI runs a few trials (a few seconds); the full table
// of docs/trace-tools.md — every rate from 1e-2 to 1e-5, small and large blocks, allocated and
// live, 1,000 trials each, and 1,000 diffs — is `deno task coverage` (tests/trace_analysis/
// coverage_table.ts). MEMPROF_LAB_COVERAGE_RUNS sets the runs (of 10 groups) per cell here.
//
// Bounds: a cell's covered count is Binomial(trials, coverage) with the coverage the exact
// intervals have in theory at these truths (≥ 95 %, computed exactly); the test asserts that
// the count is inside that binomial's central 99.9 % — fixed seeds (runs), so it either
// always passes or always fails.
import assert from "node:assert/strict";
import { binomialBounds, BLOCKS, coverage, falsePositives } from "./_ground_truth.ts";

const RUNS = Number(Deno.env.get("MEMPROF_LAB_COVERAGE_RUNS") ?? 2);
const GROUPS = 10;

Deno.test("95 % intervals cover the engine's true allocated and live bytes as often as exact intervals must", () => {
  for (
    const c of [{ rate: 1e-2, words: BLOCKS.small }, { rate: 1e-4, words: BLOCKS.large }, {
      rate: 1e-5,
      words: BLOCKS.large,
    }]
  ) {
    for (const r of coverage(c, RUNS, GROUPS)) {
      const [lo, hi] = binomialBounds(r.trials, r.expected);
      const what = `rate ${c.rate}, ${c.words} words, ${r.quantity}: ${r.covered}/${r.trials}`;
      assert.ok(r.expected >= 0.95, `${what}: theory ${r.expected}`);
      assert.ok(lo <= r.covered && r.covered <= hi, `${what} outside [${lo}, ${hi}]`);
    }
  }
});

Deno.test("trace diff between runs of one program calls few changes significant (false positives within the nominal 5 %)", () => {
  const pairs = Math.max(3, RUNS * 2);
  const f = falsePositives({ rate: 1e-3, words: BLOCKS.small }, pairs, GROUPS);
  // Nothing changed: with Benjamini-Hochberg at 5 %, P(any significant row) ≤ 5 % per diff;
  // each raw test rejects with probability ≤ 5 % (exact tests are conservative).
  const [, anyHi] = binomialBounds(f.diffs, 0.05);
  const [, rawHi] = binomialBounds(f.tests, 0.05);
  assert.ok(f.diffsWithAny <= anyHi, `${f.diffsWithAny} of ${f.diffs} diffs (bound ${anyHi})`);
  assert.ok(f.rawRejections <= rawHi, `${f.rawRejections} of ${f.tests} tests (bound ${rawHi})`);
  assert.ok(f.tests >= pairs * 40, `${f.tests} tests`); // every group's sites were compared
});
