/**
 * The tracer: what memtrace's `Memprof_tracer` does, for every domain. Its memprof callbacks
 * write Alloc / Promote / Collect events through one writer per domain, multiplexed into one
 * `.ctf`; external allocations (`Memtrace.External.alloc/free`) are sampled by their own
 * geometric sampler, as memtrace samples them.
 *
 * Reentrancy follows memtrace's lock: while the tracer is busy writing an external allocation
 * (holding its lock "synchronously"), a memprof callback that fires cannot write: an allocation
 * is then not tracked, and a promotion or collection is deferred until the lock is released.
 *
 * Differences from memtrace, on purpose: memtrace's memprof callbacks trace only the main
 * domain; ours trace all. External allocations are sampled on the main domain only, as
 * memtrace's `ext_alloc` samples them (on another domain it returns at once).
 * Promotions and collections are written by the writer of the domain that allocated the object:
 * memtrace encodes a promotion as a non-negative distance back from the writer's latest id, so an
 * orphan adopted by a domain whose id chunk is older could not be written on the adopter's
 * writer. (memtrace's format allows these events on any domain once the allocating one ended.)
 * @module
 */
import {
  AllocationSource,
  type DomainId,
  type Info,
  Location,
  type LocationCode,
  MultiplexedWriter,
  type ObjId,
  PidChangedError,
  type Timestamp,
  type TraceSink,
} from "../memtrace/mod.ts";
import { GeometricSampler } from "./geometric_sampler.ts";

/** What an allocation callback receives (a subset of `Gc.Memprof.allocation`). */
export interface TracedAllocation {
  readonly size: number;
  readonly nSamples: number;
  /** Innermost frame first, `defname@file:line:start-end`. */
  readonly callstack: readonly string[];
}

/** Options of {@linkcode Tracer}. */
export interface TracerOptions {
  /** Trace metadata (the sample rate, pid, start time, …). */
  info: Info;
  /** Current time in µs since the epoch (a virtual clock in scenarios). */
  clock: () => Timestamp;
  /** Rate of the external-allocation sampler (default `info.sampleRate`). */
  externalSamplingRate?: number;
  /** memtrace's `report_exn`: reports a failure — of the writer, or an exception raised under
   * an external allocation's lock ({@linkcode Tracer.extAlloc}); the tracer stops beforehand
   * (default: rethrow). */
  reportError?: (e: unknown) => void;
}

/** What {@linkcode Tracer.extAlloc} runs while it holds the tracer's lock. */
export interface ExtAllocHooks {
  /** After each draw of the external sampler: memtrace's sampling loop polls at its back-edge. */
  readonly afterDraw?: () => void;
  /** After the draws, before the event is written: memtrace's `Printexc.get_callstack`. */
  readonly whileLocked?: () => void;
}

type Deferred = { kind: "promote" | "collect"; domain: DomainId; id: ObjId };

/** Counts of what the tracer did. */
export interface TracerStats {
  /** Allocation events written. */
  allocs: number;
  /** Promotion events written. */
  promotes: number;
  /** Collection events written. */
  collects: number;
  /** External allocations sampled and written. */
  externalAllocs: number;
  /** Frees of sampled external allocations written. */
  externalFrees: number;
  /** Allocation callbacks that came while the tracer was busy (not tracked, as memtrace). */
  ignoredWhileBusy: number;
  /** Promotions and collections deferred while the tracer was busy. */
  deferred: number;
}

/** Writes memprof callbacks and external allocations into a memtrace trace. */
export class Tracer {
  readonly #writer: MultiplexedWriter;
  readonly #clock: () => Timestamp;
  readonly #codes = new Map<string, LocationCode>();
  readonly #locations: Location[][] = [[]];
  readonly #scratch: LocationCode[] = [];
  readonly #ext: GeometricSampler;
  #bytesBeforeExtSample: number;
  #locked = false;
  #stopped = false;
  #failed = false;
  #deferred: Deferred[] = [];
  readonly #report: (e: unknown) => void;
  readonly #mainDomain: DomainId;
  /** What happened so far. */
  readonly stats: TracerStats = {
    allocs: 0,
    promotes: 0,
    collects: 0,
    externalAllocs: 0,
    externalFrees: 0,
    ignoredWhileBusy: 0,
    deferred: 0,
  };
  /** Resolves a location code of this trace. */
  readonly lookup = (code: LocationCode): readonly Location[] => this.#locations[code] ?? [];

  constructor(sink: TraceSink, options: TracerOptions) {
    this.#writer = MultiplexedWriter.create(sink, options.info, { getpid: () => options.info.pid });
    this.#clock = options.clock;
    this.#mainDomain = options.info.initialDomain;
    this.#ext = new GeometricSampler(options.externalSamplingRate ?? options.info.sampleRate);
    this.#bytesBeforeExtSample = this.#drawExtBytes();
    this.#report = options.reportError ?? ((e) => {
      throw e;
    });
  }

  /** Whether the tracer still writes (it stops after a writer failure or `close`). */
  get active(): boolean {
    return !this.#stopped;
  }

  /**
   * Whether the tracer failed (memtrace's `mark_failed`): its writer threw, or a memprof
   * callback run under the lock of an external allocation raised. Then, as memtrace's
   * `Is_stopped` cases, an allocation callback does not track its block, a promotion ends the
   * block's tracking, and nothing more is written or sampled.
   */
  get failed(): boolean {
    return this.#failed;
  }

  /** Whether an external allocation is being written (memprof callbacks must not write). */
  get busy(): boolean {
    return this.#locked;
  }

  /** The location code of a frame (codes are given in order of first use, from 1). */
  codeOf(frame: string): LocationCode {
    let c = this.#codes.get(frame);
    if (c === undefined) {
      c = this.#locations.length;
      const loc = Location.parse(frame);
      this.#locations.push(loc === undefined ? [] : [loc]);
      this.#codes.set(frame, c);
    }
    return c;
  }

  #codesOf(callstack: readonly string[]): LocationCode[] {
    const out = this.#scratch;
    out.length = callstack.length;
    for (let i = 0; i < callstack.length; i++) out[i] = this.codeOf(callstack[i]);
    return out;
  }

  /** memtrace's `mark_failed`: the lock released and stopped, deferred events dropped, then
   * `report_exn` ({@linkcode TracerOptions.reportError}). */
  #fail(e: unknown): void {
    this.#stopped = true;
    this.#failed = true;
    this.#locked = false;
    this.#deferred = [];
    // A changed pid means a forked child: stop silently, as memtrace does.
    if (!(e instanceof PidChangedError)) this.#report(e);
  }

  /** The `alloc_minor` / `alloc_major` callback: returns the object id to track, or
   * undefined (not tracked) when the tracer is stopped or busy. */
  alloc(domain: DomainId, info: TracedAllocation, major: boolean): ObjId | undefined {
    if (this.#stopped) return undefined;
    if (this.#locked) {
      this.stats.ignoredWhileBusy++;
      return undefined;
    }
    try {
      const id = this.#writer.forDomain(domain).putAlloc({
        time: this.#clock(),
        length: info.size,
        nsamples: info.nSamples,
        source: major ? AllocationSource.Major : AllocationSource.Minor,
        callstack: this.#codesOf(info.callstack),
        decode: this.lookup,
      });
      this.stats.allocs++;
      return id;
    } catch (e) {
      this.#fail(e);
      return undefined;
    }
  }

  /** The `promote` callback: the id keeps being tracked. `domain` is the domain that allocated
   * the object (see the module comment). */
  promote(domain: DomainId, id: ObjId): ObjId | undefined {
    if (this.#stopped) return undefined;
    if (this.#locked) {
      this.#deferred.push({ kind: "promote", domain, id });
      this.stats.deferred++;
      return id;
    }
    try {
      this.#writer.forDomain(domain).putPromote(this.#clock(), id);
      this.stats.promotes++;
      return id;
    } catch (e) {
      this.#fail(e);
      return undefined;
    }
  }

  /** The `dealloc_minor` / `dealloc_major` callback; `domain` allocated the object. */
  collect(domain: DomainId, id: ObjId): void {
    if (this.#stopped) return;
    if (this.#locked) {
      this.#deferred.push({ kind: "collect", domain, id });
      this.stats.deferred++;
      return;
    }
    try {
      this.#writer.forDomain(domain).putCollect(this.#clock(), id);
      this.stats.collects++;
    } catch (e) {
      this.#fail(e);
    }
  }

  #drawExtBytes(): number {
    return this.#ext.draw() * 8;
  }

  /**
   * `Memtrace.External.alloc ~bytes`: decides whether this external allocation is sampled and,
   * if so, writes it (source External, size rounded up to words) and returns its id. `hooks`
   * run where memtrace's slow path runs OCaml code with the tracer's lock held, so that memprof
   * callbacks they run find the tracer busy: `afterDraw` after each draw of the sampler (the
   * back-edge poll of memtrace's sampling loop), `whileLocked` after the draws, before the event
   * is written (the engine allocates there what `Printexc.get_callstack` allocates).
   *
   * What the hooks throw is caught, as memtrace's `ext_alloc_slowpath` catches any exception
   * of its locked part (a memprof callback raising at a poll, say): the tracer fails
   * ({@linkcode failed}), the exception goes to `reportError`, and the allocation is not
   * sampled (undefined), unless `reportError` throws it on.
   */
  extAlloc(
    domain: DomainId,
    bytes: number,
    callstack: readonly string[],
    hooks: ExtAllocHooks = {},
  ): ObjId | undefined {
    // memtrace's ext_alloc samples on the main domain only: elsewhere it returns at once.
    if (this.#stopped || domain !== this.#mainDomain) return undefined;
    const n = this.#bytesBeforeExtSample - bytes;
    this.#bytesBeforeExtSample = n;
    if (n > 0) return undefined;
    this.#locked = true;
    let id: ObjId | undefined;
    try {
      let samples = 0;
      while (this.#bytesBeforeExtSample <= 0) {
        this.#bytesBeforeExtSample += this.#drawExtBytes();
        samples++;
        hooks.afterDraw?.();
      }
      hooks.whileLocked?.();
      if (this.#stopped) return undefined;
      id = this.#writer.forDomain(domain).putAlloc({
        time: this.#clock(),
        length: Math.ceil(bytes / 8),
        nsamples: samples,
        source: AllocationSource.External,
        callstack: this.#codesOf(callstack),
        decode: this.lookup,
      });
      this.stats.externalAllocs++;
    } catch (e) {
      this.#fail(e);
      return undefined;
    }
    this.#unlock();
    return id;
  }

  /** `Memtrace.External.free`. */
  extFree(domain: DomainId, id: ObjId): void {
    if (this.#stopped) return;
    this.#locked = true;
    try {
      this.#writer.forDomain(domain).putCollect(this.#clock(), id);
      this.stats.externalFrees++;
    } catch (e) {
      this.#fail(e);
      return;
    }
    this.#unlock();
  }

  /** Releases the lock, writing what was deferred meanwhile (in order). */
  #unlock(): void {
    while (this.#deferred.length > 0) {
      const work = this.#deferred;
      this.#deferred = [];
      try {
        for (const d of work) {
          const w = this.#writer.forDomain(d.domain);
          if (d.kind === "promote") {
            w.putPromote(this.#clock(), d.id);
            this.stats.promotes++;
          } else {
            w.putCollect(this.#clock(), d.id);
            this.stats.collects++;
          }
        }
      } catch (e) {
        this.#fail(e);
        return;
      }
    }
    this.#locked = false;
  }

  /** Writes out everything buffered. */
  flush(): void {
    if (!this.#stopped) this.#writer.flush();
  }

  /** Flushes and stops tracing. */
  close(): void {
    if (this.#stopped) return;
    this.#writer.flush();
    this.#stopped = true;
  }
}
