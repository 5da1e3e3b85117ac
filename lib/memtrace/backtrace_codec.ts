/**
 * The backtrace codec: a 2^14-bucket cache of location codes, each slot chosen among two hashes,
 * plus a "next bucket" predictor so that runs of frames seen before cost two or three bytes.
 * Codes are emitted from the outermost new frame inwards; the reader rebuilds caller→callee order.
 * @module
 */
import type { ReadBuf, WriteBuf } from "./buf.ts";

/** Number of cache buckets. */
export const CACHE_SIZE = 1 << 14;
const MASK = CACHE_SIZE - 1;
/** Most bytes one backtrace may take; longer ones are cut (the tail frames are lost). */
export const BACKTRACE_MAX_LENGTH = 4096;

const TWO32 = 4294967296;

/** First cache bucket for a code: `((code * 0x4983723) lsr 11) land mask` in OCaml's 63-bit
 * arithmetic. Only the low 32 bits of the product matter, and `>>> 0` takes a safe integer
 * modulo 2^32 even when it is negative. */
export function hash1(slot: number): number {
  return (Math.imul(slot >>> 0, 0x4983723) >>> 11) & MASK;
}

/** Second cache bucket: `((code * 0xfdea731) lsr 21) land mask`, i.e. bits 21..34 of the
 * product; bits 32..34 are rebuilt from the high word and the carry of the low word's product. */
export function hash2(slot: number): number {
  const K = 0xfdea731;
  const lo = slot >>> 0;
  const hi = Math.floor(slot / TWO32) & 7;
  const a = lo >>> 16, b = lo & 0xffff;
  // floor(lo * K / 2^32), computed without losing bits: a*K and b*K are below 2^44.
  const carry = Math.floor((a * K + Math.floor((b * K) / 65536)) / 65536);
  const bits32 = (carry + hi * K) & 7;
  return ((Math.imul(lo, K) >>> 21) | (bits32 << 11)) & MASK;
}

/** The writer's cache: codes, their last-use dates (allocation ids) and successor buckets. */
export class BacktraceWriter {
  readonly cache = new Float64Array(CACHE_SIZE);
  readonly date = new Float64Array(CACHE_SIZE);
  readonly next = new Int32Array(CACHE_SIZE);
  private verifyIx = 4242;

  /**
   * Encodes `stack[k]` for k from `from` up to `to - 1`: the stack is stored caller first, so
   * this goes from the outermost frame not shared with the previous backtrace towards the
   * allocation point, the order memtrace encodes in. Calls `onMiss(k)` for each code that missed
   * the cache: its definition must be written before this event. Stops early (cutting the
   * backtrace) when the encoding reaches 4 KiB. Returns the number of codewords written.
   */
  put(
    b: WriteBuf,
    allocId: number,
    stack: ArrayLike<number>,
    from: number,
    to: number,
    onMiss: (k: number) => void,
  ): number {
    const cache = this.cache, date = this.date, next = this.next;
    const limit = b.pos + BACKTRACE_MAX_LENGTH - (2 + 8);
    let predictor = 0;
    let ncodes = 0;
    let k = from;
    while (k < to && b.pos <= limit) {
      const slot = stack[k];
      const h1 = hash1(slot);
      let hit = -1;
      if (cache[h1] === slot) hit = h1;
      else {
        const h2 = hash2(slot);
        if (cache[h2] === slot) hit = h2;
        else {
          // Miss: take the less recently used of the two buckets.
          onMiss(k);
          const bucket = date[h1] < date[h2] ? h1 : h2;
          cache[bucket] = slot;
          date[bucket] = allocId;
          next[predictor] = bucket;
          b.put16((bucket << 2) | 3);
          b.put64(slot);
          predictor = bucket;
          k++;
          ncodes++;
          continue;
        }
      }
      // Hit: follow the predictor chain as far as it guesses right (at most 255 per codeword).
      date[hit] = allocId;
      next[predictor] = hit;
      ncodes++;
      k++;
      let origHit = hit;
      predictor = hit;
      let ncorrect = 0;
      while (true) {
        if (k >= to || b.pos + 2 > limit) {
          putHit(b, origHit, ncorrect);
          return ncodes;
        }
        const predBucket = next[predictor];
        if (cache[predBucket] === stack[k]) {
          if (ncorrect === 255) {
            // The count byte is full: close this codeword and start a new hit at the prediction.
            putHit(b, origHit, ncorrect);
            date[predBucket] = allocId;
            next[predictor] = predBucket;
            ncodes++;
            k++;
            origHit = predBucket;
            predictor = predBucket;
            ncorrect = 0;
          } else {
            ncorrect++;
            predictor = predBucket;
            k++;
          }
        } else {
          putHit(b, origHit, ncorrect);
          break;
        }
      }
    }
    return ncodes;
  }

  /** Writes the cache verifier of a packet header: one bucket's successor and code. */
  putVerifier(b: WriteBuf): void {
    const ix = this.verifyIx;
    this.verifyIx = (ix + 5413) & MASK;
    b.put16(ix);
    b.put16(this.next[ix]);
    b.put64(this.cache[ix]);
  }
}

function putHit(b: WriteBuf, bucket: number, ncorrect: number): void {
  if (ncorrect === 0) b.put16(bucket << 2);
  else if (ncorrect === 1) b.put16((bucket << 2) | 1);
  else {
    b.put16((bucket << 2) | 2);
    b.put8(ncorrect);
  }
}

/** Written in headers of packets that carry no verifier. */
export function putDummyVerifier(b: WriteBuf): void {
  b.put16(0xffff);
  b.put16(0);
  b.put64(0);
}

/** A cache verifier as read from a packet header. `value` is kept as a bigint: it is compared
 * against the reader's cache, and a corrupted one must not be rounded into a match. */
export interface CacheVerifier {
  ix: number;
  pred: number;
  value: bigint;
}

/** Raised when a backtrace refers to a prefix it cannot have (negative length). */
export class BacktracePrefixError extends Error {}

/** Raised when a decoded backtrace would hold more than the reader's frame limit. */
export class BacktraceTooLongError extends Error {
  constructor(readonly limit: number) {
    super(`backtrace of more than ${limit} frames`);
  }
}

/** Bytes of one domain's backtrace cache once allocated (codes and predictions). */
export const BACKTRACE_CACHE_BYTES = CACHE_SIZE * (8 + 2);

const NO_CODES = new Float64Array(0);

/**
 * The reader's cache, plus the last decoded backtrace of the domain (shared with events).
 *
 * The 160 KiB cache is allocated by {@linkcode allocate} when the domain first decodes a backtrace
 * (until then it reads as zeros, as memtrace's fresh cache does), so that domains that never
 * allocate cost a few bytes. Backtraces longer than `maxFrames` are refused.
 */
export class BacktraceReader {
  /** Cached code of each bucket; empty until {@linkcode allocate}. */
  loc: Float64Array = NO_CODES;
  /** Predicted successor bucket of each bucket; empty until {@linkcode allocate}. */
  pred: Uint16Array = new Uint16Array(0);
  buffer: Float64Array<ArrayBuffer> = new Float64Array(32);
  length = 0;
  /** Where backtraces that are decoded only to keep the cache in step go (see {@linkcode get}). */
  private scratch: Float64Array<ArrayBuffer> = new Float64Array(0);

  /** A reader refusing backtraces of more than `maxFrames` frames. */
  constructor(readonly maxFrames: number) {}

  /** Whether the cache has been allocated. */
  get allocated(): boolean {
    return this.loc.length !== 0;
  }

  /** Allocates the cache (all zeros). */
  allocate(): void {
    this.loc = new Float64Array(CACHE_SIZE);
    this.pred = new Uint16Array(CACHE_SIZE);
  }

  /**
   * Decodes `nencoded` codewords after the first `commonPrefix` entries of the previous
   * backtrace. Afterwards `buffer[0, length)` is the backtrace, caller to callee. When the prefix
   * is longer than what was decoded last time (the previous backtrace was cut), the cache is still
   * updated but the previous backtrace is kept, as memtrace does. The cache must be allocated.
   * Throws {@linkcode BacktraceTooLongError} past `maxFrames` frames.
   */
  get(b: ReadBuf, nencoded: number, commonPrefix: number): void {
    if (commonPrefix < 0) throw new BacktracePrefixError();
    const loc = this.loc, pred = this.pred;
    const keep = commonPrefix > this.length;
    let buf = keep ? this.scratch : this.buffer;
    let pos = keep ? 0 : commonPrefix;
    let p = 0;
    for (let i = nencoded; i > 0; i--) {
      const codeword = b.get16();
      const bucket = codeword >>> 2, tag = codeword & 3;
      pred[p] = bucket;
      if (tag === 3) {
        const lit = b.get64();
        loc[bucket] = lit;
        if (pos >= buf.length) buf = this.grow(buf, pos + 1);
        buf[pos++] = lit;
        p = bucket;
        continue;
      }
      const n = tag === 2 ? b.get8() : tag;
      if (pos + n + 1 > buf.length) buf = this.grow(buf, pos + n + 1);
      buf[pos++] = loc[bucket];
      p = bucket;
      for (let k = 0; k < n; k++) {
        p = pred[p];
        buf[pos++] = loc[p];
      }
    }
    if (keep) this.scratch = buf;
    else {
      this.buffer = buf;
      this.length = pos;
    }
  }

  /** A buffer of at least `need` entries holding `buf`'s, at most `maxFrames` long. */
  private grow(buf: Float64Array, need: number): Float64Array<ArrayBuffer> {
    if (need > this.maxFrames) throw new BacktraceTooLongError(this.maxFrames);
    let size = Math.max(32, buf.length * 2);
    while (size < need) size *= 2;
    const out = new Float64Array(Math.min(size, this.maxFrames));
    out.set(buf);
    return out;
  }

  /** Whether a packet's verifier agrees with this cache (the dummy verifier always does). */
  check(v: CacheVerifier): boolean {
    if (v.ix === 0xffff) return true;
    if (!(v.ix >= 0 && v.ix < CACHE_SIZE)) return false;
    // An unallocated cache is all zeros.
    if (!this.allocated) return v.pred === 0 && v.value === 0n;
    return this.pred[v.ix] === v.pred && BigInt(this.loc[v.ix]) === v.value;
  }
}
