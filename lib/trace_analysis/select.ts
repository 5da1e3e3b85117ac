/**
 * The selection functions of `_select.js` with their TypeScript types. They are written in
 * plain JavaScript because the HTML report inlines the very same code into its page.
 * @module
 */
import * as core from "./_select.js";
import type {
  CallTree,
  GroupBy,
  GroupRow,
  ProfileData,
  ProfileRows,
  Selection,
  Selector,
} from "./profile.ts";
import type { TopIntervals, TopRow } from "./top.ts";

/** Fills in the function-path tree (`fnodes`, `nodes.fnode`) from the location-path tree;
 * returns `data`. */
export const deriveFunctionPaths: (data: ProfileData) => ProfileData = core.deriveFunctionPaths;

export { packProfile } from "./_pack.ts";

/** The profile {@linkcode packProfile} packed; with `rows`, those rows rather than the packed
 * ones (the report page reads its rows from bytes). */
export const unpackProfile: (packed: object, rows?: ProfileRows) => ProfileData =
  core.unpackProfile;

/** The rows of a packed profile as a profile holds them. */
export const unpackRows: (rows: PackedRows) => ProfileRows = core.unpackRows;

/** Rows as {@linkcode packProfile} packs them: differences (see `_pack.ts`). */
export interface PackedRows {
  /** Class, less the previous row's. */
  cls: ArrayLike<number>;
  /** Allocation bucket, less the previous row's when of the same class. */
  a: ArrayLike<number>;
  /** End bucket less the allocation bucket, plus 1 (0: never). */
  e: ArrayLike<number>;
  /** Promotion bucket less the allocation bucket, plus 1 (0: never). */
  p: ArrayLike<number>;
  /** Samples. */
  samples: ArrayLike<number>;
}

/** Estimated bytes one sample stands for: 1 / sample rate words of `wordSize` bits. */
export const bytesPerSample: (data: ProfileData) => number = core.bytesPerSample;

/** Key of the group of a backtrace with no known location. */
export const NO_LOCATION: string = core.NO_LOCATION;

/** A location as memtrace prints it: `defname@file:line:start-end`. */
export const locationText: (data: ProfileData, loc: number) => string = core.locationText;

/** The site of a class: its innermost location, or {@linkcode NO_LOCATION}. */
export const siteOf: (data: ProfileData, cls: number) => string = core.siteOf;

/** The locations of a location-path node, outermost first: the whole stack, however long (see
 * {@linkcode stackLabel} for its text within a bound). */
export const stackFrames: (data: ProfileData, node: number) => string[] = core.stackFrames;

/** Most characters of a stack's text (a stack group's key): 16,384. */
export const STACK_TEXT_CHARS: number = core.STACK_TEXT_CHARS;

/** A stack's text within `maxChars` (default {@linkcode STACK_TEXT_CHARS}) characters: the
 * innermost frames that fit (at least one), outermost first, the number of outer frames left
 * out, and the key (`(N outer frames);` first when some are). */
export const stackLabel: (
  data: ProfileData,
  node: number,
  maxChars?: number,
) => { frames: string[]; omitted: number; key: string } = core.stackLabel;

/** The rank of each path of a tree (parents first, −1 the root) in the code-unit order of the
 * paths' texts (labels `labels[labelId(node)]` joined by `;`), without building them;
 * `rootLeaves` are one-label paths ranked among them. Exact when no label contains `;`. */
export const pathOrder: (
  parent: ArrayLike<number>,
  labelId: (node: number) => number,
  labels: string[],
  rootLeaves?: string[],
) => { node: Float64Array; leaf: Float64Array } = core.pathOrder;

/** The rank of each location-path node's stack, and of {@linkcode NO_LOCATION} (`leaf[0]`), in
 * the code-unit order of the stacks' whole texts (computed once per profile). */
export const stackOrder: (data: ProfileData) => { node: Float64Array; leaf: Float64Array } =
  core.stackOrder;

/** Compares two groups by their whole keys, in code-unit order (stacks by rank). */
export const compareGroupKeys: (x: GroupRow, y: GroupRow) => number = core.compareGroupKeys;

/** Per class: 1 when the selector's domain, source, size and function filters keep it. */
export const classMask: (data: ProfileData, sel: Selector) => Uint8Array = core.classMask;

/** Per class, the samples a selector keeps under its live mode, with those of promoted
 * objects and of objects never collected. */
export const selectSamples: (data: ProfileData, sel: Selector) => Selection = core.selectSamples;

/** Sums of a selection over all classes. */
export const selectionTotals: (
  s: Selection,
) => { samples: number; promoted: number; liveEnd: number } = core.selectionTotals;

/** Groups a selection by site, function (stacks containing it; `self` where innermost) or
 * stack. Groups without samples are left out. */
export const groupBy: (data: ProfileData, s: Selection, by: GroupBy) => GroupRow[] = core.groupBy;

/** A group's figures as `trace top` and the report's table show them (bytes from samples at
 * `bps` bytes per sample; `promotedShare` 0 without samples). */
export const groupFigures: (g: GroupRow, bps: number) => GroupFigures = core.groupFigures;

/** What {@linkcode groupFigures} gives: a {@linkcode TopRow} without its by-function and
 * by-stack fields. */
type GroupFigures = Omit<
  TopRow,
  | "selfSamples"
  | "selfBytes"
  | "selfBytesLow"
  | "selfBytesHigh"
  | "frames"
  | "framesOmitted"
  | keyof TopIntervals
>;

/** Sorts groups in place, largest first (functions by self, then total); ties by key. */
export const sortGroups: (rows: GroupRow[], by: GroupBy) => GroupRow[] = core.sortGroups;

/** Live samples at the end of each grid bucket, of the classes in `mask` (all when null)
 * allocated in buckets [fromBucket, toBucket]. */
export const liveSeries: (
  data: ProfileData,
  mask: Uint8Array | null,
  fromBucket: number | null,
  toBucket: number | null,
) => Float64Array = core.liveSeries;

/** Live samples of the whole trace at the end of each grid bucket. */
export const totalLiveSeries: (data: ProfileData) => Float64Array = core.totalLiveSeries;

/** Per function-path node, the selected samples ending there (`self`) and passing through it
 * (`total`): the flame graph. */
export const flameWeights: (
  data: ProfileData,
  s: Selection,
) => { self: Float64Array; total: Float64Array; rootTotal: number } = core.flameWeights;

/** The callees (below its outermost frame) and callers (above its innermost frame) of
 * function `fn` in a selection. */
export const callTrees: (
  data: ProfileData,
  s: Selection,
  fn: number,
) => { callees: CallTree; callers: CallTree } = core.callTrees;
