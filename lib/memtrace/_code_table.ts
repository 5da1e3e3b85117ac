/**
 * A hash table numbering location codes in the order they are added (the reader's definition
 * numbers). Codes are safe integers, mostly beyond 2^31 (return addresses): a `Map` would hash
 * them as heap numbers on every lookup. A code is kept as its two 32-bit halves (as a trace holds
 * it), so that no call passes a heap number. Open addressing with linear probing over an
 * Int32Array of slots each holding a code's number plus one (0 marking an empty slot, so that a
 * new table needs no filling), the codes themselves kept densely by number: the slots of a
 * table of a few thousand codes stay in the processor's first-level cache.
 * @module
 */

/** 2^-32: multiplying by it is exact, and cheaper than dividing by 2^32. */
const INV_TWO32 = 1 / 4294967296;
const INITIAL_SLOTS = 4096;
/** Codes the key store holds at first; it grows by a factor of 4. */
const INITIAL_CODES = 512;

/** A map from location codes (safe integers) to their numbers 0, 1, 2… in order of addition. */
export class CodeTable {
  #slots = new Int32Array(INITIAL_SLOTS);
  #mask = INITIAL_SLOTS - 1;
  /** Code k's low and high halves at 2 k and 2 k + 1. */
  #keys = new Int32Array(2 * INITIAL_CODES);
  #size = 0;

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
    return this.#slots[this.#slot(code | 0, Math.floor(code * INV_TWO32) | 0)] - 1;
  }

  /** The number of the code `hi` × 2^32 + (`lo` mod 2^32), given as its low 32 bits `lo` and
   * high 32 bits `hi`, each a signed 32-bit integer, if it has one; otherwise adds it (its number
   * is then the size before) and returns -1. */
  getOrAdd(lo: number, hi: number): number {
    const i = this.#slot(lo, hi);
    const known = this.#slots[i];
    if (known !== 0) return known - 1;
    const k = this.#size++;
    if (2 * k + 2 > this.#keys.length) {
      const grown = new Int32Array(4 * this.#keys.length);
      grown.set(this.#keys);
      this.#keys = grown;
    }
    this.#keys[2 * k] = lo;
    this.#keys[2 * k + 1] = hi;
    this.#slots[i] = k + 1;
    if (this.#size * 2 > this.#mask) this.#grow();
    return -1;
  }

  #grow(): void {
    const n = this.#slots.length * 4;
    this.#slots = new Int32Array(n);
    this.#mask = n - 1;
    const keys = this.#keys;
    for (let k = 0; k < this.#size; k++) {
      this.#slots[this.#slot(keys[2 * k], keys[2 * k + 1])] = k + 1;
    }
  }
}
