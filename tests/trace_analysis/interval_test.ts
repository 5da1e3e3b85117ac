// The exact intervals and the diff's test, against brute force and known values.
import assert from "node:assert/strict";
import {
  binomialCdf,
  binomialUpper,
  EXACT_LIMIT,
  whatIfInterval,
  wordsInterval,
} from "../../lib/trace_analysis/intervals.ts";
import { benjaminiHochberg, rateTestPValue } from "../../lib/trace_analysis/_significance.ts";
import { expectedCoverage } from "./_ground_truth.ts";

function pmf(k: number, n: number, p: number): number {
  let c = 1;
  for (let i = 0; i < k; i++) c = (c * (n - i)) / (i + 1);
  return c * p ** k * (1 - p) ** (n - k);
}

Deno.test("binomial tails equal the brute-force sums of the probabilities", () => {
  for (const n of [1, 5, 17, 60]) {
    for (const p of [0.01, 0.1, 0.37, 0.5, 0.9]) {
      for (let s = 0; s <= n; s++) {
        let lo = 0, up = 0;
        for (let k = 0; k <= s; k++) lo += pmf(k, n, p);
        for (let k = s; k <= n; k++) up += pmf(k, n, p);
        assert.ok(Math.abs(lo - binomialCdf(s, n, p)) < 1e-12, `P(X<=${s}) n=${n} p=${p}`);
        assert.ok(Math.abs(up - binomialUpper(s, n, p)) < 1e-12, `P(X>=${s}) n=${n} p=${p}`);
      }
    }
  }
});

Deno.test("at small rates the interval is Garwood's exact Poisson interval over the rate", () => {
  // Garwood (1936) 95 % limits of a Poisson mean: 0 → [0, 3.6889]; 3 → [0.6187, 8.7673];
  // 10 → [4.7954, 18.3904].
  for (
    const [s, lo, hi] of [[0, 0, 3.6889], [3, 0.6187, 8.7673], [10, 4.7954, 18.3904]] as const
  ) {
    const [l, h] = wordsInterval(s, 1e-6, 0.95);
    assert.ok(Math.abs(l * 1e-6 - lo) < 1e-3, `${s}: low ${l * 1e-6} vs ${lo}`);
    assert.ok(Math.abs(h * 1e-6 - hi) < 1e-3, `${s}: high ${h * 1e-6} vs ${hi}`);
  }
});

Deno.test("the bounds are the last integers whose tails reach (1 - confidence) / 2", () => {
  for (const [s, rate] of [[1, 0.3], [3, 1e-2], [7, 1e-4], [250, 1e-3], [40, 0.5]] as const) {
    for (const c of [0.8, 0.95, 0.99]) {
      const t = (1 - c) / 2;
      const [l, h] = wordsInterval(s, rate, c);
      assert.ok(binomialCdf(s, h, rate) >= t && binomialCdf(s, h + 1, rate) < t, `high ${s}`);
      assert.ok(binomialUpper(s, l, rate) >= t, `low ${s}`);
      if (l > s) assert.ok(binomialUpper(s, l - 1, rate) < t, `low - 1 ${s}`);
    }
  }
  assert.deepEqual(wordsInterval(12, 1, 0.95), [12, 12]); // rate 1: every word sampled
  assert.deepEqual(wordsInterval(0, 0.5, 0.95)[0], 0);
  // Wider at higher confidence, and at a lower what-if rate.
  const [l95, h95] = wordsInterval(20, 1e-3, 0.95), [l99, h99] = wordsInterval(20, 1e-3, 0.99);
  assert.ok(l99 < l95 && h95 < h99);
  const [lw, hw] = whatIfInterval(20, 1e-3, 1e-4, 0.95);
  assert.deepEqual([lw, hw], wordsInterval(2, 1e-4, 0.95));
  assert.ok(lw < l95 && h95 < hw);
  assert.throws(() => wordsInterval(1.5, 0.1, 0.95), RangeError);
  assert.throws(() => wordsInterval(1, 0, 0.95), RangeError);
  assert.throws(() => wordsInterval(1, 0.1, 1), RangeError);
});

Deno.test("exact intervals cover the truth with probability at least the confidence", () => {
  // The coverage of a truth of W words at rate λ, summed exactly over the binomial's outcomes:
  // never below 95 %, from 0.3 to 300 expected samples (the guarantee of exact intervals; the
  // price is coverage above 95 % at small counts).
  let min = 1, max = 0;
  for (const rate of [1e-2, 1e-4]) {
    for (const mu of [0.3, 1, 2.5, 5, 10, 30, 100, 300]) {
      const c = expectedCoverage(Math.round(mu / rate), rate, 0.95);
      min = Math.min(min, c);
      max = Math.max(max, c);
    }
  }
  assert.ok(min >= 0.95, `min ${min}`);
  assert.ok(max < 1, `max ${max}`);
});

Deno.test("the diff's test: exact conditional binomial p-values, and Benjamini-Hochberg", () => {
  // Equal rates: 0 against 10 samples has p = 2 × 0.5^10.
  assert.ok(Math.abs(rateTestPValue(0, 10, 1e-4, 1e-4) - 2 * 0.5 ** 10) < 1e-15);
  assert.equal(rateTestPValue(7, 7, 1e-4, 1e-4), 1);
  assert.equal(rateTestPValue(0, 0, 1e-4, 1e-4), 1);
  // B sampled 10 times more often: 5 samples in A and 50 in B is no change at all.
  assert.equal(rateTestPValue(5, 50, 1e-5, 1e-4), 1);
  assert.ok(rateTestPValue(5, 50, 1e-4, 1e-4) < 1e-8);
  // Durations: B twice as long at the same rate, compared per second.
  assert.equal(rateTestPValue(10, 20, 1e-4, 1e-4, 1, 2), 1);
  // Benjamini-Hochberg's adjusted p-values, by hand: sorted p (0.01, 0.02, 0.03, 0.5) × 4 / rank
  // = (0.04, 0.04, 0.04, 0.5), each the minimum of itself and those after it.
  const q = benjaminiHochberg([0.03, 0.5, 0.01, 0.02, NaN]);
  assert.deepEqual(q.slice(0, 4).map((x) => +x.toFixed(12)), [0.04, 0.5, 0.04, 0.04]);
  assert.ok(Number.isNaN(q[4]));
});

Deno.test("past 2^16 samples the normal limit takes over, continuous with the exact interval", () => {
  for (const rate of [1e-5, 1e-2, 0.3]) {
    const [l0, h0] = wordsInterval(EXACT_LIMIT, rate, 0.95); // exact: the sums
    const [l1, h1] = wordsInterval(EXACT_LIMIT + 1, rate, 0.95); // normal limit
    const width = h0 - l0, step = 1 / rate; // one more sample moves the bounds by about 1/rate
    assert.ok(Math.abs(l1 - l0 - step) < 1e-3 * width, `low at ${rate}: ${l0} then ${l1}`);
    assert.ok(Math.abs(h1 - h0 - step) < 1e-3 * width, `high at ${rate}: ${h0} then ${h1}`);
  }
  // A hostile trace's counts: bounds at once (the sums would take minutes), around s / rate.
  const [l, h] = wordsInterval(2 ** 45, 0.5, 0.95);
  assert.ok(l < 2 ** 46 && 2 ** 46 < h && h - l < 1e-5 * 2 ** 46);
  assert.deepEqual(wordsInterval(2 ** 52, 1e-4, 0.95).map(Number.isNaN), [true, true]); // > 2^53
  // The tails too: P(X <= np) of a binomial of variance 2^40 is one half.
  assert.ok(Math.abs(binomialCdf(2 ** 41, 2 ** 42, 0.5) - 0.5) < 1e-6);
});
