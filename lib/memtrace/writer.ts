/**
 * Writing traces: per-domain writers sharing one destination and one object-id counter, and the
 * multiplexer that feeds events of many domains into one stream.
 *
 * The packet rules follow memtrace exactly, so that our files are byte-identical to its files:
 * 32 KiB packets; location definitions flushed in their own packets before the events that use
 * them; a flush before an event when the packet might not hold it, when more than 128 new
 * locations wait, when the packet spans more than 30 s, or when the 10,000-id chunk is used up.
 * @module
 */
import { Overflow, WriteBuf } from "./buf.ts";
import { BacktraceWriter } from "./backtrace_codec.ts";
import { LOCATION_MAX_LENGTH, LocationWriter } from "./location_codec.ts";
import {
  Ev,
  finishPacketHeader,
  type HeaderSlots,
  MAX_PACKET_SIZE,
  PACKET_MAX_TIME,
  putEventHeader,
  putPacketHeader,
} from "./packet.ts";
import type { TraceSink } from "./sink.ts";
import { MemtraceArgumentError, PidChangedError } from "./errors.ts";
import {
  type DomainId,
  type Event,
  type Info,
  type Location,
  type LocationCode,
  type LocationLookup,
  MemtraceAllocationSource,
  type ObjId,
  type Timestamp,
} from "./types.ts";

/** Room reserved for one event: fixed fields plus the larger of a location or backtrace. */
const MAX_EV_SIZE = 100 + Math.max(LOCATION_MAX_LENGTH, 4096);

/** Object ids handed to a writer at a time (memtrace's `Private.obj_ids_per_chunk`). */
export const OBJ_IDS_PER_CHUNK = 10_000;

const MAX_CODE = Number.MAX_SAFE_INTEGER;

/** Location codes must be exact integers: a larger number would already have been rounded.
 * (Written out rather than Number.isSafeInteger: it runs for every new frame.) */
function checkCode(c: number): void {
  if (!(c <= MAX_CODE && c >= -MAX_CODE && Math.floor(c) === c)) {
    throw new MemtraceArgumentError(
      `Trace.put_alloc: location code ${c} is not an integer within ±(2^53-1)`,
    );
  }
}

/** State shared by all domain writers of one trace. */
class SharedDest {
  closed = false;
  nextGlobalId = 0;
  constructor(readonly sink: TraceSink, readonly idsPerChunk: number) {}

  write(b: WriteBuf): void {
    if (this.closed) throw new MemtraceArgumentError("Trace writer: destination already closed");
    this.sink.write(b.buf.subarray(0, b.pos));
  }
}

/** Options for {@linkcode Writer.create}. */
export interface WriterOptions {
  /** Returns the current process id; a change makes the next flush throw
   * {@linkcode PidChangedError}. Defaults to a constant `info.pid`. */
  getpid?: () => bigint;
  /** Object ids claimed per chunk (10,000 in memtrace; smaller values are for tests). */
  idsPerChunk?: number;
}

/**
 * Writes the events of one domain. Create the first with {@linkcode Writer.create}, others
 * with {@linkcode Writer.forDomain}.
 *
 * @example Write an allocation, its promotion and its collection to memory
 * ```ts
 * import { Location, MemorySink, MemtraceAllocationSource, Writer } from "./mod.ts";
 * import assert from "node:assert/strict";
 *
 * const sink = new MemorySink(); // or a FileSink
 * const w = Writer.create(sink, {
 *   sampleRate: 1e-4,
 *   wordSize: 64,
 *   executableName: "demo",
 *   hostName: "host",
 *   ocamlRuntimeParams: "",
 *   pid: 42n,
 *   initialDomain: 0,
 *   startTime: 1_700_000_000_000_000,
 *   context: undefined,
 * }, { getpid: () => 42n });
 * const locs = new Map([[1, [new Location("a.ml", 3, 2, 10, "A.f")]]]);
 * const t = 1_700_000_000_000_100;
 * const id = w.putAlloc(t, 4, 1, MemtraceAllocationSource.Minor, [1], (c) => locs.get(c) ?? []);
 * w.putPromote(t + 10, id);
 * w.putCollect(t + 20, id);
 * w.close();
 * assert.ok(sink.bytes().length > 0);
 * ```
 */
export class Writer {
  private readonly locWriter = new LocationWriter();
  private readonly cache = new BacktraceWriter();
  private newLocCodes: LocationCode[] = [];
  private newLocLists: (readonly Location[])[] = [];
  private readonly newLocsBuf = new WriteBuf(new Uint8Array(MAX_PACKET_SIZE));
  /** The last allocation's callstack, stored caller first so that the part the next one shares
   * stays in place and only new frames are written. */
  private last = new Float64Array(64);
  private lastLen = 0;
  private lastDropped = 0;
  private startId = 0;
  private nextId = 0;
  private lastId = 0;
  private packetTimeStart: Timestamp;
  private packetTimeEnd: Timestamp;
  private header: HeaderSlots;
  private readonly packet = new WriteBuf(new Uint8Array(MAX_PACKET_SIZE));
  private decode: LocationLookup = () => [];
  /** Records a code that missed the backtrace cache: its definition goes out at the next flush. */
  private readonly onMiss = (k: number): void => {
    const code = this.last[k];
    this.newLocCodes.push(code);
    this.newLocLists.push(this.decode(code));
  };

  private constructor(
    private readonly dest: SharedDest,
    private readonly pid: bigint,
    private readonly getpid: () => bigint,
    /** The domain this writer writes events for. */
    readonly domain: DomainId,
    startTime: Timestamp,
  ) {
    this.packetTimeStart = startTime;
    this.packetTimeEnd = startTime;
    this.header = putPacketHeader(this.packet, pid, domain, undefined);
    this.newPacketIds();
  }

  /** Starts a trace on `sink`: writes the trace-info packet and returns the writer of
   * `info.initialDomain`. */
  static create(sink: TraceSink, info: Info, options: WriterOptions = {}): Writer {
    const getpid = options.getpid ?? (() => info.pid);
    const pid = getpid();
    const dest = new SharedDest(sink, options.idsPerChunk ?? OBJ_IDS_PER_CHUNK);
    const b = new WriteBuf(new Uint8Array(MAX_PACKET_SIZE));
    const h = putPacketHeader(b, pid, info.initialDomain, undefined);
    try {
      putEventHeader(b, Ev.TraceInfo, info.startTime);
      b.putFloat(info.sampleRate);
      b.put8(info.wordSize);
      b.putString(info.executableName);
      b.putString(info.hostName);
      b.putString(info.ocamlRuntimeParams);
      b.put64Big(info.pid);
      b.putString(info.context ?? "");
    } catch (e) {
      // memtrace raises Buf.Write.Overflow here; readers could not read a larger packet.
      if (!(e instanceof Overflow)) throw e;
      throw new MemtraceArgumentError(
        `Trace.create: the trace info does not fit in a ${MAX_PACKET_SIZE}-byte packet`,
      );
    }
    finishPacketHeader(b, h, info.startTime, info.startTime, 0, 0);
    dest.write(b);
    return new Writer(dest, pid, getpid, info.initialDomain, info.startTime);
  }

  /** A writer for another domain, sharing this one's destination and id counter. Its first
   * packet starts at this writer's latest event time. */
  forDomain(domain: DomainId): Writer {
    return this.forDomainAt(domain, this.packetTimeEnd);
  }

  /** @internal A writer for `domain` whose first packet starts at `startTime`. */
  forDomainAt(domain: DomainId, startTime: Timestamp): Writer {
    return new Writer(this.dest, this.pid, this.getpid, domain, startTime);
  }

  /** Whether the current id chunk has an id left. */
  private hasNextId(): boolean {
    return this.nextId < this.lastId;
  }

  /** At each new packet: claim a fresh chunk of ids if this one is used up. */
  private newPacketIds(): void {
    if (!this.hasNextId()) {
      this.nextId = this.dest.nextGlobalId;
      this.dest.nextGlobalId += this.dest.idsPerChunk;
      this.lastId = this.nextId + this.dest.idsPerChunk;
    }
    this.startId = this.nextId;
  }

  /** The id the next allocation will get (claiming a chunk first if needed). */
  nextAllocId(): ObjId {
    if (!this.hasNextId()) this.flushAt(this.packetTimeEnd);
    return this.nextId;
  }

  /** Writes out the pending locations and the packet; the next packet starts at `now`. */
  private flushAt(now: Timestamp): void {
    const actual = this.getpid();
    if (actual !== this.pid) throw new PidChangedError(this.pid, actual);
    // Location definitions first: readers must know a code before an event uses it.
    const n = this.newLocCodes.length;
    let i = 0;
    while (i < n) {
      const b = this.newLocsBuf;
      b.reset();
      const h = putPacketHeader(b, this.pid, this.domain, undefined);
      while (i < n && b.remaining() > LOCATION_MAX_LENGTH) {
        putEventHeader(b, Ev.Location, this.packetTimeStart);
        this.locWriter.put(b, this.newLocCodes[i], this.newLocLists[i]);
        i++;
      }
      finishPacketHeader(
        b,
        h,
        this.packetTimeStart,
        this.packetTimeStart,
        this.startId,
        this.startId,
      );
      this.dest.write(b);
    }
    const p = this.packet;
    finishPacketHeader(
      p,
      this.header,
      this.packetTimeStart,
      this.packetTimeEnd,
      this.startId,
      this.nextId,
    );
    this.dest.write(p);
    this.packetTimeStart = now;
    this.packetTimeEnd = now;
    this.newLocCodes.length = 0;
    this.newLocLists.length = 0;
    p.reset();
    this.newPacketIds();
    this.header = putPacketHeader(p, this.pid, this.domain, this.cache);
  }

  /** Flushes first if memtrace would, then writes an event header. */
  private beginEvent(code: number, now: Timestamp): void {
    if (
      this.packet.remaining() < MAX_EV_SIZE || this.newLocCodes.length > 128 ||
      now - this.packetTimeStart > PACKET_MAX_TIME || !this.hasNextId()
    ) this.flushAt(now);
    this.packetTimeEnd = now;
    putEventHeader(this.packet, code, now);
  }

  /**
   * Writes an allocation and returns its object id.
   * @param time when it happened (microseconds since the epoch; must not go backwards)
   * @param length size in words, header excluded
   * @param nsamples number of samples (at least 1)
   * @param source how it was allocated
   * @param callstack location codes, callee first (index 0 is the allocation point), as
   *   OCaml's raw backtraces are laid out; safe integers
   * @param decode the locations of a code; called for codes the reader may not know yet
   * @param dropSlots number of entries at the start of `callstack` to leave out (memtrace's
   *   `put_alloc_backtrace_suffix`)
   */
  putAlloc(
    time: Timestamp,
    length: number,
    nsamples: number,
    source: MemtraceAllocationSource,
    callstack: ArrayLike<LocationCode>,
    decode: LocationLookup,
    dropSlots = 0,
  ): ObjId {
    const len = callstack.length;
    if (!(Number.isInteger(dropSlots) && dropSlots >= 0 && dropSlots <= len)) {
      throw new MemtraceArgumentError(`Trace.put_alloc: drop_slots ${dropSlots} out of range`);
    }
    // Frames shared with the previous callstack, from the caller side (memtrace's common
    // suffix of the callee-first arrays, dropped slots excluded on both sides).
    const last = this.last;
    const lim = Math.min(len - dropSlots, this.lastLen - this.lastDropped);
    let common = 0;
    while (common < lim && callstack[len - 1 - common] === last[common]) common++;
    // Refuse codes that are not exact before anything changes, then store the new frames.
    for (let k = common; k < len; k++) checkCode(callstack[len - 1 - k]);
    const dst = this.lastFor(len, common);
    for (let k = common; k < len; k++) dst[k] = callstack[len - 1 - k];
    return this.putAllocStored(time, length, nsamples, source, len, decode, dropSlots, common);
  }

  /** The last-callstack buffer, grown to hold `len` frames (keeping the first `keep`). */
  private lastFor(len: number, keep: number): Float64Array {
    if (this.last.length < len) {
      const grown = new Float64Array(Math.max(len, 2 * this.last.length));
      grown.set(this.last.subarray(0, keep));
      this.last = grown;
    }
    return this.last;
  }

  /** putAlloc once the callstack is stored in `this.last[0, len)`, caller first, sharing its
   * first `commonLen` frames with the previous one. */
  private putAllocStored(
    time: Timestamp,
    length: number,
    nsamples: number,
    source: MemtraceAllocationSource,
    len: number,
    decode: LocationLookup,
    dropSlots: number,
    commonLen: number,
  ): ObjId {
    const newLen = len - commonLen;
    this.lastLen = len;
    this.lastDropped = dropSlots;

    const isShort = length >= 1 && length <= 16 && source === MemtraceAllocationSource.Minor &&
      nsamples === 1 && newLen < 256;
    this.beginEvent(isShort ? 100 + length : Ev.Alloc, time);
    if (this.nextId === this.lastId) {
      throw new MemtraceArgumentError("Obj_id.Allocator.next_exn: exhausted");
    }
    const id = this.nextId++;
    const b = this.packet;
    let lenAt: number;
    if (isShort) {
      b.putVint(commonLen);
      lenAt = b.skip(1);
    } else {
      b.putVint(length);
      b.putVint(nsamples);
      b.put8(source);
      b.putVint(commonLen);
      lenAt = b.skip(2);
    }
    this.decode = decode;
    const nencoded = this.cache.put(b, id, this.last, commonLen, len - dropSlots, this.onMiss);
    if (isShort) b.update8(lenAt, nencoded);
    else b.update16(lenAt, nencoded);
    return id;
  }

  /** memtrace's `put_alloc_backtrace_suffix`: {@linkcode putAlloc} leaving out the first
   * `dropSlots` (callee-side) entries of `callstack`. */
  putAllocBacktraceSuffix(
    time: Timestamp,
    length: number,
    nsamples: number,
    source: MemtraceAllocationSource,
    callstack: ArrayLike<LocationCode>,
    decode: LocationLookup,
    dropSlots: number,
  ): ObjId {
    return this.putAlloc(time, length, nsamples, source, callstack, decode, dropSlots);
  }

  /** Writes that object `id` survived a minor collection. */
  putPromote(time: Timestamp, id: ObjId): void {
    this.beginEvent(Ev.Promote, time);
    this.packet.putVint(this.nextId - 1 - id);
  }

  /** Writes that object `id` was collected. */
  putCollect(time: Timestamp, id: ObjId): void {
    this.beginEvent(Ev.Collect, time);
    this.packet.putVint(this.nextId - 1 - id);
  }

  /** Writes out buffered events (and the locations they need). More events may follow. */
  flush(): void {
    this.flushAt(this.packetTimeEnd);
  }

  /** Flushes, then closes the destination. */
  close(): void {
    this.flush();
    this.dest.closed = true;
    this.dest.sink.close?.();
  }

  /** @internal Writes a decoded event, checking it fits this writer (memtrace's `put_event`). */
  putEvent(decode: LocationLookup, time: Timestamp, ev: Event): void {
    if (ev.domain !== this.domain) {
      throw new MemtraceArgumentError("Trace.put_event: mismatched domain fields");
    }
    if (time < this.packetTimeEnd) {
      throw new MemtraceArgumentError("Trace.put_event: out-of-order timestamps");
    }
    switch (ev.kind) {
      case "alloc": {
        // The event's backtrace is caller first, like the stored one: compare in place, then
        // check and store only the new frames.
        const n = ev.backtraceLength;
        const bt = ev.backtraceBuffer;
        const last = this.last;
        const lim = Math.min(n, this.lastLen - this.lastDropped);
        let common = 0;
        while (common < lim && bt[common] === last[common]) common++;
        for (let k = common; k < n; k++) checkCode(bt[k]);
        const dst = this.lastFor(n, common);
        for (let k = common; k < n; k++) dst[k] = bt[k];
        const id = this.putAllocStored(
          time,
          ev.length,
          ev.nsamples,
          ev.source,
          n,
          decode,
          0,
          common,
        );
        if (id !== ev.objId) throw new MemtraceArgumentError("Incorrect allocation ID");
        break;
      }
      case "promote":
        this.putPromote(time, ev.objId);
        break;
      case "collect":
        this.putCollect(time, ev.objId);
        break;
    }
  }
}

/** Feeds events of several domains into one trace, one writer per domain; switching domain
 * flushes the previous domain's writer, so packets of different domains never interleave
 * mid-packet (memtrace's `Writer.Multiplexed_domains`). */
export class MultiplexedWriter {
  private readonly writers = new Map<DomainId, Writer>();
  private lastDomain: DomainId;
  private readonly startTime: Timestamp;

  private constructor(first: Writer, startTime: Timestamp) {
    this.writers.set(first.domain, first);
    this.lastDomain = first.domain;
    this.startTime = startTime;
  }

  /** Starts a trace on `sink` (writes the trace-info packet). */
  static create(sink: TraceSink, info: Info, options: WriterOptions = {}): MultiplexedWriter {
    return new MultiplexedWriter(Writer.create(sink, info, options), info.startTime);
  }

  /** The writer of `domain`, created on first use (its packets start at the trace's start
   * time). Switching to another domain flushes the writer of the domain written last, so that
   * each domain's packets stay whole and in order. */
  forDomain(domain: DomainId): Writer {
    return this.writerFor(domain);
  }

  /** The writer of `domain`, flushing the previous domain's when it changes. */
  private writerFor(domain: DomainId): Writer {
    const last = this.writers.get(this.lastDomain)!;
    if (domain === this.lastDomain) return last;
    last.flush();
    this.lastDomain = domain;
    let w = this.writers.get(domain);
    if (w === undefined) {
      w = last.forDomainAt(domain, this.startTime);
      this.writers.set(domain, w);
    }
    return w;
  }

  /** Writes `ev` (from a reader, or built by hand) at `time`. Alloc events must carry the id
   * {@linkcode nextAllocId} gives; backtraces are caller to callee, as readers produce them. */
  putEvent(decode: LocationLookup, time: Timestamp, ev: Event): void {
    this.writerFor(ev.domain).putEvent(decode, time, ev);
  }

  /** The id the next allocation of `domain` will get. */
  nextAllocId(domain: DomainId): ObjId {
    return this.writerFor(domain).nextAllocId();
  }

  /** Flushes the writer of the domain written last (the others are already flushed). */
  flush(): void {
    this.writers.get(this.lastDomain)!.flush();
  }
}
