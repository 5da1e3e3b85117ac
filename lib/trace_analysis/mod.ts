/**
 * Analyses of memtrace `.ctf` traces beyond memtrace's own tools: top sites, functions and
 * stacks; differences between two traces; pprof, speedscope and folded-stack exports; and a
 * self-contained HTML report.
 *
 * Every analysis starts from one streaming pass over the trace ({@linkcode aggregateTrace}),
 * which keeps tables (a {@linkcode ProfileData}), never the events. A site is the innermost
 * known location of a backtrace; bytes are estimates (samples ÷ sample rate × bytes per word).
 *
 * @example The top allocation sites of a trace
 * ```ts
 * import { Reader } from "../memtrace/mod.ts";
 * import { runScenario, scenario } from "../scenario/mod.ts";
 * import { analyzeTrace, formatTop, topOf } from "./mod.ts";
 * import assert from "node:assert/strict";
 *
 * const sc = scenario({ name: "demo" }, (s) => {
 *   s.main.memprof.start({ samplingRate: 0.01 });
 *   s.main.repeat(1_000, () => s.main.alloc(4, { at: "Demo.f@demo.ml:3:2-20" }));
 *   s.main.memprof.stop();
 * });
 * const reader = Reader.fromBytes(runScenario(sc).ctf); // or Reader.open("trace.ctf")
 * const { data, selector } = analyzeTrace(reader);
 * const top = topOf(data, selector, { by: "function" });
 * assert.equal(top.rows[0].key, "Demo.f");
 * assert.ok(formatTop(top).length > 0);
 * ```
 * @module
 */
export {
  type CallTree,
  emptySelector,
  type GroupBy,
  type GroupRow,
  type LiveMode,
  MAX_BUCKETS,
  NEVER,
  type ProfileClasses,
  type ProfileData,
  type ProfileFnodes,
  type ProfileGrid,
  type ProfileInfo,
  type ProfileLiveAt,
  type ProfileLocations,
  type ProfileNodes,
  type ProfilePeak,
  type ProfileRows,
  type ProfileStats,
  type Selection,
  type Selector,
} from "./profile.ts";
export { TraceAnalysisError } from "./errors.ts";
export type {
  TraceAllocEvent,
  TraceEvent,
  TraceInfo,
  TraceLocation,
  TraceObjectEvent,
  TraceReader,
} from "./source.ts";
export {
  type AggregateOptions,
  aggregateTrace,
  type AnalysisPass,
  EXACT_LENGTHS_UP_TO,
  sizeClassOf,
  startAggregate,
} from "./aggregate.ts";
export {
  aggregateOptionsOf,
  type AnalysisFilter,
  analyzeTrace,
  checkFilter,
  parseDomains,
  parseLiveAt,
  parseSeconds,
  parseSize,
  parseSources,
  selectorOf,
  type SourceName,
  SOURCES,
  startAnalysis,
} from "./filter.ts";
export { emptySelectionNote, traceHoldings } from "./empty.ts";
export {
  formatBytes,
  formatInterval,
  formatSeconds,
  formatShare,
  formatTop,
  intervalText,
  type TopIntervals,
  topOf,
  type TopOptions,
  type TopResult,
  type TopRow,
} from "./top.ts";
export {
  DIFF_METHOD,
  diffOf,
  type DiffOptions,
  type DiffResult,
  type DiffRow,
  formatDiff,
} from "./diff.ts";
export {
  type BytesInterval,
  bytesInterval,
  DEFAULT_CONFIDENCE,
  INTERVAL_METHOD,
  whatIfInterval,
  wordsInterval,
} from "./intervals.ts";
export { FOLDED_LINE_CHARS, foldedStacks, foldedStacksTo, functionPath } from "./folded.ts";
export {
  type SpeedscopeFile,
  type SpeedscopeFrame,
  speedscopeOf,
  type SpeedscopeSampledProfile,
} from "./export_speedscope.ts";
export { type ExportOptions, pprofOf } from "./export_pprof.ts";
export { buildReport, type ReportOptions } from "./report/build.ts";
export {
  formatRankChange,
  rankChangeOf,
  type RankChangeOptions,
  type RankChangeResult,
  type RankChangeRow,
} from "./rank_change.ts";
export {
  bytesPerSample,
  callTrees,
  classMask,
  compareGroupKeys,
  deriveFunctionPaths,
  flameWeights,
  groupBy,
  liveSeries,
  locationText,
  NO_LOCATION,
  packProfile,
  pathOrder,
  selectionTotals,
  selectSamples,
  siteOf,
  sortGroups,
  STACK_TEXT_CHARS,
  stackFrames,
  stackLabel,
  stackOrder,
  totalLiveSeries,
  unpackProfile,
} from "./select.ts";
