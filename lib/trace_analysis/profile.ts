/**
 * The aggregate of a trace that every analysis command works from: what one streaming pass
 * over a `.ctf` file keeps. It holds no event, only tables (columns of numbers: typed arrays as
 * the aggregation hands them over, plain arrays in the HTML report's page, which gets them as
 * JSON):
 *
 * - frames: functions, files, locations, the tree of location paths ("nodes", one per distinct
 *   backtrace prefix) and the tree of function paths ("fnodes", adjacent frames of one function
 *   merged);
 * - classes: distinct (stack node, domain, source, size class) of sampled allocations (size
 *   classes: the length in words up to 16, then (2^(k−1), 2^k]; or exact lengths on request);
 * - totals: per class, the samples allocated, of promoted objects, of objects never collected,
 *   and of those promoted — what allocations and the live heap at the end need;
 * - rows (when the aggregation keeps them): per class, the samples of objects allocated in time
 *   bucket `a`, ended (collected) in bucket `e` and promoted in bucket `p` (`NEVER` when that did
 *   not happen) — a cube from which allocations in a time range and the live heap at the end of
 *   any bucket follow exactly;
 * - a time grid: samples allocated and ended per bucket over the whole trace, whose running
 *   balance is the live heap; its largest value is the peak;
 * - optionally, per class, the objects live at one exact time.
 *
 * Bytes are estimates: samples ÷ sample rate × bytes per word (`wordSize` is in bits).
 * @module
 */

/** A column of numbers, indexed from 0: a typed array as the aggregation hands it over, a plain
 * array in the report's page. */
export type Column = ArrayLike<number>;

/** Marks "did not happen" in the `e` and `p` columns of {@linkcode ProfileRows}. */
export const NEVER = 255;

/** Most buckets of the time grid. */
export const MAX_BUCKETS = 128;

/** The trace's metadata, as its info packet gives it. */
export interface ProfileInfo {
  /** Fraction of words sampled. */
  sampleRate: number;
  /** Bits per word of the traced program. */
  wordSize: number;
  /** The traced executable. */
  executableName: string;
  /** The host it ran on. */
  hostName: string;
  /** Its OCAMLRUNPARAM settings. */
  ocamlRuntimeParams: string;
  /** Its process id. */
  pid: number;
  /** The domain that started the trace. */
  initialDomain: number;
  /** Start of the trace, µs since the Unix epoch. */
  startTime: number;
  /** Free text given when the trace started. */
  context: string | null;
  /** Size of the trace file in bytes. */
  sizeBytes: number;
}

/** Counts over the whole trace (no filter applies to them). */
export interface ProfileStats {
  /** Events read (allocations, promotions, collections). */
  events: number;
  /** Sampled allocation events by source. */
  allocations: { minor: number; major: number; external: number };
  /** Sum of every allocation's `nsamples`. */
  samples: number;
  /** Promotions of allocated objects (at most one counted per object). */
  promotions: number;
  /** Collections of allocated objects. */
  collections: number;
  /** Promotions of an object not allocated in the trace (or already collected), ignored. */
  unmatchedPromotes: number;
  /** Collections of an object not allocated in the trace (or already collected), ignored. */
  unmatchedCollects: number;
  /** Time of the latest event, µs since the trace start. */
  durationUs: number;
  /** Domains that wrote events, ascending. */
  domains: number[];
}

/** Functions' locations: parallel columns indexed by location id. */
export interface ProfileLocations {
  /** Index into {@linkcode ProfileData.functions} (the location's `defname`). */
  fn: Column;
  /** Index into {@linkcode ProfileData.files}. */
  file: Column;
  /** Line number. */
  line: Column;
  /** First character on the line. */
  start: Column;
  /** Last character on the line. */
  end: Column;
}

/** The tree of location paths: node `i` is the path of its parent plus location `loc[i]`.
 * Parents come before children; −1 is the (empty) root. */
export interface ProfileNodes {
  /** The parent node (−1: the root). */
  parent: Column;
  /** The node's location id. */
  loc: Column;
  /** The function-path node this location path maps to. */
  fnode: Column;
}

/** The tree of function paths (adjacent frames of one function merged into one). Parents come
 * before children; −1 is the root. */
export interface ProfileFnodes {
  /** The parent node (−1: the root). */
  parent: Column;
  /** The node's function id. */
  fn: Column;
}

/** Distinct (stack node, domain, source, size class or exact length) of sampled allocations. */
export interface ProfileClasses {
  /** Location-path node of the backtrace; −1 for a backtrace with no known location. */
  node: Column;
  /** The allocating domain. */
  domain: Column;
  /** 0 minor, 1 major, 2 external (memtrace's codes). */
  source: Column;
  /** Length in words, header excluded (for a size class: its smallest length). */
  length: Column;
  /** For profiles whose classes group sizes (the aggregate's by default, the report's): each
   * class's largest length. Absent: `length` is each class's exact length. */
  lengthMax?: Column;
}

/** The cube: samples by class, allocation bucket `a`, end bucket `e` and promotion bucket `p`
 * (`NEVER` when the object was not collected / not promoted). Sorted by (cls, a, e, p). */
export interface ProfileRows {
  /** Class index. */
  cls: Column;
  /** Allocation bucket. */
  a: Column;
  /** End (collection) bucket, or `NEVER`. */
  e: Column;
  /** Promotion bucket, or `NEVER`. */
  p: Column;
  /** Samples. */
  samples: Column;
}

/** Per class, over the whole trace (within the aggregation's time window and size bounds): what
 * allocations and the live heap at the end need, without the cube. */
export interface ProfileTotals {
  /** Samples allocated. */
  samples: Column;
  /** Of those, samples of objects promoted. */
  promoted: Column;
  /** Of those, samples of objects never collected. */
  liveEnd: Column;
  /** Of those never collected, samples of objects promoted. */
  liveEndPromoted: Column;
}

/** The time grid: `buckets` intervals of `widthUs` µs from the trace start (bucket `k` holds
 * times in [k·width, (k+1)·width)); per bucket the samples allocated and ended there. */
export interface ProfileGrid {
  /** Width of a bucket in µs (a power of two). */
  widthUs: number;
  /** Number of buckets (the last holds the last event). */
  buckets: number;
  /** Per bucket: samples allocated. */
  alloc: Column;
  /** Per bucket: samples of objects collected. */
  end: Column;
}

/** The peak of the whole trace's estimated live heap, located on the grid: the end of the first
 * bucket where the live samples are largest. `timeUs` is that bucket's last µs. */
export interface ProfilePeak {
  /** The bucket at whose end the live heap is largest. */
  bucket: number;
  /** Its last µs since the trace start. */
  timeUs: number;
  /** The live samples then. */
  samples: number;
}

/** Per class, the objects live at one exact time `timeUs` (allocated at or before it, not
 * collected at or before it). */
export interface ProfileLiveAt {
  /** The time, µs since the trace start. */
  timeUs: number;
  /** Per class: samples of the objects live then. */
  samples: Column;
  /** Of those, samples of objects promoted at or before `timeUs`. */
  promoted: Column;
  /** Of those, samples of objects never collected. */
  liveEnd: Column;
}

/** What a summarised profile (the report's, on traces with many stacks) kept and left out:
 * the stacks with the most samples kept whole, the others merged into one frame
 * `(other stacks)`, under which the sites with the most samples among them stay. */
export interface ProfileSummary {
  /** Stacks with samples in the trace (a backtrace with no known location counts as one). */
  stacks: number;
  /** Of those, the stacks kept whole. */
  stacksKept: number;
  /** Samples of the whole trace. */
  samples: number;
  /** Of those, the samples of the stacks kept whole. */
  samplesKept: number;
  /** Sites of the stacks merged. */
  sitesMerged: number;
  /** Of those, the sites kept as frames under `(other stacks)`. */
  sitesKept: number;
  /** Samples of the merged stacks at the sites kept. */
  samplesOfSitesKept: number;
}

/** Everything the analyses need from one trace. Plain data (the report packs it as JSON). */
export interface ProfileData {
  /** Identifies the structure. */
  format: "memprof-lab-trace-profile";
  /** Version of the structure. */
  version: 1;
  /** The trace's metadata. */
  info: ProfileInfo;
  /** Counts over the whole trace. */
  stats: ProfileStats;
  /** Allocation-time window the rows and `liveAt` were restricted to (µs, half-open). */
  window: { fromUs: number | null; toUs: number | null };
  /** The time grid. */
  grid: ProfileGrid;
  /** The live heap's peak on the grid (null for a trace without events). */
  peak: ProfilePeak | null;
  /** Function names (`defname`s), by id. */
  functions: string[];
  /** File names, by id. */
  files: string[];
  /** Locations, by id. */
  locations: ProfileLocations;
  /** The tree of location paths. */
  nodes: ProfileNodes;
  /** The tree of function paths. */
  fnodes: ProfileFnodes;
  /** Classes of allocations. */
  classes: ProfileClasses;
  /** Per class, the totals of allocations and of the live heap at the end (null in the report's
   * page, which has the cube). */
  totals: ProfileTotals | null;
  /** The cube (null when the aggregation was told not to keep it: allocations and the live heap
   * at the end, or at an exact time, then come from `totals` and `liveAt`). */
  rows: ProfileRows | null;
  /** Counts at an exact live-at time, when aggregated for one. */
  liveAt: ProfileLiveAt | null;
  /** Set when the profile is a summary (lib/trace_analysis/summary.ts): what it left out. */
  summary?: ProfileSummary;
}

/** What to measure: allocations, or objects live at the trace end, at the peak, at the end of
 * grid bucket `liveBucket`, or at the exact time of {@linkcode ProfileData.liveAt}. */
export type LiveMode = "alloc" | "end" | "peak" | "bucket" | "exact";

/** A filter over a {@linkcode ProfileData}, in its own terms (domains, source codes, words,
 * buckets). `null` fields keep everything. */
export interface Selector {
  /** Keep these domains. */
  domains: number[] | null;
  /** Source codes: 0 minor, 1 major, 2 external. */
  sources: number[] | null;
  /** Keep lengths (words) of at least this. */
  sizeMin: number | null;
  /** Keep lengths (words) of at most this. */
  sizeMax: number | null;
  /** Keep stacks with a function whose name contains this. */
  fn: string | null;
  /** Drop stacks with a function whose name contains this. */
  exclude: string | null;
  /** First and last allocation bucket kept (inclusive). */
  fromBucket: number | null;
  /** Last allocation bucket kept (inclusive). */
  toBucket: number | null;
  /** What to measure. */
  live: LiveMode;
  /** For `live: "bucket"`. */
  liveBucket: number | null;
}

/** Per class: selected samples, those of promoted objects, those of objects never collected. */
export interface Selection {
  /** Selected samples. */
  samples: Float64Array;
  /** Of those, samples of promoted objects. */
  promoted: Float64Array;
  /** Of those, samples of objects never collected. */
  liveEnd: Float64Array;
}

/** One row of a grouping (samples; multiply by bytes per sample for bytes). */
export interface GroupRow {
  /** The site, function name or stack (frames joined by `;`, outermost first; a stack's within
   * `STACK_TEXT_CHARS`, made when first read). */
  key: string;
  /** Samples of the selection in this group (for functions: stacks containing it). */
  samples: number;
  /** For functions: samples where it is the innermost frame; otherwise equal to `samples`. */
  self: number;
  /** Of `samples`, those of promoted objects. */
  promoted: number;
  /** Of `samples`, those of objects never collected. */
  liveEnd: number;
  /** For stacks: the location-path node (−1 for a backtrace with no known location). */
  node?: number;
  /** For stacks: the rank of the stack's whole text among the profile's stacks (ties are
   * ordered by it, without building the texts). */
  order?: number;
}

/** What a table groups by. */
export type GroupBy = "site" | "function" | "stack";

/** A selector that keeps everything and measures allocations. */
export function emptySelector(): Selector {
  return {
    domains: null,
    sources: null,
    sizeMin: null,
    sizeMax: null,
    fn: null,
    exclude: null,
    fromBucket: null,
    toBucket: null,
    live: "alloc",
    liveBucket: null,
  };
}

/** A tree of calls around one function: `fn` is a function id, `value` samples. */
export interface CallTree {
  /** Function id (index into {@linkcode ProfileData.functions}). */
  fn: number;
  /** Samples of the stacks through this path. */
  value: number;
  /** Children by function id. */
  children: Map<number, CallTree>;
}
