/**
 * The smaller form of a profile the HTML report embeds, read back by `unpackProfile`
 * (_select.js, which the page runs). Only the command line packs, so this is TypeScript and is
 * not inlined into the page.
 * @module
 */
import { type Column, NEVER, type ProfileData } from "./profile.ts";

/** A row's sort key is its cell (a, e, p: 24 bits) · 2^29 + its index (rows are fewer). */
const ROW = 2 ** 29;

/** Options of {@linkcode packProfile}. */
export interface PackOptions {
  /** Rows in typed arrays rather than plain arrays (default false). */
  typedRows?: boolean;
}

/** The largest length of a length's size class: 0, 1 and 2 alone, then (2^(k−1), 2^k]. */
function sizeClassHigh(length: number): number {
  return length <= 2 ? length : 2 ** Math.ceil(Math.log2(length));
}

/** The report's classes: a profile's classes merged by (node, domain, source, size class),
 * numbered in order of first use; `remap` gives each profile class's merged class. */
function mergeClasses(data: ProfileData) {
  const c = data.classes;
  const nc = c.node.length;
  const index = new Map<number, number>();
  const remap = new Int32Array(nc);
  const classes = {
    node: [] as number[],
    domain: [] as number[],
    source: [] as number[],
    length: [] as number[],
    lengthMax: [] as number[],
  };
  for (let i = 0; i < nc; i++) {
    // The aggregate's size classes (and the report's own) nest in the report's.
    const hi = sizeClassHigh(c.lengthMax ? c.lengthMax[i] : c.length[i]);
    const lo = hi <= 2 ? hi : hi / 2 + 1;
    const k = hi <= 2 ? hi : Math.log2(hi) + 2; // the size class's index, < 128
    const key = (c.node[i] + 1) * 2 ** 25 + ((c.domain[i] * 4 + c.source[i]) * 128 + k);
    let j = index.get(key);
    if (j === undefined) {
      j = classes.node.length;
      index.set(key, j);
      classes.node.push(c.node[i]);
      classes.domain.push(c.domain[i]);
      classes.source.push(c.source[i]);
      classes.length.push(lo);
      classes.lengthMax.push(hi);
    }
    remap[i] = j;
  }
  return { remap, classes };
}

/** A counting sort of rows by merged class: `keys` gets `key(j)` of every row j, those of merged
 * class m at [start[m], start[m + 1]) in row order; returns `start`. */
function byClass(
  cls: ArrayLike<number>,
  remap: Int32Array,
  merged: number,
  keys: { [j: number]: number },
  key: (j: number) => number,
): Int32Array {
  const nr = cls.length;
  const start = new Int32Array(merged + 1);
  for (let j = 0; j < nr; j++) start[remap[cls[j]] + 1]++;
  for (let m = 0; m < merged; m++) start[m + 1] += start[m];
  const fill = start.slice(0, merged);
  for (let j = 0; j < nr; j++) keys[fill[remap[cls[j]]]++] = key(j);
  return start;
}

/** Bits 0 to 7 of a byte spread to bits 0, 3, …, 21 (to interleave three bytes). */
const SPREAD = Uint32Array.from({ length: 256 }, (_, x) => {
  let s = 0;
  for (let b = 0; b < 8; b++) s |= ((x >> b) & 1) << (3 * b);
  return s;
});

/**
 * How many rows {@linkcode packProfile} gives for `data` on its own grid (`[0]`) and on each
 * coarser one (`[k]`: buckets merged in pairs k times, coarsen.ts), for k up to 7 (128 buckets,
 * the most, then become one) — counted in one sort, without packing.
 *
 * After k merges a row's cell is (a >> k, e >> k, p >> k), `NEVER` staying itself: buckets are
 * under 128 and `NEVER` is 255, so that is each byte's top 8 − k bits, and two rows of a class
 * share a cell after k merges when the top 3·(8 − k) bits of their cells' bits interleaved
 * (a's, e's, p's from the top) agree. With each class's interleaved cells sorted, cells sharing
 * those bits are adjacent: each adjacent pair that first differs in bit group g (bits 3g to
 * 3g + 2) is one more row on the grids merged at most g times.
 */
export function packedRowCounts(data: ProfileData): number[] {
  const r = data.rows;
  if (r === null) throw new Error("packedRowCounts needs a profile with its cube");
  const { remap, classes } = mergeClasses(data);
  const merged = classes.node.length;
  const keys = new Uint32Array(r.cls.length);
  const start = byClass(r.cls, remap, merged, keys, (j) => {
    const a = r.a[j], e = r.e[j], p = r.p[j];
    if (a >= 128 || (e >= 128 && e !== NEVER) || (p >= 128 && p !== NEVER)) {
      throw new Error(`packedRowCounts: a bucket of 128 or more (${a}, ${e}, ${p})`);
    }
    return (SPREAD[a] << 2 | SPREAD[e] << 1 | SPREAD[p]) >>> 0;
  });
  // firstDiffer[g]: adjacent pairs whose highest differing bit is in group g.
  const firstDiffer = new Float64Array(8);
  let classesWithRows = 0;
  for (let m = 0; m < merged; m++) {
    if (start[m + 1] === start[m]) continue;
    classesWithRows++;
    const segment = keys.subarray(start[m], start[m + 1]);
    if (segment.length > 1) segment.sort();
    for (let q = 1; q < segment.length; q++) {
      const x = segment[q] ^ segment[q - 1];
      if (x !== 0) firstDiffer[Math.floor((31 - Math.clz32(x)) / 3)]++;
    }
  }
  const counts: number[] = new Array(8);
  let rows = classesWithRows;
  for (let k = 7; k >= 0; k--) {
    rows += firstDiffer[k];
    counts[k] = rows;
  }
  return counts;
}

/**
 * A smaller form of a profile for embedding in a page. Classes that differ only in length within
 * one size class (0, 1 and 2 alone, then (2^(k−1), 2^k]) become one (the size filter then works
 * on size classes); node parents are stored as distances (`i − parent`, mostly 1); rows as
 * differences (class from the previous row's, allocation bucket from the previous row's of the
 * same class, end and promotion buckets from the allocation bucket, plus 1, 0 meaning never);
 * the function-path tree is left out (it follows from the rest). `unpackProfile` restores a
 * profile. With `typedRows`, the rows are typed arrays (a fifth of the memory of plain arrays;
 * for the page, which embeds them as bytes), otherwise plain arrays (JSON).
 */
export function packProfile(data: ProfileData, options: PackOptions = {}): object {
  const r = data.rows;
  if (r === null) throw new Error("packProfile needs a profile with its cube");
  const { remap, classes } = mergeClasses(data);
  const merged = classes.node.length;

  // Rows of merged classes, sorted by (class, a, e, p), equal ones summed: a counting sort by
  // class, then each class's rows sorted by cell·2^29 + row (so equal cells keep row order).
  const nr = r.cls.length;
  const keys = new Float64Array(nr);
  const start = byClass(
    r.cls,
    remap,
    merged,
    keys,
    (j) => ((r.a[j] * 256 + r.e[j]) * 256 + r.p[j]) * ROW + j,
  );
  // The rows written: one per distinct cell of each class (counted first, so that the columns
  // are allocated at their size).
  let out = 0;
  for (let m = 0; m < merged; m++) {
    const segment = keys.subarray(start[m], start[m + 1]);
    if (segment.length > 1) segment.sort();
    for (let q = 0; q < segment.length; q++) {
      if (q === 0 || Math.floor(segment[q] / ROW) !== Math.floor(segment[q - 1] / ROW)) out++;
    }
  }
  const rel = (x: number, a: number) => (x === NEVER ? 0 : x - a + 1);
  const cls = new Int32Array(out), ca = new Uint8Array(out), ce = new Uint8Array(out);
  const cp = new Uint8Array(out), cs = new Float64Array(out);
  out = 0;
  let prevCls = 0, prevA = 0;
  for (let m = 0; m < merged; m++) {
    const segment = keys.subarray(start[m], start[m + 1]);
    for (let q = 0; q < segment.length;) {
      const cell = Math.floor(segment[q] / ROW);
      let s = r.samples[segment[q] - cell * ROW];
      for (q++; q < segment.length && Math.floor(segment[q] / ROW) === cell; q++) {
        s += r.samples[segment[q] - cell * ROW];
      }
      const a = Math.floor(cell / 65536), e = Math.floor(cell / 256) % 256, p = cell % 256;
      cls[out] = m - prevCls;
      ca[out] = m === prevCls ? a - prevA : a;
      ce[out] = rel(e, a);
      cp[out] = rel(p, a);
      cs[out] = s;
      out++;
      prevCls = m;
      prevA = a;
    }
  }
  const rows = options.typedRows ? { cls, a: ca, e: ce, p: cp, samples: cs } : {
    cls: Array.from(cls),
    a: Array.from(ca),
    e: Array.from(ce),
    p: Array.from(cp),
    samples: Array.from(cs),
  };

  const merge = (perClass: Column) => {
    const out: number[] = new Array(merged).fill(0);
    for (let i = 0; i < perClass.length; i++) out[remap[i]] += perClass[i];
    return out;
  };
  const at = data.liveAt;
  // Without the totals (the page has the cube): unpackProfile sets them to null.
  const { totals: _, ...rest } = data;
  return {
    ...rest,
    // Plain arrays: JSON has no typed arrays.
    locations: {
      fn: Array.from(data.locations.fn),
      file: Array.from(data.locations.file),
      line: Array.from(data.locations.line),
      start: Array.from(data.locations.start),
      end: Array.from(data.locations.end),
    },
    nodes: {
      parentDistance: Array.from(data.nodes.parent, (p, i) => i - p),
      loc: Array.from(data.nodes.loc),
    },
    fnodes: null,
    classes,
    rows,
    liveAt: at === null ? null : {
      timeUs: at.timeUs,
      samples: merge(at.samples),
      promoted: merge(at.promoted),
      liveEnd: merge(at.liveEnd),
    },
  };
}
