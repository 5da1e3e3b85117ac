/**
 * What the aggregation reads: the parts of memtrace's `Reader` (lib/memtrace) it uses, as
 * structural types, so that any event source of the same shape will do.
 * @module
 */

/** A source location (memtrace's `Location`). */
export interface TraceLocation {
  /** Source file. */
  readonly filename: string;
  /** Line number. */
  readonly line: number;
  /** First character on the line. */
  readonly startChar: number;
  /** Last character on the line. */
  readonly endChar: number;
  /** The enclosing function's name. */
  readonly defname: string;
}

/** A sampled allocation. `backtraceBuffer[0, backtraceLength)` holds location codes, caller
 * first; its first `commonPrefix` entries equal those of the previous allocation of `domain`. */
export interface TraceAllocEvent {
  /** Discriminates the event kinds. */
  readonly kind: "alloc";
  /** The object's identifier. */
  readonly objId: number;
  /** The allocating domain. */
  readonly domain: number;
  /** Length in words, header excluded. */
  readonly length: number;
  /** Number of samples. */
  readonly nsamples: number;
  /** 0 minor, 1 major, 2 external. */
  readonly source: number;
  /** Location codes, caller first (entries past `backtraceLength` are meaningless). */
  readonly backtraceBuffer: Float64Array;
  /** Number of meaningful entries of `backtraceBuffer`. */
  readonly backtraceLength: number;
  /** Entries shared with the domain's previous allocation. */
  readonly commonPrefix: number;
}

/** A promotion or a collection of object `objId`. */
export interface TraceObjectEvent {
  /** Discriminates the event kinds. */
  readonly kind: "promote" | "collect";
  /** The object's identifier. */
  readonly objId: number;
  /** The domain that wrote the event. */
  readonly domain: number;
}

/** A trace event. */
export type TraceEvent = TraceAllocEvent | TraceObjectEvent;

/** The trace's metadata (memtrace's `Info.t`). */
export interface TraceInfo {
  /** Fraction of words sampled. */
  readonly sampleRate: number;
  /** Bits per word. */
  readonly wordSize: number;
  /** The traced executable. */
  readonly executableName: string;
  /** The host it ran on. */
  readonly hostName: string;
  /** Its OCAMLRUNPARAM settings. */
  readonly ocamlRuntimeParams: string;
  /** Its process id. */
  readonly pid: bigint;
  /** The domain that started the trace. */
  readonly initialDomain: number;
  /** Start of the trace, µs since the Unix epoch. */
  readonly startTime: number;
  /** Free text given when the trace started. */
  readonly context: string | undefined;
}

/** An event source: memtrace's `Reader` has this shape. */
export interface TraceReader {
  /** The trace's metadata. */
  readonly info: TraceInfo;
  /** Size of the trace in bytes. */
  sizeBytes(): number;
  /** The locations a code stands for, outermost first (known once it was used). */
  lookupLocationCode(code: number): readonly TraceLocation[];
  /** The name errors give (the path, for files), if any. */
  readonly fileName?: string | undefined;
  /** Byte offset of the event being delivered (with {@linkcode locationsOf}: a code used but
   * never defined is then reported as memtrace's `Reader` reports malformed input). */
  eventOffset?(): number;
  /** The locations a code stands for, or undefined for a code not defined so far. */
  locationsOf?(code: number): readonly TraceLocation[] | undefined;
  /** Calls `f` with each event and its time in µs since the trace start, in file order. */
  iter(f: (time: number, ev: TraceEvent) => void): void;
}
