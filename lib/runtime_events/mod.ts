/**
 * OCaml 5.3 runtime_events for memprof-lab: a producer writing ring images
 * byte-compatible with a real `<pid>.events` file, and a consumer that reads
 * both our images and files left by real OCaml programs.
 *
 * {@linkcode RuntimeEventsProducer} and {@linkcode RuntimeEventsCursor} are the main entry points.
 *
 * @example Write a ring image and read it back
 * ```ts
 * import { RuntimeEventsCursor, RuntimeEventsProducer, RuntimePhase } from "./mod.ts";
 * import assert from "node:assert/strict";
 *
 * const producer = new RuntimeEventsProducer({ maxDomains: 4, logWsize: 12, pid: 42 });
 * producer.start();
 * producer.begin(0, RuntimePhase.EV_MINOR);
 * producer.end(0, RuntimePhase.EV_MINOR);
 *
 * const phases: string[] = [];
 * new RuntimeEventsCursor(producer.bytes).readAll({
 *   runtimeBegin: (_ring, _ts, phase) => phases.push(`begin ${phase}`),
 *   runtimeEnd: (_ring, _ts, phase) => phases.push(`end ${phase}`),
 * });
 * assert.deepEqual(phases, [`begin ${RuntimePhase.EV_MINOR}`, `end ${RuntimePhase.EV_MINOR}`]);
 * ```
 *
 * @example Statistics, GC pauses, a text dump and a Chrome trace of one ring image
 * ```ts
 * import {
 *   computeGcStats,
 *   computeStats,
 *   dumpImage,
 *   exportChromeTrace,
 *   formatGcStats,
 *   formatStats,
 *   phaseName,
 *   RuntimeEventsProducer,
 *   RuntimePhase,
 * } from "./mod.ts";
 * import assert from "node:assert/strict";
 *
 * let now = 0n;
 * const p = new RuntimeEventsProducer({ pid: 7, clock: () => (now += 1000n) });
 * p.start();
 * p.begin(0, RuntimePhase.EV_MINOR);
 * p.end(0, RuntimePhase.EV_MINOR);
 *
 * const stats = computeStats(p.bytes);
 * assert.equal(stats.domains[0].begins, 1);
 * assert.equal(stats.allPhases[0].name, phaseName(RuntimePhase.EV_MINOR)); // "minor"
 * assert.ok(formatStats(stats).startsWith("domain 0:"));
 * const gc = computeGcStats(p.bytes);
 * assert.equal(gc.gcTimeNs, 1000); // the minor collection: one pause of 1 µs
 * assert.ok(formatGcStats(gc).length > 0);
 * assert.ok(dumpImage(p.bytes).includes("minor"));
 * const trace = exportChromeTrace(p.bytes);
 * assert.ok(trace.records.some((r) => r.name === "minor"));
 * ```
 *
 * @example User events: register a type, write, decode
 * ```ts
 * import { RuntimeEventsCursor, RuntimeEventsProducer, Type } from "./mod.ts";
 * import assert from "node:assert/strict";
 *
 * const p = new RuntimeEventsProducer();
 * p.start();
 * const requests = p.registerUserEvent("app.requests", Type.int);
 * p.writeUser(0, requests, 42);
 * const seen: [string, unknown][] = [];
 * new RuntimeEventsCursor(p.bytes).readAll({
 *   userInt: (_ring, _ts, event, value) => seen.push([event.name, value]),
 * });
 * assert.deepEqual(seen, [["app.requests", 42n]]);
 * ```
 *
 * @module
 */

export {
  counterName,
  Lifecycle,
  lifecycleName,
  phaseName,
  RuntimeCounter,
  RuntimePhase,
  UserSpan,
} from "./enums.ts";
export { RuntimeEventsFormatError, RuntimeEventsLimitError } from "./errors.ts";
export { OCamlException, OCamlInvalidArgument } from "../util/ocaml_exceptions.ts";
export {
  DEFAULT_LOG_WSIZE,
  DEFAULT_MAX_DOMAINS,
  eventsFilePath,
  type Layout,
  MAX_CUSTOM_EVENTS,
  MAX_LOG_WSIZE,
  type MetadataHeader,
  MIN_LOG_WSIZE,
} from "./layout.ts";
export {
  type AnyUserType,
  bytesType,
  type CustomCodec,
  type CustomType,
  customType,
  type IntType,
  type SpanType,
  type SpanValue,
  Type,
  type UnitType,
  type UserEvent,
} from "./user_types.ts";
export {
  type Clock,
  monotonicClock,
  type ProducerOptions,
  RuntimeEventsProducer,
} from "./producer.ts";
export {
  type ConsumerCallbacks,
  type CursorOptions,
  type CustomEventDecoder,
  DecoderRegistry,
  MAX_DOMAINS_MAX,
  RingFileSource,
  type RingSource,
  RuntimeEventsCursor,
  type UserEventInfo,
} from "./consumer.ts";
export { dumpImage } from "./dump.ts";
export {
  computeStats,
  type DomainStats,
  type EventsStats,
  formatStats,
  type PhaseStats,
} from "./stats.ts";
export {
  computeGcStats,
  type CounterUnits,
  type Distribution,
  type DomainGcStats,
  formatGcStats,
  type GcStats,
  GcStatsCollector,
  type GcStatsOptions,
  type PauseRule,
  type PercentileValue,
} from "./gc_stats.ts";
export {
  type ChromeExportOptions,
  type ChromeExportSummary,
  type ChromeRecord,
  type ChromeTrace,
  chromeTraceJson,
  exportChromeTrace,
  type ExtraInstant,
  type RingAnchors,
  writeChromeTraceJson,
} from "./chrome_export.ts";
export {
  alignTrace,
  type AnchorBasis,
  type TraceAlignment,
  type TraceEventLike,
  type TraceEventsSource,
  traceInstants,
} from "./trace_merge.ts";
export { DenoFollowedFile, type FollowedFile, RingFollower, RingNotReadyError } from "./follow.ts";
export { type WatchEndReason, type WatchOptions, type WatchResult, watchRing } from "./watch.ts";
export {
  GC_VERBOSE_FIELDS,
  gcVerboseDifferences,
  GcVerboseFormatError,
  gcVerboseOfRing,
  type GcVerboseStats,
  parseGcVerbose,
  type RingGcVerbose,
} from "./gc_verbose.ts";
