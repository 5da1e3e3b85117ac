/**
 * CTF packet headers and event headers.
 *
 * A packet header is: magic, size in bits, begin/end timestamps, flush duration, format version,
 * pid, (v3) domain, cache verifier, first and past-the-last allocation id. An event header is one
 * u32: `code << 25 | (time & 0x1ffffff)`, the time in microseconds relative to the packet start.
 * @module
 */
import type { ReadBuf, WriteBuf } from "./buf.ts";
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

const TIME_MASK = 0x1ffffff;
const TIME_SPAN = 0x2000000;

/** A decoded packet header. */
export interface PacketHeader {
  /** Content bytes after the header (may be negative in a corrupt file). */
  contentSize: number;
  timeBegin: number;
  timeEnd: number;
  allocIdBegin: number;
  allocIdEnd: number;
  pid: bigint;
  version: number;
  domain: number;
  verifier: CacheVerifier;
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

/** Fills in a packet header's size, time span and allocation-id span. */
export function finishPacketHeader(
  b: WriteBuf,
  h: HeaderSlots,
  timeBegin: number,
  timeEnd: number,
  allocBegin: number,
  allocEnd: number,
): void {
  b.update32(h.size, (b.pos * 8) >>> 0);
  b.update64(h.timeBegin, timeBegin);
  b.update64(h.timeEnd, timeEnd);
  b.update32(h.flushDuration, 0);
  b.update64(h.allocBegin, allocBegin);
  b.update64(h.allocEnd, allocEnd);
}

/** Raised by {@linkcode getPacketHeader} with memtrace's name for the failed check. */
export class HeaderCheckError extends Error {
  constructor(readonly check: string, readonly at: number) {
    super(check);
  }
}

/** Reads and checks a packet header (v1, v2 or v3). */
export function getPacketHeader(b: ReadBuf): PacketHeader {
  const start = b.pos;
  const magic = b.getU32();
  const packetSize = b.getI32();
  const timeBegin = b.get64Big();
  const timeEnd = b.get64Big();
  b.getU32(); // flush duration
  const version = b.get16();
  const pid = b.get64Big();
  const domain = version >= 3 ? b.get16() : 0;
  const ix = b.get16();
  const pred = b.get16();
  const value = b.get64Big();
  const allocIdBegin = b.get64Big();
  const allocIdEnd = b.get64Big();
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
  if (timeBegin > timeEnd) throw new HeaderCheckError("Monotone packet timestamps", start);
  if (allocIdBegin > allocIdEnd) throw new HeaderCheckError("Monotone alloc IDs", start);
  const headerSize = b.pos - start;
  return {
    contentSize: Math.trunc(packetSize / 8) - headerSize,
    timeBegin: safe(timeBegin, "packet timestamp out of range", start),
    timeEnd: safe(timeEnd, "packet timestamp out of range", start),
    allocIdBegin: safe(allocIdBegin, "packet alloc ID out of range", start),
    allocIdEnd: safe(allocIdEnd, "packet alloc ID out of range", start),
    pid,
    version,
    domain,
    verifier: { ix, pred, value },
  };
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** Values we cannot hold exactly are refused (memtrace's int64 fields can be anything). */
function safe(v: bigint, check: string, at: number): number {
  if (v > MAX_SAFE || v < -MAX_SAFE) throw new HeaderCheckError(check, at);
  return Number(v);
}

/** Writes an event header. */
export function putEventHeader(b: WriteBuf, code: number, time: number): void {
  // time & mask on a possibly negative safe integer, as int32 arithmetic would give.
  const low = time - Math.floor(time / TIME_SPAN) * TIME_SPAN;
  b.put32(code * TIME_SPAN + low);
}

/** Reconstructs an event's full time from its 25 low bits and the packet's start time. */
export function eventTime(h: PacketHeader, header: number): number {
  const base = Math.floor(h.timeBegin / TIME_SPAN) * TIME_SPAN;
  const startLow = h.timeBegin - base;
  let low = header & TIME_MASK;
  if (low < startLow) low += TIME_SPAN; // the low bits wrapped within the packet
  return base + low;
}
