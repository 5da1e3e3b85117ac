/**
 * An insert-only hash index from keys of up to three numbers to small integers, in one typed
 * array: no allocation per lookup (a `Map` keyed by a non-Smi number boxes it), one per doubling.
 * Open addressing with linear probing, at most half full; each slot holds its three keys and
 * value side by side, so that a probe touches one cache line.
 * @module
 */

const EMPTY = -1;
/** Numbers per slot: k1, k2, k3, value. */
const STRIDE = 4;

/** Maps keys `(k1, k2, k3)` (any numbers compared with `===`) to values ≥ 0. */
export class KeyIndex {
  #slots: Float64Array;
  #mask: number;
  #size = 0;

  constructor(capacity = 1024) {
    let n = 16;
    while (n < 2 * capacity) n *= 2;
    this.#slots = emptySlots(n);
    this.#mask = n - 1;
  }

  /** Number of keys. */
  get size(): number {
    return this.#size;
  }

  /** The value of `(k1, k2, k3)`, or −1 when absent. */
  get(k1: number, k2: number, k3: number): number {
    const slots = this.#slots, mask = this.#mask;
    for (let i = hash(k1, k2, k3) & mask;; i = (i + 1) & mask) {
      const at = i * STRIDE, v = slots[at + 3];
      if (v === EMPTY || (slots[at] === k1 && slots[at + 1] === k2 && slots[at + 2] === k3)) {
        return v;
      }
    }
  }

  /** Sets the value of `(k1, k2, k3)` (a key absent so far: see {@linkcode get}) to `value`. */
  add(k1: number, k2: number, k3: number, value: number): void {
    if (2 * (this.#size + 1) > this.#mask + 1) this.#grow();
    this.#put(k1, k2, k3, value);
    this.#size++;
  }

  #put(k1: number, k2: number, k3: number, value: number): void {
    const slots = this.#slots, mask = this.#mask;
    let i = hash(k1, k2, k3) & mask;
    while (slots[i * STRIDE + 3] !== EMPTY) i = (i + 1) & mask;
    const at = i * STRIDE;
    slots[at] = k1;
    slots[at + 1] = k2;
    slots[at + 2] = k3;
    slots[at + 3] = value;
  }

  #grow(): void {
    const old = this.#slots;
    const n = 2 * (this.#mask + 1);
    this.#slots = emptySlots(n);
    this.#mask = n - 1;
    for (let at = 0; at < old.length; at += STRIDE) {
      if (old[at + 3] !== EMPTY) this.#put(old[at], old[at + 1], old[at + 2], old[at + 3]);
    }
  }
}

function emptySlots(n: number): Float64Array {
  const slots = new Float64Array(n * STRIDE);
  for (let at = 3; at < slots.length; at += STRIDE) slots[at] = EMPTY;
  return slots;
}

/** Mixes a number's low and high 32 bits (as an integer; fractions are dropped) into `h`. */
function mix(h: number, k: number): number {
  h = Math.imul(h ^ (k | 0), 0x9e3779b1);
  h = Math.imul(h ^ ((k / 4294967296) | 0), 0x85ebca77);
  return h ^ (h >>> 15);
}

function hash(k1: number, k2: number, k3: number): number {
  return mix(mix(mix(0x2545f491, k1), k2), k3);
}
