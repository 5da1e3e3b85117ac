/**
 * The one streaming pass every analysis starts with: reads a trace event by event and keeps
 * only tables (see {@linkcode ProfileData}). Memory grows with the distinct stacks, the classes,
 * the cube's rows and the objects live at the moment — never with the number of events. Classes
 * group lengths into size classes by default, so that their number is bounded by the stacks
 * (exact lengths make nearly one class per allocation on deep, varied traces).
 * @module
 */
import type { TraceEvent, TraceReader } from "./source.ts";
import { type LocatedLocations, locationLookup } from "../memtrace/reader.ts";
import { FrameTable } from "./_frames.ts";
import { GrowF64, GrowI32 } from "./_grow.ts";
import { type ClassColumns, ClassIndex } from "./_class_index.ts";
import { RowIndex } from "./_row_index.ts";
import { IdMap } from "./_id_map.ts";
import { deriveFunctionPaths } from "./select.ts";
import { TraceAnalysisError } from "./errors.ts";
import {
  MAX_BUCKETS,
  NEVER,
  type ProfileData,
  type ProfilePeak,
  type ProfileRows,
} from "./profile.ts";

/** Options of {@linkcode aggregateTrace}. */
export interface AggregateOptions {
  /** Keep only objects allocated at or after this time (µs since the trace start). */
  fromUs?: number;
  /** Keep only objects allocated before this time (µs since the trace start). */
  toUs?: number;
  /** Also count, per class, the objects live at this exact time (µs since the trace start). */
  liveAtUs?: number;
  /** Most buckets of the time grid (2 to 128; default 128). */
  maxBuckets?: number;
  /** Keep only objects of at least this many words (header excluded), by their exact length. */
  sizeMin?: number;
  /** Keep only objects of at most this many words, by their exact length. */
  sizeMax?: number;
  /**
   * How classes keep lengths: `classes` (the default) groups them by {@linkcode sizeClassOf}
   * (exact up to 16 words, then (2^(k−1), 2^k]), so that the classes are bounded by the stacks
   * rather than by the allocations; `exact` keeps one class per exact length (what the pprof
   * export shows, per sample).
   */
  lengths?: "classes" | "exact";
  /**
   * Keep the cube (samples by class and allocation, end and promotion time buckets; default
   * true): what time ranges of the grid, the live heap at a bucket (the peak) and the report's
   * views need. Without it the profile's `rows` are null and memory follows the classes alone:
   * allocations and the live heap at the end (or at `liveAtUs`) come from per-class totals.
   */
  cube?: boolean;
  /**
   * Stacks to merge while reading (the report's summary: `summaryPlan` in summary.ts, from a
   * first pass over the same trace): per stack node, the node whose classes its allocations
   * join — itself, or a code ≤ −2 that `summarizeProfile` turns into a frame. Nodes past its
   * end join −2.
   */
  mergeStacks?: Int32Array;
}

/** Lengths up to this many words are each their own size class. */
export const EXACT_LENGTHS_UP_TO = 16;

/**
 * The size class of a length in words, as its smallest and largest length: the length alone up to
 * {@linkcode EXACT_LENGTHS_UP_TO} words, then (2^(k−1), 2^k]. These classes nest in the report's
 * (0, 1 and 2 alone, then (2^(k−1), 2^k]).
 */
export function sizeClassOf(length: number): { min: number; max: number } {
  const max = sizeClassMax(length);
  return { min: max <= EXACT_LENGTHS_UP_TO ? max : max / 2 + 1, max };
}

/** The largest length of `length`'s size class ({@linkcode sizeClassOf}), without allocating. */
function sizeClassMax(length: number): number {
  if (!(length > EXACT_LENGTHS_UP_TO)) return length;
  if (length <= 2 ** 31) return 2 ** (32 - Math.clz32(length - 1));
  let max = 2 ** 31;
  while (max < length) max *= 2;
  return max;
}

/**
 * A pass over a trace in progress, for a caller that reads the events itself (a few packets at a
 * time with lib/memtrace's `Reader.iterate`, letting its event loop run between): give
 * {@linkcode onEvent} every event in file order, then call {@linkcode finish} once.
 */
export interface AnalysisPass<T> {
  /** Takes the next event and its time in µs since the trace start. */
  readonly onEvent: (time: number, ev: TraceEvent) => void;
  /** Ends the pass and returns its result. */
  finish(): T;
}

/** Reads every event of `reader` once and returns the tables of {@linkcode ProfileData}. */
export function aggregateTrace(reader: TraceReader, options: AggregateOptions = {}): ProfileData {
  const pass = startAggregate(reader, options);
  reader.iter(pass.onEvent);
  return pass.finish();
}

/** {@linkcode aggregateTrace} as a pass the caller feeds with `reader`'s events (the options are
 * checked at once). */
export function startAggregate(
  reader: TraceReader,
  options: AggregateOptions = {},
): AnalysisPass<ProfileData> {
  const maxBuckets = options.maxBuckets ?? MAX_BUCKETS;
  if (!(Number.isInteger(maxBuckets) && maxBuckets >= 2 && maxBuckets <= MAX_BUCKETS)) {
    throw new TraceAnalysisError("buckets", `must be an integer in [2, ${MAX_BUCKETS}]`);
  }
  for (
    const [name, v] of [["from", options.fromUs], ["to", options.toUs], [
      "live-at",
      options.liveAtUs,
    ]] as const
  ) {
    if (v !== undefined && !Number.isFinite(v)) {
      throw new TraceAnalysisError(name, `not a finite time: ${v}`);
    }
  }
  for (const v of [options.sizeMin, options.sizeMax]) {
    if (v !== undefined && !(Number.isInteger(v) && v >= 0)) {
      throw new TraceAnalysisError("size", `expected a whole number of words, got ${v}`);
    }
  }
  const lengths = options.lengths ?? "classes";
  if (lengths !== "classes" && lengths !== "exact") {
    throw new TraceAnalysisError("lengths", `expected classes or exact, got ${lengths}`);
  }
  const exact = lengths === "exact";
  const fromUs = options.fromUs ?? -Infinity;
  const toUs = options.toUs ?? Infinity;
  const sizeMin = options.sizeMin ?? -Infinity;
  const sizeMax = options.sizeMax ?? Infinity;
  const liveAt = options.liveAtUs;

  // A code used but never defined: memtrace's Reader (which has eventOffset and locationsOf)
  // stops with the typed MemtraceFormatError at the event's offset, as every command does.
  const frames = new FrameTable(
    reader.eventOffset !== undefined && reader.locationsOf !== undefined
      ? locationLookup(reader as LocatedLocations)
      : (c) => reader.lookupLocationCode(c),
  );

  const cube = options.cube ?? true;
  const merge = options.mergeStacks;

  // Classes: (node, domain, source, length or size class), indexed by those keys read back from
  // these columns (`cols`, refreshed when a column grows).
  const clsNode = new GrowI32(), clsDomain = new GrowI32(), clsSource = new GrowI32();
  const clsLength = new GrowF64();
  const cols: ClassColumns = {
    node: clsNode.data,
    domain: clsDomain.data,
    source: clsSource.data,
    size: clsLength.data,
  };
  const clsIndex = new ClassIndex();
  // Per-class totals, and counts at the exact live-at time.
  const totSamples = new GrowF64(), totPromoted = new GrowF64(), totLiveEnd = new GrowF64();
  const totEndPromoted = new GrowF64();
  const atSamples = new GrowF64(), atPromoted = new GrowF64(), atLiveEnd = new GrowF64();
  function classOf(node: number, domain: number, source: number, length: number): number {
    const size = exact ? length : sizeClassMax(length);
    let c = clsIndex.get(node, domain, source, size, cols);
    if (c >= 0) return c;
    c = clsNode.push(node);
    clsDomain.push(domain);
    clsSource.push(source);
    clsLength.push(size);
    cols.node = clsNode.data;
    cols.domain = clsDomain.data;
    cols.source = clsSource.data;
    cols.size = clsLength.data;
    clsIndex.add(c, cols);
    totSamples.push(0);
    totPromoted.push(0);
    totLiveEnd.push(0);
    totEndPromoted.push(0);
    if (liveAt !== undefined) {
      atSamples.push(0);
      atPromoted.push(0);
      atLiveEnd.push(0);
    }
    return c;
  }

  // The time grid: bucket width doubles (and the cube is re-keyed) as time runs past it.
  let width = 1;
  let gridAlloc = new Float64Array(maxBuckets);
  let gridEnd = new Float64Array(maxBuckets);
  const bucket = (t: number) => Math.floor(t / width);

  // The cube: (cls, a, e, p) → row, indexed by (cls, cell(a, e, p)).
  const cell = (a: number, e: number, p: number) => (a * 256 + e) * 256 + p;
  // (The index keeps row numbers only, the keys being in rowCls and rowCell.)
  let rowIndex = new RowIndex();
  // (a, e and p are read back from the cell: a = cell >> 16, e = (cell >> 8) & 255, p = cell & 255.)
  const rowCls = new GrowI32(), rowCell = new GrowI32();
  const rowSamples = new GrowF64();
  function addRow(cls: number, a: number, e: number, p: number, n: number): void {
    const c = cell(a, e, p);
    const r = rowIndex.get(cls, c, rowCls.data, rowCell.data);
    if (r >= 0) {
      rowSamples.data[r] += n;
      return;
    }
    const row = rowCls.push(cls);
    rowCell.push(c);
    rowIndex.add(cls, c, row, rowCls.data, rowCell.data);
    rowSamples.push(n);
  }
  function widen(t: number): void {
    while (t >= maxBuckets * width) {
      width *= 2;
      const ga = new Float64Array(maxBuckets), ge = new Float64Array(maxBuckets);
      for (let k = 0; k < maxBuckets; k++) {
        ga[k >> 1] += gridAlloc[k];
        ge[k >> 1] += gridEnd[k];
      }
      gridAlloc = ga;
      gridEnd = ge;
      if (!cube) continue;
      // The rows re-keyed in place (no second copy of them): row r moves to w ≤ r, or adds into
      // an earlier row that now has its key; the index only ever holds rows before w.
      const n = rowCls.length;
      rowIndex = new RowIndex(n);
      const cls = rowCls.data, cells = rowCell.data, samples = rowSamples.data;
      let w = 0;
      for (let r = 0; r < n; r++) {
        const c = cells[r], e = (c >> 8) & 255, p = c & 255;
        const k = cell(c >> 17, e === NEVER ? NEVER : e >> 1, p === NEVER ? NEVER : p >> 1);
        const at = rowIndex.get(cls[r], k, cls, cells);
        if (at >= 0) {
          samples[at] += samples[r];
          continue;
        }
        cls[w] = cls[r];
        cells[w] = k;
        samples[w] = samples[r];
        rowIndex.add(cls[w], k, w, cls, cells);
        w++;
      }
      rowCls.length = rowCell.length = rowSamples.length = w;
    }
  }

  // Objects not yet collected: id → slot.
  const live = new IdMap();
  const slotCls = new GrowI32(), slotIn = new GrowI32();
  const slotN = new GrowF64(), slotT = new GrowF64(), slotP = new GrowF64();
  const freeSlots = new GrowI32();
  function newSlot(): number {
    if (freeSlots.length > 0) return freeSlots.data[--freeSlots.length];
    slotCls.push(0);
    slotIn.push(0);
    slotN.push(0);
    slotT.push(0);
    return slotP.push(0);
  }
  /** The object of `slot` ends at `end` (µs), or is still live at the trace end (NaN). */
  function finish(slot: number, end: number): void {
    const cls = slotCls.data[slot], n = slotN.data[slot], t = slotT.data[slot];
    const promotedAt = slotP.data[slot];
    const a = bucket(t);
    const e = Number.isNaN(end) ? NEVER : Math.max(a, bucket(end));
    if (e !== NEVER) gridEnd[e] += n;
    if (slotIn.data[slot] === 0) return;
    totSamples.data[cls] += n;
    if (promotedAt >= 0) totPromoted.data[cls] += n;
    if (e === NEVER) {
      totLiveEnd.data[cls] += n;
      if (promotedAt >= 0) totEndPromoted.data[cls] += n;
    }
    if (cube) addRow(cls, a, e, promotedAt < 0 ? NEVER : Math.max(a, bucket(promotedAt)), n);
    if (liveAt !== undefined && t <= liveAt && !(end <= liveAt)) {
      atSamples.data[cls] += n;
      if (promotedAt >= 0 && promotedAt <= liveAt) atPromoted.data[cls] += n;
      if (Number.isNaN(end)) atLiveEnd.data[cls] += n;
    }
  }

  const stats = {
    events: 0,
    allocations: { minor: 0, major: 0, external: 0 },
    samples: 0,
    promotions: 0,
    collections: 0,
    unmatchedPromotes: 0,
    unmatchedCollects: 0,
    durationUs: 0,
    domains: [] as number[],
  };
  const domains = new Set<number>();
  let lastDomain = NaN;

  const onEvent = (dt: number, ev: TraceEvent) => {
    stats.events++;
    const t = dt > 0 ? dt : 0;
    if (t > stats.durationUs) stats.durationUs = t;
    if (t >= maxBuckets * width) widen(t);
    if (ev.domain !== lastDomain) {
      lastDomain = ev.domain;
      domains.add(ev.domain);
    }
    if (ev.kind === "alloc") {
      const node = frames.stackNode(
        ev.domain,
        ev.backtraceBuffer,
        ev.backtraceLength,
        ev.commonPrefix,
      );
      const cls = classOf(
        merge === undefined || node < 0 ? node : node < merge.length ? merge[node] : -2,
        ev.domain,
        ev.source,
        ev.length,
      );
      const n = ev.nsamples;
      stats.samples += n;
      if (ev.source === 0) stats.allocations.minor++;
      else if (ev.source === 1) stats.allocations.major++;
      else stats.allocations.external++;
      gridAlloc[bucket(t)] += n;
      const previous = live.get(ev.objId);
      if (previous >= 0) {
        // An id allocated twice (a corrupt trace): the first object ends here.
        finish(previous, t);
        freeSlots.push(previous);
      }
      const slot = newSlot();
      slotCls.data[slot] = cls;
      // The size filter is applied here, to the exact length (classes may group lengths).
      slotIn.data[slot] = t >= fromUs && t < toUs && ev.length >= sizeMin && ev.length <= sizeMax
        ? 1
        : 0;
      slotN.data[slot] = n;
      slotT.data[slot] = t;
      slotP.data[slot] = -1;
      live.set(ev.objId, slot);
    } else if (ev.kind === "promote") {
      const slot = live.get(ev.objId);
      if (slot < 0) stats.unmatchedPromotes++;
      else {
        stats.promotions++;
        if (slotP.data[slot] < 0) slotP.data[slot] = t;
      }
    } else {
      const slot = live.get(ev.objId);
      if (slot < 0) stats.unmatchedCollects++;
      else {
        stats.collections++;
        finish(slot, t);
        live.delete(ev.objId);
        freeSlots.push(slot);
      }
    }
  };
  return { onEvent, finish: () => tables() };

  function tables(): ProfileData {
    live.forEachValue((slot) => finish(slot, NaN));

    const buckets = stats.events === 0 ? 0 : bucket(stats.durationUs) + 1;
    stats.domains = [...domains].sort((x, y) => x - y);

    const nc = clsNode.length;
    const col = (g: GrowI32 | GrowF64) => g.data.subarray(0, g.length);
    const info = reader.info;
    return deriveFunctionPaths({
      format: "memprof-lab-trace-profile",
      version: 1,
      info: {
        sampleRate: info.sampleRate,
        wordSize: info.wordSize,
        executableName: info.executableName,
        hostName: info.hostName,
        ocamlRuntimeParams: info.ocamlRuntimeParams,
        pid: Number(info.pid),
        initialDomain: info.initialDomain,
        startTime: info.startTime,
        context: info.context ?? null,
        sizeBytes: reader.sizeBytes(),
      },
      stats,
      window: {
        fromUs: options.fromUs ?? null,
        toUs: options.toUs ?? null,
      },
      grid: {
        widthUs: width,
        buckets,
        alloc: Array.from(gridAlloc.subarray(0, buckets)),
        end: Array.from(gridEnd.subarray(0, buckets)),
      },
      peak: findPeak(gridAlloc, gridEnd, buckets, width),
      functions: frames.functions,
      files: frames.files,
      locations: {
        fn: col(frames.locFn),
        file: col(frames.locFile),
        line: col(frames.locLine),
        start: col(frames.locStart),
        end: col(frames.locEnd),
      },
      nodes: { parent: col(frames.nodeParent), loc: col(frames.nodeLoc), fnode: [] },
      fnodes: { parent: [], fn: [] },
      classes: exact
        ? {
          node: col(clsNode),
          domain: col(clsDomain),
          source: col(clsSource),
          length: col(clsLength),
        }
        : {
          node: col(clsNode),
          domain: col(clsDomain),
          source: col(clsSource),
          length: clsLength.data.subarray(0, nc).map((max) =>
            max <= EXACT_LENGTHS_UP_TO ? max : max / 2 + 1
          ),
          lengthMax: col(clsLength),
        },
      totals: {
        samples: col(totSamples),
        promoted: col(totPromoted),
        liveEnd: col(totLiveEnd),
        liveEndPromoted: col(totEndPromoted),
      },
      rows: cube ? sortedRows() : null,
      liveAt: liveAt === undefined ? null : {
        timeUs: liveAt,
        samples: col(atSamples),
        promoted: col(atPromoted),
        liveEnd: col(atLiveEnd),
      },
    });
  }

  /** The cube's rows sorted by (cls, a, e, p), for a deterministic, compressible order. */
  function sortedRows(): ProfileRows {
    // Their keys cls·2^24 + cell(a, e, p) sorted as numbers (exact: classes are fewer than 2^29).
    const nRows = rowCls.length;
    const keys = new Float64Array(nRows);
    for (let r = 0; r < nRows; r++) keys[r] = rowCls.data[r] * 2 ** 24 + rowCell.data[r];
    keys.sort();
    const cls = new Int32Array(nRows), samples = new Float64Array(nRows);
    const a = new Uint8Array(nRows), e = new Uint8Array(nRows), p = new Uint8Array(nRows);
    for (let j = 0; j < nRows; j++) {
      const c = Math.floor(keys[j] / 2 ** 24), k = keys[j] - c * 2 ** 24;
      cls[j] = c;
      a[j] = k >> 16;
      e[j] = (k >> 8) & 255;
      p[j] = k & 255;
      samples[j] = rowSamples.data[rowIndex.get(c, k, rowCls.data, rowCell.data)];
    }
    return { cls, a, e, p, samples };
  }
}

function findPeak(
  alloc: Float64Array,
  end: Float64Array,
  buckets: number,
  width: number,
): ProfilePeak | null {
  let live = 0, best = -1, at = -1;
  for (let k = 0; k < buckets; k++) {
    live += alloc[k] - end[k];
    if (live > best) {
      best = live;
      at = k;
    }
  }
  if (at < 0) return null;
  return { bucket: at, timeUs: (at + 1) * width - 1, samples: best };
}
