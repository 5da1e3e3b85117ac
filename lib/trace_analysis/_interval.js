// @ts-check
/**
 * Exact confidence intervals for sampled quantities, under memprof's sampling model: every word
 * of every block (header included) is sampled independently with probability λ (the sample
 * rate), so the samples `s` of a set of blocks totalling `n` words are Binomial(n, λ) — whether
 * the set is a site's allocations, a function's, a stack's, or the objects of a site live at one
 * time (sampling does not change what survives).
 *
 * The interval for the unknown `n` given `s` and a known λ is the exact (Clopper–Pearson-style)
 * one: every `n` under which `s` is not in either tail of probability (1 − confidence) / 2,
 * found by bisection on the integers, the tails summed term by term (log-space, no normal
 * approximation at any count). Plain JavaScript with no imports: the HTML report inlines it.
 * @module
 */

const LANCZOS = [
  0.99999999999980993,
  676.5203681218851,
  -1259.1392167224028,
  771.32342877765313,
  -176.61502916214059,
  12.507343278686905,
  -0.13857109526572012,
  9.9843695780195716e-6,
  1.5056327351493116e-7,
];

/**
 * ln Γ(x) for x ≥ 0.5 (Lanczos, g = 7, nine terms: relative error below 1e-15).
 * @param {number} x
 * @returns {number}
 */
export function logGamma(x) {
  const y = x - 1;
  let a = LANCZOS[0];
  const t = y + 7.5;
  for (let i = 1; i < 9; i++) a += LANCZOS[i] / (y + i);
  return 0.5 * Math.log(2 * Math.PI) + (y + 0.5) * Math.log(t) - t + Math.log(a);
}

/**
 * ln Γ(b + a) − ln Γ(b) for b ≥ 1, a ≥ 0, without the cancellation of two huge logarithms when
 * b is large (Stirling's series, whose error at b ≥ 1e4 is below 1e-25).
 * @param {number} b
 * @param {number} a
 * @returns {number}
 */
function logGammaRatio(b, a) {
  if (b < 1e4) return logGamma(b + a) - logGamma(b);
  const c = b + a;
  /** @param {number} x */
  const series = (x) => 1 / (12 * x) - 1 / (360 * x * x * x);
  return (b - 0.5) * Math.log1p(a / b) + a * Math.log(c) - a + series(c) - series(b);
}

/**
 * ln P(X = k) for X ~ Binomial(n, p), 0 ≤ k ≤ n integers, 0 < p < 1.
 * @param {number} k
 * @param {number} n
 * @param {number} p
 */
function logPmf(k, n, p) {
  return logGammaRatio(n - k + 1, k) - logGamma(k + 1) + k * Math.log(p) +
    (n - k) * Math.log1p(-p);
}

/** Relative size at which a tail's next term no longer matters. */
const NEGLIGIBLE = 1e-17;

/**
 * P(X ≤ s) for X ~ Binomial(n, p), summed from `s` down while the terms decrease (from `s + 1`
 * up, as a complement, when `s` is past the mode and the sum would be large anyway).
 * @param {number} s
 * @param {number} n
 * @param {number} p
 * @returns {number}
 */
export function binomialCdf(s, n, p) {
  if (s < 0) return 0;
  if (s >= n) return 1;
  if (p <= 0) return 1;
  if (p >= 1) return 0;
  if (s > (n + 1) * p) return 1 - binomialUpper(s + 1, n, p);
  const q = 1 - p;
  let term = 1, sum = 1;
  for (let k = s; k >= 1; k--) {
    term *= (k * q) / ((n - k + 1) * p);
    sum += term;
    if (term < NEGLIGIBLE * sum) break;
  }
  return Math.min(1, Math.exp(logPmf(s, n, p)) * sum);
}

/**
 * P(X ≥ s) for X ~ Binomial(n, p), summed from `s` up while the terms decrease (as a complement
 * below the mode).
 * @param {number} s
 * @param {number} n
 * @param {number} p
 * @returns {number}
 */
export function binomialUpper(s, n, p) {
  if (s <= 0) return 1;
  if (s > n) return 0;
  if (p <= 0) return 0;
  if (p >= 1) return 1;
  if (s < (n + 1) * p) return 1 - binomialCdf(s - 1, n, p);
  const q = 1 - p;
  let term = 1, sum = 1;
  for (let k = s; k < n; k++) {
    term *= ((n - k) * p) / ((k + 1) * q);
    sum += term;
    if (term < NEGLIGIBLE * sum) break;
  }
  return Math.min(1, Math.exp(logPmf(s, n, p)) * sum);
}

/**
 * The exact interval for the number of words `n` behind `s` samples at rate `rate`: the smallest
 * and largest integers `n` with P(X ≥ s | n) ≥ α/2 and P(X ≤ s | n) ≥ α/2, α = 1 − confidence.
 * At rate 1 every word is sampled: the interval is `[s, s]`.
 * @param {number} s samples (a non-negative integer)
 * @param {number} rate the sample rate λ, in (0, 1]
 * @param {number} confidence in (0, 1)
 * @returns {[number, number]} words, low and high
 */
export function wordsInterval(s, rate, confidence) {
  if (!(s >= 0 && Number.isInteger(s))) throw new RangeError(`samples must be a count: ${s}`);
  if (!(rate > 0 && rate <= 1)) throw new RangeError(`rate must be in (0, 1]: ${rate}`);
  if (!(confidence > 0 && confidence < 1)) {
    throw new RangeError(`confidence must be in (0, 1): ${confidence}`);
  }
  if (rate === 1) return [s, s];
  const tail = (1 - confidence) / 2;
  // High: P(X ≤ s | n) decreases with n. Bracket, then bisect on the integers.
  let lo = s, hi = Math.ceil((s + 3 * Math.sqrt(s + 1) + 5) / rate);
  while (binomialCdf(s, hi, rate) >= tail) {
    lo = hi;
    hi *= 2;
    if (hi > Number.MAX_SAFE_INTEGER) return [NaN, NaN];
  }
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (binomialCdf(s, mid, rate) >= tail) lo = mid;
    else hi = mid;
  }
  const high = lo;
  if (s === 0) return [0, high];
  // Low: P(X ≥ s | n) increases with n.
  if (binomialUpper(s, s, rate) >= tail) return [s, high];
  lo = s;
  hi = high;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (binomialUpper(s, mid, rate) >= tail) hi = mid;
    else lo = mid;
  }
  return [hi, high];
}

/**
 * The interval a trace sampled at `otherRate` would give for the same quantity, if its samples
 * came out at their expected number: `round(s / rate × otherRate)` samples at `otherRate`.
 * @param {number} s samples at `rate`
 * @param {number} rate
 * @param {number} otherRate
 * @param {number} confidence
 * @returns {[number, number]} words, low and high
 */
export function whatIfInterval(s, rate, otherRate, confidence) {
  return wordsInterval(Math.round((s / rate) * otherRate), otherRate, confidence);
}

/**
 * The exact conditional test that two samples counts stand for the same words per unit: `sA`
 * at rate `rateA` over `unitsA` units, `sB` at `rateB` over `unitsB` (1 each to compare totals).
 * Samples are Poisson(λ·words) to within a factor (1 − λ) of the variance, so given
 * `n = sA + sB`, `sB` is Binomial(n, π) with π = λB·uB / (λA·uA + λB·uB) under the hypothesis.
 * Returns the two-sided p-value (twice the smaller tail, at most 1; NaN for bad rates).
 * @param {number} sA
 * @param {number} sB
 * @param {number} rateA
 * @param {number} rateB
 * @param {number} [unitsA]
 * @param {number} [unitsB]
 * @returns {number}
 */
export function rateTestPValue(sA, sB, rateA, rateB, unitsA = 1, unitsB = 1) {
  const n = sA + sB;
  if (n === 0) return 1;
  const pi = (rateB * unitsB) / (rateA * unitsA + rateB * unitsB);
  if (!(pi > 0 && pi < 1)) return NaN;
  return Math.min(1, 2 * Math.min(binomialCdf(sB, n, pi), binomialUpper(sB, n, pi)));
}

/**
 * Benjamini–Hochberg adjusted p-values (q-values): a test is significant at false discovery
 * rate α when its q-value is at most α. NaN p-values stay NaN and are not counted.
 * @param {readonly number[]} pValues
 * @returns {number[]}
 */
export function benjaminiHochberg(pValues) {
  /** @type {number[]} */
  const idx = [];
  for (let i = 0; i < pValues.length; i++) if (!Number.isNaN(pValues[i])) idx.push(i);
  idx.sort((i, j) => pValues[i] - pValues[j] || i - j);
  const m = idx.length;
  const q = pValues.map(() => NaN);
  let running = 1;
  for (let r = m - 1; r >= 0; r--) {
    const i = idx[r];
    running = Math.min(running, (pValues[i] * m) / (r + 1));
    q[i] = running;
  }
  return q;
}
