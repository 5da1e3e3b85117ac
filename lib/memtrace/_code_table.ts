/**
 * A hash table from location codes to values. Codes are safe integers, mostly beyond 2^31 (return
 * addresses): a `Map` would hash them as heap numbers on every lookup, which the copy does once
 * per new frame. Open addressing with linear probing over a Float64Array of keys.
 * @module
 */

/** 2^-32: multiplying by it is exact, and cheaper than dividing by 2^32. */
const INV_TWO32 = 1 / 4294967296;
/** No code is NaN: it marks an empty slot. */
const EMPTY = NaN;

/** A map from location codes (safe integers) to values. */
export class CodeTable<V> {
  #keys = new Float64Array(1024).fill(EMPTY);
  #vals: (V | undefined)[] = new Array(1024).fill(undefined);
  #mask = 1023;
  #size = 0;

  /** Number of entries. */
  get size(): number {
    return this.#size;
  }

  /** The slot holding `code`, or the empty slot where it would go. */
  #slot(code: number): number {
    const lo = code >>> 0;
    const hi = Math.floor(code * INV_TWO32) | 0;
    let i = (Math.imul(lo ^ Math.imul(hi, 0x85ebca6b), 0x9e3779b1) >>> 7) & this.#mask;
    const keys = this.#keys;
    while (true) {
      const k = keys[i];
      if (k === code || k !== k) return i;
      i = (i + 1) & this.#mask;
    }
  }

  /** The value of `code`, or undefined. */
  get(code: number): V | undefined {
    return this.#vals[this.#slot(code)];
  }

  /** The value of `code` if it has one; otherwise sets it to `v` and returns undefined. */
  getOrSet(code: number, v: V): V | undefined {
    const i = this.#slot(code);
    if (this.#keys[i] === code) return this.#vals[i];
    this.#keys[i] = code;
    this.#vals[i] = v;
    if (++this.#size * 2 > this.#mask) this.#grow();
    return undefined;
  }

  #grow(): void {
    const keys = this.#keys, vals = this.#vals;
    const n = keys.length * 4;
    this.#keys = new Float64Array(n).fill(EMPTY);
    this.#vals = new Array(n).fill(undefined);
    this.#mask = n - 1;
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i];
      if (k === k) {
        const j = this.#slot(k);
        this.#keys[j] = k;
        this.#vals[j] = vals[i];
      }
    }
  }
}
