// @ts-check
/**
 * Selections over a trace profile: which classes a filter keeps, their samples under a live
 * mode, groupings by site, function or stack, the live heap over time, flame and
 * callers/callees trees. Plain JavaScript with no imports, shared by the command line (imported)
 * and the HTML report (inlined into its script), so that both compute the same numbers.
 * @module
 */

/** @typedef {import("./profile.ts").ProfileData} ProfileData */
/** @typedef {import("./profile.ts").Selector} Selector */
/** @typedef {import("./profile.ts").Selection} Selection */
/** @typedef {import("./profile.ts").GroupRow} GroupRow */
/** @typedef {import("./profile.ts").GroupBy} GroupBy */

/** "Did not happen" in the cube's end and promotion columns. */
const NEVER_BUCKET = 255;

/** Key of the group of a backtrace with no known location. */
export const NO_LOCATION = "(no location)";

/** Most characters of a stack's text (its key): beyond, the outermost frames are left out and
 * counted by a first element `(N outer frames)`. A stack's whole text can be thousands of times
 * the size of the trace (a shared prefix costs a byte, a frame's name up to 4 KiB). */
export const STACK_TEXT_CHARS = 16384;

/**
 * Fills in the tree of function paths (`fnodes`, `nodes.fnode`) from the tree of location
 * paths: a node's function path is its parent's followed by its own function, unless that
 * function is already the parent's last one (adjacent frames of one function are one frame).
 * @param {ProfileData} data
 * @returns {ProfileData} `data`, completed
 */
export function deriveFunctionPaths(data) {
  const parent = data.nodes.parent, loc = data.nodes.loc, locFn = data.locations.fn;
  const nf = data.functions.length;
  const fnodeOf = new Int32Array(parent.length);
  /** @type {number[]} */
  const fParent = [];
  /** @type {number[]} */
  const fFn = [];
  /** @type {Map<number, number>} */
  const child = new Map();
  for (let i = 0; i < parent.length; i++) {
    const up = parent[i] < 0 ? -1 : fnodeOf[parent[i]];
    const fn = locFn[loc[i]];
    if (up >= 0 && fFn[up] === fn) {
      fnodeOf[i] = up;
      continue;
    }
    const key = (up + 1) * nf + fn;
    let f = child.get(key);
    if (f === undefined) {
      f = fParent.length;
      fParent.push(up);
      fFn.push(fn);
      child.set(key, f);
    }
    fnodeOf[i] = f;
  }
  data.nodes.fnode = fnodeOf;
  data.fnodes = { parent: fParent, fn: fFn };
  return data;
}

/**
 * The rows of a packed profile (`packProfile`, _pack.ts: rows as differences) as the profile
 * holds them, in typed arrays.
 * @param {{cls: ArrayLike<number>, a: ArrayLike<number>, e: ArrayLike<number>, p: ArrayLike<number>, samples: ArrayLike<number>}} r
 * @returns {{cls: Int32Array, a: Int32Array, e: Int32Array, p: Int32Array, samples: Float64Array}}
 */
export function unpackRows(r) {
  const n = r.cls.length;
  const cls = new Int32Array(n), a = new Int32Array(n), e = new Int32Array(n);
  const p = new Int32Array(n);
  let c = 0, prevA = 0;
  for (let j = 0; j < n; j++) {
    const first = r.cls[j] !== 0 || j === 0;
    c += r.cls[j];
    const aj = first ? r.a[j] : prevA + r.a[j];
    cls[j] = c;
    a[j] = aj;
    e[j] = r.e[j] === 0 ? NEVER_BUCKET : r.e[j] + aj - 1;
    p[j] = r.p[j] === 0 ? NEVER_BUCKET : r.p[j] + aj - 1;
    prevA = aj;
  }
  return { cls, a, e, p, samples: Float64Array.from(r.samples) };
}

/**
 * The profile `packProfile` (_pack.ts) packed: node parents stored as distances, rows as
 * differences, and no function-path tree. `rows`, when given, are the profile's rows as they
 * are (the report page's, read from bytes: _row_bytes.js), and the packed ones are not read.
 * @param {any} packed
 * @param {import("./profile.ts").ProfileRows} [rows]
 * @returns {ProfileData}
 */
export function unpackProfile(packed, rows) {
  /** @type {number[]} */
  const dist = packed.nodes.parentDistance;
  const data = {
    ...packed,
    nodes: { parent: dist.map((d, i) => i - d), loc: packed.nodes.loc, fnode: [] },
    totals: null,
    rows: rows ?? unpackRows(packed.rows),
  };
  return deriveFunctionPaths(data);
}

/**
 * Estimated bytes one sample stands for: 1 / sample rate words of `wordSize` bits.
 * @param {ProfileData} data
 * @returns {number}
 */
export function bytesPerSample(data) {
  const rate = data.info.sampleRate;
  return rate > 0 ? data.info.wordSize / 8 / rate : 0;
}

/**
 * A location as memtrace prints it: `defname@file:line:start-end`.
 * @param {ProfileData} data
 * @param {number} loc
 * @returns {string}
 */
export function locationText(data, loc) {
  const l = data.locations;
  return `${data.functions[l.fn[loc]]}@${data.files[l.file[loc]]}:${l.line[loc]}:${l.start[loc]}-${
    l.end[loc]
  }`;
}

/**
 * The site of a class: its innermost location, or {@link NO_LOCATION}.
 * @param {ProfileData} data
 * @param {number} cls
 * @returns {string}
 */
export function siteOf(data, cls) {
  const node = data.classes.node[cls];
  return node < 0 ? NO_LOCATION : locationText(data, data.nodes.loc[node]);
}

/**
 * The text of a location-path node's stack within `maxChars` characters: its frames (location
 * texts), outermost first, as many of the innermost as fit (at least one), the number of outer
 * frames left out, and the key: the frames joined by `;`, after `(N outer frames);` when some
 * are left out.
 * @param {ProfileData} data
 * @param {number} node
 * @param {number} [maxChars]
 * @returns {{frames: string[], omitted: number, key: string}}
 */
export function stackLabel(data, node, maxChars = STACK_TEXT_CHARS) {
  /** @type {string[]} */
  const frames = [];
  let chars = 0, n = node;
  for (; n >= 0; n = data.nodes.parent[n]) {
    const text = locationText(data, data.nodes.loc[n]);
    if (frames.length > 0 && chars + 1 + text.length > maxChars) break;
    chars += (frames.length > 0 ? 1 : 0) + text.length;
    frames.push(text);
  }
  let omitted = 0;
  for (; n >= 0; n = data.nodes.parent[n]) omitted++;
  frames.reverse();
  const key = frames.length === 0
    ? NO_LOCATION
    : (omitted > 0 ? `(${omitted} outer frames);` : "") + frames.join(";");
  return { frames, omitted, key };
}

/**
 * Compares `a` followed by `;` when `aSemi`, with `b` followed by `;` when `bSemi`, in code-unit
 * order (negative, zero or positive), without building either.
 * @param {string} a
 * @param {boolean} aSemi
 * @param {string} b
 * @param {boolean} bSemi
 * @returns {number}
 */
function compareSuffixed(a, aSemi, b, bSemi) {
  const la = a.length + (aSemi ? 1 : 0), lb = b.length + (bSemi ? 1 : 0);
  const n = Math.min(la, lb);
  for (let i = 0; i < n; i++) {
    const x = i < a.length ? a.charCodeAt(i) : 59, y = i < b.length ? b.charCodeAt(i) : 59;
    if (x !== y) return x - y;
  }
  return la - lb;
}

/**
 * The rank of every path of a tree in the code-unit order of the paths' texts (their labels,
 * outermost first, joined by `;`), computed without building any text: among siblings, the paths
 * below a child come in the order of `label + ";"`, the path ending at it in that of `label`.
 * Exactly the order of the joined texts when no label contains `;`. Labels are given by id
 * (`labels[labelId(node)]`), and compared once: the sort of siblings compares ranks. `rootLeaves`
 * are one-label paths of their own (such as {@link NO_LOCATION}), ranked among the others.
 * @param {ArrayLike<number>} parent each node's parent, −1 for the root; parents come first
 * @param {(node: number) => number} labelId
 * @param {string[]} labels
 * @param {string[]} [rootLeaves]
 * @returns {{node: Float64Array, leaf: Float64Array}} ranks of the nodes and of the root leaves
 */
export function pathOrder(parent, labelId, labels, rootLeaves = []) {
  const n = parent.length;
  // The rank of each label alone (2·id) and followed by ";" (2·id + 1); equal texts, equal rank.
  const all = labels.concat(rootLeaves);
  const keys = Array.from({ length: 2 * all.length }, (_, k) => k);
  /** @param {number} k */
  const text = (k) => all[(k - (k % 2)) / 2];
  /** @param {number} x @param {number} y */
  const cmp = (x, y) => compareSuffixed(text(x), x % 2 === 1, text(y), y % 2 === 1);
  keys.sort(cmp);
  const keyRank = new Float64Array(keys.length);
  for (let i = 0, r = 0; i < keys.length; i++) {
    if (i > 0 && cmp(keys[i - 1], keys[i]) !== 0) r++;
    keyRank[keys[i]] = r;
  }
  // Children lists: those of node i (−1 for the root) are kids[start[i + 1], start[i + 2]).
  const start = new Float64Array(n + 2);
  for (let i = 0; i < n; i++) start[parent[i] + 2]++;
  for (let i = 1; i < n + 2; i++) start[i] += start[i - 1];
  const fill = start.slice(0, n + 1);
  const kids = new Float64Array(n);
  for (let i = 0; i < n; i++) kids[fill[parent[i] + 1]++] = i;
  const node = new Float64Array(n), leaf = new Float64Array(rootLeaves.length);
  // An item is 2·child (the path ending at the child), 2·child + 1 (the paths below it), or
  // −1 − j (root leaf j); sorted by the rank of its key, then as listed.
  /** @param {number} p */
  const itemsOf = (p) => {
    if (p >= 0 && start[p + 2] - start[p + 1] === 1) {
      // One child (most nodes): the path ending at it comes first (a label before label + ";").
      const c = kids[start[p + 1]];
      return [2 * c, 2 * c + 1];
    }
    /** @type {number[]} */
    const items = [];
    /** @type {number[]} */
    const ranks = [];
    for (let k = start[p + 1]; k < start[p + 2]; k++) {
      const c = kids[k], id = labelId(c);
      items.push(2 * c, 2 * c + 1);
      ranks.push(keyRank[2 * id], keyRank[2 * id + 1]);
    }
    if (p === -1) {
      for (let j = 0; j < rootLeaves.length; j++) {
        items.push(-1 - j);
        ranks.push(keyRank[2 * (labels.length + j)]);
      }
    }
    const order = items.map((_, i) => i);
    order.sort((x, y) => ranks[x] - ranks[y] || x - y);
    return order.map((i) => items[i]);
  };
  let next = 0;
  /** @type {{items: number[], at: number}[]} */
  const stack = [{ items: itemsOf(-1), at: 0 }];
  while (stack.length > 0) {
    const top = stack[stack.length - 1];
    if (top.at === top.items.length) {
      stack.pop();
      continue;
    }
    const item = top.items[top.at++];
    if (item < 0) leaf[-1 - item] = next++;
    else if (item % 2 === 0) node[item / 2] = next++;
    else if (start[(item - 1) / 2 + 2] > start[(item - 1) / 2 + 1]) {
      stack.push({ items: itemsOf((item - 1) / 2), at: 0 });
    }
  }
  return { node, leaf };
}

/** @type {WeakMap<ProfileData, {node: Float64Array, leaf: Float64Array}>} */
const stackRanks = new WeakMap();

/**
 * The rank of every location-path node's stack (and of {@link NO_LOCATION}, as `leaf[0]`) in the
 * code-unit order of the stacks' whole texts, computed once per profile.
 * @param {ProfileData} data
 * @returns {{node: Float64Array, leaf: Float64Array}}
 */
export function stackOrder(data) {
  let r = stackRanks.get(data);
  if (r === undefined) {
    const loc = data.nodes.loc;
    const texts = Array.from(data.locations.fn, (_, l) => locationText(data, l));
    r = pathOrder(data.nodes.parent, (n) => loc[n], texts, [NO_LOCATION]);
    stackRanks.set(data, r);
  }
  return r;
}

/**
 * Locations of a location-path node, outermost first: the whole stack (see {@link stackLabel}
 * for its text within a bound).
 * @param {ProfileData} data
 * @param {number} node
 * @returns {string[]}
 */
export function stackFrames(data, node) {
  /** @type {string[]} */
  const out = [];
  for (let n = node; n >= 0; n = data.nodes.parent[n]) {
    out.push(locationText(data, data.nodes.loc[n]));
  }
  return out.reverse();
}

/**
 * Per function-path node: 1 when its function or an enclosing one contains `text`.
 * @param {ProfileData} data
 * @param {string} text
 * @returns {Uint8Array}
 */
function fnodesContaining(data, text) {
  const fns = data.functions.map((f) => f.includes(text));
  const parent = data.fnodes.parent, fn = data.fnodes.fn;
  const has = new Uint8Array(parent.length);
  for (let i = 0; i < parent.length; i++) {
    has[i] = fns[fn[i]] || (parent[i] >= 0 && has[parent[i]] === 1) ? 1 : 0;
  }
  return has;
}

/**
 * Per class: 1 when the selector's domain, source, size and function filters keep it.
 * @param {ProfileData} data
 * @param {Selector} sel
 * @returns {Uint8Array}
 */
export function classMask(data, sel) {
  const c = data.classes;
  const n = c.node.length;
  const keep = new Uint8Array(n);
  const withFn = sel.fn ? fnodesContaining(data, sel.fn) : null;
  const without = sel.exclude ? fnodesContaining(data, sel.exclude) : null;
  const domains = sel.domains ? new Set(sel.domains) : null;
  const sources = sel.sources ? new Set(sel.sources) : null;
  const lo = sel.sizeMin ?? -Infinity, hi = sel.sizeMax ?? Infinity;
  for (let i = 0; i < n; i++) {
    if (domains && !domains.has(c.domain[i])) continue;
    if (sources && !sources.has(c.source[i])) continue;
    // A size class (lengths length[i]..lengthMax[i]) is kept when it meets [lo, hi].
    if (c.length[i] > hi || (c.lengthMax ? c.lengthMax[i] : c.length[i]) < lo) continue;
    const node = c.node[i];
    const fnode = node < 0 ? -1 : data.nodes.fnode[node];
    if (withFn && !(fnode >= 0 && withFn[fnode] === 1)) continue;
    if (without && fnode >= 0 && without[fnode] === 1) continue;
    keep[i] = 1;
  }
  return keep;
}

/**
 * Per class, the samples the selector keeps: allocations in its bucket range (`alloc`), or the
 * objects among them live at the trace end, at the peak, at the end of bucket `liveBucket`, or
 * at the exact time the profile was aggregated for (`exact`). Also, per class, those of
 * promoted objects (promoted by that time) and those of objects never collected.
 * @param {ProfileData} data
 * @param {Selector} sel
 * @returns {Selection}
 */
export function selectSamples(data, sel) {
  const nc = data.classes.node.length;
  const samples = new Float64Array(nc), promoted = new Float64Array(nc);
  const liveEnd = new Float64Array(nc);
  const mask = classMask(data, sel);
  if (sel.live === "exact") {
    const at = data.liveAt;
    if (at === null) throw new Error("this profile has no exact live-at counts");
    if (sel.fromBucket !== null || sel.toBucket !== null) {
      throw new Error("exact live-at counts take the profile's own time window");
    }
    for (let i = 0; i < nc; i++) {
      if (mask[i] === 0) continue;
      samples[i] = at.samples[i];
      promoted[i] = at.promoted[i];
      liveEnd[i] = at.liveEnd[i];
    }
    return { samples, promoted, liveEnd };
  }
  const t = data.totals;
  if (
    t && (sel.live === "alloc" || sel.live === "end") && sel.fromBucket === null &&
    sel.toBucket === null
  ) {
    // Allocations, or the live heap at the end, over the whole window: the per-class totals.
    const end = sel.live === "end";
    for (let i = 0; i < nc; i++) {
      if (mask[i] === 0) continue;
      samples[i] = end ? t.liveEnd[i] : t.samples[i];
      promoted[i] = end ? t.liveEndPromoted[i] : t.promoted[i];
      liveEnd[i] = t.liveEnd[i];
    }
    return { samples, promoted, liveEnd };
  }
  const r = data.rows;
  if (r === null) {
    throw new Error("this profile has no cube: time buckets and the live heap at a bucket need it");
  }
  const lo = sel.fromBucket ?? 0, hi = sel.toBucket ?? Infinity;
  /** @type {number} */
  let k = -1;
  if (sel.live === "peak") k = data.peak === null ? -2 : data.peak.bucket;
  else if (sel.live === "bucket") k = sel.liveBucket ?? -2;
  for (let j = 0; j < r.cls.length; j++) {
    const cls = r.cls[j];
    if (mask[cls] === 0) continue;
    const a = r.a[j];
    if (a < lo || a > hi) continue;
    const e = r.e[j], p = r.p[j], s = r.samples[j];
    if (sel.live === "alloc") {
      samples[cls] += s;
      if (p !== NEVER_BUCKET) promoted[cls] += s;
      if (e === NEVER_BUCKET) liveEnd[cls] += s;
    } else if (sel.live === "end") {
      if (e !== NEVER_BUCKET) continue;
      samples[cls] += s;
      liveEnd[cls] += s;
      if (p !== NEVER_BUCKET) promoted[cls] += s;
    } else {
      if (!(a <= k && k < e)) continue;
      samples[cls] += s;
      if (p <= k) promoted[cls] += s;
      if (e === NEVER_BUCKET) liveEnd[cls] += s;
    }
  }
  return { samples, promoted, liveEnd };
}

/**
 * Sums of a selection over all classes.
 * @param {Selection} s
 * @returns {{samples: number, promoted: number, liveEnd: number}}
 */
export function selectionTotals(s) {
  let samples = 0, promoted = 0, liveEnd = 0;
  for (let i = 0; i < s.samples.length; i++) {
    samples += s.samples[i];
    promoted += s.promoted[i];
    liveEnd += s.liveEnd[i];
  }
  return { samples, promoted, liveEnd };
}

/**
 * Groups a selection by site (innermost location), function or whole stack. For functions,
 * `samples` counts every stack containing the function (once, however often it recurses) and
 * `self` the stacks where it is innermost; groups with no samples are left out.
 * @param {ProfileData} data
 * @param {Selection} s
 * @param {GroupBy} by
 * @returns {GroupRow[]}
 */
export function groupBy(data, s, by) {
  const c = data.classes;
  /** @type {Map<number, GroupRow>} */
  const groups = new Map();
  /** @param {number} id @param {() => string} key */
  const group = (id, key) => {
    let g = groups.get(id);
    if (g === undefined) {
      g = { key: key(), samples: 0, self: 0, promoted: 0, liveEnd: 0 };
      groups.set(id, g);
    }
    return g;
  };
  if (by === "function") {
    const stamp = new Int32Array(data.functions.length).fill(-1);
    for (let i = 0; i < c.node.length; i++) {
      const w = s.samples[i];
      if (w === 0) continue;
      const node = c.node[i];
      if (node < 0) continue;
      let fnode = data.nodes.fnode[node];
      const leaf = data.fnodes.fn[fnode];
      group(leaf, () => data.functions[leaf]).self += w;
      for (; fnode >= 0; fnode = data.fnodes.parent[fnode]) {
        const fn = data.fnodes.fn[fnode];
        if (stamp[fn] === i) continue;
        stamp[fn] = i;
        const g = group(fn, () => data.functions[fn]);
        g.samples += w;
        g.promoted += s.promoted[i];
        g.liveEnd += s.liveEnd[i];
      }
    }
    return [...groups.values()];
  }
  /** @type {{node: Float64Array, leaf: Float64Array} | null} */
  let ranks = null;
  for (let i = 0; i < c.node.length; i++) {
    const w = s.samples[i];
    if (w === 0) continue;
    const node = c.node[i];
    /** @type {GroupRow} */
    let g;
    if (by === "site") {
      const loc = node < 0 ? -1 : data.nodes.loc[node];
      g = group(loc, () => (loc < 0 ? NO_LOCATION : locationText(data, loc)));
    } else {
      const found = groups.get(node);
      if (found === undefined) {
        const r = (ranks ??= stackOrder(data));
        g = stackGroup(data, node, node < 0 ? r.leaf[0] : r.node[node]);
        groups.set(node, g);
      } else g = found;
    }
    g.samples += w;
    g.self += w;
    g.promoted += s.promoted[i];
    g.liveEnd += s.liveEnd[i];
  }
  return [...groups.values()];
}

/**
 * A stack's group: its key (the stack's text within {@link STACK_TEXT_CHARS}) is made when first
 * read, so that groups of stacks never shown cost no text.
 * @param {ProfileData} data
 * @param {number} node
 * @param {number} order the stack's rank (see {@link stackOrder})
 * @returns {GroupRow}
 */
function stackGroup(data, node, order) {
  /** @type {string | undefined} */
  let key;
  /** @type {GroupRow} */
  const g = /** @type {any} */ ({ samples: 0, self: 0, promoted: 0, liveEnd: 0, node, order });
  Object.defineProperty(g, "key", {
    enumerable: true,
    get: () => (key ??= node < 0 ? NO_LOCATION : stackLabel(data, node).key),
  });
  return g;
}

/**
 * A group's figures as `trace top` and the report's table show them: samples, estimated bytes
 * (allocated or live), bytes of objects live at the end, promoted samples and their share.
 * @param {GroupRow} g
 * @param {number} bps bytes per sample
 * @returns {{key: string, samples: number, bytes: number, liveEndBytes: number,
 *   promotedSamples: number, promotedShare: number}}
 */
export function groupFigures(g, bps) {
  return {
    key: g.key,
    samples: g.samples,
    bytes: g.samples * bps,
    liveEndBytes: g.liveEnd * bps,
    promotedSamples: g.promoted,
    promotedShare: g.samples > 0 ? g.promoted / g.samples : 0,
  };
}

/**
 * Compares two groups by their whole keys in code-unit order: for stacks, by their ranks (the
 * order of their whole texts, which are not built), otherwise by key.
 * @param {GroupRow} x
 * @param {GroupRow} y
 * @returns {number}
 */
export function compareGroupKeys(x, y) {
  if (x.order !== undefined && y.order !== undefined) return x.order - y.order;
  return x.key < y.key ? -1 : x.key > y.key ? 1 : 0;
}

/**
 * Sorts groups in place, largest first: by `self` then `samples` for functions, by `samples`
 * otherwise; ties by key (code-unit order of the whole keys, see {@link compareGroupKeys}).
 * @param {GroupRow[]} rows
 * @param {GroupBy} by
 * @returns {GroupRow[]}
 */
export function sortGroups(rows, by) {
  return rows.sort((x, y) =>
    (by === "function" ? y.self - x.self || y.samples - x.samples : y.samples - x.samples) ||
    compareGroupKeys(x, y)
  );
}

/**
 * The live samples at the end of each grid bucket, of the classes in `mask` allocated in
 * buckets [fromBucket, toBucket] (every class and bucket when `mask` is null).
 * @param {ProfileData} data
 * @param {Uint8Array | null} mask
 * @param {number | null} fromBucket
 * @param {number | null} toBucket
 * @returns {Float64Array}
 */
export function liveSeries(data, mask, fromBucket, toBucket) {
  const nb = data.grid.buckets;
  const delta = new Float64Array(nb + 1);
  const lo = fromBucket ?? 0, hi = toBucket ?? Infinity;
  const r = data.rows;
  if (r === null) throw new Error("this profile has no cube: the live series needs it");
  for (let j = 0; j < r.cls.length; j++) {
    if (mask !== null && mask[r.cls[j]] === 0) continue;
    const a = r.a[j];
    if (a < lo || a > hi) continue;
    const e = r.e[j];
    delta[a] += r.samples[j];
    if (e !== NEVER_BUCKET) delta[e] -= r.samples[j];
  }
  const out = new Float64Array(nb);
  let live = 0;
  for (let k = 0; k < nb; k++) {
    live += delta[k];
    out[k] = live;
  }
  return out;
}

/**
 * The live samples of the whole trace at the end of each grid bucket (no filter, no window).
 * @param {ProfileData} data
 * @returns {Float64Array}
 */
export function totalLiveSeries(data) {
  const g = data.grid;
  const out = new Float64Array(g.buckets);
  let live = 0;
  for (let k = 0; k < g.buckets; k++) {
    live += g.alloc[k] - g.end[k];
    out[k] = live;
  }
  return out;
}

/**
 * Per function-path node: the selected samples whose stack ends there (`self`) and those whose
 * stack passes through it (`total`) — the flame graph.
 * @param {ProfileData} data
 * @param {Selection} s
 * @returns {{self: Float64Array, total: Float64Array, rootTotal: number}}
 */
export function flameWeights(data, s) {
  const nf = data.fnodes.parent.length;
  const self = new Float64Array(nf), total = new Float64Array(nf);
  let rootTotal = 0;
  const c = data.classes;
  for (let i = 0; i < c.node.length; i++) {
    const w = s.samples[i];
    if (w === 0) continue;
    rootTotal += w;
    const node = c.node[i];
    if (node >= 0) self[data.nodes.fnode[node]] += w;
  }
  total.set(self);
  // Children come after their parents: one backward sweep sums subtrees.
  for (let i = nf - 1; i >= 0; i--) {
    const p = data.fnodes.parent[i];
    if (p >= 0) total[p] += total[i];
  }
  return { self, total, rootTotal };
}

/**
 * @typedef {{fn: number, value: number, children: Map<number, CallTree>}} CallTree
 */

/**
 * The callees and callers of function `fn` in a selection: `callees` merges what each stack
 * does below the function's outermost frame; `callers` merges, from the function outwards, what
 * leads to its innermost frame. Both roots are `fn`, valued by the stacks containing it.
 * @param {ProfileData} data
 * @param {Selection} s
 * @param {number} fn
 * @returns {{callees: CallTree, callers: CallTree}}
 */
export function callTrees(data, s, fn) {
  /** @type {CallTree} */
  const callees = { fn, value: 0, children: new Map() };
  /** @type {CallTree} */
  const callers = { fn, value: 0, children: new Map() };
  /** @type {number[]} */
  const path = [];
  /** @param {CallTree} t @param {number} f @param {number} w */
  const step = (t, f, w) => {
    let child = t.children.get(f);
    if (child === undefined) {
      child = { fn: f, value: 0, children: new Map() };
      t.children.set(f, child);
    }
    child.value += w;
    return child;
  };
  const c = data.classes;
  for (let i = 0; i < c.node.length; i++) {
    const w = s.samples[i];
    if (w === 0 || c.node[i] < 0) continue;
    path.length = 0;
    for (let f = data.nodes.fnode[c.node[i]]; f >= 0; f = data.fnodes.parent[f]) {
      path.push(data.fnodes.fn[f]);
    }
    path.reverse(); // outermost first
    const first = path.indexOf(fn);
    if (first < 0) continue;
    const last = path.lastIndexOf(fn);
    callees.value += w;
    callers.value += w;
    let t = callees;
    for (let j = first + 1; j < path.length; j++) t = step(t, path[j], w);
    t = callers;
    for (let j = last - 1; j >= 0; j--) t = step(t, path[j], w);
  }
  return { callees, callers };
}
