/**
 * The simulated OCaml 5.3 runtime memprof runs in: a {@linkcode Runtime} of
 * {@linkcode Domain}s and {@linkcode Thread}s allocating in minor and major heaps, with
 * `Gc.Memprof` on each domain ({@linkcode Domain.memprofStart}) and runtime_events reported to a
 * {@linkcode RuntimeEventsSink}.
 *
 * @example Allocate, collect and count the runtime's events
 * ```ts
 * import { RecordingSink, Runtime, RuntimePhase } from "./mod.ts";
 * import assert from "node:assert/strict";
 *
 * const sink = new RecordingSink();
 * const rt = new Runtime({ events: sink });
 * const d = rt.mainDomain;
 * const slot = rt.root();
 * slot.set(d.alloc(2), 2);
 * d.minorGc();
 * assert.equal(rt.minorCollections, 1);
 * assert.ok(sink.events.some((e) => e.kind === "begin" && e.phase === RuntimePhase.EV_MINOR));
 * slot.release();
 * ```
 * @module
 */

export {
  comballocBlock,
  DEFAULT_MINOR_HEAP_WORDS,
  DEFAULT_PID,
  Domain,
  type DomainStats,
  MAX_YOUNG_WHSIZE,
  MAX_YOUNG_WOSIZE,
  type ProfilePlace,
  type Resumable,
  Root,
  type RootOptions,
  RootSet,
  Runtime,
  type RuntimeOptions,
  Thread,
} from "./runtime.ts";
export {
  Lifecycle,
  NULL_SINK,
  type RecordedEvent,
  RecordingSink,
  RuntimeCounter,
  type RuntimeEventsSink,
  RuntimePhase,
} from "./events.ts";
export {
  darkenWork,
  DomainMajorState,
  EXPORTED_HARNESS_STATE,
  MajorGc,
  type MajorGcHost,
  type MajorGcInitialState,
  type MajorGcOptions,
  type MajorRoot,
  type MajorRoots,
  PERCENT_FREE_DEFAULT,
  SliceKind,
  SliceReport,
} from "./major_gc.ts";
export {
  DEFAULT_GC_TIME,
  GcClock,
  type GcTimeModel,
  type MinorPart,
  TimedSink,
} from "./gc_time.ts";
export type { PoolState } from "./_major_heap.ts";
export type { MemprofMarkRoots, ProgramMarkLayout } from "./_mark.ts";
export type { FixedMarkGraph } from "./_mark_fixed.ts";
// The memprof types the runtime's API takes or gives, from the module that defines them.
export type {
  AllocationInfo,
  AllocationSource,
  CallbackResult,
  ExnResult,
  MemprofDomain,
  MemprofHost,
  MemprofRng,
  MemprofShared,
  MemprofThread,
  Profile,
  ProfileStatus,
  StartOptions,
  Tracker,
} from "../memprof/mod.ts";
