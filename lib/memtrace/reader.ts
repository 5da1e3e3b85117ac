/**
 * Reading traces, packet by packet through a window (256 KiB for a regular file, 32 KiB for a
 * pipe or another source), so that a multi-gigabyte file is never held in memory, and a pipe can
 * be read as it comes (bytes already in memory are read in place, with the same packet rules). Events are delivered as objects ({@linkcode Reader.iter})
 * or through one reused view ({@linkcode Reader.iterViews}). The checks and their names are
 * memtrace's; where memtrace would crash, loop or read out of bounds on corrupt input, we raise
 * the same typed error instead. What hostile input can make the reader build is bounded: see the
 * limits below and docs/memtrace.md, "Limits and errors".
 * @module
 */
import { ReadBuf, Underflow, UnsafeInteger } from "./buf.ts";
import { LocationTable } from "./_location_table.ts";
import {
  BACKTRACE_CACHE_BYTES,
  BacktracePrefixError,
  BacktraceReader,
  BacktraceTooLongError,
  type CacheVerifier,
} from "./backtrace_codec.ts";
import { LocationReader, MtfIndexError } from "./location_codec.ts";
import {
  Ev,
  eventTime,
  getPacketHeader,
  HeaderCheckError,
  MAX_PACKET_SIZE,
  type PacketHeader,
  packetPid,
  TIME_MASK,
  TIME_SPAN,
} from "./packet.ts";
import { MemtraceArgumentError, MemtraceFormatError, MemtraceLimitError } from "./errors.ts";
import {
  AllocEvent,
  CollectEvent,
  type DomainId,
  type Event,
  type EventView,
  type Info,
  type Location,
  type LocationCode,
  MemtraceAllocationSource,
  PromoteEvent,
  type Timedelta,
} from "./types.ts";

/** Random-access bytes: a file or an array. */
export interface ByteSource {
  /** Total size in bytes (for a pipe, what `fstat` says: 0). */
  size(): number;
  /** Reads up to `len` bytes at `pos` into `dst[off..]`; returns the count (0 at the end). */
  read(pos: number, dst: Uint8Array, off: number, len: number): number;
  /** Releases the source. */
  close(): void;
}

/** A {@linkcode ByteSource} over bytes in memory. */
export class BytesSource implements ByteSource {
  /** The bytes (not copied): a {@linkcode Reader} decodes them in place. */
  readonly bytes: Uint8Array;
  /** A source over `bytes` (not copied). */
  constructor(bytes: Uint8Array) {
    this.bytes = bytes;
  }
  /** The number of bytes. */
  size(): number {
    return this.bytes.length;
  }
  /** Copies bytes from `pos`. */
  read(pos: number, dst: Uint8Array, off: number, len: number): number {
    const n = Math.max(0, Math.min(len, this.bytes.length - pos));
    dst.set(this.bytes.subarray(pos, pos + n), off);
    return n;
  }
  /** Nothing to release. */
  close(): void {}
}

/** A {@linkcode ByteSource} over an open regular file, read on demand. */
export class FileSource implements ByteSource {
  #at: number;
  readonly #file: Deno.FsFile;
  /** A source over an open file, which {@linkcode close} closes. `position` is the file's
   * current position if known (a file just opened is at 0): the first read from there needs no
   * seek. */
  constructor(file: Deno.FsFile, position = -1) {
    this.#file = file;
    this.#at = position;
  }
  /** The file's current size. */
  size(): number {
    return this.#file.statSync().size;
  }
  /** Reads at `pos` (seeking only when it is not where the last read stopped). */
  read(pos: number, dst: Uint8Array, off: number, len: number): number {
    if (this.#at !== pos) this.#file.seekSync(pos, Deno.SeekMode.Start);
    const n = this.#file.readSync(dst.subarray(off, off + len)) ?? 0;
    this.#at = pos + n;
    return n;
  }
  /** Closes the file. */
  close(): void {
    this.#file.close();
  }
}

/** Something read front to back: a pipe, a FIFO, standard input, a character device. */
export interface ReadableStreamSync {
  /** Reads into `p`; returns the count, or null at the end. */
  readSync(p: Uint8Array): number | null;
  /** Releases the stream. */
  close?(): void;
}

/**
 * A {@linkcode ByteSource} over a stream that cannot seek: reads go forward only (a gap is read
 * and dropped), so a trace can be read from a pipe as it comes, once. Going back (a second
 * {@linkcode Reader.iter}) throws {@linkcode MemtraceArgumentError}.
 */
export class StreamSource implements ByteSource {
  #at = 0;
  #gap: Uint8Array | undefined;
  readonly #stream: ReadableStreamSync;
  readonly #reportedSize: number;
  /** `size` is what {@linkcode size} reports: memtrace prints `fstat`'s size, 0 for a pipe. */
  constructor(stream: ReadableStreamSync, size = 0) {
    this.#stream = stream;
    this.#reportedSize = size;
  }
  /** The size given to the constructor. */
  size(): number {
    return this.#reportedSize;
  }
  /** Reads at `pos`, which may not be before what was read already. */
  read(pos: number, dst: Uint8Array, off: number, len: number): number {
    if (pos < this.#at) {
      throw new MemtraceArgumentError(
        `Reader: cannot go back to byte ${pos} of a stream already read up to byte ${this.#at}`,
      );
    }
    while (this.#at < pos) {
      this.#gap ??= new Uint8Array(1 << 16);
      const n = this.#stream.readSync(
        this.#gap.subarray(0, Math.min(this.#gap.length, pos - this.#at)),
      );
      if (n === null || n <= 0) return 0;
      this.#at += n;
    }
    const n = this.#stream.readSync(dst.subarray(off, off + len)) ?? 0;
    this.#at += n;
    return n;
  }
  /** Closes the stream. */
  close(): void {
    this.#stream.close?.();
  }
}

/** Options of {@linkcode Reader.iter}. */
export interface IterOptions {
  /** Decode backtraces (default true). Without, alloc events have an empty backtrace. */
  parseBacktraces?: boolean;
}

/** Options of {@linkcode Reader.readAll}. */
export interface ReadAllOptions extends IterOptions {
  /** Most backtrace frames all the copied events may hold together (default
   * {@linkcode READ_ALL_MAX_FRAMES}); beyond, {@linkcode MemtraceLimitError}. */
  maxTotalFrames?: number;
}

/** Options of the reader constructors. */
export interface ReaderOptions {
  /** Name used in error messages (the path, for files). */
  name?: string;
  /** Receives memtrace's warnings about skipped packets. Default: `console.error`. */
  onWarning?: (message: string) => void;
  /** Most frames one decoded backtrace may hold (default {@linkcode MAX_BACKTRACE_FRAMES});
   * a longer one raises {@linkcode MemtraceLimitError}. */
  maxBacktraceFrames?: number;
  /** Bytes of the window the source is read through: an integer from
   * {@linkcode MAX_PACKET_SIZE} (32 KiB, the default of streams and other sources) to 2^30
   * ({@linkcode Reader.open} of a regular file: {@linkcode FILE_WINDOW_BYTES}). What is read
   * does not depend on it; a larger window reads a file in fewer calls. Ignored for bytes in
   * memory, which are read in place. */
  windowBytes?: number;
}

/** An iteration started by {@linkcode Reader.iterate}, advanced a few packets at a time (so that
 * a caller can yield to its event loop in between). */
export interface EventIteration {
  /** Reads up to `maxPackets` packets (default: all), delivering their events; returns false
   * once the trace has ended. Throws {@linkcode MemtraceArgumentError} if another iteration of
   * the same reader started since. */
  advance(maxPackets?: number): boolean;
}

/**
 * Default most frames in one backtrace: 2^20. memtrace's writer encodes at most 4,096 bytes of
 * codewords per event, about 349,000 new frames (a 3-byte codeword stands for up to 256 frames),
 * on top of a prefix shared with the previous backtrace; this allows three such encodings
 * stacked, and 100 times the deepest backtrace of the fixtures (9,982 frames).
 */
export const MAX_BACKTRACE_FRAMES = 1 << 20;
/** Default most frames {@linkcode Reader.readAll} copies in all: 2^24 (128 MiB of codes). */
export const READ_ALL_MAX_FRAMES = 1 << 24;
/**
 * Most samples one allocation may have: 2^53 − 1, the largest count a number holds exactly
 * (larger 64-bit vints are refused as `64-bit value out of range`). memtrace's `nsamples` is
 * the OCaml int memprof gives, at most one sample per word of the block and its header (so up to
 * `Max_wosize + 1` = 2^54 on 64 bits), written as a vint and read back with `Int64.to_int`; no
 * bound of memtrace's own lies below this one. An allocation has at least 1 sample.
 */
export const MAX_NSAMPLES: number = Number.MAX_SAFE_INTEGER;
/** The window {@linkcode Reader.open} reads a regular file through: 256 KiB, eight packets (a
 * read of 32 KiB is a system call per packet, and each costs about as much as decoding a few
 * hundred events). Closed readers hand their window on to the next one (at most
 * {@linkcode FREE_WINDOWS} are kept), as domain caches are handed on. */
export const FILE_WINDOW_BYTES = 1 << 18;
/** Windows of closed readers kept for later ones. */
const FREE_WINDOWS = 2;
const freeWindows: Uint8Array[] = [];
/** The window of a closed reader. */
const CLOSED_WINDOW = new Uint8Array(0);

/** A window of `size` bytes, one a closed reader left if there is one. */
function takeWindow(size: number): Uint8Array {
  for (let i = freeWindows.length - 1; i >= 0; i--) {
    if (freeWindows[i].length === size) return freeWindows.splice(i, 1)[0];
  }
  return new Uint8Array(size);
}

/** Domains whose backtraces may be decoded with no condition on the input's size. */
export const FREE_DOMAIN_CACHES = 64;
/** Beyond {@linkcode FREE_DOMAIN_CACHES}, one more domain cache is allowed per this many bytes
 * read: a cache takes 160 KiB, so hostile input cannot make caches outgrow 40 times its size. */
export const BYTES_PER_DOMAIN_CACHE = 4096;

/** What an iteration keeps of each domain. */
class DomainState {
  /** Location decoder, made on the domain's first location definition. */
  locs: LocationReader | null = null;
  /** Backtrace decoder, made on the domain's first decoded backtrace. */
  bt: BacktraceReader | null = null;
  /** Time of the domain's last event (the trace's start before its first). */
  lastTime: number;
  /** The domain. */
  readonly domain: DomainId;
  constructor(domain: DomainId, lastTime: number) {
    this.domain = domain;
    this.lastTime = lastTime;
  }
}

interface IterationState {
  readonly domains: Map<DomainId, DomainState>;
  readonly parse: boolean;
  /** Receives event objects ({@linkcode Reader.iterate}), unless `view` is set. */
  readonly f: (time: Timedelta, ev: Event) => void;
  /** With `view` ({@linkcode Reader.iterateViews}): receives the view, refilled per event. */
  readonly g: (view: EventView) => void;
  readonly view: EventView | null;
  caches: number;
  done: boolean;
}

const NOOP = (): void => {};

const HEADER_UPPER_BOUND = 200;
const TWO32 = 4294967296;
// The event codes, time mask and allocation source the packet loop uses, as constants of this
// module: TurboFan folds a module's own constants, where an imported binding is loaded and checked
// at every use.
const MASK = TIME_MASK, PROMOTE = Ev.Promote, COLLECT = Ev.Collect;
const MINOR = MemtraceAllocationSource.Minor;
const EMPTY_BT = new Float64Array(0);
const EMPTY_PRED = new Uint16Array(0);
const ZERO_VERIFIER_CACHE = new BacktraceReader(0);

/** printf `%08x` of an OCaml int: negative ones print as their 63-bit two's complement. */
export function formatLocationCodeHex(code: LocationCode): string {
  const hex = code >= 0 ? code.toString(16) : BigInt.asUintN(63, BigInt(code)).toString(16);
  return hex.padStart(8, "0");
}

/** What {@linkcode locationLookup} needs of a reader: a {@linkcode Reader} is one. */
export interface LocatedLocations {
  /** The name errors give (the path, for files), if any. */
  readonly fileName: string | undefined;
  /** Byte offset of the event being delivered, during an iteration's callback. */
  eventOffset(): number;
  /** The locations a code stands for, or undefined for a code not defined so far. */
  locationsOf(code: LocationCode): readonly Location[] | undefined;
}

/**
 * The lookup every command that resolves location codes while it reads uses: a code the trace
 * has not defined by the event that uses it is malformed input, {@linkcode MemtraceFormatError}
 * `invalid location code %08x` at the event's offset (memtrace's tools stop with
 * `Invalid_argument` there). Valid during an iteration's callbacks.
 */
export function locationLookup(
  reader: LocatedLocations,
): (code: LocationCode) => readonly Location[] {
  return (code) => {
    const locs = reader.locationsOf(code);
    if (locs === undefined) {
      throw new MemtraceFormatError(
        `invalid location code ${formatLocationCodeHex(code)}`,
        reader.eventOffset(),
        reader.fileName,
      );
    }
    return locs;
  };
}

/**
 * Reads a trace file, stream or byte array.
 *
 * @example Read a trace's events (here a trace written in memory; `Reader.open(path)` for a file)
 * ```ts
 * import { Location, MemorySink, MemtraceAllocationSource, Reader, Writer } from "./mod.ts";
 * import assert from "node:assert/strict";
 *
 * const sink = new MemorySink();
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
 * });
 * const here = [new Location("demo.ml", 3, 2, 20, "Demo.f")];
 * w.putAlloc({ time: 1_700_000_000_000_005, length: 4, nsamples: 1, source: MemtraceAllocationSource.Minor, callstack: [1], decode: () => here });
 * w.close();
 *
 * const r = Reader.fromBytes(sink.bytes());
 * const events = r.readAll({ parseBacktraces: true });
 * r.close();
 * assert.equal(r.info.executableName, "demo");
 * assert.equal(events.length, 1);
 * assert.equal(events[0].time, 5);
 * ```
 */
export class Reader {
  /** The trace's metadata. */
  readonly info: Info;
  readonly #source: ByteSource;
  readonly #locTable = new LocationTable();
  readonly #dataOff: number;
  readonly #name: string | undefined;
  readonly #warn: (message: string) => void;
  readonly #maxFrames: number;
  // The window: win[pos, end) holds file bytes [base + pos, base + end). Bytes in memory are
  // their own window (base 0), read in place; the reader then behaves as if it read them through
  // a window of MAX_PACKET_SIZE bytes (see #advance).
  #win: Uint8Array;
  readonly #inPlace: boolean;
  /** The size of a file when {@linkcode open} opened it, else -1 (see {@linkcode #fill}). */
  readonly #openedSize: number;
  #closed = false;
  #base = 0;
  #pos = 0;
  #end = 0;
  readonly #rb: ReadBuf;
  /** File offset of the event being decoded or delivered. */
  #evOff = 0;
  #current: IterationState | undefined;
  /** The trace's pid, as packet headers hold it: high (signed) and low 32 bits. */
  #pidHi = 0;
  #pidLo = 0;
  // The fields of an allocation decoded by #slowEvent, for #packet.
  #sLength = 0;
  #sNsamples = 0;
  #sSource: MemtraceAllocationSource = MemtraceAllocationSource.Minor;
  #sCommon = 0;
  #sNencoded = 0;

  private constructor(source: ByteSource, options: ReaderOptions, openedSize = -1) {
    this.#source = source;
    this.#inPlace = source instanceof BytesSource;
    this.#openedSize = openedSize;
    const window = options.windowBytes ?? MAX_PACKET_SIZE;
    if (!(Number.isInteger(window) && window >= MAX_PACKET_SIZE && window <= 2 ** 30)) {
      source.close();
      throw new MemtraceArgumentError(
        `Reader: windowBytes must be an integer from ${MAX_PACKET_SIZE} to 2^30, got ${window}`,
      );
    }
    this.#win = source instanceof BytesSource ? source.bytes : takeWindow(window);
    this.#rb = new ReadBuf(this.#win, 0, 0);
    this.#name = options.name;
    this.#warn = options.onWarning ?? ((m) => console.error(m));
    this.#maxFrames = options.maxBacktraceFrames ?? MAX_BACKTRACE_FRAMES;
    try {
      this.#seek(0);
      const b = this.#rb;
      b.pos = 0;
      b.end = Math.min(this.#end, MAX_PACKET_SIZE);
      const h = getPacketHeader(b);
      const headerSize = b.pos;
      b.end = Math.min(this.#end, MAX_PACKET_SIZE, b.pos + Math.max(0, h.contentSize));
      if (b.remaining() < h.contentSize) this.#fail("trace info packet size", b.pos);
      const word = b.getU32();
      const time = eventTime(h, word);
      if (!(h.timeBegin <= time && time <= h.timeEnd)) {
        this.#fail("time in packet bounds", b.pos - 4);
      }
      const code = word >>> 25;
      this.#eventCode(code, b.pos - 4);
      if (code !== Ev.TraceInfo) this.#fail("trace info packet code", b.pos - 4);
      if (time !== h.timeBegin) this.#fail("trace info packet time", b.pos - 4);
      const sampleRate = b.getFloat();
      const wordSize = b.get8();
      const executableName = b.getString();
      const hostName = b.getString();
      const ocamlRuntimeParams = b.getString();
      const pid = b.get64Big();
      const context = h.version >= 2 ? b.getString() : "";
      if (b.remaining() !== 0) this.#fail("trace info packet done", b.pos);
      this.info = {
        sampleRate,
        wordSize,
        executableName,
        hostName,
        ocamlRuntimeParams,
        pid,
        initialDomain: h.domain,
        startTime: h.timeBegin,
        context: context === "" ? undefined : context,
      };
      this.#dataOff = headerSize + h.contentSize;
      this.#pidHi = Number(BigInt.asIntN(32, pid >> 32n));
      this.#pidLo = Number(BigInt.asUintN(32, pid));
    } catch (e) {
      source.close();
      throw this.#translate(e);
    }
  }

  /** Reads from bytes in memory. */
  static fromBytes(bytes: Uint8Array, options: ReaderOptions = {}): Reader {
    return new Reader(new BytesSource(bytes), options);
  }

  /** Opens a trace file; it is read as iteration proceeds, never whole. A path that is not a
   * regular file (a FIFO, `/dev/stdin` on a pipe, a device) is read front to back, once: see
   * {@linkcode StreamSource}. A directory raises `Deno.errors.IsADirectory`. */
  static open(path: string | URL, options: ReaderOptions = {}): Reader {
    const file = Deno.openSync(path, { read: true });
    let source: ByteSource, size: number;
    try {
      const st = file.statSync();
      if (st.isDirectory) throw new Deno.errors.IsADirectory(`${path} is a directory`);
      size = st.size;
      source = st.isFile ? new FileSource(file, 0) : new StreamSource(file, st.size);
    } catch (e) {
      file.close();
      throw e;
    }
    const isFile = source instanceof FileSource;
    const windowBytes = isFile ? FILE_WINDOW_BYTES : MAX_PACKET_SIZE;
    return new Reader(source, { name: String(path), windowBytes, ...options }, isFile ? size : -1);
  }

  /** Reads a stream front to back (standard input, a socket…), once. Its size is reported
   * as 0, as memtrace's `fstat` of a pipe does. */
  static fromStream(stream: ReadableStreamSync, options: ReaderOptions = {}): Reader {
    return new Reader(new StreamSource(stream), options);
  }

  /** Reads from any {@linkcode ByteSource}. */
  static fromSource(source: ByteSource, options: ReaderOptions = {}): Reader {
    return new Reader(source, options);
  }

  /** Size of the trace in bytes (0 for a pipe, as memtrace's `fstat` gives). */
  sizeBytes(): number {
    return this.#source.size();
  }

  /** Releases the file (its locations stay readable). A reader of a file or stream cannot be
   * iterated once closed ({@linkcode MemtraceArgumentError}); its window goes to the next reader
   * opened. */
  close(): void {
    this.#source.close();
    if (this.#inPlace || this.#closed) return;
    this.#closed = true;
    if (freeWindows.length < FREE_WINDOWS) freeWindows.push(this.#win);
    this.#win = CLOSED_WINDOW;
    this.#rb.buf = CLOSED_WINDOW;
  }

  /** Refuses to read once the window was handed on. */
  #checkOpen(): void {
    if (this.#closed) throw new MemtraceArgumentError("Reader: closed");
  }

  /** The name given in error messages (the path for files), if any. */
  get fileName(): string | undefined {
    return this.#name;
  }

  /** The locations a code stands for (known once the events up to its first use were read).
   * Throws {@linkcode MemtraceArgumentError} for a code never defined, as memtrace does, with
   * memtrace's text (`invalid location code %08x`). */
  lookupLocationCode(code: LocationCode): Location[] {
    const locs = this.#locTable.get(code);
    if (locs === undefined) {
      throw new MemtraceArgumentError(`invalid location code ${formatLocationCodeHex(code)}`);
    }
    return locs;
  }

  /** The locations a code stands for, or undefined for a code not defined (so far). */
  locationsOf(code: LocationCode): Location[] | undefined {
    return this.#locTable.get(code);
  }

  /** Byte offset in the file of the event being delivered (valid during an iteration's
   * callback): for errors that concern an event, such as a lookup failing. */
  eventOffset(): number {
    return this.#evOff;
  }

  /** Calls `f` with each event and its time since the trace start, in file order. */
  iter(f: (time: Timedelta, ev: Event) => void, options: IterOptions = {}): void {
    this.iterate(f, options).advance();
  }

  /** Starts an iteration like {@linkcode iter}'s, advanced by the caller a number of packets at
   * a time; starting another iteration ends this one. */
  iterate(f: (time: Timedelta, ev: Event) => void, options: IterOptions = {}): EventIteration {
    return this.#start({ f, g: NOOP, view: null }, options);
  }

  /**
   * Calls `f` with each event in file order, as {@linkcode iter} does, but through one
   * {@linkcode EventView} refilled for every event instead of a new object per event: the
   * fastest way to read a trace, for consumers that copy what they keep (the view, like its
   * backtrace buffer, changes once `f` returns).
   */
  iterViews(f: (view: Readonly<EventView>) => void, options: IterOptions = {}): void {
    this.iterateViews(f, options).advance();
  }

  /** Starts an iteration like {@linkcode iterViews}'s, advanced by the caller a number of
   * packets at a time (see {@linkcode iterate}). */
  iterateViews(f: (view: Readonly<EventView>) => void, options: IterOptions = {}): EventIteration {
    const view: EventView = {
      kind: "alloc",
      time: NaN,
      objId: 0,
      domain: 0,
      length: 0,
      nsamples: 0,
      source: MemtraceAllocationSource.Minor,
      backtraceBuffer: EMPTY_BT,
      backtraceLength: 0,
      commonPrefix: 0,
    };
    return this.#start({ f: NOOP, g: f, view }, options);
  }

  /** Starts an iteration delivering events as `how` says. */
  #start(
    how: Pick<IterationState, "f" | "g" | "view">,
    options: IterOptions,
  ): EventIteration {
    this.#checkOpen();
    const st: IterationState = {
      domains: new Map(),
      parse: options.parseBacktraces ?? true,
      ...how,
      caches: 0,
      done: false,
    };
    this.#current = st;
    this.#seek(this.#dataOff);
    return {
      advance: (maxPackets = Infinity) => {
        if (this.#current !== st) {
          throw new MemtraceArgumentError("Reader: this iteration was ended by a later one");
        }
        return this.#advance(st, maxPackets);
      },
    };
  }

  /** Reads every event into an array (backtraces copied). Convenient for small traces: the
   * copies may hold {@linkcode READ_ALL_MAX_FRAMES} frames in all unless told otherwise. */
  readAll(options: ReadAllOptions = {}): { time: Timedelta; event: Event }[] {
    const out: { time: Timedelta; event: Event }[] = [];
    const max = options.maxTotalFrames ?? READ_ALL_MAX_FRAMES;
    let frames = 0;
    this.iter((time, ev) => {
      if (ev.kind === "alloc") {
        frames += ev.backtraceLength;
        if (frames > max) {
          throw new MemtraceLimitError(
            `readAll: more than ${max} backtrace frames in all (iterate instead)`,
            max,
            this.#evOff,
            this.#name,
          );
        }
        ev = new AllocEvent(
          ev.objId,
          ev.length,
          ev.domain,
          ev.nsamples,
          ev.source,
          ev.backtraceBuffer.slice(0, ev.backtraceLength),
          ev.backtraceLength,
          ev.commonPrefix,
        );
      }
      out.push({ time, event: ev });
    }, options);
    return out;
  }

  /** Reads up to `maxPackets` packets of iteration `it`; false at the end. */
  #advance(it: IterationState, maxPackets: number): boolean {
    if (it.done) return false;
    this.#checkOpen();
    const b = this.#rb;
    for (let n = 0; n < maxPackets; n++) {
      if (this.#end - this.#pos < HEADER_UPPER_BOUND) this.#refill();
      if (this.#end === this.#pos) {
        it.done = true;
        // The events delivered keep the backtrace buffers, never the caches: reuse those.
        for (const st of it.domains.values()) st.bt?.release();
        return false;
      }
      let h: PacketHeader;
      try {
        b.pos = this.#pos;
        b.end = this.#end;
        this.#evOff = this.#base + this.#pos;
        h = getPacketHeader(b);
        this.#pos = b.pos;
        if (h.contentSize < 0) this.#fail("Bad packet size", this.#pos);
        if (this.#end - this.#pos < h.contentSize) this.#refill();
      } catch (e) {
        throw this.#translate(e);
      }
      // What a window of MAX_PACKET_SIZE bytes starting here would hold of the packet.
      const len = Math.min(this.#end - this.#pos, h.contentSize, MAX_PACKET_SIZE);
      const packetEnd = this.#pos + len;
      if (h.pidLo !== this.#pidLo || h.pidHi !== this.#pidHi) {
        this.#warn(
          `skipping bad packet (wrong pid: ${packetPid(h)}, but tracing ${this.info.pid})`,
        );
      } else if (len !== h.contentSize) {
        this.#warn("skipping truncated packet");
      } else {
        try {
          let st = it.domains.get(h.domain);
          if (st === undefined) {
            it.domains.set(h.domain, st = new DomainState(h.domain, this.info.startTime));
          }
          this.#packet(h, this.#pos, packetEnd, it, st);
        } catch (e) {
          throw this.#translate(e);
        }
      }
      this.#pos = packetEnd;
    }
    return true;
  }

  /**
   * Decodes the events of one packet, `win[p, end)`, of domain state `st`, delivering them to
   * the iteration's callback. The hot loop of the reader: event headers, short allocations and
   * collections and promotions with one-byte varints, and backtraces are read inline from the
   * window; every other event goes through {@linkcode #slowEvent}, so that the loop keeps few
   * paths (each first taken after V8 optimised the loop would send it back to the interpreter).
   */
  #packet(h: PacketHeader, p: number, end: number, it: IterationState, st: DomainState): void {
    const win = this.#win, wbase = this.#base;
    this.#rb.end = end;
    const domain = h.domain;
    const parse = it.parse, f = it.f, g = it.g, view = it.view;
    let bt = st.bt;
    if (parse && !checkVerifier(bt, h.verifier)) this.#fail("cache verification", p);
    // The domain's backtrace cache and last backtrace, in locals for the loop.
    let loc = bt?.loc ?? EMPTY_BT, pred = bt?.pred ?? EMPTY_PRED;
    let frames = bt?.buffer ?? EMPTY_BT, nframes = bt?.length ?? 0;
    // An event's time is the packet's start with its low 25 bits replaced, plus one wrap at
    // most: its offset from the start is (low - startLow) mod 2^25, never negative. The checks
    // compare offsets (small integers): past `maxOff`, the time is after the packet's end; the
    // domain's last time is `lastOff` (-1: before the packet's start; 2^25: after any offset).
    const timeBegin = h.timeBegin;
    // Each is an integer from -1 to 2^25, made an int32 (`| 0`) so that the loop compares
    // integers, not doubles.
    const startLow = (timeBegin - Math.floor(timeBegin / TIME_SPAN) * TIME_SPAN) | 0;
    const maxOff = Math.max(-1, Math.min(h.timeEnd - timeBegin, TIME_SPAN)) | 0;
    const sinceStart = timeBegin - this.info.startTime;
    const last = st.lastTime - timeBegin;
    const lastOff0 = (last < 0 ? -1 : last > TIME_SPAN ? TIME_SPAN : last) | 0;
    let lastOff = lastOff0;
    let allocId = h.allocIdBegin;
    while (p < end) {
      const at = p;
      this.#evOff = wbase + at;
      if (end - p < 4) throw new Underflow(p);
      const word = win[p] | (win[p + 1] << 8) | (win[p + 2] << 16) | (win[p + 3] << 24);
      p += 4;
      const off = ((word & MASK) - startLow) & MASK;
      if (off > maxOff) this.#fail("time in packet bounds", at);
      const code = word >>> 25;
      if (code > COLLECT && (code < 101 || code > 116)) {
        this.#fail(`Unknown event code ${code}`, at);
      }
      if (lastOff > off) this.#fail("monotone timestamps", at);
      lastOff = off;
      const time = sinceStart + off;
      let length: number, nsamples: number, src: MemtraceAllocationSource;
      let common: number, nencoded: number, delta: number;
      if (code > 100 && p + 1 < end && (common = win[p]) < 253) {
        // A short allocation: one sample of 1..16 words on the minor heap.
        p++;
        length = code - 100;
        nsamples = 1;
        src = MINOR;
        nencoded = win[p++];
      } else if (
        (code === COLLECT || code === PROMOTE) && p < end && (delta = win[p]) < 253
      ) {
        p++;
        const id = allocId - 1 - delta;
        if (view === null) {
          f(
            time,
            code === COLLECT ? new CollectEvent(id, domain) : new PromoteEvent(id, domain),
          );
        } else {
          view.kind = code === COLLECT ? "collect" : "promote";
          view.time = time;
          view.objId = id;
          view.domain = domain;
          g(view);
        }
        continue;
      } else {
        const q = this.#slowEvent(code, at, p, it, st, allocId, time);
        if (q < 0) {
          p = -1 - q;
          continue;
        }
        p = q;
        length = this.#sLength;
        nsamples = this.#sNsamples;
        src = this.#sSource;
        common = this.#sCommon;
        nencoded = this.#sNencoded;
      }
      let btBuf = EMPTY_BT, btLen = 0;
      if (!parse) p = skipBacktrace(win, p, end, nencoded);
      else {
        // The backtrace: `nencoded` codewords after the first `common` frames of the previous
        // one, decoded into the domain's buffer (see backtrace_codec.ts; inlined here, it is the
        // reader's hottest loop). A prefix longer than the previous backtrace (which was cut)
        // still updates the cache, but the previous backtrace is kept, as memtrace does.
        if (bt === null) {
          bt = this.#newBacktraceReader(st, it);
          loc = bt.loc;
          pred = bt.pred;
          frames = bt.buffer;
          nframes = bt.length;
        }
        if (common < 0) throw new BacktracePrefixError(p);
        const keep = common > nframes;
        let out = keep ? bt.scratch : frames;
        let pos = keep ? 0 : common;
        let prev = 0;
        for (let i = nencoded; i > 0; i--) {
          if (end - p < 2) throw new Underflow(p);
          const codeword = win[p] | (win[p + 1] << 8);
          p += 2;
          const bucket = codeword >>> 2, tag = codeword & 3;
          pred[prev] = bucket;
          prev = bucket;
          if (tag === 3) {
            if (end - p < 8) throw new Underflow(p);
            // readI64, inlined (its checks and error the same).
            const lo = (win[p] | (win[p + 1] << 8) | (win[p + 2] << 16) | (win[p + 3] << 24)) >>> 0;
            const hi = win[p + 4] | (win[p + 5] << 8) | (win[p + 6] << 16) | (win[p + 7] << 24);
            if (hi >= 0x200000 || hi < -0x200000 || (hi === -0x200000 && lo === 0)) {
              throw new UnsafeInteger(p);
            }
            const lit = hi * TWO32 + lo;
            p += 8;
            loc[bucket] = lit;
            if (pos >= out.length) out = bt.grow(out, pos + 1);
            out[pos++] = lit;
            continue;
          }
          let n = tag;
          if (tag === 2) {
            if (p >= end) throw new Underflow(p);
            n = win[p++];
          }
          // The frames pos..stop-1: the bucket's code, then those of its predicted successors
          // (the walk in locals of its own: a tighter loop than one through `prev` and `pos`).
          const stop = pos + n + 1;
          if (stop > out.length) out = bt.grow(out, stop);
          out[pos] = loc[bucket];
          let b = bucket;
          for (let q = pos + 1; q < stop; q++) {
            b = pred[b];
            out[q] = loc[b];
          }
          pos = stop;
          prev = b;
        }
        if (keep) bt.scratch = out;
        else {
          if (out !== frames) frames = bt.buffer = out;
          nframes = bt.length = pos;
        }
        btBuf = frames;
        btLen = nframes;
      }
      const id = allocId++;
      if (view === null) {
        f(time, new AllocEvent(id, length, domain, nsamples, src, btBuf, btLen, common));
      } else {
        view.kind = "alloc";
        view.time = time;
        view.objId = id;
        view.domain = domain;
        view.length = length;
        view.nsamples = nsamples;
        view.source = src;
        view.backtraceBuffer = btBuf;
        view.backtraceLength = btLen;
        view.commonPrefix = common;
        g(view);
      }
    }
    if (lastOff !== lastOff0) st.lastTime = timeBegin + lastOff;
    if (h.allocIdEnd !== allocId) this.#fail("alloc id sync", p);
  }

  /**
   * An event {@linkcode #packet} does not decode inline, its header (at `at`) read: a short
   * allocation, collection or promotion with a multi-byte varint, an allocation of any size
   * (code 0), a location definition, or a second trace info (refused). Reads through the
   * {@linkcode ReadBuf}, whose errors name the position they failed at. A collection or
   * promotion is delivered here, as a location definition is stored: returns -1 - (the position
   * after the event). For an allocation, returns the position of its backtrace, its fields left
   * in `#s*`.
   */
  #slowEvent(
    code: number,
    at: number,
    p: number,
    it: IterationState,
    st: DomainState,
    allocId: number,
    time: number,
  ): number {
    const rb = this.#rb;
    rb.pos = p;
    if (code > 100) {
      this.#sLength = code - 100;
      this.#sNsamples = 1;
      this.#sSource = MemtraceAllocationSource.Minor;
      this.#sCommon = rb.getVint();
      p = rb.pos;
      if (p >= rb.end) throw new Underflow(p);
      this.#sNencoded = this.#win[p];
      return p + 1;
    }
    if (code === Ev.Collect || code === Ev.Promote) {
      const delta = rb.getVint();
      // A negative delta is legal for a collection: a domain may collect an object of a
      // terminated domain.
      if (code === Ev.Promote && delta < 0) this.#fail("promote id sync", at);
      const id = allocId - 1 - delta, domain = st.domain;
      const view = it.view;
      if (view === null) {
        it.f(
          time,
          code === Ev.Collect ? new CollectEvent(id, domain) : new PromoteEvent(id, domain),
        );
      } else {
        view.kind = code === Ev.Collect ? "collect" : "promote";
        view.time = time;
        view.objId = id;
        view.domain = domain;
        it.g(view);
      }
      return -1 - rb.pos;
    }
    if (code === Ev.Alloc) {
      this.#sLength = rb.getVint();
      const nsamplesAt = rb.pos;
      const nsamples = rb.getVint();
      // A count of samples: memtrace reads any vint, so a negative or zero count (a 32-bit
      // form with its sign bit set, say) would pass on to every sum. The 64-bit form is
      // bounded by getVint: at most 2^53 - 1 (MAX_NSAMPLES).
      if (nsamples < 1) this.#fail("nsamples at least 1", nsamplesAt);
      this.#sNsamples = nsamples;
      const source = rb.get8();
      if (source > 2) this.#fail("source", rb.pos - 1);
      this.#sSource = source as MemtraceAllocationSource;
      this.#sCommon = rb.getVint();
      this.#sNencoded = rb.get16();
      return rb.pos;
    }
    if (code === Ev.Location) {
      const lr = st.locs ??= new LocationReader();
      const consistent = lr.get(rb, this.#locTable);
      if (!consistent) this.#fail("consistent location info", at);
      return -1 - rb.pos;
    }
    this.#fail("Multiple trace-info events present", at);
  }

  /** A domain's backtrace decoder with its cache, within the budget of domain caches. */
  #newBacktraceReader(st: DomainState, it: IterationState): BacktraceReader {
    const allowed = FREE_DOMAIN_CACHES + Math.floor(this.#evOff / BYTES_PER_DOMAIN_CACHE);
    if (it.caches >= allowed) {
      throw new MemtraceLimitError(
        `backtrace caches (${BACKTRACE_CACHE_BYTES} bytes each) for more than ${allowed} ` +
          `domains within the first ${this.#evOff} bytes`,
        allowed,
        this.#evOff,
        this.#name,
      );
    }
    it.caches++;
    const bt = new BacktraceReader(this.#maxFrames);
    bt.allocate();
    st.bt = bt;
    return bt;
  }

  /** Makes the window start at file offset `off` (keeping the bytes already in it) and fills
   * it: reading goes on from where it stopped whenever possible, which a stream needs. */
  #seek(off: number): void {
    if (this.#inPlace) {
      this.#pos = Math.min(off, this.#win.length);
      this.#end = this.#win.length;
      return;
    }
    if (off >= this.#base && off <= this.#base + this.#end) this.#pos = off - this.#base;
    else {
      this.#base = off;
      this.#pos = 0;
      this.#end = 0;
    }
    this.#refill();
  }

  /** Moves the unread bytes to the front of the window and reads more after them. */
  #refill(): void {
    if (this.#inPlace) return;
    const len = this.#end - this.#pos;
    this.#win.copyWithin(0, this.#pos, this.#end);
    this.#base += this.#pos;
    this.#pos = 0;
    this.#end = this.#fill(len);
  }

  /** Reads into the window from `off` until it is full or the source ends; returns its end. A
   * read that reaches the size the file had when opened stops there, sparing the read that would
   * find its end (system calls are dear): should the file have grown, the next refill reads on. */
  #fill(off: number): number {
    const win = this.#win;
    while (off < win.length) {
      const n = this.#source.read(this.#base + off, win, off, win.length - off);
      if (n <= 0) break;
      off += n;
      if (this.#base + off === this.#openedSize) break;
    }
    return off;
  }

  /** Refuses an event code memtrace does not know. */
  #eventCode(code: number, at: number): void {
    if (code > Ev.Collect && !(code >= 101 && code <= 116)) {
      this.#fail(`Unknown event code ${code}`, at);
    }
  }

  /** Throws the format error `check` at window position `windowPos`. */
  #fail(check: string, windowPos: number): never {
    throw new MemtraceFormatError(check, this.#base + windowPos, this.#name);
  }

  /** Turns the codec's internal exceptions into the one typed error; others pass unchanged. */
  #translate(e: unknown): unknown {
    const at = (p: number) => this.#base + p;
    if (e instanceof MemtraceFormatError) return e;
    if (e instanceof HeaderCheckError) {
      return new MemtraceFormatError(e.check, at(e.at), this.#name);
    }
    if (e instanceof Underflow) {
      return new MemtraceFormatError("Buffer underflow", at(e.pos), this.#name);
    }
    if (e instanceof UnsafeInteger) {
      return new MemtraceFormatError("64-bit value out of range", at(e.pos), this.#name);
    }
    if (e instanceof MtfIndexError) {
      return new MemtraceFormatError("location table index", at(this.#rb.pos), this.#name);
    }
    if (e instanceof BacktracePrefixError) {
      return new MemtraceFormatError("backtrace common prefix", at(e.pos), this.#name);
    }
    if (e instanceof BacktraceTooLongError) {
      return new MemtraceLimitError(e.message, e.limit, this.#evOff, this.#name);
    }
    return e;
  }
}

/** Bytes of a codeword by its tag (its low two bits): a hit, a hit with one more frame, a hit
 * with a count byte, a new code (8 bytes). */
const CODEWORD_BYTES = new Uint8Array([2, 2, 3, 10]);

/** Steps over a backtrace, `win[p..]`, without decoding it (and without touching any cache);
 * returns the position after it. The loop takes no branch on the tags (which a processor cannot
 * predict); a backtrace that does not fit before `end` is stepped over again with
 * {@linkcode skipBacktraceChecked}, which throws where memtrace's reads fail. */
function skipBacktrace(win: Uint8Array, p: number, end: number, nencoded: number): number {
  const from = p;
  let i = nencoded;
  while (i > 0 && p < end) {
    p += CODEWORD_BYTES[win[p] & 3];
    i--;
  }
  if (i === 0 && p <= end) return p;
  return skipBacktraceChecked(win, from, end, nencoded);
}

/** {@linkcode skipBacktrace}, each read checked as memtrace checks it. */
function skipBacktraceChecked(win: Uint8Array, p: number, end: number, nencoded: number): number {
  for (let i = 0; i < nencoded; i++) {
    if (end - p < 2) throw new Underflow(p);
    const tag = win[p] & 3;
    p += 2;
    if (tag === 2) {
      if (p >= end) throw new Underflow(p);
      p++;
    } else if (tag === 3) {
      if (end - p < 8) throw new Underflow(p);
      p += 8;
    }
  }
  return p;
}

/** A packet's cache verifier against a domain's cache (all zeros before its first backtrace). */
function checkVerifier(bt: BacktraceReader | null, v: CacheVerifier): boolean {
  return (bt ?? ZERO_VERIFIER_CACHE).check(v);
}
