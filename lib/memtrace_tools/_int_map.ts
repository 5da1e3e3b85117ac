/**
 * {@linkcode ShadowingMap}'s semantics for number keys and values (object ids to sample counts)
 * in typed arrays: open addressing with linear probing and backward-shift deletion, so that a
 * table of millions of live objects costs no object per entry and no heap number per key.
 * OCaml's shadowing is kept: `add` of a bound key hides the old binding and `remove` uncovers it
 * (the hidden bindings, which only a crafted trace makes, wait in a `Map` of stacks).
 * @module
 */

/** Never a key: keys are integers. */
const EMPTY = 0.5;

/** A hash table from integer keys to numbers. */
export class ShadowingIntMap {
  #keys = new Float64Array(1 << 10).fill(EMPTY);
  #values = new Float64Array(1 << 10);
  #mask = (1 << 10) - 1;
  #size = 0;
  readonly #hidden = new Map<number, number[]>();

  /** The slot where `key` is or would go. */
  #slot(key: number): number {
    const keys = this.#keys, mask = this.#mask;
    // The low 32 bits mixed with the high ones, then scrambled (ids are often consecutive).
    const lo = key >>> 0, hi = (key - lo) / 4294967296;
    let i = (Math.imul(lo ^ Math.imul(hi, 0x27d4eb2d), 0x9e3779b1) >>> 0) & mask;
    for (;;) {
      const k = keys[i];
      if (k === key || k === EMPTY) return i;
      i = (i + 1) & mask;
    }
  }

  /** `Tbl.add`. */
  add(key: number, value: number): void {
    const i = this.#slot(key);
    if (this.#keys[i] === key) {
      const older = this.#hidden.get(key);
      if (older === undefined) this.#hidden.set(key, [this.#values[i]]);
      else older.push(this.#values[i]);
      this.#values[i] = value;
      return;
    }
    this.#keys[i] = key;
    this.#values[i] = value;
    if (++this.#size * 2 > this.#keys.length) this.#grow();
  }

  /** `Tbl.find_opt`. */
  find(key: number): number | undefined {
    const i = this.#slot(key);
    return this.#keys[i] === key ? this.#values[i] : undefined;
  }

  /** `Tbl.remove`: the binding of `key` and returns it (undefined if unbound), uncovering the
   * one it hid. */
  take(key: number): number | undefined {
    const i = this.#slot(key);
    const keys = this.#keys, values = this.#values;
    if (keys[i] !== key) return undefined;
    const v = values[i];
    const older = this.#hidden.size === 0 ? undefined : this.#hidden.get(key);
    if (older !== undefined) {
      values[i] = older.pop()!;
      if (older.length === 0) this.#hidden.delete(key);
      return v;
    }
    // Backward-shift deletion: move later entries of the probe run into the hole.
    const mask = this.#mask;
    let hole = i, j = i;
    for (;;) {
      j = (j + 1) & mask;
      const k = keys[j];
      if (k === EMPTY) break;
      const lo = k >>> 0, hi = (k - lo) / 4294967296;
      const home = (Math.imul(lo ^ Math.imul(hi, 0x27d4eb2d), 0x9e3779b1) >>> 0) & mask;
      // Entry j may fill the hole if its home is not cyclically in (hole, j].
      if ((j > hole && (home <= hole || home > j)) || (j < hole && home <= hole && home > j)) {
        keys[hole] = k;
        values[hole] = values[j];
        hole = j;
      }
    }
    keys[hole] = EMPTY;
    this.#size--;
    return v;
  }

  #grow(): void {
    const oldKeys = this.#keys, oldValues = this.#values;
    const n = oldKeys.length * 2;
    this.#keys = new Float64Array(n).fill(EMPTY);
    this.#values = new Float64Array(n);
    this.#mask = n - 1;
    for (let i = 0; i < oldKeys.length; i++) {
      const k = oldKeys[i];
      if (k === EMPTY) continue;
      const j = this.#slot(k);
      this.#keys[j] = k;
      this.#values[j] = oldValues[i];
    }
  }
}
