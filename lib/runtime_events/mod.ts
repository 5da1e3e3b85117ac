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
 * @module
 */

export {
  COUNTER_NAMES,
  counterName,
  EventCategory,
  Lifecycle,
  LIFECYCLE_NAMES,
  lifecycleName,
  NUM_ALLOC_BUCKETS,
  PHASE_NAMES,
  phaseName,
  RuntimeCounter,
  RuntimeMessageType,
  RuntimePhase,
  UserMessageType,
  UserMlType,
  UserSpan,
} from "./enums.ts";
export { RuntimeEventsFormatError, RuntimeEventsLimitError } from "./errors.ts";
export { OCamlException, OCamlInvalidArgument } from "../util/ocaml_exceptions.ts";
export {
  computeLayout,
  CUSTOM_EVENT_NAME_LENGTH,
  DEFAULT_LOG_WSIZE,
  DEFAULT_MAX_DOMAINS,
  type EventHeader,
  eventsFilePath,
  headerHigh,
  type Layout,
  MAX_CUSTOM_EVENTS,
  MAX_LOG_WSIZE,
  MAX_MSG_LENGTH,
  METADATA_HEADER_SIZE,
  type MetadataHeader,
  MIN_LOG_WSIZE,
  packHeader,
  readMetadataHeader,
  RING_HEADER_SIZE,
  RUNTIME_EVENTS_VERSION,
  unpackHeader,
  unpackHeaderHigh,
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
  RING_WINDOW_BYTES,
  RingFileSource,
  type RingSource,
  RuntimeEventsCursor,
  STREAM_IMAGE_LIMIT,
  type UserEventInfo,
} from "./consumer.ts";
export { dumpCallbacks, dumpImage, hexBytes } from "./dump.ts";
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
  GC_STATS_PERCENTILES,
  type GcStats,
  GcStatsCollector,
  type GcStatsOptions,
  NON_PAUSE_PHASES,
  OLLY_PAUSE_PHASES,
  pausePhaseNames,
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
  nsToMicrosText,
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
export {
  canCheckProcesses,
  processAlive,
  type WatchEndReason,
  type WatchOptions,
  type WatchResult,
  watchRing,
} from "./watch.ts";
export { ocamlHexFloat, ocamlQuote } from "../util/ocaml_printf.ts";
export {
  GC_VERBOSE_FIELDS,
  gcVerboseDifferences,
  GcVerboseFormatError,
  gcVerboseOfRing,
  type GcVerboseStats,
  parseGcVerbose,
  type RingGcVerbose,
} from "./gc_verbose.ts";
