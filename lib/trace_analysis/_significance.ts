/**
 * The tests behind `trace diff`'s significance: per row, whether the estimates of two traces
 * differ by more than sampling explains, and the false discovery rate over all rows.
 *
 * Samples of a row are Binomial(words, λ); at the small rates memprof is run at they are
 * Poisson(λ·words) to within a factor (1 − λ) of the variance (the test is conservative when λ
 * is large: a binomial varies less than the Poisson it assumes). Given the total `n = sA + sB`,
 * `sB` is then Binomial(n, π) with π = λB·cB / (λA·cA + λB·cB) under the hypothesis that the
 * two traces' words per unit (`cA`, `cB`: 1 for totals, the durations for rates per second) are
 * equal — an exact conditional test, whatever the two rates. Its two-sided p-value is twice the
 * smaller tail, at most 1.
 * @module
 */
import { binomialCdf, binomialUpper } from "./intervals.ts";

/** The exact conditional test's two-sided p-value for samples `sA`, `sB` at rates `rateA`,
 * `rateB`, comparing words per unit of `unitsA`, `unitsB` (1 each for totals). */
export function rateTestPValue(
  sA: number,
  sB: number,
  rateA: number,
  rateB: number,
  unitsA = 1,
  unitsB = 1,
): number {
  const n = sA + sB;
  if (n === 0) return 1;
  const pi = (rateB * unitsB) / (rateA * unitsA + rateB * unitsB);
  if (!(pi > 0 && pi < 1)) return NaN;
  const p = 2 * Math.min(binomialCdf(sB, n, pi), binomialUpper(sB, n, pi));
  return Math.min(1, p);
}

/** Benjamini–Hochberg adjusted p-values (q-values): a test is significant at false discovery
 * rate α when its q-value is at most α. NaN p-values stay NaN and are not counted. */
export function benjaminiHochberg(pValues: readonly number[]): number[] {
  const idx: number[] = [];
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
