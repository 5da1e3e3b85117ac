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
import { Overflow, putVintAt, WriteBuf, writeI32 } from "./buf.ts";
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
  TIME_MASK,
} from "./packet.ts";
import type { TraceSink } from "./sink.ts";
import { MemtraceArgumentError, PidChangedError } from "./errors.ts";
import {
  type DomainId,
  type Event,
  type EventView,
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
 * const id = w.putAlloc({ time: t, length: 4, nsamples: 1, source: MemtraceAllocationSource.Minor, callstack: [1], decode: (c) => locs.get(c) ?? [] });
 * w.putPromote(t + 10, id);
 * w.putCollect(t + 20, id);
 * w.close();
 * assert.ok(sink.bytes().length > 0);
 * ```
 */
export class Writer {
  readonly #locWriter = new LocationWriter();
  readonly #cache = new BacktraceWriter();
  #newLocCodes: LocationCode[] = [];
  #newLocLists: (readonly Location[])[] = [];
  readonly #newLocsBuf = new WriteBuf(new Uint8Array(MAX_PACKET_SIZE));
  /** The last allocation's callstack, stored caller first so that the part the next one shares
   * stays in place and only new frames are written. */
  #last = new Float64Array(64);
  #lastLen = 0;
  #lastDropped = 0;
  /** A callee-first callstack turned caller first (see {@linkcode putAlloc}). */
  #reversed = new Float64Array(64);
  #startId = 0;
  #nextId = 0;
  #lastId = 0;
  // Times start as NaN, a double: V8 then stores these fields as doubles in place (a field
  // first holding undefined would box every new time in a fresh heap number).
  #packetTimeStart: Timestamp = NaN;
  #packetTimeEnd: Timestamp = NaN;
  #header: HeaderSlots;
  readonly #packet = new WriteBuf(new Uint8Array(MAX_PACKET_SIZE));
  #decode: LocationLookup = () => [];
  /** Records a code that missed the backtrace cache: its definition goes out at the next flush. */
  readonly #onMiss = (k: number): void => {
    const code = this.#last[k];
    this.#newLocCodes.push(code);
    this.#newLocLists.push(this.#decode(code));
  };
  /** The arguments of the allocation being written, reused from one to the next. */
  readonly #args: AllocArgs = {
    time: NaN,
    length: 0,
    nsamples: 0,
    source: MemtraceAllocationSource.Minor,
    decode: () => [],
    dropSlots: 0,
  };
  readonly #dest: SharedDest;
  readonly #pid: bigint;
  readonly #getpid: () => bigint;
  /** The domain this writer writes events for. */
  readonly domain: DomainId;

  private constructor(
    dest: SharedDest,
    pid: bigint,
    getpid: () => bigint,
    domain: DomainId,
    startTime: Timestamp,
  ) {
    this.#dest = dest;
    this.#pid = pid;
    this.#getpid = getpid;
    this.domain = domain;
    this.#packetTimeStart = startTime;
    this.#packetTimeEnd = startTime;
    this.#header = putPacketHeader(this.#packet, pid, domain, undefined);
    this.#newPacketIds();
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
    finishPacketHeader(b, h, {
      timeBegin: info.startTime,
      timeEnd: info.startTime,
      allocBegin: 0,
      allocEnd: 0,
    });
    dest.write(b);
    return new Writer(dest, pid, getpid, info.initialDomain, info.startTime);
  }

  /** A writer for another domain, sharing this one's destination and id counter. Its first
   * packet starts at this writer's latest event time. */
  forDomain(domain: DomainId): Writer {
    return this.forDomainAt(domain, this.#packetTimeEnd);
  }

  /** @internal A writer for `domain` whose first packet starts at `startTime`. */
  forDomainAt(domain: DomainId, startTime: Timestamp): Writer {
    return new Writer(this.#dest, this.#pid, this.#getpid, domain, startTime);
  }

  /** At each new packet: claim a fresh chunk of ids if this one is used up. */
  #newPacketIds(): void {
    if (this.#nextId >= this.#lastId) {
      const dest = this.#dest;
      this.#nextId = dest.nextGlobalId;
      dest.nextGlobalId += dest.idsPerChunk;
      this.#lastId = this.#nextId + dest.idsPerChunk;
    }
    this.#startId = this.#nextId;
  }

  /** The id the next allocation will get (claiming a chunk first if needed). */
  nextAllocId(): ObjId {
    if (this.#nextId >= this.#lastId) this.#flushAt(this.#packetTimeEnd);
    return this.#nextId;
  }

  /** Writes out the pending locations and the packet; the next packet starts at `now`. */
  #flushAt(now: Timestamp): void {
    const actual = this.#getpid();
    if (actual !== this.#pid) throw new PidChangedError(this.#pid, actual);
    // Location definitions first: readers must know a code before an event uses it.
    const codes = this.#newLocCodes, lists = this.#newLocLists;
    const n = codes.length;
    const at = this.#packetTimeStart;
    const ids = { timeBegin: at, timeEnd: at, allocBegin: this.#startId, allocEnd: this.#startId };
    let i = 0;
    while (i < n) {
      const b = this.#newLocsBuf;
      b.reset();
      const h = putPacketHeader(b, this.#pid, this.domain, undefined);
      while (i < n && b.remaining() > LOCATION_MAX_LENGTH) {
        putEventHeader(b, Ev.Location, at);
        this.#locWriter.put(b, codes[i], lists[i]);
        i++;
      }
      finishPacketHeader(b, h, ids);
      this.#dest.write(b);
    }
    const p = this.#packet;
    ids.timeEnd = this.#packetTimeEnd;
    ids.allocEnd = this.#nextId;
    finishPacketHeader(p, this.#header, ids);
    this.#dest.write(p);
    this.#packetTimeStart = now;
    this.#packetTimeEnd = now;
    codes.length = 0;
    lists.length = 0;
    p.reset();
    this.#newPacketIds();
    this.#header = putPacketHeader(p, this.#pid, this.domain, this.#cache);
  }

  /** Flushes first if memtrace would, then writes an event header. Afterwards the packet has
   * room for {@linkcode MAX_EV_SIZE} bytes. */
  #beginEvent(code: number, now: Timestamp): void {
    const b = this.#packet;
    if (
      b.end - b.pos < MAX_EV_SIZE || this.#newLocCodes.length > 128 ||
      now - this.#packetTimeStart > PACKET_MAX_TIME || this.#nextId >= this.#lastId
    ) this.#flushAt(now);
    this.#packetTimeEnd = now;
    if (Number.isInteger(now)) {
      // putEventHeader's bytes, written in place (there is room).
      const out = b.buf, p = b.pos;
      writeI32(out, p, (code << 25) | (now & TIME_MASK));
      b.pos = p + 4;
    } else putEventHeader(b, code, now);
  }

  /** Writes an allocation (memtrace's `put_alloc`, whose labelled arguments are the fields of
   * {@linkcode AllocationToWrite}) and returns its object id. */
  putAlloc(alloc: AllocationToWrite): ObjId {
    const { time, length, nsamples, source, callstack, decode } = alloc;
    const dropSlots = alloc.dropSlots ?? 0;
    const len = callstack.length;
    if (!(Number.isInteger(dropSlots) && dropSlots >= 0 && dropSlots <= len)) {
      throw new MemtraceArgumentError(`Trace.put_alloc: drop_slots ${dropSlots} out of range`);
    }
    // Caller first, as stored: memtrace's common suffix of the callee-first arrays becomes a
    // common prefix, and the dropped slots the last entries.
    let frames = this.#reversed;
    if (frames.length < len) {
      frames = this.#reversed = new Float64Array(Math.max(len, 2 * frames.length));
    }
    for (let k = 0; k < len; k++) frames[k] = callstack[len - 1 - k];
    const a = this.#args;
    a.time = time;
    a.length = length;
    a.nsamples = nsamples;
    a.source = source;
    a.decode = decode;
    a.dropSlots = dropSlots;
    return this.#putFrames(a, frames, len);
  }

  /** Stores `frames[0, n)` (caller first; the last `a.dropSlots` not to be written) as the last
   * callstack, checking the new frames' codes before anything changes, then writes the event. */
  #putFrames(a: AllocArgs, frames: ArrayLike<number>, n: number): ObjId {
    const last = this.#last;
    const lim = Math.min(n - a.dropSlots, this.#lastLen - this.#lastDropped);
    let common = 0;
    while (common < lim && frames[common] === last[common]) common++;
    for (let k = common; k < n; k++) checkCode(frames[k]);
    let dst = last;
    if (dst.length < n) {
      dst = this.#last = new Float64Array(Math.max(n, 2 * last.length));
      dst.set(last.subarray(0, common));
    }
    for (let k = common; k < n; k++) dst[k] = frames[k];
    return this.#putAllocStored(a, n, common);
  }

  /** putAlloc once the callstack is stored in `this.#last[0, len)`, caller first, sharing its
   * first `commonLen` frames with the previous one. */
  #putAllocStored(a: AllocArgs, len: number, commonLen: number): ObjId {
    const length = a.length, nsamples = a.nsamples, source = a.source, dropSlots = a.dropSlots;
    const newLen = len - commonLen;
    this.#lastLen = len;
    this.#lastDropped = dropSlots;

    const isShort = length >= 1 && length <= 16 && source === MemtraceAllocationSource.Minor &&
      nsamples === 1 && newLen < 256;
    this.#beginEvent(isShort ? 100 + length : Ev.Alloc, a.time);
    if (this.#nextId === this.#lastId) {
      throw new MemtraceArgumentError("Obj_id.Allocator.next_exn: exhausted");
    }
    const id = this.#nextId++;
    // The fields take at most 30 bytes and the backtrace 4 KiB: #beginEvent left the room.
    const b = this.#packet, out = b.buf;
    let p = b.pos;
    if (!isShort) {
      p = putVintAt(out, p, length);
      p = putVintAt(out, p, nsamples);
      out[p++] = source;
    }
    p = putVintAt(out, p, commonLen);
    const lenAt = p;
    b.pos = p + (isShort ? 1 : 2);
    this.#decode = a.decode;
    const nencoded = this.#cache.put(b, id, this.#last, commonLen, len - dropSlots, this.#onMiss);
    out[lenAt] = nencoded;
    if (!isShort) out[lenAt + 1] = nencoded >>> 8;
    return id;
  }

  /** memtrace's `put_alloc_backtrace_suffix`: {@linkcode putAlloc} leaving out the first
   * `dropSlots` (callee-side) entries of `callstack`. */
  putAllocBacktraceSuffix(alloc: AllocationToWrite & { dropSlots: number }): ObjId {
    return this.putAlloc(alloc);
  }

  /** Writes that object `id` survived a minor collection. An id this writer has not given yet
   * is refused, as memtrace's writer refuses it (`Invalid ID in promotion`): readers refuse a
   * promotion of an id after the packet's (`promote id sync`). */
  putPromote(time: Timestamp, id: ObjId): void {
    if (!(id < this.#nextId)) throw new MemtraceArgumentError("Invalid ID in promotion");
    this.#putObjEvent(Ev.Promote, time, id);
  }

  /** Writes that object `id` was collected. */
  putCollect(time: Timestamp, id: ObjId): void {
    this.#putObjEvent(Ev.Collect, time, id);
  }

  /** A promotion or collection: the event header and the id, as a distance back from the
   * latest id. */
  #putObjEvent(code: number, time: Timestamp, id: ObjId): void {
    const b = this.#packet;
    const delta = this.#nextId - 1 - id;
    if (
      delta >= 0 && delta <= 252 && Number.isInteger(time) && b.end - b.pos >= MAX_EV_SIZE &&
      this.#newLocCodes.length <= 128 && time - this.#packetTimeStart <= PACKET_MAX_TIME &&
      this.#nextId < this.#lastId
    ) {
      // The common case, written in place: no flush due, a one-byte id distance.
      this.#packetTimeEnd = time;
      const out = b.buf, p = b.pos;
      const w = (code << 25) | (time & TIME_MASK);
      out[p] = w;
      out[p + 1] = w >>> 8;
      out[p + 2] = w >>> 16;
      out[p + 3] = w >>> 24;
      out[p + 4] = delta;
      b.pos = p + 5;
      return;
    }
    this.#beginEvent(code, time); // may flush, and claim new ids
    b.pos = putVintAt(b.buf, b.pos, this.#nextId - 1 - id);
  }

  /** Writes out buffered events (and the locations they need). More events may follow. */
  flush(): void {
    this.#flushAt(this.#packetTimeEnd);
  }

  /** Flushes, then closes the destination. */
  close(): void {
    this.flush();
    this.#dest.closed = true;
    this.#dest.sink.close?.();
  }

  /** @internal Writes a decoded event, checking it fits this writer (memtrace's `put_event`). */
  putEvent(decode: LocationLookup, time: Timestamp, ev: Event | Readonly<EventView>): void {
    if (ev.domain !== this.domain) {
      throw new MemtraceArgumentError("Trace.put_event: mismatched domain fields");
    }
    if (time < this.#packetTimeEnd) {
      throw new MemtraceArgumentError("Trace.put_event: out-of-order timestamps");
    }
    if (ev.kind === "alloc") {
      // The event's backtrace is caller first, like the stored one.
      const a = this.#args;
      a.time = time;
      a.length = ev.length;
      a.nsamples = ev.nsamples;
      a.source = ev.source;
      a.decode = decode;
      a.dropSlots = 0;
      const id = this.#putFrames(a, ev.backtraceBuffer, ev.backtraceLength);
      if (id !== ev.objId) throw new MemtraceArgumentError("Incorrect allocation ID");
    } else if (ev.kind === "promote") this.putPromote(time, ev.objId);
    else this.putCollect(time, ev.objId);
  }
}

/** An allocation to write: memtrace's `put_alloc` arguments. */
export interface AllocationToWrite {
  /** When it happened (microseconds since the epoch; must not go backwards). */
  time: Timestamp;
  /** Size in words, header excluded. */
  length: number;
  /** Number of samples (at least 1). */
  nsamples: number;
  /** How it was allocated. */
  source: MemtraceAllocationSource;
  /** Location codes, callee first (index 0 is the allocation point), as OCaml's raw
   * backtraces are laid out; safe integers. */
  callstack: ArrayLike<LocationCode>;
  /** The locations of a code; called for codes the reader may not know yet. */
  decode: LocationLookup;
  /** Entries at the start of `callstack` to leave out (memtrace's
   * `put_alloc_backtrace_suffix`; default 0). */
  dropSlots?: number;
}

/** The fields of an allocation other than its callstack, in the writer's own reused object (one
 * shape for every internal call, whoever the caller). */
interface AllocArgs {
  time: Timestamp;
  length: number;
  nsamples: number;
  source: MemtraceAllocationSource;
  decode: LocationLookup;
  dropSlots: number;
}

/** Feeds events of several domains into one trace, one writer per domain; switching domain
 * flushes the previous domain's writer, so packets of different domains never interleave
 * mid-packet (memtrace's `Writer.Multiplexed_domains`). */
export class MultiplexedWriter {
  readonly #writers = new Map<DomainId, Writer>();
  /** The writer of the domain written last. */
  #last: Writer;
  readonly #startTime: Timestamp = NaN;

  private constructor(first: Writer, startTime: Timestamp) {
    this.#writers.set(first.domain, first);
    this.#last = first;
    this.#startTime = startTime;
  }

  /** Starts a trace on `sink` (writes the trace-info packet). */
  static create(sink: TraceSink, info: Info, options: WriterOptions = {}): MultiplexedWriter {
    return new MultiplexedWriter(Writer.create(sink, info, options), info.startTime);
  }

  /** The writer of `domain`, created on first use (its packets start at the trace's start
   * time). Switching to another domain flushes the writer of the domain written last, so that
   * each domain's packets stay whole and in order. */
  forDomain(domain: DomainId): Writer {
    return this.#writerFor(domain);
  }

  /** The writer of `domain`, flushing the previous domain's when it changes. */
  #writerFor(domain: DomainId): Writer {
    const last = this.#last;
    if (domain === last.domain) return last;
    last.flush();
    let w = this.#writers.get(domain);
    if (w === undefined) {
      w = last.forDomainAt(domain, this.#startTime);
      this.#writers.set(domain, w);
    }
    this.#last = w;
    return w;
  }

  /** Writes `ev` (from a reader, as an object or a view, or built by hand) at `time`. Alloc
   * events must carry the id {@linkcode nextAllocId} gives; backtraces are caller to callee, as
   * readers produce them. */
  putEvent(decode: LocationLookup, time: Timestamp, ev: Event | Readonly<EventView>): void {
    this.#writerFor(ev.domain).putEvent(decode, time, ev);
  }

  /** The id the next allocation of `domain` will get. */
  nextAllocId(domain: DomainId): ObjId {
    return this.#writerFor(domain).nextAllocId();
  }

  /** Flushes the writer of the domain written last (the others are already flushed). */
  flush(): void {
    this.#last.flush();
  }
}
