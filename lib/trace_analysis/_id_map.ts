/**
 * Object ids → small integers (the live objects' slots) while a trace streams by. memtrace
 * numbers allocations 0, 1, 2, … so ids are dense: those below 2^31 index a typed array, grown while ids stay
 * below twice the number of entries set plus a margin. Any other id (negative, fractional, or far
 * ahead: a malformed trace) goes to a `Map`, so memory follows the ids actually used.
 * @module
 */

const ABSENT = -1;
const MARGIN = 1 << 16;

/** A map from object ids to values ≥ 0. */
export class IdMap {
  #dense = new Int32Array(1024).fill(ABSENT);
  #sparse = new Map<number, number>();
  #sets = 0;

  /** The value of `id`, or −1. */
  get(id: number): number {
    const dense = this.#dense;
    if ((id | 0) === id && id >= 0 && id < dense.length) {
      const v = dense[id];
      if (v !== ABSENT || this.#sparse.size === 0) return v;
    }
    return this.#sparse.get(id) ?? ABSENT;
  }

  /** Sets the value of `id` to `value` (≥ 0). */
  set(id: number, value: number): void {
    this.#sets++;
    if ((id | 0) === id && id >= 0) {
      if (id >= this.#dense.length && id < 2 * this.#sets + MARGIN) this.#grow(id);
      if (id < this.#dense.length) {
        this.#dense[id] = value;
        if (this.#sparse.size !== 0) this.#sparse.delete(id);
        return;
      }
    }
    this.#sparse.set(id, value);
  }

  /** Removes `id`. */
  delete(id: number): void {
    const dense = this.#dense;
    if ((id | 0) === id && id >= 0 && id < dense.length) dense[id] = ABSENT;
    if (this.#sparse.size !== 0) this.#sparse.delete(id);
  }

  /** Calls `f` with every value, dense ids first in id order, then the others in insertion
   * order. */
  forEachValue(f: (value: number) => void): void {
    const dense = this.#dense;
    for (let i = 0; i < dense.length; i++) if (dense[i] !== ABSENT) f(dense[i]);
    for (const v of this.#sparse.values()) f(v);
  }

  #grow(id: number): void {
    let n = this.#dense.length;
    while (n <= id) n *= 2;
    const next = new Int32Array(n).fill(ABSENT);
    next.set(this.#dense);
    this.#dense = next;
  }
}
