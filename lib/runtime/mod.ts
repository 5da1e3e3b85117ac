/**
 * The simulated OCaml 5.3 runtime memprof runs in.
 *
 * @module
 */

export * from "./runtime.ts";
export * from "./events.ts";
export {
  DomainMajorState,
  EXPORTED_HARNESS_STATE,
  MajorGc,
  type MajorGcHost,
  type MajorGcInitialState,
  type MajorGcOptions,
  PERCENT_FREE_DEFAULT,
  SliceKind,
  SliceReport,
} from "./major_gc.ts";
export { DEFAULT_GC_TIME, GcClock, type GcTimeModel, TimedSink } from "./gc_time.ts";
export type { MajorHeap, PoolState } from "./_major_heap.ts";
