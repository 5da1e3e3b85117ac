/**
 * Structure-aware fuzzing of the runtime_events consumer, dump and stats, shared by the in-test
 * campaign (fuzz_campaign_test.ts) and the long campaign (`deno task fuzz`).
 *
 * Seeds are ring images made with the producer (small rings, wrapped several times, every
 * message kind, custom payloads of every padding) and the two real fixtures. Each seed is parsed
 * once into its messages, so that mutations aim at fields: metadata header fields (set to 0, ±1,
 * doubled, 2^53, 2^63, 2^64 − 1, another field's value, the file size), ring heads and tails,
 * message lengths, types, user bits and ids, custom padding bytes, name slots, messages copied
 * over others, and plain bit flips and truncations. Images are mutated in place and restored.
 *
 * Every case is read twice — from memory, and through a {@linkcode RingSource} with a small
 * window (the path files take) — and both must print the same dump and end the same way: cleanly
 * or with RuntimeEventsFormatError, whose offset is a real one (an integer in the file) and whose
 * message holds no rounded number. Bounds asserted per case: dump text at most
 * {@linkcode DUMP_CHARS_PER_RING_BYTE} characters per byte of ring data read, plus a line per
 * lost-events report; every so often, stats too.
 * @module
 */
import { Rng, seedByWeight } from "../prng.ts";
import {
  computeStats,
  customType,
  DecoderRegistry,
  Lifecycle,
  type RingSource,
  RuntimeCounter,
  RuntimeEventsCursor,
  RuntimeEventsFormatError,
  RuntimeEventsProducer,
  RuntimePhase,
  Type,
} from "../../lib/runtime_events/mod.ts";
import { dumpCallbacks } from "../../lib/runtime_events/dump.ts";
import { refCustomDecoder } from "./fixture_decoders.ts";
import d8Image from "../fixtures/runtime_events/d8/18440.events" with { type: "bytes" };
import e10Image from "../fixtures/runtime_events/e10/18448.events" with { type: "bytes" };

/** Most characters of dump per byte of ring data read (a custom event of 3 words prints at
 * most ~570 characters: its name quoted, escapes included, and its payload in hex). */
export const DUMP_CHARS_PER_RING_BYTE = 32;
/** Window of the file-like reads: small, so that messages cross window ends. */
export const FUZZ_WINDOW_BYTES = 8192;

const decoders = new DecoderRegistry().register("ref.custom", refCustomDecoder);

/** A message of a seed: file offset, length in words, ring. */
interface Message {
  at: number;
  words: number;
  ring: number;
  user: boolean;
  type: number;
}

/** A seed image and its structure. */
export interface RingSeed {
  name: string;
  /** The image, mutated in place during a case and restored after it. */
  image: Uint8Array;
  original: Uint8Array;
  maxDomains: number;
  ringWords: number;
  dataOffset: number;
  namesOffset: number;
  rings: { hdr: number; ring: number; head: number; tail: number }[];
  messages: Message[];
  /** Name slots in use. */
  names: number[];
  weight: number;
}

function producerSeed(
  maxDomains: number,
  logWsize: number,
  fill: (p: RuntimeEventsProducer) => void,
): Uint8Array {
  let t = 1_000_000;
  const p = new RuntimeEventsProducer({ maxDomains, logWsize, pid: 77, clock: () => (t += 13) });
  fill(p);
  return p.bytes.slice();
}

/** Every message kind on three small rings; ring 2 wraps many times. */
function mixedSeed(): Uint8Array {
  return producerSeed(3, 9, (p) => {
    const unit = p.registerUserEvent("app.unit", Type.unit);
    const int = p.registerUserEvent("app.int", Type.int);
    const span = p.registerUserEvent("app.span", Type.span);
    const custom = p.registerUserEvent(
      "app.custom\u00e9\u0001",
      customType({
        serialize: (b: Uint8Array, n: number) => {
          for (let i = 0; i < n; i++) b[i] = (i * 37) & 0xff;
          return n;
        },
      }),
    );
    p.start();
    for (let i = 0; i < 30; i++) {
      p.begin(0, i % 2 === 0 ? RuntimePhase.EV_MINOR : RuntimePhase.EV_MAJOR_SLICE);
      p.counter(0, RuntimeCounter.EV_C_MINOR_PROMOTED, i * 1000);
      p.end(0, i % 2 === 0 ? RuntimePhase.EV_MINOR : RuntimePhase.EV_MAJOR_SLICE);
      if (i % 10 === 0) {
        for (let k = 0; k < 40; k++) p.alloc(1 + k);
        p.allocFlush(0);
      }
    }
    p.domainSpawn(1);
    for (let i = 0; i < 20; i++) {
      p.writeUser(1, unit);
      p.writeUser(1, int, i * 12345);
      p.writeUser(1, span, i % 2 === 0 ? "begin" : "end");
      p.writeUser(1, custom, i % 17);
    }
    p.lifecycle(1, Lifecycle.EV_FORK_PARENT, 99);
    for (let i = 0; i < 800; i++) {
      p.begin(2, RuntimePhase.EV_EXPLICIT_GC_FULL_MAJOR);
      p.end(2, RuntimePhase.EV_EXPLICIT_GC_FULL_MAJOR);
      if (i % 50 === 0) p.writeUser(2, custom, i % 30);
    }
  });
}

/** One larger ring, not wrapped. */
function plainSeed(): Uint8Array {
  return producerSeed(1, 10, (p) => {
    const int = p.registerUserEvent("x", Type.int);
    p.start();
    for (let i = 0; i < 200; i++) {
      p.begin(0, RuntimePhase.EV_MINOR);
      p.writeUser(0, int, -i);
      p.end(0, RuntimePhase.EV_MINOR);
    }
  });
}

function parseSeed(name: string, image: Uint8Array, weight: number): RingSeed {
  const v = new DataView(image.buffer, image.byteOffset, image.byteLength);
  const u = (o: number) => Number(v.getBigUint64(o, true));
  const maxDomains = u(8), ringBytes = u(24), ringWords = u(32);
  const headersOffset = u(40), dataOffset = u(48), namesOffset = u(56);
  const rings: RingSeed["rings"] = [];
  const messages: Message[] = [];
  const names = new Set<number>();
  for (let d = 0; d < maxDomains; d++) {
    const hdr = headersOffset + 80 * d, ring = dataOffset + d * ringBytes;
    const head = u(hdr), tail = u(hdr + 8);
    rings.push({ hdr, ring, head, tail });
    for (let pos = head; pos < tail;) {
      const at = ring + (pos % ringWords) * 8;
      const high = v.getUint32(at + 4, true);
      const words = (high >>> 22) & 0x3ff;
      const user = (high & (1 << 21)) !== 0;
      if (user) names.add((high >>> 4) & 0x1fff);
      messages.push({ at, words, ring: d, user, type: (high >>> 17) & 0xf });
      pos += words;
    }
  }
  return {
    name,
    image,
    original: image.slice(),
    maxDomains,
    ringWords,
    dataOffset,
    namesOffset,
    rings,
    messages,
    names: [...names],
    weight,
  };
}

let cache: RingSeed[] | undefined;

/** The seed images (made once). */
export function ringSeeds(): RingSeed[] {
  cache ??= [
    parseSeed("mixed (3 rings of 2^9 words)", mixedSeed(), 10),
    parseSeed("plain (1 ring of 2^10 words)", plainSeed(), 5),
    parseSeed("e10 fixture", e10Image.slice(), 0.6),
    parseSeed("d8 fixture", d8Image.slice(), 0.4),
  ];
  return cache;
}

/** The seed of case `index`, drawn by weight. */
export function ringSeedFor(campaignSeed: number, index: number): RingSeed {
  return seedByWeight(ringSeeds(), campaignSeed, index);
}

// ---------------------------------------------------------------------------------------------
// Mutations: each writes into the seed's image and records what to restore.

/** A case: the bytes to read (the image, or a prefix of it) and what was changed. */
export interface RingCase {
  bytes: Uint8Array;
  desc: string;
  /** Restores the seed's image. */
  restore(): void;
}

const U64_MAX = (1n << 64n) - 1n;

type RingMutator = (rng: Rng, s: RingSeed, w: Writes) => string;

/** Writes into a seed's image, remembering the ranges to restore. */
class Writes {
  touched: [number, number][] = [];
  cut: number | undefined;
  constructor(readonly s: RingSeed) {}
  u64(at: number, v: bigint): void {
    if (at + 8 > this.s.image.length) return;
    new DataView(this.s.image.buffer, this.s.image.byteOffset).setBigUint64(
      at,
      BigInt.asUintN(64, v),
      true,
    );
    this.touched.push([at, at + 8]);
  }
  u32(at: number, v: number): void {
    if (at + 4 > this.s.image.length) return;
    new DataView(this.s.image.buffer, this.s.image.byteOffset).setUint32(at, v >>> 0, true);
    this.touched.push([at, at + 4]);
  }
  byte(at: number, v: number): void {
    if (at >= this.s.image.length) return;
    this.s.image[at] = v;
    this.touched.push([at, at + 1]);
  }
  copy(to: number, from: number, len: number): void {
    const img = this.s.image;
    const n = Math.max(0, Math.min(len, img.length - to, img.length - from));
    img.copyWithin(to, from, from + n);
    this.touched.push([to, to + n]);
  }
}

const FIELD_NAMES = [
  "version",
  "max_domains",
  "ring_header_size_bytes",
  "ring_size_bytes",
  "ring_size_elements",
  "headers_offset",
  "data_offset",
  "custom_events_offset",
];

const MUTATORS: [number, string, RingMutator][] = [
  [5, "metadata field", (rng, s, w) => {
    const f = rng.int(8);
    const v = new DataView(s.image.buffer, s.image.byteOffset);
    const cur = v.getBigUint64(f * 8, true);
    const other = v.getBigUint64(rng.int(8) * 8, true);
    const size = BigInt(s.image.length);
    const val = rng.pick([
      0n,
      1n,
      cur + 1n,
      cur - 1n,
      cur * 2n,
      cur / 2n,
      1n << 53n,
      (1n << 53n) + 1n,
      1n << 63n,
      U64_MAX,
      other,
      size,
      size - 8n,
      4096n,
      4097n,
    ]);
    w.u64(f * 8, val);
    return `${FIELD_NAMES[f]} = ${BigInt.asUintN(64, val)}`;
  }],
  [6, "ring position", (rng, s, w) => {
    const r = rng.pick(s.rings);
    const which = rng.chance(0.5) ? "head" : "tail";
    const words = BigInt(s.ringWords);
    const head = BigInt(r.head), tail = BigInt(r.tail);
    const val = rng.pick([
      0n,
      head - 1n,
      head + 1n,
      tail - 1n,
      tail + 1n,
      tail + words,
      tail + words + 1n,
      head + words,
      tail - words - 1n,
      (1n << 53n) - 1n,
      1n << 53n,
      U64_MAX,
      BigInt(rng.int(2 ** 31)),
    ]);
    w.u64(which === "head" ? r.hdr : r.hdr + 8, val);
    return `${which} of ring ${s.rings.indexOf(r)} = ${BigInt.asUintN(64, val)}`;
  }],
  [8, "message header", (rng, s, w) => {
    if (s.messages.length === 0) return "no message";
    const m = rng.pick(s.messages);
    const v = new DataView(s.image.buffer, s.image.byteOffset);
    let high = v.getUint32(m.at + 4, true);
    const masked = ((m.at - s.dataOffset) / 8) % s.ringWords;
    switch (rng.int(4)) {
      case 0: {
        const len = rng.pick([
          0,
          1,
          2,
          3,
          m.words - 1,
          m.words + 1,
          1023,
          s.ringWords - masked,
          s.ringWords - masked + 1,
          22,
        ]) & 0x3ff;
        high = (high & ~(0x3ff << 22)) | (len << 22);
        w.u32(m.at + 4, high);
        return `length of message at ${m.at} = ${len}`;
      }
      case 1:
        w.u32(m.at + 4, high ^ (1 << 21));
        return `user bit of message at ${m.at} flipped`;
      case 2: {
        const type = rng.int(16);
        w.u32(m.at + 4, (high & ~(0xf << 17)) | (type << 17));
        return `type of message at ${m.at} = ${type}`;
      }
      default: {
        const id = rng.pick([0, 1, 3, 4, 8191, rng.int(8192)]);
        w.u32(m.at + 4, (high & ~(0x1fff << 4)) | (id << 4));
        return `id of message at ${m.at} = ${id}`;
      }
    }
  }],
  [3, "custom padding", (rng, s, w) => {
    const cs = s.messages.filter((m) => m.user && m.type >= 4 && m.words > 2);
    if (cs.length === 0) return "no custom event";
    const m = rng.pick(cs);
    const last = (m.words - 2) * 8 - 1;
    const val = rng.pick([0, last, last + 1, 127, 128, 255]);
    w.byte(m.at + 16 + last, val);
    return `padding of custom event at ${m.at} = ${val}`;
  }],
  [2, "name slot", (rng, s, w) => {
    const id = s.names.length > 0 && rng.chance(0.8) ? rng.pick(s.names) : rng.int(8192);
    const at = s.namesOffset + id * 128;
    const kind = rng.int(3);
    for (let i = 0; i < 128; i++) {
      w.byte(at + i, kind === 0 ? 0xff : kind === 1 ? (i % 2 ? 0xc3 : 0x28) : 1 + rng.int(255));
    }
    return `name slot ${id}: ${["0xff", "invalid UTF-8", "random"][kind]}, no NUL`;
  }],
  [3, "message copied over another", (rng, s, w) => {
    if (s.messages.length < 2) return "no message";
    const a = rng.pick(s.messages), b = rng.pick(s.messages);
    w.copy(b.at, a.at, a.words * 8);
    return `message at ${a.at} (${a.words} words) copied over ${b.at}`;
  }],
  [3, "bit flips", (rng, s, w) => {
    const at: number[] = [];
    for (let k = 1 + rng.int(4); k > 0; k--) {
      const m = s.messages.length > 0 && rng.chance(0.8) ? rng.pick(s.messages) : undefined;
      const pos = m ? m.at + rng.int(m.words * 8) : rng.int(s.dataOffset + 16);
      w.byte(pos, s.image[pos] ^ (1 << rng.int(8)));
      at.push(pos);
    }
    return `bit flips at ${at.join(",")}`;
  }],
  [2, "truncate", (rng, s, w) => {
    const r = rng.pick(s.rings);
    const points = [
      0,
      40,
      63,
      64,
      r.hdr + 4,
      r.hdr + 12,
      r.ring,
      r.ring + 100,
      s.namesOffset,
      s.namesOffset + 64,
      s.image.length - 1,
    ];
    w.cut = rng.pick(points);
    return `truncated at ${w.cut}`;
  }],
];

const TOTAL = MUTATORS.reduce((n, [k]) => n + k, 0);

/** Case `index` of the campaign: 1 to 3 mutations of a seed chosen by weight. */
export function ringCase(campaignSeed: number, index: number): RingCase {
  const s = ringSeedFor(campaignSeed, index);
  const rng = new Rng((campaignSeed ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0);
  const w = new Writes(s);
  const steps: string[] = [];
  for (let k = rng.chance(0.75) ? 1 : 2 + rng.int(2); k > 0; k--) {
    const m = rng.weighted(MUTATORS, TOTAL);
    steps.push(`${m[1]}: ${m[2](rng, s, w)}`);
  }
  return {
    bytes: w.cut === undefined ? s.image : s.image.subarray(0, w.cut),
    desc: `${s.name}: ${steps.join("; ")}`,
    restore: () => {
      for (const [a, b] of w.touched) s.image.set(s.original.subarray(a, b), a);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Exercising a case.

/** A {@linkcode RingSource} over bytes in memory, as a file would be read. */
export class BytesRingSource implements RingSource {
  reads = 0;
  maxRead = 0;
  constructor(private readonly bytes: Uint8Array) {}
  size(): number {
    return this.bytes.length;
  }
  readAt(offset: number, dst: Uint8Array): number {
    this.reads++;
    this.maxRead = Math.max(this.maxRead, dst.length);
    const n = Math.max(0, Math.min(dst.length, this.bytes.length - offset));
    dst.set(this.bytes.subarray(offset, offset + n));
    return n;
  }
}

/** What reading a case gave. */
export interface RingOutcome {
  /** The error's reason, or null for a clean read. */
  error: string | null;
  lines: number;
  chars: number;
  /** Bytes of ring data the dump read. */
  ringBytes: number;
}

/** Thrown for an escape, a broken bound or a difference between the two reads. */
export class RingFuzzFailure extends Error {
  override name = "RingFuzzFailure";
}

function fail(where: string, what: string, cause?: unknown): never {
  throw new RingFuzzFailure(`${where}: ${what}`, { cause });
}

function dumpOnce(
  bytes: Uint8Array,
  fromSource: boolean,
  where: string,
): { out: RingOutcome; text: string[]; source?: BytesRingSource } {
  const text: string[] = [];
  const out: RingOutcome = { error: null, lines: 0, chars: 0, ringBytes: 0 };
  let lost = 0;
  const source = fromSource ? new BytesRingSource(bytes) : undefined;
  try {
    const cursor = new RuntimeEventsCursor(source ?? bytes, {
      decoders,
      windowBytes: FUZZ_WINDOW_BYTES,
    });
    const cb = dumpCallbacks((l) => {
      out.lines++;
      out.chars += l.length + 1;
      if (text.length < 20_000) text.push(l);
    }, { decoders });
    cursor.readAll({
      ...cb,
      lostEvents: (d, words) => {
        lost++;
        cb.lostEvents!(d, words);
      },
      message: (_d, _pos, words) => {
        out.ringBytes += words * 8;
      },
    });
  } catch (e) {
    if (!(e instanceof RuntimeEventsFormatError)) {
      const what = e instanceof Error ? `${e.name}: ${e.message}\n${e.stack}` : String(e);
      fail(where, `escape: ${what}`, e);
    }
    if (!(Number.isSafeInteger(e.offset) && e.offset >= 0 && e.offset <= bytes.length)) {
      fail(where, `offset ${e.offset} is not in the file (${bytes.length} bytes): ${e.message}`);
    }
    if (/\d(e[+-]?\d|\.\d)/.test(e.message)) fail(where, `a rounded number in: ${e.message}`);
    out.error = e.message;
  }
  const bound = DUMP_CHARS_PER_RING_BYTE * out.ringBytes + 64 * lost + 1;
  if (out.chars > bound) fail(where, `dump of ${out.chars} characters, bound ${bound}`);
  return { out, text, source };
}

/** Reads a case from memory and through a source; throws {@linkcode RingFuzzFailure} on an
 * escape, a broken bound or any difference. Every `statsEvery`-th case computes stats too. */
export function exerciseRing(bytes: Uint8Array, where: string, withStats: boolean): RingOutcome {
  const a = dumpOnce(bytes, false, `${where} [memory]`);
  const b = dumpOnce(bytes, true, `${where} [source]`);
  if (a.out.error !== b.out.error || a.out.lines !== b.out.lines) {
    fail(
      where,
      `memory and source reads differ: ${a.out.error} / ${b.out.error}, ` +
        `${a.out.lines} / ${b.out.lines} lines`,
    );
  }
  for (let i = 0; i < a.text.length; i++) {
    if (a.text[i] !== b.text[i]) fail(where, `line ${i + 1} differs: ${a.text[i]} / ${b.text[i]}`);
  }
  if (b.source!.maxRead > Math.max(FUZZ_WINDOW_BYTES, 128)) {
    fail(where, `a read of ${b.source!.maxRead} bytes at once`);
  }
  if (withStats) {
    try {
      computeStats(bytes, { decoders });
    } catch (e) {
      if (!(e instanceof RuntimeEventsFormatError)) fail(`${where} [stats]`, `escape: ${e}`, e);
    }
  }
  return a.out;
}
