/**
 * Object ids → small integers (the live objects' slots) while a trace streams by: an open
 * addressing hash table (linear probing, at most half full, deletion by backward shift, so no
 * tombstones), whose size follows the objects live at once, never the ids. (memtrace numbers
 * allocations 0, 1, 2, …: a typed array indexed by id held 4 bytes per allocation of the whole
 * trace, 268 MB at 10^8 events, most of them for objects long collected.) Any number is a key,
 * compared with `===`.
 * @module
 */

const EMPTY = -1;

/** A map from object ids to values ≥ 0. */
export class IdMap {
  #keys: Float64Array;
  #values: Int32Array;
  #mask: number;
  #size = 0;

  constructor(capacity = 1024) {
    let n = 16;
    while (n < 2 * capacity) n *= 2;
    this.#keys = new Float64Array(n);
    this.#values = new Int32Array(n).fill(EMPTY);
    this.#mask = n - 1;
  }

  /** Number of ids set. */
  get size(): number {
    return this.#size;
  }

  /** Slots of the table (twice the most ids set at once, at most, rounded up to a power of 2). */
  get capacity(): number {
    return this.#mask + 1;
  }

  /** The value of `id`, or −1. */
  get(id: number): number {
    const keys = this.#keys, values = this.#values, mask = this.#mask;
    for (let i = hash(id) & mask;; i = (i + 1) & mask) {
      const v = values[i];
      if (v === EMPTY || keys[i] === id) return v;
    }
  }

  /** Sets the value of `id` to `value` (≥ 0). */
  set(id: number, value: number): void {
    const keys = this.#keys, values = this.#values, mask = this.#mask;
    for (let i = hash(id) & mask;; i = (i + 1) & mask) {
      if (values[i] === EMPTY) break;
      if (keys[i] === id) {
        values[i] = value;
        return;
      }
    }
    if (2 * (this.#size + 1) > this.#mask + 1) this.#grow();
    this.#put(id, value);
    this.#size++;
  }

  /** Removes `id`. */
  delete(id: number): void {
    const keys = this.#keys, values = this.#values, mask = this.#mask;
    let i = hash(id) & mask;
    for (;; i = (i + 1) & mask) {
      if (values[i] === EMPTY) return;
      if (keys[i] === id) break;
    }
    // Backward shift: entries after the hole that may sit in it move back, so that every entry
    // stays reachable from its home slot without a tombstone.
    for (let j = (i + 1) & mask; values[j] !== EMPTY; j = (j + 1) & mask) {
      const home = hash(keys[j]) & mask;
      // Entry j may move to the hole i unless its home lies cyclically in (i, j].
      const between = i <= j ? home > i && home <= j : home > i || home <= j;
      if (between) continue;
      keys[i] = keys[j];
      values[i] = values[j];
      i = j;
    }
    values[i] = EMPTY;
    this.#size--;
  }

  /** Calls `f` with every value (in the table's order). */
  forEachValue(f: (value: number) => void): void {
    const values = this.#values;
    for (let i = 0; i < values.length; i++) if (values[i] !== EMPTY) f(values[i]);
  }

  #put(id: number, value: number): void {
    const keys = this.#keys, values = this.#values, mask = this.#mask;
    let i = hash(id) & mask;
    while (values[i] !== EMPTY) i = (i + 1) & mask;
    keys[i] = id;
    values[i] = value;
  }

  #grow(): void {
    const keys = this.#keys, values = this.#values;
    const n = 2 * (this.#mask + 1);
    this.#keys = new Float64Array(n);
    this.#values = new Int32Array(n).fill(EMPTY);
    this.#mask = n - 1;
    for (let i = 0; i < values.length; i++) {
      if (values[i] !== EMPTY) this.#put(keys[i], values[i]);
    }
  }
}

/** Mixes a number's low and high 32 bits (as an integer; fractions are dropped). */
function hash(id: number): number {
  let h = Math.imul((id | 0) ^ 0x2545f491, 0x9e3779b1);
  h = Math.imul((h ^ (h >>> 15)) ^ ((id / 4294967296) | 0), 0x85ebca77);
  return h ^ (h >>> 13);
}
