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
  /** 32 less the table's log2 size: a key's home is the top bits of its scrambled hash. */
  #shift = 32 - 10;
  #size = 0;
  readonly #hidden = new Map<number, number[]>();

  /** The slot where `key` is or would go. */
  #slot(key: number): number {
    const keys = this.#keys, mask = this.#mask;
    let i = this.#home(key);
    for (;;) {
      const k = keys[i];
      if (k === key || k === EMPTY) return i;
      i = (i + 1) & mask;
    }
  }

  /**
   * The slot a key hashes to: its low 32 bits mixed with the high ones, multiplied by the golden
   * ratio's 32-bit constant, and the product's top bits taken (Fibonacci hashing). Its low bits
   * would depend only on the key's low bits, so that ids differing by multiples of the table's
   * size, which a crafted trace can hold, would all share one home and make every probe walk
   * them all.
   */
  #home(key: number): number {
    const lo = key >>> 0, hi = (key - lo) / 4294967296;
    return Math.imul(lo ^ Math.imul(hi, 0x27d4eb2d), 0x9e3779b1) >>> this.#shift;
  }

  /** @internal The longest run of occupied slots (what a probe may walk), for tests. */
  longestRun(): number {
    let longest = 0, run = 0;
    const keys = this.#keys;
    // Twice round, so that a run wrapping past the end is counted whole.
    for (let n = 0; n < 2 * keys.length; n++) {
      run = keys[n & this.#mask] === EMPTY ? 0 : run + 1;
      if (run > longest) longest = run;
    }
    return Math.min(longest, this.#size);
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
      const home = this.#home(k);
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
    this.#shift--;
    for (let i = 0; i < oldKeys.length; i++) {
      const k = oldKeys[i];
      if (k === EMPTY) continue;
      const j = this.#slot(k);
      this.#keys[j] = k;
      this.#values[j] = oldValues[i];
    }
  }
}
