/**
 * Reading traces, packet by packet through a 32 KiB window, so that a multi-gigabyte file is
 * never held in memory. The checks and their names are memtrace's; where memtrace would crash,
 * loop or read out of bounds on corrupt input, we raise the same typed error instead.
 * @module
 */
import { ReadBuf, Underflow, UnsafeInteger } from "./buf.ts";
import { BacktracePrefixError, BacktraceReader } from "./backtrace_codec.ts";
import { LocationReader, MtfIndexError } from "./location_codec.ts";
import {
  Ev,
  eventTime,
  getPacketHeader,
  HeaderCheckError,
  MAX_PACKET_SIZE,
  type PacketHeader,
} from "./packet.ts";
import { MemtraceArgumentError, MemtraceFormatError } from "./errors.ts";
import {
  AllocationSource,
  AllocEvent,
  CollectEvent,
  type DomainId,
  type Event,
  type Info,
  type Location,
  type LocationCode,
  PromoteEvent,
  type Timedelta,
} from "./types.ts";

/** Random-access bytes: a file or an array. */
export interface ByteSource {
  /** Total size in bytes. */
  size(): number;
  /** Reads up to `len` bytes at `pos` into `dst[off..]`; returns the count (0 at the end). */
  read(pos: number, dst: Uint8Array, off: number, len: number): number;
  close(): void;
}

/** A {@linkcode ByteSource} over bytes in memory. */
export class BytesSource implements ByteSource {
  constructor(private readonly bytes: Uint8Array) {}
  size(): number {
    return this.bytes.length;
  }
  read(pos: number, dst: Uint8Array, off: number, len: number): number {
    const n = Math.max(0, Math.min(len, this.bytes.length - pos));
    dst.set(this.bytes.subarray(pos, pos + n), off);
    return n;
  }
  close(): void {}
}

/** A {@linkcode ByteSource} over an open file, read on demand. */
export class FileSource implements ByteSource {
  private at = -1;
  constructor(private readonly file: Deno.FsFile) {}
  size(): number {
    return this.file.statSync().size;
  }
  read(pos: number, dst: Uint8Array, off: number, len: number): number {
    if (this.at !== pos) this.file.seekSync(pos, Deno.SeekMode.Start);
    const n = this.file.readSync(dst.subarray(off, off + len)) ?? 0;
    this.at = pos + n;
    return n;
  }
  close(): void {
    this.file.close();
  }
}

/** Options of {@linkcode Reader.iter}. */
export interface IterOptions {
  /** Decode backtraces (default true). Without, alloc events have an empty backtrace. */
  parseBacktraces?: boolean;
}

/** Options of the reader constructors. */
export interface ReaderOptions {
  /** Name used in error messages (the path, for files). */
  name?: string;
  /** Receives memtrace's warnings about skipped packets. Default: `console.error`. */
  onWarning?: (message: string) => void;
}

interface DomainState {
  locs: LocationReader;
  bt: BacktraceReader;
  lastTime: number;
}

const HEADER_UPPER_BOUND = 200;
const EMPTY_BT = new Float64Array(0);

/** Reads a trace file or byte array. */
export class Reader {
  /** The trace's metadata. */
  readonly info: Info;
  private readonly locTable = new Map<LocationCode, Location[]>();
  private readonly dataOff: number;
  private readonly name: string | undefined;
  private readonly warn: (message: string) => void;
  // The window: win[pos, end) holds file bytes [base + pos, base + end).
  private readonly win = new Uint8Array(MAX_PACKET_SIZE);
  private base = 0;
  private pos = 0;
  private end = 0;
  private readonly rb = new ReadBuf(this.win, 0, 0);

  private constructor(private readonly source: ByteSource, options: ReaderOptions) {
    this.name = options.name;
    this.warn = options.onWarning ?? ((m) => console.error(m));
    try {
      this.seek(0);
      const b = this.rb;
      b.pos = 0;
      b.end = this.end;
      const h = getPacketHeader(b);
      const headerSize = b.pos;
      b.end = Math.min(this.end, b.pos + Math.max(0, h.contentSize));
      if (b.remaining() < h.contentSize) this.fail("trace info packet size", b.pos);
      const word = b.getU32();
      const time = eventTime(h, word);
      if (!(h.timeBegin <= time && time <= h.timeEnd)) {
        this.fail("time in packet bounds", b.pos - 4);
      }
      const code = word >>> 25;
      this.eventCode(code, b.pos - 4);
      if (code !== Ev.TraceInfo) this.fail("trace info packet code", b.pos - 4);
      if (time !== h.timeBegin) this.fail("trace info packet time", b.pos - 4);
      const sampleRate = b.getFloat();
      const wordSize = b.get8();
      const executableName = b.getString();
      const hostName = b.getString();
      const ocamlRuntimeParams = b.getString();
      const pid = b.get64Big();
      const context = h.version >= 2 ? b.getString() : "";
      if (b.remaining() !== 0) this.fail("trace info packet done", b.pos);
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
      this.dataOff = headerSize + h.contentSize;
    } catch (e) {
      source.close();
      throw this.translate(e);
    }
  }

  /** Reads from bytes in memory. */
  static fromBytes(bytes: Uint8Array, options: ReaderOptions = {}): Reader {
    return new Reader(new BytesSource(bytes), options);
  }

  /** Opens a trace file; it is read as iteration proceeds, never whole. */
  static open(path: string | URL, options: ReaderOptions = {}): Reader {
    const file = Deno.openSync(path, { read: true });
    return new Reader(new FileSource(file), { name: String(path), ...options });
  }

  /** Reads from any {@linkcode ByteSource}. */
  static fromSource(source: ByteSource, options: ReaderOptions = {}): Reader {
    return new Reader(source, options);
  }

  /** Size of the trace in bytes. */
  sizeBytes(): number {
    return this.source.size();
  }

  /** Releases the file. */
  close(): void {
    this.source.close();
  }

  /** The locations a code stands for (known once the events up to its first use were read).
   * Throws {@linkcode MemtraceArgumentError} for a code never defined, as memtrace does. */
  lookupLocationCode(code: LocationCode): Location[] {
    const locs = this.locTable.get(code);
    if (locs === undefined) {
      throw new MemtraceArgumentError(
        `invalid location code ${code.toString(16).padStart(8, "0")}`,
      );
    }
    return locs;
  }

  /** Calls `f` with each event and its time since the trace start, in file order. */
  iter(f: (time: Timedelta, ev: Event) => void, options: IterOptions = {}): void {
    const parse = options.parseBacktraces ?? true;
    const domains = new Map<DomainId, DomainState>();
    this.seek(this.dataOff);
    const b = this.rb;
    while (true) {
      if (this.end - this.pos < HEADER_UPPER_BOUND) this.refill();
      if (this.end === this.pos) return;
      let h: PacketHeader;
      try {
        b.pos = this.pos;
        b.end = this.end;
        h = getPacketHeader(b);
        this.pos = b.pos;
        if (h.contentSize < 0) this.fail("Bad packet size", this.pos);
        if (this.end - this.pos < h.contentSize) this.refill();
      } catch (e) {
        throw this.translate(e);
      }
      const len = Math.min(this.end - this.pos, h.contentSize);
      const packetEnd = this.pos + len;
      if (h.pid !== this.info.pid) {
        this.warn(`skipping bad packet (wrong pid: ${h.pid}, but tracing ${this.info.pid})`);
      } else if (len !== h.contentSize) {
        this.warn("skipping truncated packet");
      } else {
        b.pos = this.pos;
        b.end = packetEnd;
        this.packet(h, b, domains, parse, f);
      }
      this.pos = packetEnd;
    }
  }

  /** Reads every event into an array (backtraces copied). Convenient for small traces. */
  readAll(options: IterOptions = {}): { time: Timedelta; event: Event }[] {
    const out: { time: Timedelta; event: Event }[] = [];
    this.iter((time, ev) => {
      if (ev.kind === "alloc") {
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

  private packet(
    h: PacketHeader,
    b: ReadBuf,
    domains: Map<DomainId, DomainState>,
    parse: boolean,
    f: (time: Timedelta, ev: Event) => void,
  ): void {
    const domain = h.domain;
    let st = domains.get(domain);
    if (st === undefined) {
      st = { locs: new LocationReader(), bt: new BacktraceReader(), lastTime: this.info.startTime };
      domains.set(domain, st);
    }
    const bt = st.bt;
    const start = this.info.startTime;
    let allocId = h.allocIdBegin;
    let ev: Event;
    let time = 0;
    if (parse && !bt.check(h.verifier)) this.fail("cache verification", b.pos);
    while (b.pos < b.end) {
      const at = b.pos;
      try {
        const word = b.getU32();
        time = eventTime(h, word);
        if (!(h.timeBegin <= time && time <= h.timeEnd)) this.fail("time in packet bounds", at);
        const code = word >>> 25;
        if (code >= 101 && code <= 116) {
          if (st.lastTime > time) this.fail("monotone timestamps", at);
          st.lastTime = time;
          const common = b.getVint();
          const nencoded = b.get8();
          if (parse) bt.get(b, nencoded, common);
          else bt.skip(b, nencoded);
          ev = new AllocEvent(
            allocId++,
            code - 100,
            domain,
            1,
            AllocationSource.Minor,
            parse ? bt.buffer : EMPTY_BT,
            parse ? bt.length : 0,
            common,
          );
        } else {
          this.eventCode(code, at);
          if (st.lastTime > time) this.fail("monotone timestamps", at);
          st.lastTime = time;
          if (code === Ev.Alloc) {
            const length = b.getVint();
            const nsamples = b.getVint();
            const src = b.get8();
            if (src > 2) this.fail("source", b.pos - 1);
            const common = b.getVint();
            const nencoded = b.get16();
            if (parse) bt.get(b, nencoded, common);
            else bt.skip(b, nencoded);
            ev = new AllocEvent(
              allocId++,
              length,
              domain,
              nsamples,
              src as AllocationSource,
              parse ? bt.buffer : EMPTY_BT,
              parse ? bt.length : 0,
              common,
            );
          } else if (code === Ev.Promote) {
            const delta = b.getVint();
            if (delta < 0) this.fail("promote id sync", at);
            ev = new PromoteEvent(allocId - 1 - delta, domain);
          } else if (code === Ev.Collect) {
            // A negative delta is legal: a domain may collect an object of a terminated domain.
            ev = new CollectEvent(allocId - 1 - b.getVint(), domain);
          } else if (code === Ev.Location) {
            const locs = st.locs.get(b);
            const id = st.locs.code;
            const known = this.locTable.get(id);
            if (known === undefined) this.locTable.set(id, locs);
            else if (!sameLocations(known, locs)) this.fail("consistent location info", at);
            continue;
          } else {
            this.fail("Multiple trace-info events present", at);
          }
        }
      } catch (e) {
        throw this.translate(e);
      }
      f(time - start, ev);
    }
    if (h.allocIdEnd !== allocId) this.fail("alloc id sync", b.pos);
  }

  /** Fills the window from file offset `off`. */
  private seek(off: number): void {
    this.base = off;
    this.pos = 0;
    this.end = this.fill(0);
  }

  /** Moves the unread bytes to the front of the window and reads more after them. */
  private refill(): void {
    const len = this.end - this.pos;
    this.win.copyWithin(0, this.pos, this.end);
    this.base += this.pos;
    this.pos = 0;
    this.end = this.fill(len);
  }

  private fill(off: number): number {
    while (off < this.win.length) {
      const n = this.source.read(this.base + off, this.win, off, this.win.length - off);
      if (n <= 0) break;
      off += n;
    }
    return off;
  }

  private eventCode(code: number, at: number): void {
    if (code > Ev.Collect && !(code >= 101 && code <= 116)) {
      this.fail(`Unknown event code ${code}`, at);
    }
  }

  private fail(check: string, windowPos: number): never {
    throw new MemtraceFormatError(check, this.base + windowPos, this.name);
  }

  /** Turns the codec's internal exceptions into the one typed error; others pass unchanged. */
  private translate(e: unknown): unknown {
    const at = (p: number) => this.base + p;
    if (e instanceof MemtraceFormatError) return e;
    if (e instanceof HeaderCheckError) return new MemtraceFormatError(e.check, at(e.at), this.name);
    if (e instanceof Underflow) {
      return new MemtraceFormatError("Buffer underflow", at(e.pos), this.name);
    }
    if (e instanceof UnsafeInteger) {
      return new MemtraceFormatError("64-bit value out of range", at(e.pos), this.name);
    }
    if (e instanceof MtfIndexError) {
      return new MemtraceFormatError("location table index", at(this.rb.pos), this.name);
    }
    if (e instanceof BacktracePrefixError) {
      return new MemtraceFormatError("backtrace common prefix", at(this.rb.pos), this.name);
    }
    return e;
  }
}

function sameLocations(a: readonly Location[], b: readonly Location[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!a[i].equals(b[i])) return false;
  return true;
}
