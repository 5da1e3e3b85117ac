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
import { NEVER, type ProfileData, type ProfilePeak } from "./profile.ts";

/** Most rows of the cube a report page holds (default of `ReportOptions.rows`). With one time
 * bucket a class has at most 4 rows, so 16,000 classes always fit. */
export const REPORT_ROWS = 400_000;

/** `data` on a grid of buckets twice as wide (rows with equal cells are not summed: the page's
 * packing sums them). */
export function coarsenGrid(data: ProfileData): ProfileData {
  const g = data.grid;
  const buckets = Math.ceil(g.buckets / 2), widthUs = g.widthUs * 2;
  const alloc = new Array<number>(buckets).fill(0), end = new Array<number>(buckets).fill(0);
  for (let k = 0; k < g.buckets; k++) {
    alloc[k >> 1] += g.alloc[k];
    end[k >> 1] += g.end[k];
  }
  const r = data.rows;
  const half = (x: number) => (x === NEVER ? NEVER : x >> 1);
  const rows = r === null ? null : {
    cls: r.cls,
    a: Uint8Array.from(r.a, half),
    e: Uint8Array.from(r.e, half),
    p: Uint8Array.from(r.p, half),
    samples: r.samples,
  };
  return {
    ...data,
    grid: { widthUs, buckets, alloc, end },
    peak: peakOf(alloc, end, widthUs),
    rows,
  };
}

/** The first bucket at whose end the live samples are largest (as the aggregation finds it). */
function peakOf(alloc: number[], end: number[], widthUs: number): ProfilePeak | null {
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
