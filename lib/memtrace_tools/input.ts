/**
 * What the tools read: lib/memtrace's `Reader` (opened on a file, bytes or a stream) is one.
 * @module
 */
import type {
  Event,
  Info,
  IterOptions,
  Location,
  LocationCode,
  Timedelta,
} from "../memtrace/mod.ts";

/** The part of lib/memtrace's `Reader` the tools use (any `Reader` is a `TraceInput`). */
export interface TraceInput {
  /** The trace's metadata. */
  readonly info: Info;
  /** The name errors give (the path, for files), if any. */
  readonly fileName: string | undefined;
  /** Size of the trace in bytes. */
  sizeBytes(): number;
  /** Byte offset of the event being delivered, during an iteration's callback. */
  eventOffset(): number;
  /** The locations a code stands for, or undefined for a code not defined so far. */
  locationsOf(code: LocationCode): readonly Location[] | undefined;
  /** Calls `f` with each event and its time since the trace start, in file order. */
  iter(f: (time: Timedelta, ev: Event) => void, options?: IterOptions): void;
}

/**
 * A tool's pass over a trace in progress, for a caller that reads the events itself (a few
 * packets at a time with lib/memtrace's `Reader.iterate`, letting its event loop run between):
 * give {@linkcode onEvent} every event in file order, then call {@linkcode finish} once.
 */
export interface ToolPass<T> {
  /** Takes the next event and its time since the trace start. */
  readonly onEvent: (time: Timedelta, ev: Event) => void;
  /** Ends the pass (flushing what it writes) and returns its result. */
  finish(): T;
}
