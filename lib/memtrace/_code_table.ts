/**
 * A hash table from location codes to numbers (the reader's definition numbers). Codes are safe
 * integers, mostly beyond 2^31 (return addresses): a `Map` would hash them as heap numbers on
 * every lookup. Open addressing with linear probing over a Float64Array of keys and an Int32Array
 * of values plus one, 0 marking an empty slot (so that a new table needs no filling).
 * @module
 */

/** 2^-32: multiplying by it is exact, and cheaper than dividing by 2^32. */
const INV_TWO32 = 1 / 4294967296;
const INITIAL_SLOTS = 4096;

/** A map from location codes (safe integers) to integers in [0, 2^31 − 1). */
export class CodeTable {
  #keys = new Float64Array(INITIAL_SLOTS);
  /** The value of each slot's code plus one; 0 for an empty slot. */
  #vals = new Int32Array(INITIAL_SLOTS);
  #mask = INITIAL_SLOTS - 1;
  #size = 0;

  /** Number of entries. */
  get size(): number {
    return this.#size;
  }

  /** The slot holding `code`, or the empty slot where it would go. */
  #slot(code: number): number {
    const lo = code >>> 0;
    const hi = Math.floor(code * INV_TWO32) | 0;
    const keys = this.#keys, vals = this.#vals, mask = this.#mask;
    let i = (Math.imul(lo ^ Math.imul(hi, 0x85ebca6b), 0x9e3779b1) >>> 7) & mask;
    while (vals[i] !== 0 && keys[i] !== code) i = (i + 1) & mask;
    return i;
  }

  /** The value of `code`, or -1. */
  get(code: number): number {
    return this.#vals[this.#slot(code)] - 1;
  }

  /** The value of `code` if it has one; otherwise sets it to `v` and returns -1. */
  getOrSet(code: number, v: number): number {
    const i = this.#slot(code);
    if (this.#vals[i] !== 0) return this.#vals[i] - 1;
    this.#keys[i] = code;
    this.#vals[i] = v + 1;
    if (++this.#size * 2 > this.#mask) this.#grow();
    return -1;
  }

  #grow(): void {
    const keys = this.#keys, vals = this.#vals;
    const n = keys.length * 4;
    this.#keys = new Float64Array(n);
    this.#vals = new Int32Array(n);
    this.#mask = n - 1;
    for (let i = 0; i < keys.length; i++) {
      if (vals[i] !== 0) {
        const j = this.#slot(keys[i]);
        this.#keys[j] = keys[i];
        this.#vals[j] = vals[i];
      }
    }
  }
}
