/**
 * Exact summary statistics of a set of durations: mean, population standard
 * deviation, min, max and nearest-rank percentiles computed from the sorted
 * values (no histogram, no interpolation).
 *
 * Percentiles are given as decimal strings ("99.9") and the rank is computed
 * with integer arithmetic, so that e.g. the 70th percentile of 10 values is
 * exactly the 7th value, never the 8th through a rounding error.
 *
 * @module
 */

/** The percentiles olly's `gc-stats` prints, in its order. */
export const GC_STATS_PERCENTILES: readonly string[] = Object.freeze([
  "25",
  "50",
  "60",
  "70",
  "75",
  "80",
  "85",
  "90",
  "95",
  "96",
  "97",
  "98",
  "99",
  "99.9",
  "99.99",
  "99.999",
  "99.9999",
  "100",
]);

/** One percentile of a distribution. */
export interface PercentileValue {
  /** The percentile as given, e.g. `"99.9"`. */
  percentile: string;
  /** 1-based rank of the value in ascending order: `max(1, ceil(p/100 · count))`. */
  rank: number;
  /** The value at that rank (0 when there are no values). */
  value: number;
}

/** Summary of a set of values. All figures are 0 when there are no values. */
export interface Distribution {
  /** Number of values. */
  count: number;
  /** Sum of the values. */
  total: number;
  /** Arithmetic mean. */
  mean: number;
  /** Population standard deviation (divides by `count`, as HdrHistogram's `stddev`). */
  stddev: number;
  /** Smallest value. */
  min: number;
  /** Largest value. */
  max: number;
  /** Nearest-rank percentiles, in the order requested. */
  percentiles: PercentileValue[];
}

/**
 * Parses a percentile written in decimal (`"99.9999"`) into `num / den` per
 * cent, exactly. Throws RangeError for anything outside 0..100.
 */
export function parsePercentile(p: string): { num: bigint; den: bigint } {
  const m = /^(\d{1,3})(?:\.(\d{1,12}))?$/.exec(p);
  if (m === null) throw new RangeError(`invalid percentile "${p}"`);
  const frac = m[2] ?? "";
  const den = 10n ** BigInt(frac.length);
  const num = BigInt(m[1]) * den + (frac === "" ? 0n : BigInt(frac));
  if (num > 100n * den) throw new RangeError(`percentile "${p}" exceeds 100`);
  return { num, den };
}

/**
 * Nearest-rank: the smallest rank r (1-based) such that at least p% of the
 * `count` values are at or below the r-th value, i.e. `ceil(p · count / 100)`,
 * and at least 1.
 */
export function nearestRank(p: string, count: number): number {
  const { num, den } = parsePercentile(p);
  const n = BigInt(count) * num;
  const d = 100n * den;
  const r = Number((n + d - 1n) / d);
  return r < 1 ? 1 : r;
}

/**
 * Summarises `values` (copied, then sorted). `percentiles` defaults to
 * {@linkcode GC_STATS_PERCENTILES}.
 */
export function distribution(
  values: ArrayLike<number>,
  percentiles: readonly string[] = GC_STATS_PERCENTILES,
): Distribution {
  const sorted = Float64Array.from(values).sort();
  const count = sorted.length;
  let total = 0;
  for (let i = 0; i < count; i++) total += sorted[i];
  const mean = count === 0 ? 0 : total / count;
  let sq = 0;
  for (let i = 0; i < count; i++) {
    const d = sorted[i] - mean;
    sq += d * d;
  }
  return {
    count,
    total,
    mean,
    stddev: count === 0 ? 0 : Math.sqrt(sq / count),
    min: count === 0 ? 0 : sorted[0],
    max: count === 0 ? 0 : sorted[count - 1],
    percentiles: percentiles.map((percentile) => {
      const rank = nearestRank(percentile, count);
      return { percentile, rank, value: count === 0 ? 0 : sorted[rank - 1] };
    }),
  };
}
