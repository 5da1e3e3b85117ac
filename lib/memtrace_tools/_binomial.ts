/**
 * Binomial variates for any count up to 2^53 − 1, in expected constant time: inversion by
 * sequential search when the mean is small, Kachitvichyanukul and Schmeiser's BTPE otherwise
 * ("Binomial random variate generation", CACM 31(2), 1988) — both exact rejection or inversion
 * methods, given exact uniform variates. Uniforms are drawn from a caller's generator, so the
 * draws are deterministic for a seeded one.
 * @module
 */

/** Below this mean (n·min(p, 1−p)), inversion; from it, BTPE (its published threshold). */
const INVERSION_MEAN = 30;

/**
 * A Binomial(n, p) variate: the number of successes of `n` independent trials of probability
 * `p`. `n` is an integer from 0 to 2^53 − 1, `p` in [0, 1]; `uniform` returns numbers in
 * [0, 1) (each call a fresh one).
 */
export function binomial(n: number, p: number, uniform: () => number): number {
  if (!(Number.isSafeInteger(n) && n >= 0)) throw new RangeError(`binomial: n = ${n}`);
  if (!(p >= 0 && p <= 1)) throw new RangeError(`binomial: p = ${p}`);
  if (n === 0 || p === 0) return 0;
  if (p === 1) return n;
  // Draw the rarer outcome, then flip.
  const r = Math.min(p, 1 - p);
  const x = n * r < INVERSION_MEAN ? inversion(n, r, uniform) : btpe(n, r, uniform);
  return p > 0.5 ? n - x : x;
}

/** Inversion by sequential search from 0, for a small mean n·p (p ≤ 1/2): P(0) = (1−p)^n ≥
 * e^−60, and the search restarts past a bound the variate exceeds with negligible probability
 * (the probability that remains past it, from rounding, is re-drawn rather than misplaced). */
function inversion(n: number, p: number, uniform: () => number): number {
  const q = 1 - p;
  const q0 = Math.exp(n * Math.log1p(-p));
  const mean = n * p;
  const bound = Math.min(n, mean + 10 * Math.sqrt(mean * q + 1));
  for (;;) {
    let x = 0, px = q0, u = uniform();
    while (u > px) {
      x++;
      if (x > bound) break;
      u -= px;
      px = ((n - x + 1) * p * px) / (x * q);
    }
    if (x <= bound) return x;
  }
}

/** BTPE for p ≤ 1/2 and n·p ≥ 30: a triangle, two parallelograms and two exponential tails
 * majorise the distribution; candidates are accepted by an explicit ratio of probabilities near
 * the mode and by Stirling-based squeezes further out. */
function btpe(n: number, p: number, uniform: () => number): number {
  const q = 1 - p;
  const npq = n * p * q;
  const fm = n * p + p;
  const m = Math.floor(fm);
  const p1 = Math.floor(2.195 * Math.sqrt(npq) - 4.6 * q) + 0.5;
  const xm = m + 0.5;
  const xl = xm - p1;
  const xr = xm + p1;
  const c = 0.134 + 20.5 / (15.3 + m);
  let a = (fm - xl) / (fm - xl * p);
  const laml = a * (1 + a / 2);
  a = (xr - fm) / (xr * q);
  const lamr = a * (1 + a / 2);
  const p2 = p1 * (1 + 2 * c);
  const p3 = p2 + c / laml;
  const p4 = p3 + c / lamr;
  for (;;) {
    const u = uniform() * p4;
    let v = uniform();
    let y: number;
    if (u <= p1) {
      // The triangle: accepted at once.
      return Math.floor(xm - p1 * v + u);
    }
    if (u <= p2) {
      // The parallelograms.
      const x = xl + (u - p1) / c;
      v = v * c + 1 - Math.abs(m - x + 0.5) / p1;
      if (v > 1) continue;
      y = Math.floor(x);
    } else if (u <= p3) {
      // The left tail.
      y = Math.floor(xl + Math.log(v) / laml);
      if (y < 0) continue;
      v = v * (u - p2) * laml;
    } else {
      // The right tail.
      y = Math.floor(xr - Math.log(v) / lamr);
      if (y > n) continue;
      v = v * (u - p3) * lamr;
    }
    const k = Math.abs(y - m);
    if (k <= 20 || k >= npq / 2 - 1) {
      // Explicit: f(y)/f(m) by the recurrence of successive probabilities.
      const s = p / q;
      const aa = s * (n + 1);
      let f = 1;
      if (m < y) { for (let i = m + 1; i <= y; i++) f *= aa / i - s; }
      else if (m > y) { for (let i = y + 1; i <= m; i++) f /= aa / i - s; }
      if (v <= f) return y;
      continue;
    }
    // Squeezes on log f(y)/f(m), then the bound from Stirling's formula.
    const rho = (k / npq) * ((k * (k / 3 + 0.625) + 1 / 6) / npq + 0.5);
    const t = -(k * k) / (2 * npq);
    const logV = Math.log(v);
    if (logV < t - rho) return y;
    if (logV > t + rho) continue;
    const x1 = y + 1, f1 = m + 1, z = n + 1 - m, w = n - y + 1;
    if (
      logV <= xm * Math.log(f1 / x1) + (n - m + 0.5) * Math.log(z / w) +
          (y - m) * Math.log((w * p) / (x1 * q)) + stirlingTail(f1) + stirlingTail(z) +
          stirlingTail(x1) + stirlingTail(w)
    ) return y;
  }
}

/** The correction term of Stirling's series at `x`: 1/(12x) − 1/(360x³) + … (to x^−9). */
function stirlingTail(x: number): number {
  const x2 = x * x;
  return (13860 - (462 - (132 - (99 - 140 / x2) / x2) / x2) / x2) / x / 166320;
}
