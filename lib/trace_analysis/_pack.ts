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
  const c = data.classes;
  const nc = c.node.length;
  // Merge classes by (node, domain, source, size class), numbered in order of first use.
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
  const merged = classes.node.length;

  // Rows of merged classes, sorted by (class, a, e, p), equal ones summed: a counting sort by
  // class, then each class's rows sorted by cell·2^29 + row (so equal cells keep row order).
  const nr = r.cls.length;
  const start = new Int32Array(merged + 1);
  for (let j = 0; j < nr; j++) start[remap[r.cls[j]] + 1]++;
  for (let m = 0; m < merged; m++) start[m + 1] += start[m];
  const fill = start.slice(0, merged);
  const keys = new Float64Array(nr);
  for (let j = 0; j < nr; j++) {
    keys[fill[remap[r.cls[j]]]++] = ((r.a[j] * 256 + r.e[j]) * 256 + r.p[j]) * ROW + j;
  }
  const rel = (x: number, a: number) => (x === NEVER ? 0 : x - a + 1);
  // At most nr rows: typed arrays of that size, cut to the rows written.
  const cls = new Int32Array(nr), ca = new Uint8Array(nr), ce = new Uint8Array(nr);
  const cp = new Uint8Array(nr), cs = new Float64Array(nr);
  let out = 0;
  let prevCls = 0, prevA = 0;
  for (let m = 0; m < merged; m++) {
    const segment = keys.subarray(start[m], start[m + 1]);
    if (segment.length > 1) segment.sort();
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
  const rows = options.typedRows
    ? {
      cls: cls.slice(0, out),
      a: ca.slice(0, out),
      e: ce.slice(0, out),
      p: cp.slice(0, out),
      samples: cs.slice(0, out),
    }
    : {
      cls: Array.from(cls.subarray(0, out)),
      a: Array.from(ca.subarray(0, out)),
      e: Array.from(ce.subarray(0, out)),
      p: Array.from(cp.subarray(0, out)),
      samples: Array.from(cs.subarray(0, out)),
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
