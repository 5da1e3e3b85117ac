/**
 * A profile on a coarser time grid: buckets merged in pairs, as if the trace had been aggregated
 * with buckets twice as wide (the grid starts at the trace start and its widths are powers of
 * two, so bucket k of the old grid lies in bucket ⌊k/2⌋ of the new one). The report uses it to
 * bound the rows of its page, which grow with the buckets each class's objects span.
 *
 * Exact on the new grid: an object allocated in bucket a, collected in bucket e (a ≤ e) is live
 * at the end of old bucket 2K+1 when a ≤ 2K+1 < e, that is when ⌊a/2⌋ ≤ K < ⌊e/2⌋, so the live
 * heap at the end of each new bucket, the allocations in a range of new buckets and what was
 * promoted by then are those of the old profile at the end of each odd bucket. The per-class
 * totals and the exact live-at counts do not depend on the grid and are kept.
 * @module
 */
import { type Column, NEVER, type ProfileData, type ProfilePeak } from "./profile.ts";

/** Most rows of the cube a report page holds (default of `ReportOptions.rows`). With one time
 * bucket a class has at most 4 rows, so 16,000 classes always fit. */
export const REPORT_ROWS = 400_000;

/** `data` on a grid of buckets twice as wide, or merged in pairs `times` times (rows with equal
 * cells are not summed: the page's packing sums them). */
export function coarsenGrid(data: ProfileData, times = 1): ProfileData {
  if (!(Number.isInteger(times) && times >= 0)) throw new RangeError(`times: ${times}`);
  if (times === 0) return data;
  // The grid merged in pairs once per time, so that its sums are those of as many coarsenings.
  let { buckets, widthUs, alloc, end } = data.grid;
  for (let t = 0; t < times; t++) {
    const half = Math.ceil(buckets / 2);
    const a = new Array<number>(half).fill(0), e = new Array<number>(half).fill(0);
    for (let k = 0; k < buckets; k++) {
      a[k >> 1] += alloc[k];
      e[k >> 1] += end[k];
    }
    buckets = half;
    widthUs *= 2;
    alloc = a;
    end = e;
  }
  const r = data.rows;
  // A loop: Uint8Array.from(column, f) lists the column's values first (as the spec says).
  const shift = (column: Column) => {
    const out = new Uint8Array(column.length);
    for (let j = 0; j < out.length; j++) {
      out[j] = column[j] === NEVER ? NEVER : column[j] >> times;
    }
    return out;
  };
  const rows = r === null
    ? null
    : { cls: r.cls, a: shift(r.a), e: shift(r.e), p: shift(r.p), samples: r.samples };
  return {
    ...data,
    grid: { widthUs, buckets, alloc, end },
    peak: peakOf(alloc, end, widthUs),
    rows,
  };
}

/** The first bucket at whose end the live samples are largest (as the aggregation finds it). */
function peakOf(alloc: Column, end: Column, widthUs: number): ProfilePeak | null {
  let live = 0, best = -1, at = -1;
  for (let k = 0; k < alloc.length; k++) {
    live += alloc[k] - end[k];
    if (live > best) {
      best = live;
      at = k;
    }
  }
  return at < 0 ? null : { bucket: at, timeUs: (at + 1) * widthUs - 1, samples: best };
}
