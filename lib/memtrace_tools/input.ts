/**
 * What the tools read: lib/memtrace's `Reader` (opened on a file, bytes or a stream) is one.
 * @module
 */
import type {
  Event,
  EventView,
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

/** A {@linkcode TraceInput} that can also deliver its events through one reused view, as a
 * `Reader` can (`Reader.iterViews`). */
interface ViewInput extends TraceInput {
  iterViews(f: (view: Readonly<EventView>) => void, options?: IterOptions): void;
}

/** Calls `f` with each event of `input` as a view: through `input.iterViews` when it has one
 * (a `Reader`: no object per event), else through `input.iter`, copying each event into one
 * view. */
export function forEachView(
  input: TraceInput,
  f: (view: Readonly<EventView>) => void,
  options?: IterOptions,
): void {
  if (typeof (input as Partial<ViewInput>).iterViews === "function") {
    (input as ViewInput).iterViews(f, options);
    return;
  }
  const view: EventView = {
    kind: "alloc",
    time: 0,
    objId: 0,
    domain: 0,
    length: 0,
    nsamples: 0,
    source: 0,
    backtraceBuffer: new Float64Array(0),
    backtraceLength: 0,
    commonPrefix: 0,
  };
  input.iter((time, ev) => {
    view.kind = ev.kind;
    view.time = time;
    view.objId = ev.objId;
    view.domain = ev.domain;
    if (ev.kind === "alloc") {
      view.length = ev.length;
      view.nsamples = ev.nsamples;
      view.source = ev.source;
      view.backtraceBuffer = ev.backtraceBuffer;
      view.backtraceLength = ev.backtraceLength;
      view.commonPrefix = ev.commonPrefix;
    }
    f(view);
  }, options);
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
