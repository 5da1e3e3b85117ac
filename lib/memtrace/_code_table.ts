/**
 * A hash table numbering location codes in the order they are added (the reader's definition
 * numbers). Codes are safe integers, mostly beyond 2^31 (return addresses): a `Map` would hash
 * them as heap numbers on every lookup. A code is kept as its two 32-bit halves (as a trace holds
 * it), so that no call passes a heap number. The codes are kept densely by number; the index is
 * open addressing with linear probing over an Int32Array of slots each holding a code's number
 * plus one (0 marking an empty slot, so that a new table needs no filling).
 *
 * The index is brought up to date lazily. A reader adds a code per location definition and
 * looks codes up only when a consumer asks (the decode loops of the benches never do), and the
 * definitions come in runs between packets of events: by the next run, the slots have left the
 * processor's caches, so that each insertion into the index cost a miss (about 7 % of decoding
 * ocamlopt.ctf from its file). So {@linkcode getOrAdd} first asks a Bloom filter of 2^16 bits
 * (8 KiB, which stays cached): a code it has not seen is appended to the dense codes only. A code
 * the filter may have seen is looked for in the index and, linearly, among the codes appended
 * since the index was last brought up to date (a sequential scan, within a budget proportional to
 * the codes added, past which the index is brought up to date instead). {@linkcode get} brings
 * the index up to date first. Numbers and answers are the same as a table indexed at once.
 * @module
 */

/** 2^-32: multiplying by it is exact, and cheaper than dividing by 2^32. */
const INV_TWO32 = 1 / 4294967296;
const INITIAL_SLOTS = 4096;
/** Codes the key store holds at first; it grows by a factor of 4. */
const INITIAL_CODES = 512;
/** Bits of the Bloom filter (two per code), and the most codes it serves: beyond, at 2 bits per
 * code, its false positives would pass 5 %, and every code is indexed as it is added. */
const FILTER_BITS = 1 << 16;
const FILTER_MAX_CODES = FILTER_BITS >>> 3;
/** Entries a linear scan may read per code added (see {@linkcode CodeTable.getOrAdd}). */
const SCAN_BUDGET_PER_CODE = 8;

const NO_SLOTS = new Int32Array(0);

/** The filter's two bit positions for a code: the top 16 bits of two mixes of its halves. */
function filterHash(lo: number, hi: number): number {
  return Math.imul(lo ^ Math.imul(hi, 0x85ebca6b), 0x9e3779b1);
}

/** A map from location codes (safe integers) to their numbers 0, 1, 2… in order of addition. */
export class CodeTable {
  /** Empty until the index is first brought up to date (a decode that never looks a code up
   * never allocates it). */
  #slots = NO_SLOTS;
  #mask = INITIAL_SLOTS - 1;
  /** Code k's low and high halves at 2 k and 2 k + 1. */
  #keys = new Int32Array(2 * INITIAL_CODES);
  #size = 0;
  /** Codes [0, #indexed) are in the slots. */
  #indexed = 0;
  /** The Bloom filter of the codes added, while there are at most FILTER_MAX_CODES. */
  readonly #filter = new Int32Array(FILTER_BITS >>> 5);
  /** Entries linear scans may still read before the index must be brought up to date. */
  #scanBudget = 0;

  /** Number of codes. */
  get size(): number {
    return this.#size;
  }

  /** The slot holding the code of halves `lo` (its low 32 bits, as a signed integer) and `hi`
   * (its high 32 bits, signed), or the empty slot where it would go. */
  #slot(lo: number, hi: number): number {
    const slots = this.#slots, keys = this.#keys, mask = this.#mask;
    let i = (Math.imul(lo ^ Math.imul(hi, 0x85ebca6b), 0x9e3779b1) >>> 7) & mask;
    for (let k; (k = slots[i]) !== 0; i = (i + 1) & mask) {
      if (keys[2 * k - 2] === lo && keys[2 * k - 1] === hi) break;
    }
    return i;
  }

  /** The number of `code`, or -1. */
  get(code: number): number {
    this.#index();
    return this.#slots[this.#slot(code | 0, Math.floor(code * INV_TWO32) | 0)] - 1;
  }

  /** The number of the code `hi` × 2^32 + (`lo` mod 2^32), given as its low 32 bits `lo` and
   * high 32 bits `hi`, each a signed 32-bit integer, if it has one; otherwise adds it (its number
   * is then the size before) and returns -1. The common case, a code the filter has not seen, is
   * handled here; the others by {@linkcode #lookUpOrAdd}. */
  getOrAdd(lo: number, hi: number): number {
    const k = this.#size;
    if (k < FILTER_MAX_CODES) {
      const h = filterHash(lo, hi);
      const b1 = h >>> 16, b2 = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d) >>> 16;
      const filter = this.#filter;
      const w1 = filter[b1 >>> 5], m1 = 1 << (b1 & 31);
      const w2 = filter[b2 >>> 5], m2 = 1 << (b2 & 31);
      if ((w1 & m1) === 0 || (w2 & m2) === 0) {
        // Not added before: stored, unindexed.
        filter[b1 >>> 5] = w1 | m1;
        filter[b2 >>> 5] |= m2;
        if (2 * k + 2 > this.#keys.length) this.#growKeys();
        this.#keys[2 * k] = lo;
        this.#keys[2 * k + 1] = hi;
        this.#size = k + 1;
        this.#scanBudget += SCAN_BUDGET_PER_CODE;
        return -1;
      }
    }
    return this.#lookUpOrAdd(lo, hi);
  }

  /** {@linkcode getOrAdd} of a code the filter may have seen, or of any code once there are
   * more than the filter serves: looked for among the unindexed codes (scanned while the budget
   * lasts) and in the index, or in the index brought up to date. */
  #lookUpOrAdd(lo: number, hi: number): number {
    const size = this.#size;
    const from = this.#indexed;
    if (size < FILTER_MAX_CODES && size - from <= this.#scanBudget) {
      this.#scanBudget -= size - from;
      const keys = this.#keys;
      for (let k = from; k < size; k++) {
        if (keys[2 * k] === lo && keys[2 * k + 1] === hi) return k;
      }
      if (from > 0) {
        const known = this.#slots[this.#slot(lo, hi)];
        if (known !== 0) return known - 1;
      }
      // The filter's bits are set already.
      this.#append(lo, hi);
      this.#scanBudget += SCAN_BUDGET_PER_CODE;
      return -1;
    }
    this.#index();
    const i = this.#slot(lo, hi);
    const known = this.#slots[i];
    if (known !== 0) return known - 1;
    this.#append(lo, hi);
    this.#slots[i] = size + 1;
    this.#indexed = size + 1;
    if (this.#size * 2 > this.#mask) this.#grow();
    return -1;
  }

  /** Stores the code of halves `lo` and `hi` as number #size (not indexed). */
  #append(lo: number, hi: number): void {
    const k = this.#size++;
    if (2 * k + 2 > this.#keys.length) this.#growKeys();
    this.#keys[2 * k] = lo;
    this.#keys[2 * k + 1] = hi;
  }

  /** Makes the key store 4 times as large. */
  #growKeys(): void {
    const grown = new Int32Array(4 * this.#keys.length);
    grown.set(this.#keys);
    this.#keys = grown;
  }

  /** Brings the index up to date: every code in the slots. */
  #index(): void {
    if (this.#slots.length === 0) this.#slots = new Int32Array(INITIAL_SLOTS);
    const size = this.#size;
    if (this.#indexed === size) return;
    if (size * 2 > this.#mask) this.#grow();
    const keys = this.#keys;
    for (let k = this.#indexed; k < size; k++) {
      this.#slots[this.#slot(keys[2 * k], keys[2 * k + 1])] = k + 1;
    }
    this.#indexed = size;
    this.#scanBudget = 0;
  }

  /** Makes the slots 4 times as many (until the size is below half of them) and indexes the codes
   * indexed so far again. */
  #grow(): void {
    let n = this.#slots.length * 4;
    while (this.#size * 2 > n - 1) n *= 4;
    this.#slots = new Int32Array(n);
    this.#mask = n - 1;
    const keys = this.#keys;
    for (let k = 0; k < this.#indexed; k++) {
      this.#slots[this.#slot(keys[2 * k], keys[2 * k + 1])] = k + 1;
    }
  }
}
