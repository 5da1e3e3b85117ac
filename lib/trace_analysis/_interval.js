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
 * found by bisection on the integers, the tails summed term by term in log space — no normal
 * approximation at small counts. Past {@linkcode EXACT_LIMIT} (2^16 samples, or a binomial
 * variance of 2^16, where the sums grow costly: a hostile trace could make them take minutes),
 * the normal limit with continuity correction is used; at the switch, where it is furthest from
 * the exact bounds, it is within about 1/2,000 of the interval's width of them (for rates up to
 * 0.3), and closer beyond. Plain JavaScript with
 * no imports: the HTML report inlines it.
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

/** Counts (and binomial variances) up to which tails are summed exactly: 2^16. */
export const EXACT_LIMIT = 2 ** 16;

/**
 * Φ(x), the standard normal distribution function (erfc by Chebyshev fitting, W. H. Press et
 * al.: fractional error below 1.2e-7).
 * @param {number} x
 * @returns {number}
 */
function normalCdf(x) {
  const z = Math.abs(x) / Math.SQRT2;
  const t = 1 / (1 + 0.5 * z);
  const erfc = t * Math.exp(
    -z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 +
                  t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 +
                                  t * (-0.82215223 + t * 0.17087277)))))))),
  );
  return x >= 0 ? 1 - erfc / 2 : erfc / 2;
}

/**
 * Φ⁻¹(p) for 0 < p < 1 (P. J. Acklam's rational approximation, refined by one Halley step).
 * @param {number} p
 * @returns {number}
 */
export function normalQuantile(p) {
  const a = [
    -39.69683028665376,
    220.9460984245205,
    -275.9285104469687,
    138.357751867269,
    -30.66479806614716,
    2.506628277459239,
  ];
  const b = [
    -54.47609879822406,
    161.5858368580409,
    -155.6989798598866,
    66.80131188771972,
    -13.28068155288572,
  ];
  const c = [
    -0.007784894002430293,
    -0.3223964580411365,
    -2.400758277161838,
    -2.549732539343734,
    4.374664141464968,
    2.938163982698783,
  ];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const lo = 0.02425;
  let x;
  if (p < lo) {
    const q = Math.sqrt(-2 * Math.log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
      ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else if (p <= 1 - lo) {
    const q = p - 0.5, r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
      (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  } else {
    const q = Math.sqrt(-2 * Math.log(1 - p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
      ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  const e = 0.5 * (1 + erfApprox(x / Math.SQRT2)) - p;
  const u = e * Math.sqrt(2 * Math.PI) * Math.exp((x * x) / 2);
  return x - u / (1 + (x * u) / 2);
}

/**
 * erf(x) by its Taylor series near 0 and continued fraction beyond (double precision), for
 * the refinement step of {@linkcode normalQuantile}.
 * @param {number} x
 * @returns {number}
 */
function erfApprox(x) {
  const ax = Math.abs(x);
  if (ax < 2.5) {
    let term = ax, sum = ax;
    for (let n = 1; n < 100; n++) {
      term *= (-ax * ax) / n;
      const add = term / (2 * n + 1);
      sum += add;
      if (Math.abs(add) < 1e-17 * Math.abs(sum)) break;
    }
    const r = (2 / Math.sqrt(Math.PI)) * sum;
    return x < 0 ? -r : r;
  }
  // erfc(x) = exp(−x²)/(x√π) · 1/(1 + 1/(2x²)/(1 + 2/(2x²)/(1 + …))), by Lentz's method.
  let f = ax, C = ax, D = 0;
  for (let n = 1; n < 200; n++) {
    const an = n / 2;
    D = ax + an * D;
    D = D === 0 ? 1e-300 : 1 / D;
    C = ax + an / C;
    if (C === 0) C = 1e-300;
    const delta = C * D;
    f *= delta;
    if (Math.abs(delta - 1) < 1e-16) break;
  }
  const erfc = Math.exp(-ax * ax) / Math.sqrt(Math.PI) / f;
  return x < 0 ? erfc - 1 : 1 - erfc;
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
  if (n * p * (1 - p) > EXACT_LIMIT) {
    return normalCdf((s + 0.5 - n * p) / Math.sqrt(n * p * (1 - p)));
  }
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
  if (n * p * (1 - p) > EXACT_LIMIT) {
    return 1 - normalCdf((s - 0.5 - n * p) / Math.sqrt(n * p * (1 - p)));
  }
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
  if (s > EXACT_LIMIT) return normalInterval(s, rate, normalQuantile(1 - tail));
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
 * The normal limit of {@linkcode wordsInterval} for large counts: the `n` at which
 * (s ± ½ − n·λ) / √(n·λ·(1 − λ)) = ∓z (continuity-corrected), solved as quadratics in √n and
 * rounded outwards.
 * @param {number} s
 * @param {number} rate
 * @param {number} z
 * @returns {[number, number]}
 */
function normalInterval(s, rate, z) {
  const k = z * Math.sqrt(rate * (1 - rate));
  /** @param {number} sign @param {number} target */
  const root = (sign, target) => {
    const x = (sign * k + Math.sqrt(k * k + 4 * rate * target)) / (2 * rate);
    return x * x;
  };
  const low = Math.max(s, Math.floor(root(-1, s - 0.5)));
  const high = Math.ceil(root(1, s + 0.5));
  return high > Number.MAX_SAFE_INTEGER ? [NaN, NaN] : [low, high];
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
