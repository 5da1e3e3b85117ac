/**
 * The value types of memtrace's `Trace` interface: time, locations, identifiers, events, info.
 * @module
 */

/** Microseconds since the Unix epoch (memtrace's `Timestamp.t`, an int64 there). */
export type Timestamp = number;

/** Helpers for {@linkcode Timestamp}. */
export const Timestamp: {
  now(): Timestamp;
  ofInt64(us: number | bigint): Timestamp;
  toInt64(t: Timestamp): bigint;
  toFloat(t: Timestamp): number;
  ofFloat(f: number): Timestamp;
} = {
  /** The current wall-clock time in microseconds. */
  now(): Timestamp {
    return Math.trunc((performance.timeOrigin + performance.now()) * 1000);
  },
  /** From microseconds since the epoch. */
  ofInt64(us: number | bigint): Timestamp {
    return Number(us);
  },
  /** To microseconds since the epoch. */
  toInt64(t: Timestamp): bigint {
    return BigInt(t);
  },
  /** To seconds, in the Unix module's float format. */
  toFloat(t: Timestamp): number {
    return t / 1_000_000;
  },
  /** From seconds in the Unix module's float format (truncating, as `Int64.of_float`). */
  ofFloat(f: number): Timestamp {
    return Math.trunc(f * 1_000_000);
  },
};

/** Microseconds since the start of the trace (memtrace's `Timedelta.t`). */
export type Timedelta = number;

/** Helpers for {@linkcode Timedelta}. */
export const Timedelta: {
  toInt64(t: Timedelta): bigint;
  offset(base: Timestamp, delta: Timedelta): Timestamp;
} = {
  /** As microseconds since the start of the trace. */
  toInt64(t: Timedelta): bigint {
    return BigInt(t);
  },
  /** `base` offset by `delta`. */
  offset(base: Timestamp, delta: Timedelta): Timestamp {
    return base + delta;
  },
};

/** A source location in the traced program. */
export class Location {
  /** A location: the defining function's name is last, as memtrace's record is laid out. */
  constructor(
    readonly filename: string,
    readonly line: number,
    readonly startChar: number,
    readonly endChar: number,
    readonly defname: string,
  ) {}

  /** `defname@filename:line:start-end`, as memtrace prints it. */
  toString(): string {
    return `${this.defname}@${this.filename}:${this.line}:${this.startChar}-${this.endChar}`;
  }

  /** Field-by-field equality. */
  equals(o: Location): boolean {
    return this.line === o.line && this.startChar === o.startChar &&
      this.endChar === o.endChar && this.filename === o.filename && this.defname === o.defname;
  }

  /** Reads back what {@linkcode toString} prints: `defname@filename:line:start-end`. Returns
   * undefined for anything else. */
  static parse(text: string): Location | undefined {
    const m = /^([^@\s]+)@(\S+):(\d+):(\d+)-(\d+)$/.exec(text);
    if (m === null) return undefined;
    return new Location(m[2], Number(m[3]), Number(m[4]), Number(m[5]), m[1]);
  }

  /** The location memtrace writes for a frame it cannot describe. */
  static readonly unknown: Location = new Location("<unknown>", 1, 1, 1, "??");
}

/** Identifier of a traced allocation (allocation order, unique across domains). */
export type ObjId = number;
/** Identifier of an OCaml domain; 0 is the main domain. */
export type DomainId = number;
/** The main domain's id. */
export const MAIN_DOMAIN: DomainId = 0;
/** A code standing for one backtrace slot (a return address in real traces). A safe integer. */
export type LocationCode = number;

/**
 * How a sampled object was first allocated, as memtrace records it (`Allocation_source.t`):
 * `Minor` (0), `Major` (1) or `External` (2), the on-disk codes. Not memprof's
 * `AllocationSource`, which names `Gc.Memprof.allocation_source`.
 */
export const MemtraceAllocationSource: {
  readonly Minor: 0;
  readonly Major: 1;
  readonly External: 2;
} = {
  Minor: 0,
  Major: 1,
  External: 2,
};
/** One of {@linkcode MemtraceAllocationSource}'s values. */
export type MemtraceAllocationSource =
  (typeof MemtraceAllocationSource)[keyof typeof MemtraceAllocationSource];
/** @deprecated Use {@linkcode MemtraceAllocationSource} (memprof has its own `AllocationSource`). */
export const AllocationSource: typeof MemtraceAllocationSource = MemtraceAllocationSource;
/** @deprecated Use {@linkcode MemtraceAllocationSource}. */
export type AllocationSource = MemtraceAllocationSource;

/** Resolves a location code to the (possibly inlined, outermost first) locations it stands for. */
export type LocationLookup = (code: LocationCode) => readonly Location[];

/** printf `%010d`. */
export function formatObjId(id: number): string {
  return id >= 0 ? String(id).padStart(10, "0") : "-" + String(-id).padStart(9, "0");
}

/** printf `% 4d` (space flag: a blank stands where a minus sign would). */
export function formatSpace4(n: number): string {
  return (n < 0 ? String(n) : " " + String(n)).padStart(4, " ");
}

/** An allocation event. `backtraceBuffer` is shared with later events of the same domain (as in
 * memtrace): copy it with {@linkcode AllocEvent.backtrace} to keep it. */
export class AllocEvent {
  /** Discriminates the event kinds. */
  readonly kind = "alloc" as const;
  /** An allocation event; see the fields. */
  constructor(
    /** Identifier of this allocation, used by later promote/collect events. */
    readonly objId: ObjId,
    /** Length in words, header excluded. */
    readonly length: number,
    /** Domain on which the allocation happened. */
    readonly domain: DomainId,
    /** Number of samples in this allocation (at least 1). */
    readonly nsamples: number,
    /** How the object was allocated. */
    readonly source: MemtraceAllocationSource,
    /** Location codes from caller to callee; entries past `backtraceLength` are meaningless. */
    readonly backtraceBuffer: Float64Array,
    /** Number of meaningful entries of `backtraceBuffer`. */
    readonly backtraceLength: number,
    /** Length of the prefix shared with the previous allocation of this domain. */
    readonly commonPrefix: number,
  ) {}

  /** A copy of the backtrace, caller to callee. */
  backtrace(): LocationCode[] {
    return Array.from(this.backtraceBuffer.subarray(0, this.backtraceLength));
  }

  /** memtrace's `Event.to_string` for this event. */
  toString(lookup: LocationLookup): string {
    let bt = "";
    for (let i = 0; i < this.backtraceLength; i++) {
      const code = this.backtraceBuffer[i];
      const locs = lookup(code);
      if (i > 0) bt += " ";
      if (locs.length === 0) bt += "$" + code;
      else {
        for (let j = 0; j < locs.length; j++) bt += (j > 0 ? " " : "") + locs[j].toString();
      }
    }
    const src = this.source === AllocationSource.Minor
      ? "alloc"
      : this.source === AllocationSource.Major
      ? "alloc_major"
      : "alloc_ext";
    return `${
      formatObjId(this.objId)
    } ${src} ${this.nsamples} len=${this.length} dom=${this.domain} ${
      formatSpace4(this.commonPrefix)
    }: ${bt}`;
  }
}

/** The object `objId` survived a minor collection. */
export class PromoteEvent {
  /** Discriminates the event kinds. */
  readonly kind = "promote" as const;
  /** The promoted object and the domain that wrote the event. */
  constructor(readonly objId: ObjId, readonly domain: DomainId) {}
  /** memtrace's `Event.to_string`. */
  toString(_lookup?: LocationLookup): string {
    return `${formatObjId(this.objId)} promote`;
  }
}

/** The object `objId` was collected. */
export class CollectEvent {
  /** Discriminates the event kinds. */
  readonly kind = "collect" as const;
  /** The collected object and the domain that wrote the event. */
  constructor(readonly objId: ObjId, readonly domain: DomainId) {}
  /** memtrace's `Event.to_string`. */
  toString(_lookup?: LocationLookup): string {
    return `${formatObjId(this.objId)} collect`;
  }
}

/** A trace event. */
export type Event = AllocEvent | PromoteEvent | CollectEvent;

/**
 * The event being delivered by `Reader.iterViews`: one object per iteration, refilled
 * for every event. Its fields are those of the event classes ({@linkcode AllocEvent} and the
 * others); the allocation fields keep the values of the last allocation when `kind` is
 * `promote` or `collect`.
 */
export interface EventView {
  /** The kind of event. */
  kind: "alloc" | "promote" | "collect";
  /** Microseconds since the trace start. */
  time: Timedelta;
  /** The allocation, promoted or collected object. */
  objId: ObjId;
  /** The domain that wrote the event. */
  domain: DomainId;
  /** Allocations: length in words, header excluded. */
  length: number;
  /** Allocations: number of samples. */
  nsamples: number;
  /** Allocations: how the object was allocated. */
  source: MemtraceAllocationSource;
  /** Allocations: location codes from caller to callee, valid up to `backtraceLength`. */
  backtraceBuffer: Float64Array;
  /** Allocations: number of meaningful entries of `backtraceBuffer`. */
  backtraceLength: number;
  /** Allocations: length of the prefix shared with the previous allocation of the domain. */
  commonPrefix: number;
}

/** Trace metadata (memtrace's `Info.t`). Strings are Unicode; they are stored as UTF-8. */
export interface Info {
  /** Fraction of words sampled. */
  sampleRate: number;
  /** Bits per word of the traced program (64). */
  wordSize: number;
  /** `Sys.executable_name` of the traced program. */
  executableName: string;
  /** Host the trace was taken on. */
  hostName: string;
  /** OCAMLRUNPARAM-style runtime parameters. */
  ocamlRuntimeParams: string;
  /** Process id (an int64 in the file). */
  pid: bigint;
  /** Domain whose writer created the trace. */
  initialDomain: DomainId;
  /** Start of the trace: time 0 of every event's time delta. */
  startTime: Timestamp;
  /** Free text given when the trace was started (format v2 and later). */
  context: string | undefined;
}
