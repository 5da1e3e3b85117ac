/**
 * The backtrace codec: a 2^14-bucket cache of location codes, each slot chosen among two hashes,
 * plus a "next bucket" predictor so that runs of frames seen before cost two or three bytes.
 * Codes are emitted from the outermost new frame inwards; the reader rebuilds caller→callee order.
 * @module
 */
import { Overflow, type WriteBuf, writeI32 } from "./buf.ts";

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

const K2 = 0xfdea731;
const K2_HI = K2 >>> 14, K2_LO = K2 & 0x3fff;

/** Second cache bucket: `((code * 0xfdea731) lsr 21) land mask`, i.e. bits 21..34 of the
 * product. The product modulo 2^35 is summed from 16-by-14-bit partial products of the low word
 * (each below 2^30, reduced modulo 2^35 before scaling) and the high word's bits 32..34: every
 * term and the sum stay exact below 2^38. */
export function hash2(slot: number): number {
  const lo = slot >>> 0;
  const hi = Math.floor(slot / TWO32);
  const a = lo >>> 16, b = lo & 0xffff;
  const sum = b * K2_LO + ((b * K2_HI) & 0x1fffff) * 16384 + ((a * K2_LO) & 0x7ffff) * 65536 +
    ((a * K2_HI) & 31) * 1073741824 + (Math.imul(hi, K2) & 7) * TWO32;
  return Math.floor(sum / 2097152) & MASK;
}

// hash2 is a pure function, dearer than hash1, and the writer needs it for most lookups (a
// code enters its second bucket when both are empty): memoized in a small direct-mapped table
// indexed by the first bucket, shared by all writers.
const MEMO_MASK = 4095;
const memoCode = new Float64Array(MEMO_MASK + 1).fill(NaN);
const memoHash2 = new Uint16Array(MEMO_MASK + 1);

/** `hash2(slot)`, given `h1 = hash1(slot)`. */
function cachedHash2(slot: number, h1: number): number {
  const i = h1 & MEMO_MASK;
  if (memoCode[i] === slot) return memoHash2[i];
  const h2 = hash2(slot);
  memoCode[i] = slot;
  memoHash2[i] = h2;
  return h2;
}

/** The writer's cache: codes, their last-use dates (allocation ids) and successor buckets. */
export class BacktraceWriter {
  readonly cache = new Float64Array(CACHE_SIZE);
  readonly date = new Float64Array(CACHE_SIZE);
  readonly next = new Int32Array(CACHE_SIZE);
  #verifyIx = 4242;

  /**
   * Encodes `stack[k]` for k from `from` up to `to - 1`: the stack is stored caller first, so
   * this goes from the outermost frame not shared with the previous backtrace towards the
   * allocation point, the order memtrace encodes in. Calls `onMiss(k)` for each code that missed
   * the cache: its definition must be written before this event. Stops early (cutting the
   * backtrace) when the encoding reaches 4 KiB. Returns the number of codewords written. The
   * caller leaves room for {@linkcode BACKTRACE_MAX_LENGTH} bytes: they are written directly.
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
    const out = b.buf;
    let p = b.pos;
    if (p + BACKTRACE_MAX_LENGTH > b.end) throw new Overflow(p);
    const limit = p + BACKTRACE_MAX_LENGTH - (2 + 8);
    let predictor = 0;
    let ncodes = 0;
    let k = from;
    while (k < to && p <= limit) {
      const slot = stack[k];
      const h1 = hash1(slot);
      let hit = -1;
      if (cache[h1] === slot) hit = h1;
      else {
        const h2 = cachedHash2(slot, h1);
        if (cache[h2] === slot) hit = h2;
        else {
          // Miss: take the less recently used of the two buckets.
          onMiss(k);
          const bucket = date[h1] < date[h2] ? h1 : h2;
          cache[bucket] = slot;
          date[bucket] = allocId;
          next[predictor] = bucket;
          const w = (bucket << 2) | 3;
          out[p] = w;
          out[p + 1] = w >>> 8;
          const hi = Math.floor(slot / TWO32);
          writeI32(out, p + 2, slot - hi * TWO32);
          writeI32(out, p + 6, hi);
          p += 10;
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
        if (k >= to || p + 2 > limit) {
          b.pos = putHit(out, p, origHit, ncorrect);
          return ncodes;
        }
        const predBucket = next[predictor];
        if (cache[predBucket] === stack[k]) {
          if (ncorrect === 255) {
            // The count byte is full: close this codeword and start a new hit at the prediction.
            p = putHit(out, p, origHit, ncorrect);
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
          p = putHit(out, p, origHit, ncorrect);
          break;
        }
      }
    }
    b.pos = p;
    return ncodes;
  }

  /** Writes the cache verifier of a packet header: one bucket's successor and code. */
  putVerifier(b: WriteBuf): void {
    const ix = this.#verifyIx;
    this.#verifyIx = (ix + 5413) & MASK;
    b.put16(ix);
    b.put16(this.next[ix]);
    b.put64(this.cache[ix]);
  }
}

/** Writes a hit codeword at `out[p..]` (2 bytes, 3 with a count above 1); returns its end. */
function putHit(out: Uint8Array, p: number, bucket: number, ncorrect: number): number {
  const tag = ncorrect < 2 ? ncorrect : 2;
  const w = (bucket << 2) | tag;
  out[p] = w;
  out[p + 1] = w >>> 8;
  if (tag < 2) return p + 2;
  out[p + 2] = ncorrect;
  return p + 3;
}

/** Written in headers of packets that carry no verifier. */
export function putDummyVerifier(b: WriteBuf): void {
  b.put16(0xffff);
  b.put16(0);
  b.put64(0);
}

/** A cache verifier as read from a packet header. `value` is NaN when it is not a safe integer:
 * a corrupted one must not be rounded into a match (cached codes are safe integers). */
export interface CacheVerifier {
  ix: number;
  pred: number;
  value: number;
}

/** Raised when a backtrace refers to a prefix it cannot have (negative length). */
export class BacktracePrefixError extends Error {
  /** `pos`: where the backtrace's codewords start. */
  constructor(readonly pos: number) {
    super("backtrace common prefix");
  }
}

/** Raised when a decoded backtrace would hold more than the reader's frame limit. */
export class BacktraceTooLongError extends Error {
  constructor(readonly limit: number) {
    super(`backtrace of more than ${limit} frames`);
  }
}

/** Bytes of one domain's backtrace cache once allocated (codes and predictions). */
export const BACKTRACE_CACHE_BYTES = CACHE_SIZE * (8 + 2);

const NO_CODES = new Float64Array(0);
const NO_PRED = new Uint16Array(0);
/** The scratch buffer of a reader that never needed one (grown into a new array when needed). */
const NO_FRAMES = new Float64Array(0);
/** Frames the backtrace buffer holds at first (real traces' backtraces are mostly shorter). */
const INITIAL_FRAMES = 256;
/** Caches released by finished iterations, kept for the next ones (at most FREE_CACHES). */
const FREE_CACHES = 4;
const freeLoc: Float64Array[] = [];
const freePred: Uint16Array[] = [];

/**
 * The reader's cache, plus the last decoded backtrace of the domain (shared with events). The
 * decoding loop itself is inlined in the reader's packet loop (reader.ts): each codeword names a
 * bucket (its code is the next frame) and, for tags 1 and 2, a count of further frames found by
 * following the buckets' predicted successors; tag 3 carries a new code for its bucket.
 *
 * The 160 KiB cache is allocated by {@linkcode allocate} when the domain first decodes a backtrace
 * (until then it reads as zeros, as memtrace's fresh cache does), so that domains that never
 * allocate cost a few bytes. Backtraces longer than `maxFrames` are refused.
 */
export class BacktraceReader {
  /** Cached code of each bucket; empty until {@linkcode allocate}. */
  loc: Float64Array = NO_CODES;
  /** Predicted successor bucket of each bucket; empty until {@linkcode allocate}. */
  pred: Uint16Array = NO_PRED;
  buffer: Float64Array<ArrayBuffer> = new Float64Array(INITIAL_FRAMES);
  length = 0;
  /** Where backtraces that are decoded only to keep the cache in step go (a prefix longer than
   * the previous backtrace, which was cut: memtrace keeps the previous one). */
  scratch: Float64Array<ArrayBuffer> = NO_FRAMES;

  /** A reader refusing backtraces of more than `maxFrames` frames. */
  constructor(readonly maxFrames: number) {}

  /** Whether the cache has been allocated. */
  get allocated(): boolean {
    return this.loc.length !== 0;
  }

  /** Allocates the cache (all zeros), reusing one {@linkcode release}d if there is one. */
  allocate(): void {
    const loc = freeLoc.pop(), pred = freePred.pop();
    this.loc = loc === undefined ? new Float64Array(CACHE_SIZE) : loc.fill(0);
    this.pred = pred === undefined ? new Uint16Array(CACHE_SIZE) : pred.fill(0);
  }

  /** Gives the cache back for a later {@linkcode allocate} (zeroing 160 KiB costs less than
   * fresh pages); this reader must not be used afterwards. */
  release(): void {
    if (!this.allocated) return;
    if (freeLoc.length < FREE_CACHES) {
      freeLoc.push(this.loc);
      freePred.push(this.pred);
    }
    this.loc = NO_CODES;
    this.pred = NO_PRED;
  }

  /** A buffer of at least `need` entries holding `buf`'s, at most `maxFrames` long. */
  grow(buf: Float64Array, need: number): Float64Array<ArrayBuffer> {
    if (need > this.maxFrames) throw new BacktraceTooLongError(this.maxFrames);
    let size = Math.max(INITIAL_FRAMES, buf.length * 2);
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
    if (!this.allocated) return v.pred === 0 && v.value === 0;
    return this.pred[v.ix] === v.pred && this.loc[v.ix] === v.value;
  }
}
