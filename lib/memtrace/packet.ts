/**
 * CTF packet headers and event headers.
 *
 * A packet header is: magic, size in bits, begin/end timestamps, flush duration, format version,
 * pid, (v3) domain, cache verifier, first and past-the-last allocation id. An event header is one
 * u32: `code << 25 | (time & 0x1ffffff)`, the time in microseconds relative to the packet start.
 * @module
 */
import { type ReadBuf, readI32, readI64, type WriteBuf } from "./buf.ts";
import { type BacktraceWriter, type CacheVerifier, putDummyVerifier } from "./backtrace_codec.ts";

/** The format version this codec writes. Versions 1 to 3 are read; 0 and 4 on are refused. */
export const MEMTRACE_VERSION = 3;
/** Packets are at most 32 KiB, so that each one is a single write. */
export const MAX_PACKET_SIZE = 1 << 15;
/** The magic number opening each packet. */
export const CTF_MAGIC = 0xc1fc1fc1;
/** A packet covers at most 30 s, less than the 25-bit event time field can span. */
export const PACKET_MAX_TIME = 30 * 1_000_000;

/** Event codes. Short allocations (1..16 words, one sample, minor) are codes 101..116. */
export const Ev = {
  TraceInfo: 0,
  Location: 1,
  Alloc: 2,
  Promote: 3,
  Collect: 4,
} as const;

/** The bits of an event header holding the event's time (its low 25 bits). */
export const TIME_MASK = 0x1ffffff;
/** The span of times an event header's time field can tell apart: 2^25 µs. */
export const TIME_SPAN = 0x2000000;

/** A decoded packet header. */
export interface PacketHeader {
  /** Content bytes after the header (may be negative in a corrupt file). */
  contentSize: number;
  timeBegin: number;
  timeEnd: number;
  allocIdBegin: number;
  allocIdEnd: number;
  /** The pid's high and low 32 bits (signed, unsigned): see {@linkcode packetPid}. */
  pidHi: number;
  pidLo: number;
  version: number;
  domain: number;
  verifier: CacheVerifier;
}

/** A packet's pid. */
export function packetPid(h: PacketHeader): bigint {
  return (BigInt(h.pidHi) << 32n) | BigInt(h.pidLo);
}

/** Where the fields known only at the end of a packet go. */
export interface HeaderSlots {
  size: number;
  timeBegin: number;
  timeEnd: number;
  flushDuration: number;
  allocBegin: number;
  allocEnd: number;
}

/** Writes a v3 packet header with placeholders; `cache` undefined writes the dummy verifier. */
export function putPacketHeader(
  b: WriteBuf,
  pid: bigint,
  domain: number,
  cache: BacktraceWriter | undefined,
): HeaderSlots {
  b.put32(CTF_MAGIC);
  const size = b.skip(4);
  const timeBegin = b.skip(8);
  const timeEnd = b.skip(8);
  const flushDuration = b.skip(4);
  b.put16(MEMTRACE_VERSION);
  b.put64Big(pid);
  b.put16(domain);
  if (cache) cache.putVerifier(b);
  else putDummyVerifier(b);
  const allocBegin = b.skip(8);
  const allocEnd = b.skip(8);
  return { size, timeBegin, timeEnd, flushDuration, allocBegin, allocEnd };
}

/** The time span and allocation-id span of a finished packet. */
export interface PacketSpans {
  timeBegin: number;
  timeEnd: number;
  allocBegin: number;
  allocEnd: number;
}

/** Fills in a packet header's size, time span and allocation-id span. */
export function finishPacketHeader(b: WriteBuf, h: HeaderSlots, spans: PacketSpans): void {
  b.update32(h.size, (b.pos * 8) >>> 0);
  b.update64(h.timeBegin, spans.timeBegin);
  b.update64(h.timeEnd, spans.timeEnd);
  b.update32(h.flushDuration, 0);
  b.update64(h.allocBegin, spans.allocBegin);
  b.update64(h.allocEnd, spans.allocEnd);
}

/** Raised by {@linkcode getPacketHeader} with memtrace's name for the failed check. */
export class HeaderCheckError extends Error {
  constructor(readonly check: string, readonly at: number) {
    super(check);
  }
}

/** Reads and checks a packet header (v1, v2 or v3). Its 64-bit fields are read as pairs of
 * 32-bit halves: compared as such, and refused unless they are safe integers. */
export function getPacketHeader(b: ReadBuf): PacketHeader {
  const start = b.pos;
  const buf = b.buf;
  const magic = b.getU32();
  const packetSize = b.getI32();
  const tbAt = b.pos;
  b.skip(8); // time begin
  b.skip(8); // time end
  b.skip(4); // flush duration
  const version = b.get16();
  const pidAt = b.pos;
  b.skip(8);
  const domain = version >= 3 ? b.get16() : 0;
  const ix = b.get16();
  const pred = b.get16();
  const valueAt = b.pos;
  b.skip(8); // verifier value
  const allocAt = b.pos;
  b.skip(8); // first alloc id
  b.skip(8); // past-the-last alloc id
  if (magic !== CTF_MAGIC) throw new HeaderCheckError("Not a CTF packet", start);
  // memtrace a88470c only refuses versions above its own; its tagged releases (v0.1 to v0.2.3)
  // refused every version but v1 and v2, the pre-release version 0 included, with this message.
  // Version 0 traces predate the trace-info event, so reading one as v1 would be wrong.
  if (version > MEMTRACE_VERSION || version === 0) {
    const v3 = (n: number) => String(n).padStart(3, "0");
    throw new HeaderCheckError(
      `trace format v${v3(version)}, but expected v${v3(MEMTRACE_VERSION)}`,
      start,
    );
  }
  if (packetSize < 0) throw new HeaderCheckError("Bad packet size", start);
  if (greater64(buf, tbAt, tbAt + 8)) {
    throw new HeaderCheckError("Monotone packet timestamps", start);
  }
  if (greater64(buf, allocAt, allocAt + 8)) {
    throw new HeaderCheckError("Monotone alloc IDs", start);
  }
  const headerSize = b.pos - start;
  const tsRange = "packet timestamp out of range", idRange = "packet alloc ID out of range";
  return {
    contentSize: Math.trunc(packetSize / 8) - headerSize,
    timeBegin: safe64(buf, tbAt, tsRange, start),
    timeEnd: safe64(buf, tbAt + 8, tsRange, start),
    allocIdBegin: safe64(buf, allocAt, idRange, start),
    allocIdEnd: safe64(buf, allocAt + 8, idRange, start),
    pidHi: readI32(buf, pidAt + 4),
    pidLo: readI32(buf, pidAt) >>> 0,
    version,
    domain,
    verifier: { ix, pred, value: safeOrNaN(buf, valueAt) },
  };
}

/** Whether the int64 at `b[p..]` is greater than the one at `b[q..]`. */
function greater64(b: Uint8Array, p: number, q: number): boolean {
  const hp = readI32(b, p + 4), hq = readI32(b, q + 4);
  return hp > hq || (hp === hq && readI32(b, p) >>> 0 > readI32(b, q) >>> 0);
}

/** The int64 at `b[p..]`, refused with `check` unless within ±(2^53−1) (memtrace's int64
 * fields can be anything; values we cannot hold exactly are refused). */
function safe64(b: Uint8Array, p: number, check: string, at: number): number {
  const v = safeOrNaN(b, p);
  if (v !== v) throw new HeaderCheckError(check, at);
  return v;
}

/** The int64 at `b[p..]` as a number, or NaN unless within ±(2^53−1). */
function safeOrNaN(b: Uint8Array, p: number): number {
  try {
    return readI64(b, p);
  } catch {
    return NaN;
  }
}

/** Writes an event header. */
export function putEventHeader(b: WriteBuf, code: number, time: number): void {
  // The low 25 bits of the time (for a negative one, of its two's complement): `&` takes any
  // integer modulo 2^32 first, which keeps them.
  if (Number.isInteger(time)) b.put32((code << 25) | (time & TIME_MASK));
  else b.put32(code * TIME_SPAN + (time - Math.floor(time / TIME_SPAN) * TIME_SPAN));
}

/** Reconstructs an event's full time from its 25 low bits and the packet's start time. */
export function eventTime(h: PacketHeader, header: number): number {
  const base = Math.floor(h.timeBegin / TIME_SPAN) * TIME_SPAN;
  const startLow = h.timeBegin - base;
  let low = header & TIME_MASK;
  if (low < startLow) low += TIME_SPAN; // the low bits wrapped within the packet
  return base + low;
}
