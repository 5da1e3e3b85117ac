// The binomial variates subsample draws for allocations of many samples (issue 23): their
// distribution against the exact one, on both methods (inversion, BTPE), and their cost for
// counts up to 2^53 - 1.
import assert from "node:assert/strict";
import { binomial } from "../../lib/memtrace_tools/_binomial.ts";
import { OCamlRandomState } from "../../lib/tracer/mod.ts";
import { logGamma } from "../../lib/trace_analysis/intervals.ts";
import { mulberry32 } from "../prng.ts";

/** log P(X = k) for X ~ Binomial(n, p), through ln Γ by Lanczos (exact enough for tests). */
function logPmf(n: number, p: number, k: number): number {
  return logGamma(n + 1) - logGamma(k + 1) - logGamma(n - k + 1) + k * Math.log(p) +
    (n - k) * Math.log1p(-p);
}

/**
 * Pearson's chi-square statistic of `draws` variates of Binomial(n, p) against the exact
 * probabilities, values of expected count below 5 pooled into the two tails; with its degrees of
 * freedom.
 */
function chiSquare(n: number, p: number, draws: number, uniform: () => number) {
  const counts = new Map<number, number>();
  for (let i = 0; i < draws; i++) {
    const x = binomial(n, p, uniform);
    assert.ok(Number.isInteger(x) && x >= 0 && x <= n, `variate ${x}`);
    counts.set(x, (counts.get(x) ?? 0) + 1);
  }
  const mode = Math.floor((n + 1) * p);
  // Cells from the mode outwards while their expected count is at least 5.
  let lo = mode, hi = mode;
  const expected = (k: number) => draws * Math.exp(logPmf(n, p, k));
  while (lo > 0 && expected(lo - 1) >= 5) lo--;
  while (hi < n && expected(hi + 1) >= 5) hi++;
  let stat = 0, inside = 0, observedInside = 0;
  for (let k = lo; k <= hi; k++) {
    const e = expected(k), o = counts.get(k) ?? 0;
    stat += (o - e) ** 2 / e;
    inside += e;
    observedInside += o;
  }
  const eTails = draws - inside, oTails = draws - observedInside;
  if (eTails > 1e-9) stat += (oTails - eTails) ** 2 / eTails;
  return { stat, df: hi - lo + (eTails > 1e-9 ? 1 : 0) };
}

/** A chi-square quantile far in the tail (Wilson–Hilferty, z = 4.5: p ≈ 3e-6). */
function critical(df: number): number {
  const z = 4.5;
  return df * (1 - 2 / (9 * df) + z * Math.sqrt(2 / (9 * df))) ** 3;
}

Deno.test("binomial variates follow the exact distribution (inversion and BTPE)", () => {
  const rnd = mulberry32(23);
  for (
    const [n, p] of [
      [10, 0.3], // inversion
      [257, 0.5], // BTPE (mean 128)
      [1000, 0.001], // inversion, mean 1
      [1000, 0.05], // BTPE near its threshold (mean 50)
      [5000, 0.9], // BTPE on 1 - p
      [100_000, 1 / 3], // BTPE, squeezes
    ]
  ) {
    const { stat, df } = chiSquare(n, p, 40_000, rnd);
    assert.ok(stat < critical(df), `n ${n}, p ${p}: chi-square ${stat.toFixed(1)} on ${df} df`);
  }
});

Deno.test("binomial variates for counts up to 2^53 - 1 are quick, in range, and centred", () => {
  const rng = OCamlRandomState.make([1]);
  const uniform = () => Number(rng.next() >> 11n) / 2 ** 53;
  for (const [n, p] of [[2 ** 53 - 1, 0.5], [2 ** 53 - 1, 2 ** -30], [2 ** 31, 0.1]]) {
    const t0 = performance.now();
    const draws = 2_000;
    let sum = 0;
    for (let i = 0; i < draws; i++) {
      const x = binomial(n, p, uniform);
      assert.ok(Number.isSafeInteger(x) && x >= 0 && x <= n);
      sum += x;
    }
    const ms = performance.now() - t0;
    // The mean of 2,000 variates is within 5 standard errors of n·p.
    const sd = Math.sqrt(n * p * (1 - p) / draws);
    assert.ok(Math.abs(sum / draws - n * p) < 5 * sd, `n ${n}, p ${p}: mean ${sum / draws}`);
    assert.ok(ms < 5_000, `n ${n}, p ${p}: ${ms.toFixed(0)} ms for ${draws} variates`);
  }
  assert.equal(binomial(2 ** 53 - 1, 1, uniform), 2 ** 53 - 1);
  assert.equal(binomial(2 ** 53 - 1, 0, uniform), 0);
  assert.throws(() => binomial(2 ** 53, 0.5, uniform), RangeError);
  assert.throws(() => binomial(-1, 0.5, uniform), RangeError);
});
