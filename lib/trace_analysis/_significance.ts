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
import * as core from "./_interval.js";

/** The exact conditional test's two-sided p-value for samples `sA`, `sB` at rates `rateA`,
 * `rateB`, comparing words per unit of `unitsA`, `unitsB` (1 each for totals). Shared with the
 * HTML report (`_interval.js`). */
export const rateTestPValue: (
  sA: number,
  sB: number,
  rateA: number,
  rateB: number,
  unitsA?: number,
  unitsB?: number,
) => number = core.rateTestPValue;

/** Benjamini–Hochberg adjusted p-values (q-values): a test is significant at false discovery
 * rate α when its q-value is at most α. NaN p-values stay NaN and are not counted. Shared with
 * the HTML report (`_interval.js`). */
export const benjaminiHochberg: (pValues: readonly number[]) => number[] = core.benjaminiHochberg;
