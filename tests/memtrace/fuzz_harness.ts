/**
 * Structure-aware fuzzing of the memtrace reader, dump and copy, shared by the in-test campaign
 * (fuzz_campaign_test.ts) and the long campaign (`deno task fuzz`).
 *
 * The seeds are small traces: made here with the writer (several domains, shared backtrace
 * prefixes, deep recursion, many file and function names, v1 and v2 downgrades) and the first
 * packets of real fixtures. Each seed is parsed once into packets and events, so that mutations
 * can aim at fields: packet header fields, location definitions (codes, counts, move-to-front
 * indices, strings, long Latin-1 strings), backtrace prefixes, lengths and codewords, events
 * repeated (amplification), packets spliced from other seeds, duplicated or moved, domain ids
 * (including many empty packets of distinct domains), besides plain bit flips and truncations.
 *
 * Every case is read four ways — iterate with backtraces, dump (with an output budget), copy
 * (and read the copy back), iterate without backtraces — and must end cleanly or with
 * MemtraceFormatError (MemtraceLimitError included); anything else is an escape. Bounds are
 * asserted per case: events at most one per 4 input bytes, frames per backtrace within the
 * reader's limit, dump text within its budget, copy output within COPY_BYTES_PER_INPUT_BYTE
 * times the input.
 * @module
 */
import { Rng, seedByWeight } from "../prng.ts";
import {
  AllocationSource,
  dumpTraceTo,
  type Info,
  Location,
  type LocationCode,
  MemorySink,
  MemtraceFormatError,
  MemtraceLimitError,
  Reader,
  TraceCopier,
  Writer,
} from "../../lib/memtrace/mod.ts";
import edge from "../fixtures/memtrace/edge_writer_api.ctf" with { type: "bytes" };
import single from "../fixtures/memtrace/single_1e-4.ctf" with { type: "bytes" };
import multi from "../fixtures/memtrace/multi_mdtrace_3e-4.renumbered.ctf" with {
  type: "bytes",
};
import listsV1 from "../fixtures/memtrace/lists_and_sets_v1_e8e7dbe.ctf" with {
  type: "bytes",
};
import ocamlopt from "../fixtures/memtrace/ocamlopt.ctf" with { type: "bytes" };

// ---------------------------------------------------------------------------------------------
// Limits used by the campaign (smaller than the defaults, so that each case stays fast).

/** Frames per backtrace the fuzzed reader accepts. */
export const FUZZ_MAX_FRAMES = 1 << 14;
/** Dump budget: this many characters plus {@linkcode FUZZ_DUMP_CHARS_PER_BYTE} per input byte. */
export const FUZZ_DUMP_BASE = 1 << 16;
/** See {@linkcode FUZZ_DUMP_BASE}. */
export const FUZZ_DUMP_CHARS_PER_BYTE = 256;
/** What a copy may write, per input byte, plus {@linkcode COPY_BASE_BYTES}: the writer cuts
 * each backtrace at 4 KiB and each location list at 4 KiB, while a hostile event can stand for
 * them in a few bytes. */
export const COPY_BYTES_PER_INPUT_BYTE = 2048;
/** See {@linkcode COPY_BYTES_PER_INPUT_BYTE}. */
export const COPY_BASE_BYTES = 1 << 16;

// ---------------------------------------------------------------------------------------------
// Seeds.

const INFO: Info = {
  sampleRate: 1e-3,
  wordSize: 64,
  executableName: "fuzz.exe",
  hostName: "host",
  ocamlRuntimeParams: "v=0x400",
  pid: 4242n,
  initialDomain: 0,
  startTime: 1_700_000_000_000_000,
  context: "fuzz",
};

const FILES = Array.from({ length: 40 }, (_, i) => `src/dir${i % 7}/file_${i}.ml`);

/** Locations of a code: 0 to 3 inlined frames over 40 files and 50 function names. */
function locationsOf(code: LocationCode): Location[] {
  const n = code % 11 === 0 ? 0 : 1 + (code % 3);
  const out: Location[] = [];
  for (let i = 0; i < n; i++) {
    const k = code * 7 + i;
    out.push(
      new Location(FILES[k % 40], k % 5000, k % 80, 80 + (k % 900), `M${k % 50}.f${k % 13}`),
    );
  }
  return out;
}

/** Several domains, backtraces sharing prefixes, promotions and collections, several packets. */
function multiDomainTrace(): Uint8Array {
  const sink = new MemorySink();
  const w0 = Writer.create(sink, INFO, { idsPerChunk: 40 });
  const writers = [w0, w0.forDomain(1), w0.forDomain(3)];
  const rng = new Rng(0xbeef);
  let t = INFO.startTime;
  const live: [number, number][] = [];
  for (let i = 0; i < 60; i++) {
    const d = i % 3;
    const w = writers[d];
    t += rng.int(2000);
    const depth = 2 + rng.int(25);
    const stack: number[] = [];
    for (let k = 0; k < depth; k++) {
      stack.push(1000 * (d + 1) + ((k * 37 + (k > 10 ? i : 0)) % 300));
    }
    const len = rng.pick([1, 2, 5, 16, 17, 300, 70000]);
    const src = rng.pick([0, 0, 0, 1, 2]) as AllocationSource;
    const id = w.putAlloc({
      time: t,
      length: len,
      nsamples: 1 + (src === 0 ? 0 : rng.int(3)),
      source: src,
      callstack: stack,
      decode: locationsOf,
    });
    live.push([d, id]);
    if (rng.chance(0.3) && live.length > 0) {
      const [ld, lid] = live[rng.int(live.length)];
      if (ld === d) w.putPromote(t, lid);
    }
    if (rng.chance(0.3) && live.length > 2) {
      const [ld, lid] = live.splice(rng.int(live.length), 1)[0];
      if (ld === d) w.putCollect(t, lid);
    }
    if (i % 25 === 24) w.flush();
  }
  for (const w of writers) w.flush();
  return sink.bytes().slice();
}

/** Deep recursion: 300-frame backtraces of one repeated code, cut at different depths. */
function deepTrace(): Uint8Array {
  const sink = new MemorySink();
  const w = Writer.create(sink, { ...INFO, context: undefined });
  let t = INFO.startTime;
  for (let i = 0; i < 12; i++) {
    const stack = [7000 + i];
    for (let k = 0; k < 150 + 13 * i; k++) stack.push(k % 2 === 0 ? 42 : 43);
    stack.push(1);
    t += 10;
    w.putAlloc({
      time: t,
      length: 3,
      nsamples: 1,
      source: AllocationSource.Minor,
      callstack: stack,
      decode: locationsOf,
    });
  }
  w.flush();
  return sink.bytes().slice();
}

/** Many distinct file and function names: move-to-front tables fill and evict. */
function namesTrace(): Uint8Array {
  const sink = new MemorySink();
  const w = Writer.create(sink, INFO);
  let t = INFO.startTime;
  const locs = (c: LocationCode) => [
    new Location(`f${c % 45}.ml`, c, 1, 2, `d${c % 37}`),
    new Location(`g${c % 33}.ml`, c + 1, 3, 4, `e${c % 41}`),
  ];
  for (let i = 0; i < 60; i++) {
    t += 1;
    w.putAlloc({
      time: t,
      length: 20,
      nsamples: 2,
      source: AllocationSource.Major,
      callstack: [i + 1, 500 + (i % 7), 900],
      decode: locs,
    });
  }
  w.flush();
  return sink.bytes().slice();
}

/** v3 packets of a well-formed trace: offset and size. */
function packetBounds(b: Uint8Array): { off: number; size: number }[] {
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const out: { off: number; size: number }[] = [];
  for (let off = 0; off + 8 <= b.length;) {
    const size = v.getUint32(off + 4, true) / 8;
    if (size < 66 || off + size > b.length) break;
    out.push({ off, size });
    off += size;
  }
  return out;
}

/** A v3 single-domain trace rewritten in format v2 (no domain field in packet headers) or v1
 * (no context in the trace info either). */
export function downgrade(v3: Uint8Array, version: 1 | 2): Uint8Array {
  const parts: Uint8Array[] = [];
  const pk = packetBounds(v3);
  for (const [i, p] of pk.entries()) {
    let body = v3.slice(p.off + 68, p.off + p.size);
    if (i === 0 && version === 1) {
      // Drop the context string: the info event's last field, after the event header, the
      // sample rate, the word size, three strings and the pid.
      let at = 4 + 8 + 1;
      for (let k = 0; k < 3; k++) at = body.indexOf(0, at) + 1;
      body = body.slice(0, at + 8);
    }
    const h = new Uint8Array(66);
    h.set(v3.subarray(p.off, p.off + 38));
    h.set(v3.subarray(p.off + 40, p.off + 68), 38);
    const v = new DataView(h.buffer);
    v.setUint32(4, (66 + body.length) * 8, true);
    v.setUint16(28, version, true);
    parts.push(h, body);
  }
  return concat(...parts);
}

/** The first packets of a real trace, up to about `bytes` bytes (whole packets). */
function firstPackets(b: Uint8Array, bytes: number): Uint8Array {
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  let off = 0;
  while (off + 8 <= b.length) {
    const size = v.getUint32(off + 4, true) / 8;
    if (off + size > bytes && off > 0) break;
    off += size;
  }
  return b.slice(0, off);
}

/** The bytes of `parts`, one after the other. */
export function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The structure of a seed.

/** An event of a parsed packet, with the offsets mutators aim at. */
export interface ParsedEvent {
  off: number;
  end: number;
  code: number;
  /** Alloc events: offset of the common-prefix vint, of nencoded and of the codewords. */
  prefixAt?: number;
  nencodedAt?: number;
  nencodedWidth?: 1 | 2;
  codewords?: number[];
  /** Location events: offset of the code, of the count, of each location's 6 bytes. */
  codeAt?: number;
  countAt?: number;
  locAt?: number[];
  /** Offsets of NUL-terminated strings in a location event (start offsets). */
  strings?: number[];
}

/** A parsed packet. */
export interface ParsedPacket {
  off: number;
  size: number;
  headerSize: number;
  version: number;
  events: ParsedEvent[];
}

/** A seed trace and its structure. */
export interface Seed {
  name: string;
  bytes: Uint8Array;
  packets: ParsedPacket[];
  /** Relative share of the cases made from this seed. */
  weight: number;
}

function vintWidth(b: Uint8Array, at: number): number {
  const c = b[at];
  return c < 253 ? 1 : c === 253 ? 3 : c === 254 ? 5 : 9;
}

function cstringEnd(b: Uint8Array, at: number): number {
  let i = at;
  while (b[i] !== 0) i++;
  return i + 1;
}

/** Parses a well-formed trace into packets and events. */
export function parseTrace(b: Uint8Array): ParsedPacket[] {
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const out: ParsedPacket[] = [];
  for (let off = 0; off + 8 <= b.length;) {
    const size = v.getUint32(off + 4, true) / 8;
    const version = v.getUint16(off + 28, true);
    const headerSize = version >= 3 ? 68 : 66;
    const events: ParsedEvent[] = [];
    let p = off + headerSize;
    const end = off + size;
    if (out.length > 0) {
      while (p < end) {
        const start = p;
        const code = v.getUint32(p, true) >>> 25;
        p += 4;
        const ev: ParsedEvent = { off: start, end: 0, code };
        if (code === 1) {
          ev.codeAt = p;
          p += 8;
          ev.countAt = p;
          const n = b[p++];
          ev.locAt = [];
          ev.strings = [];
          for (let i = 0; i < n; i++) {
            ev.locAt.push(p);
            const high = v.getUint16(p + 4, true);
            p += 6;
            if (((high >>> 6) & 31) === 31) {
              ev.strings.push(p);
              p = cstringEnd(b, p);
            }
            if (((high >>> 11) & 31) === 31) {
              ev.strings.push(p);
              p = cstringEnd(b, p);
            }
          }
        } else if (code === 2 || (code >= 101 && code <= 116)) {
          if (code === 2) {
            p += vintWidth(b, p);
            p += vintWidth(b, p);
            p += 1;
          }
          ev.prefixAt = p;
          p += vintWidth(b, p);
          ev.nencodedAt = p;
          ev.nencodedWidth = code === 2 ? 2 : 1;
          const n = code === 2 ? v.getUint16(p, true) : b[p];
          p += ev.nencodedWidth;
          ev.codewords = [];
          for (let i = 0; i < n; i++) {
            ev.codewords.push(p);
            const tag = v.getUint16(p, true) & 3;
            p += 2 + (tag === 3 ? 8 : tag === 2 ? 1 : 0);
          }
        } else {
          p += vintWidth(b, p);
        }
        ev.end = p;
        events.push(ev);
      }
    }
    out.push({ off, size, headerSize, version, events });
    off += size;
  }
  return out;
}

let seedCache: Seed[] | undefined;

/** The seed traces (made once). */
export function seeds(): Seed[] {
  if (seedCache !== undefined) return seedCache;
  const names = namesTrace();
  const made: [string, Uint8Array, number][] = [
    ["edge_writer_api.ctf", edge, 10],
    ["multi-domain", multiDomainTrace(), 12],
    ["deep", deepTrace(), 10],
    ["names", names, 8],
    ["names-v2", downgrade(names, 2), 4],
    ["names-v1", downgrade(names, 1), 4],
    ["ocamlopt.ctf (first 5 packets)", firstPackets(ocamlopt, 15_200), 4],
    ["single_1e-4.ctf (first 3 packets)", firstPackets(single, 32_000), 2],
    ["multi_mdtrace (first 5 packets)", firstPackets(multi, 28_000), 2],
    ["lists_and_sets_v1_e8e7dbe.ctf", listsV1, 0.2],
  ];
  seedCache = made.map(([name, bytes, weight]) => ({
    name,
    bytes,
    packets: parseTrace(bytes),
    weight,
  }));
  return seedCache;
}

/** The seed of case `index`: drawn by weight, determined by (campaign seed, index). */
export function seedFor(campaignSeed: number, index: number): Seed {
  return seedByWeight(seeds(), campaignSeed, index);
}

// ---------------------------------------------------------------------------------------------
// Mutations.

/** A mutable copy of a trace with helpers that keep packet sizes consistent. */
class Draft {
  bytes: Uint8Array;
  constructor(bytes: Uint8Array) {
    this.bytes = bytes.slice();
  }
  view(): DataView {
    return new DataView(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength);
  }
  set(at: number, value: Uint8Array): void {
    if (at >= this.bytes.length) return;
    this.bytes.set(value.subarray(0, Math.min(value.length, this.bytes.length - at)), at);
  }
  /** Inserts `data` at `at`, inside the packet starting at `packetOff`, whose size grows. */
  insert(packetOff: number, at: number, data: Uint8Array, fixSize = true): void {
    this.bytes = concat(this.bytes.subarray(0, at), data, this.bytes.subarray(at));
    if (fixSize) this.grow(packetOff, data.length);
  }
  /** Removes [at, at + len) from the packet at `packetOff`. */
  remove(packetOff: number, at: number, len: number, fixSize = true): void {
    this.bytes = concat(this.bytes.subarray(0, at), this.bytes.subarray(at + len));
    if (fixSize) this.grow(packetOff, -len);
  }
  grow(packetOff: number, delta: number): void {
    const v = this.view();
    if (packetOff + 8 > this.bytes.length) return;
    v.setUint32(packetOff + 4, (v.getUint32(packetOff + 4, true) + delta * 8) >>> 0, true);
  }
}

const le = (width: number, value: bigint): Uint8Array => {
  const out = new Uint8Array(width);
  let x = BigInt.asUintN(width * 8, value);
  for (let i = 0; i < width; i++) {
    out[i] = Number(x & 0xffn);
    x >>= 8n;
  }
  return out;
};

/** Interesting values for an integer field of `width` bytes holding `current`. */
function interesting(rng: Rng, width: number, current: bigint): bigint {
  const bits = BigInt(width * 8);
  const max = (1n << bits) - 1n;
  const choices: bigint[] = [
    0n,
    1n,
    current + 1n,
    current - 1n,
    current * 2n,
    max,
    max >> 1n,
    1n << (bits - 1n),
    BigInt(rng.int(256)),
    BigInt(rng.int(2 ** 31)),
  ];
  if (width === 8) choices.push(1n << 53n, (1n << 53n) - 1n, -(1n << 53n), 1n << 62n);
  if (width === 2) choices.push(0xfffen, 0x7fffn, 4n, 3n, 2n);
  return BigInt.asUintN(Number(bits), rng.pick(choices));
}

/** Offsets and widths of the fields of a packet header (v3 layout; v1/v2 lack the domain). */
function headerFields(version: number): [string, number, number][] {
  const d = version >= 3 ? 2 : 0;
  return [
    ["magic", 0, 4],
    ["size", 4, 4],
    ["time begin", 8, 8],
    ["time end", 16, 8],
    ["flush", 24, 4],
    ["version", 28, 2],
    ["pid", 30, 8],
    ...(d ? [["domain", 38, 2] as [string, number, number]] : []),
    ["verifier ix", 38 + d, 2],
    ["verifier pred", 40 + d, 2],
    ["verifier value", 42 + d, 8],
    ["alloc begin", 50 + d, 8],
    ["alloc end", 58 + d, 8],
  ];
}

/** The little-endian unsigned value of `width` bytes at `at`. */
function fieldValue(b: Uint8Array, at: number, width: number): bigint {
  let x = 0n;
  for (let i = width - 1; i >= 0; i--) x = (x << 8n) | BigInt(b[at + i] ?? 0);
  return x;
}

type Mutator = (rng: Rng, d: Draft, seed: Seed, all: readonly Seed[]) => string;

const eventPackets = (s: Seed) => s.packets.slice(1).filter((p) => p.events.length > 0);
const eventsWhere = (s: Seed, keep: (e: ParsedEvent) => boolean) =>
  s.packets.flatMap((p) => p.events.filter(keep).map((e): [ParsedPacket, ParsedEvent] => [p, e]));
const allocEvents = (s: Seed) => eventsWhere(s, (e) => e.codewords !== undefined);
const locationEvents = (s: Seed) => eventsWhere(s, (e) => e.locAt !== undefined);

const MUTATORS: [number, string, Mutator][] = [
  [6, "header field", (rng, d, s) => {
    const p = rng.pick(s.packets);
    const [name, off, width] = rng.pick(headerFields(p.version));
    const cur = fieldValue(d.bytes, p.off + off, width);
    const val = name === "version"
      ? BigInt(rng.pick([0, 1, 2, 3, 4, 0xffff]))
      : interesting(rng, width, cur);
    d.set(p.off + off, le(width, val));
    return `${name} of packet at ${p.off} = ${val}`;
  }],
  [3, "domain id", (rng, d, s) => {
    const v3 = s.packets.filter((p) => p.version >= 3);
    if (v3.length === 0) return "no v3 packet";
    const p = rng.pick(v3);
    const val = rng.pick([0, 1, 2, 3, 7, 0xffff, rng.int(65536)]);
    if (rng.chance(0.5)) {
      d.set(p.off + 38, le(2, BigInt(val)));
      return `domain of packet at ${p.off} = ${val}`;
    }
    // Every packet of that domain.
    const old = d.view().getUint16(p.off + 38, true);
    for (const q of v3) {
      if (d.view().getUint16(q.off + 38, true) === old) d.set(q.off + 38, le(2, BigInt(val)));
    }
    return `domain ${old} renamed ${val}`;
  }],
  [3, "many domains", (rng, d, s) => {
    // Empty packets (or packets of one event) with distinct domain ids, before the end.
    const last = s.packets[s.packets.length - 1];
    if (last.version < 3) return "v1/v2 trace";
    const n = rng.pick([10, 100, 1000, 3000]);
    const withEvent = rng.chance(0.5) ? allocEvents(s).at(-1) : undefined;
    const body = withEvent ? d.bytes.slice(withEvent[1].off, withEvent[1].end) : new Uint8Array(0);
    const h = d.bytes.slice(last.off, last.off + 68);
    const hv = new DataView(h.buffer);
    hv.setUint32(4, (68 + body.length) * 8, true);
    const t = hv.getBigInt64(16, true);
    hv.setBigInt64(8, t, true);
    const ids = hv.getBigInt64(60, true);
    hv.setBigInt64(52, ids, true);
    hv.setBigInt64(60, ids + (withEvent ? 1n : 0n), true);
    hv.setUint16(40, 0xffff, true); // dummy verifier
    const parts: Uint8Array[] = [];
    for (let i = 0; i < n; i++) {
      hv.setUint16(38, (i * 7919 + 1) & 0xffff, true);
      parts.push(h.slice(), body);
    }
    d.bytes = concat(d.bytes, ...parts);
    return `${n} packets of distinct domains${withEvent ? " with one event" : ""}`;
  }],
  [5, "location field", (rng, d, s) => {
    const le_ = locationEvents(s);
    if (le_.length === 0) return "no location";
    const [p, e] = rng.pick(le_);
    const v = d.view();
    switch (rng.int(6)) {
      case 0: {
        const code = rng.pick([0n, -5n, 1n << 53n, (1n << 53n) - 1n, BigInt(rng.int(5000)), 42n]);
        d.set(e.codeAt!, le(8, code));
        return `location code at ${e.codeAt} = ${code}`;
      }
      case 1: {
        const n = rng.pick([0, 1, 255, d.bytes[e.countAt!] + 1, d.bytes[e.countAt!] - 1]);
        d.set(e.countAt!, le(1, BigInt(n)));
        return `location count at ${e.countAt} = ${n}`;
      }
      case 2: {
        if (e.locAt!.length === 0) return "no entry";
        const at = rng.pick(e.locAt!);
        const high = v.getUint16(at + 4, true);
        const fi = rng.pick([0, 1, 30, 31, rng.int(32)]),
          di = rng.pick([0, 1, 30, 31, rng.int(32)]);
        const nh = (high & 0x3f) | (fi << 6) | (di << 11);
        d.set(at + 4, le(2, BigInt(nh)));
        return `mtf indices at ${at} = ${fi},${di}`;
      }
      case 3: {
        if (e.locAt!.length === 0) return "no entry";
        const at = rng.pick(e.locAt!);
        d.set(at, le(4, BigInt(rng.int(2 ** 32))));
        return `line/start/end bits at ${at}`;
      }
      case 4: {
        // A long string: Latin-1 bytes (invalid UTF-8), the packet grows.
        if (e.strings!.length === 0) return "no string";
        const at = rng.pick(e.strings!);
        const n = rng.pick([100, 1000, 4000, 12000]);
        const fill = new Uint8Array(n).fill(rng.pick([0xe9, 0x41, 0xff, 0xc3]));
        d.insert(p.off, at, fill);
        return `${n} bytes into the string at ${at}`;
      }
      default: {
        if (e.strings!.length === 0) return "no string";
        const at = rng.pick(e.strings!);
        d.set(at, le(1, BigInt(rng.pick([0, 0xff, 0x80, 0xc0]))));
        return `string byte at ${at}`;
      }
    }
  }],
  [6, "backtrace field", (rng, d, s) => {
    const ae = allocEvents(s);
    if (ae.length === 0) return "no alloc";
    const [, e] = rng.pick(ae);
    const v = d.view();
    switch (rng.int(5)) {
      case 0: {
        // The common prefix: a vint, rewritten in place with the same width when possible.
        const at = e.prefixAt!;
        const w = d.bytes[at] < 253 ? 1 : d.bytes[at] === 253 ? 3 : d.bytes[at] === 254 ? 5 : 9;
        const val = rng.pick([0, 1, 250, 252, 65535, 70000, 1 << 30, -1, -100]);
        if (w === 1) d.set(at, le(1, BigInt(Math.max(0, Math.min(252, val)))));
        else if (w === 3) d.set(at + 1, le(2, BigInt(val)));
        else if (w === 5) d.set(at + 1, le(4, BigInt(val)));
        else d.set(at + 1, le(8, BigInt(val)));
        return `common prefix at ${at} = ${val} (width ${w})`;
      }
      case 1: {
        const at = e.nencodedAt!;
        const w = e.nencodedWidth!;
        const n = e.codewords!.length;
        const val = rng.pick([0, n + 1, n - 1, w === 1 ? 255 : 65535, w === 1 ? 200 : 30000]);
        d.set(at, le(w, BigInt(Math.max(0, val))));
        return `nencoded at ${at} = ${val}`;
      }
      case 2: {
        if (e.codewords!.length === 0) return "no codeword";
        const at = rng.pick(e.codewords!);
        const cw = v.getUint16(at, true);
        const val = rng.pick([
          (cw & ~3) | rng.int(4),
          (rng.int(16384) << 2) | (cw & 3),
          cw ^ 1,
          0xffff,
        ]);
        d.set(at, le(2, BigInt(val)));
        return `codeword at ${at} = ${val}`;
      }
      case 3: {
        // A hit-with-count codeword's count byte.
        const hits = e.codewords!.filter((at) => (v.getUint16(at, true) & 3) === 2);
        if (hits.length === 0) return "no counted hit";
        const at = rng.pick(hits);
        d.set(at + 2, le(1, BigInt(rng.pick([0, 1, 254, 255]))));
        return `hit count at ${at + 2}`;
      }
      default: {
        const lits = e.codewords!.filter((at) => (v.getUint16(at, true) & 3) === 3);
        if (lits.length === 0) return "no literal";
        const at = rng.pick(lits);
        const val = rng.pick([0n, -1n, 1n << 53n, (1n << 53n) - 1n, -(1n << 53n) + 1n, 123456789n]);
        d.set(at + 2, le(8, val));
        return `literal at ${at + 2} = ${val}`;
      }
    }
  }],
  [4, "repeat event", (rng, d, s) => {
    // Amplification: one event repeated in its packet (sizes and alloc ids kept in sync).
    const ev = eventPackets(s).flatMap((p) => p.events.map((e) => [p, e] as const));
    if (ev.length === 0) return "no event";
    const [p, e] = rng.pick(ev);
    const k = rng.pick([2, 10, 100, 1000, 4000]);
    const one = d.bytes.slice(e.off, e.end);
    const room = Math.floor((32768 - p.size) / one.length);
    const times = rng.chance(0.8) ? Math.max(1, Math.min(k, room)) : k;
    const block = new Uint8Array(one.length * times);
    for (let i = 0; i < times; i++) block.set(one, i * one.length);
    d.insert(p.off, e.end, block);
    if (e.codewords !== undefined) {
      const at = p.off + p.headerSize - 8;
      const v = d.view();
      v.setBigInt64(at, v.getBigInt64(at, true) + BigInt(times), true);
    }
    return `event at ${e.off} repeated ${times} times`;
  }],
  [2, "amplified prefix", (rng, d, s) => {
    // An alloc reusing the whole previous backtrace, repeated: a few bytes per long backtrace.
    const ae = allocEvents(s);
    if (ae.length === 0) return "no alloc";
    const [p, e] = rng.pick(ae);
    const hdr = d.bytes.slice(e.off, e.prefixAt!);
    const prefix = rng.pick([250, 65535]);
    const ev = concat(
      hdr,
      prefix < 253 ? le(1, BigInt(prefix)) : concat(le(1, 253n), le(2, BigInt(prefix))),
      le(e.nencodedWidth!, 0n),
    );
    const times = rng.pick([10, 500, 2000]);
    const block = new Uint8Array(ev.length * times);
    for (let i = 0; i < times; i++) block.set(ev, i * ev.length);
    d.insert(p.off, e.end, block);
    const at = p.off + p.headerSize - 8;
    const v = d.view();
    v.setBigInt64(at, v.getBigInt64(at, true) + BigInt(times), true);
    return `${times} prefix-only allocs after ${e.off}`;
  }],
  [1, "growing backtraces", (rng, d, s) => {
    // Short allocs each reusing the whole previous backtrace and adding 256 frames with one
    // 3-byte codeword: backtraces grow by 256 frames per 8 input bytes.
    const ae = allocEvents(s).filter(([p]) => p.version >= 1);
    if (ae.length === 0) return "no alloc";
    const [p, e] = rng.pick(ae);
    const word = d.bytes.slice(e.off, e.off + 4);
    word[3] = (word[3] & 1) | (101 << 1); // event code 101, the event's time kept
    const k = rng.pick([20, 50, 100]);
    const parts: Uint8Array[] = [];
    for (let i = 0; i < k; i++) {
      const prefix = 256 * i;
      const vint = prefix < 253
        ? le(1, BigInt(prefix))
        : prefix <= 0xffff
        ? concat(le(1, 253n), le(2, BigInt(prefix)))
        : concat(le(1, 254n), le(4, BigInt(prefix)));
      parts.push(word, vint, le(1, 1n), le(2, BigInt((rng.int(16384) << 2) | 2)), le(1, 255n));
    }
    d.insert(p.off, e.end, concat(...parts));
    const at = p.off + p.headerSize - 8;
    const v = d.view();
    v.setBigInt64(at, v.getBigInt64(at, true) + BigInt(k), true);
    return `${k} growing backtraces after ${e.off}`;
  }],
  [4, "splice packet", (rng, d, s, all) => {
    const other = rng.pick(all);
    if (other.packets.length < 2) return "no packet";
    const q = rng.pick(other.packets.slice(1));
    const pkt = other.bytes.slice(q.off, q.off + q.size);
    // Same pid as ours most of the time, so that the packet is read.
    if (rng.chance(0.8)) pkt.set(d.bytes.subarray(30, 38), 30);
    const at = rng.pick(s.packets.slice(1).map((p) => p.off).concat([d.bytes.length]));
    d.bytes = concat(d.bytes.subarray(0, at), pkt, d.bytes.subarray(at));
    return `packet ${q.off} of ${other.name} spliced at ${at}`;
  }],
  [3, "packet order", (rng, d, s) => {
    if (s.packets.length < 3) return "few packets";
    const pk = s.packets.map((p) => d.bytes.slice(p.off, p.off + p.size));
    const i = rng.range(1, pk.length - 1), j = rng.range(1, pk.length - 1);
    const kind = rng.int(4);
    if (kind === 0) pk.splice(i, 1);
    else if (kind === 1) pk.splice(j, 0, pk[i]);
    else if (kind === 2) [pk[i], pk[j]] = [pk[j], pk[i]];
    else for (let k = 0; k < 50; k++) pk.push(pk[i]);
    d.bytes = concat(...pk);
    return `packets: ${["drop", "dup", "swap", "repeat 50"][kind]} ${i} ${j}`;
  }],
  [3, "bit flips", (rng, d) => {
    const at: number[] = [];
    for (let k = rng.range(1, 6); k > 0; k--) {
      const pos = rng.int(d.bytes.length);
      d.bytes[pos] ^= 1 << rng.int(8);
      at.push(pos);
    }
    return `bit flips at ${at.join(",")}`;
  }],
  [2, "truncate", (rng, d, s) => {
    const p = rng.pick(s.packets);
    const cut = rng.chance(0.5) ? p.off + rng.int(p.size) : rng.int(d.bytes.length);
    d.bytes = d.bytes.slice(0, cut);
    return `truncated at ${cut}`;
  }],
  [2, "vint marker", (rng, d) => {
    const pos = rng.int(d.bytes.length);
    d.bytes[pos] = rng.pick([253, 254, 255]);
    for (let k = 1; k <= 8 && pos + k < d.bytes.length; k++) {
      d.bytes[pos + k] = rng.chance(0.5) ? 0xff : 0x7f;
    }
    return `vint marker at ${pos}`;
  }],
];

const TOTAL_WEIGHT = MUTATORS.reduce((n, [w]) => n + w, 0);

/** Mutant `index` of `seed`: 1 to 3 mutations, determined by (campaign seed, index). */
export function mutant(
  s: Seed,
  campaignSeed: number,
  index: number,
): { bytes: Uint8Array; desc: string } {
  const rng = new Rng((campaignSeed ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0);
  const all = seeds();
  const d = new Draft(s.bytes);
  const steps: string[] = [];
  // Mutations aim at the seed's structure; after the first, offsets may have moved, which is
  // one more way to produce near-valid input.
  const k = rng.chance(0.75) ? 1 : rng.range(2, 3);
  for (let i = 0; i < k; i++) {
    const m = rng.weighted(MUTATORS, TOTAL_WEIGHT);
    let what: string;
    try {
      what = m[2](rng, d, s, all);
    } catch (e) {
      // A later mutation aimed at offsets an earlier one moved past the end: no change.
      if (!(e instanceof RangeError)) throw e;
      what = "out of range, skipped";
    }
    steps.push(`${m[1]}: ${what}`);
  }
  return { bytes: d.bytes, desc: steps.join("; ") };
}

// ---------------------------------------------------------------------------------------------
// Exercising a case.

/** What a case did. */
export interface Outcome {
  /** Passes (of 4) that completed. */
  clean: number;
  /** Checks of the typed errors raised (limit errors prefixed `limit: `). */
  errors: string[];
  /** Events delivered over all passes. */
  events: number;
  /** Characters of dump produced. */
  dumpChars: number;
  /** Bytes the copy wrote. */
  copyBytes: number;
  /** Longest backtrace seen, in frames. */
  maxFrames: number;
  /** How each pass ended: null when cleanly, else its check (`open` when the trace could not be
   * opened, and no pass ran). */
  passes: Record<string, string | null>;
}

/** Thrown for anything the campaign counts as a failure: an escape or a bound exceeded. */
export class FuzzFailure extends Error {
  override name = "FuzzFailure";
}

function fail(where: string, what: string, cause?: unknown): never {
  throw new FuzzFailure(`${where}: ${what}`, { cause });
}

/** Checks that `e` is the typed error, well formed; returns its check. */
function typed(e: unknown, size: number, where: string): string {
  if (e instanceof FuzzFailure) throw e;
  if (!(e instanceof MemtraceFormatError)) {
    const what = e instanceof Error ? `${e.name}: ${e.message}\n${e.stack}` : String(e);
    fail(where, `escape: ${what}`, e);
  }
  const limit = e instanceof MemtraceLimitError;
  const prefix = limit ? "trace exceeds a limit: " : "malformed trace: ";
  if (!e.message.startsWith(prefix)) fail(where, `message ${e.message}`);
  if (!(Number.isSafeInteger(e.offset) && e.offset >= 0 && e.offset <= size)) {
    fail(where, `offset ${e.offset} outside [0, ${size}] (${e.message})`);
  }
  return (limit ? "limit: " : "") + e.check;
}

const WARNINGS =
  /^(skipping truncated packet|skipping bad packet \(wrong pid: -?\d+, but tracing -?\d+\))$/;

/** Reads a case four ways; throws {@linkcode FuzzFailure} on an escape or a broken bound. */
export function exercise(bytes: Uint8Array, where: string): Outcome {
  const size = bytes.length;
  const out: Outcome = {
    clean: 0,
    errors: [],
    events: 0,
    dumpChars: 0,
    copyBytes: 0,
    maxFrames: 0,
    passes: {},
  };
  const options = {
    onWarning: (m: string) => {
      if (!WARNINGS.test(m)) fail(where, `warning ${m}`);
    },
    maxBacktraceFrames: FUZZ_MAX_FRAMES,
  };
  const open = (): Reader | undefined => {
    try {
      return Reader.fromBytes(bytes, options);
    } catch (e) {
      const check = typed(e, size, `${where} [open]`);
      out.errors.push(check);
      out.passes.open = check;
      return undefined;
    }
  };
  const maxEvents = Math.floor(size / 4) + 1;
  const passes: [string, (r: Reader) => void][] = [
    ["iter", (r) => {
      let n = 0;
      r.iter((dt, ev) => {
        if (++n > maxEvents) fail(where, "more events than bytes allow");
        if (!Number.isSafeInteger(dt)) fail(where, `time ${dt}`);
        if (ev.kind === "alloc") {
          if (ev.backtraceLength > FUZZ_MAX_FRAMES) fail(where, `${ev.backtraceLength} frames`);
          if (ev.backtraceBuffer.length > FUZZ_MAX_FRAMES) {
            fail(where, "backtrace buffer too large");
          }
          out.maxFrames = Math.max(out.maxFrames, ev.backtraceLength);
        }
      });
      out.events += n;
    }],
    ["dump", (r) => {
      const budget = FUZZ_DUMP_BASE + FUZZ_DUMP_CHARS_PER_BYTE * size;
      let chars = 0;
      try {
        dumpTraceTo(r, (t) => {
          chars += t.length;
        }, { maxOutputChars: budget });
      } finally {
        out.dumpChars = chars;
        if (chars > budget) fail(where, `dump of ${chars} characters, budget ${budget}`);
      }
    }],
    ["copy", (r) => {
      const sink = new MemorySink();
      try {
        const c = new TraceCopier(r, sink);
        c.advance();
        // What we wrote must read back, with every event.
        let back = 0;
        try {
          Reader.fromBytes(sink.bytes().slice(), { ...options, maxBacktraceFrames: 1 << 22 }).iter(
            () => back++,
            { parseBacktraces: true },
          );
        } catch (e) {
          fail(where, `the copy does not read back: ${e}`, e);
        }
        if (back !== c.events) fail(where, `copied ${c.events} events, read back ${back}`);
      } finally {
        out.copyBytes = sink.size;
        const bound = COPY_BASE_BYTES + COPY_BYTES_PER_INPUT_BYTE * size;
        if (sink.size > bound) fail(where, `copy of ${sink.size} bytes, bound ${bound}`);
      }
    }],
    ["iter without backtraces", (r) => {
      let n = 0;
      r.iter((_, ev) => {
        if (++n > maxEvents) fail(where, "more events than bytes allow");
        if (ev.kind === "alloc" && ev.backtraceLength !== 0) {
          fail(where, "backtrace without parsing");
        }
      }, { parseBacktraces: false });
    }],
  ];
  for (const [name, pass] of passes) {
    const r = open();
    if (r === undefined) return out;
    try {
      pass(r);
      out.clean++;
      out.passes[name] = null;
    } catch (e) {
      const check = typed(e, size, `${where} [${name}]`);
      out.errors.push(check);
      out.passes[name] = check;
    }
  }
  return out;
}
