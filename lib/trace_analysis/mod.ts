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
 *
 * @example Compare two traces; export one as folded stacks, speedscope, pprof and a report
 * ```ts
 * import { Reader } from "../memtrace/mod.ts";
 * import { runScenario, scenario } from "../scenario/mod.ts";
 * import {
 *   analyzeTrace,
 *   buildReport,
 *   diffOf,
 *   foldedStacks,
 *   formatDiff,
 *   pprofOf,
 *   speedscopeOf,
 * } from "./mod.ts";
 * import assert from "node:assert/strict";
 *
 * const trace = (n: number) => {
 *   const sc = scenario({ name: "demo" }, (s) => {
 *     s.main.memprof.start({ samplingRate: 0.05 });
 *     s.main.repeat(n, () => s.main.alloc(4, { at: "Demo.f@demo.ml:3:2-20" }));
 *     s.main.memprof.stop();
 *   });
 *   return analyzeTrace(Reader.fromBytes(runScenario(sc).ctf));
 * };
 * const a = trace(1_000), b = trace(4_000);
 * const diff = diffOf(a.data, b.data, a.selector, b.selector, { by: "function" });
 * assert.equal(diff.rows[0].key, "Demo.f");
 * assert.ok(diff.rows[0].allocDelta > 0); // B allocates more
 * assert.ok(formatDiff(diff, "before", "after").length > 0);
 *
 * assert.ok(foldedStacks(b.data, b.selector)[0].includes("Demo.f"));
 * assert.equal(speedscopeOf(b.data, b.selector).shared.frames[0].name, "Demo.f");
 * const gz = pprofOf(b.data, b.selector);
 * assert.deepEqual([gz[0], gz[1]], [0x1f, 0x8b]); // gzipped protobuf
 * assert.ok(buildReport(b.data, { title: "demo" }).startsWith("<!DOCTYPE html>"));
 * ```
 * @module
 */
export {
  type CallTree,
  type Column,
  type GroupBy,
  type GroupRow,
  type LiveMode,
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
  type ProfileSummary,
  type ProfileTotals,
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
export { type AggregateOptions, aggregateTrace, type AnalysisPass } from "./aggregate.ts";
export {
  type AnalysisFilter,
  analyzeTrace,
  selectorOf,
  type SourceName,
  SOURCES,
  startAnalysis,
} from "./filter.ts";
export {
  formatTop,
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
export { foldedStacks, foldedStacksTo } from "./folded.ts";
export {
  type SpeedscopeFile,
  type SpeedscopeFrame,
  speedscopeOf,
  type SpeedscopeSampledProfile,
} from "./export_speedscope.ts";
export { type ExportOptions, pprofOf } from "./export_pprof.ts";
export { buildReport, type ReportOptions } from "./report/build.ts";
