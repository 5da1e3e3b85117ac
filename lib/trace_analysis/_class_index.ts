/**
 * An insert-only hash index from the aggregation's class keys (stack node, domain, source, length
 * or size class) to class numbers that stores only the class numbers: 4 bytes a slot where
 * `_index.ts`'s `KeyIndex` takes 32, the keys being read back from the classes' own columns
 * (as `_row_index.ts` does for the cube's rows). On traces with millions of classes the index was
 * the largest table of `trace top`. Open addressing with linear probing, at most half full.
 * @module
 */
const EMPTY = -1;

/** The classes' key columns, as the aggregation keeps them (entries past the classes counted
 * are ignored). */
export interface ClassColumns {
  /** Stack node (−1: no known location). */
  node: Int32Array;
  /** Domain. */
  domain: Int32Array;
  /** Source code (0, 1, 2). */
  source: Int32Array;
  /** Exact length, or the size class's largest length. */
  size: Float64Array;
}

/** Maps (node, domain, source, size) to a class ≥ 0, the keys given by the caller's columns. */
export class ClassIndex {
  #slots: Int32Array;
  #mask: number;
  #size = 0;

  constructor(capacity = 1024) {
    let n = 16;
    while (n < 2 * capacity) n *= 2;
    this.#slots = new Int32Array(n).fill(EMPTY);
    this.#mask = n - 1;
  }

  /** The class of the key, or −1 when absent. */
  get(node: number, domain: number, source: number, size: number, cols: ClassColumns): number {
    const slots = this.#slots, mask = this.#mask;
    const cn = cols.node, cd = cols.domain, cs = cols.source, cz = cols.size;
    for (let i = hash(node, domain, source, size) & mask;; i = (i + 1) & mask) {
      const c = slots[i];
      if (
        c === EMPTY ||
        (cn[c] === node && cd[c] === domain && cs[c] === source && cz[c] === size)
      ) return c;
    }
  }

  /** Adds class `cls`, whose keys are already in `cols` (absent so far: see {@linkcode get}). */
  add(cls: number, cols: ClassColumns): void {
    if (2 * (this.#size + 1) > this.#mask + 1) this.#grow(cols);
    this.#put(cls, cols);
    this.#size++;
  }

  #put(cls: number, cols: ClassColumns): void {
    const slots = this.#slots, mask = this.#mask;
    let i = hash(cols.node[cls], cols.domain[cls], cols.source[cls], cols.size[cls]) & mask;
    while (slots[i] !== EMPTY) i = (i + 1) & mask;
    slots[i] = cls;
  }

  #grow(cols: ClassColumns): void {
    const old = this.#slots;
    const n = 2 * (this.#mask + 1);
    this.#slots = new Int32Array(n).fill(EMPTY);
    this.#mask = n - 1;
    for (let i = 0; i < old.length; i++) if (old[i] !== EMPTY) this.#put(old[i], cols);
  }
}

function hash(node: number, domain: number, source: number, size: number): number {
  let h = Math.imul(0x2545f491 ^ node, 0x9e3779b1);
  h = Math.imul((h ^ (h >>> 15)) ^ (domain * 4 + source), 0x85ebca77);
  // The size: its low 32 bits and the rest (lengths may pass 2^32).
  h = Math.imul((h ^ (h >>> 13)) ^ (size | 0), 0xc2b2ae3d);
  h = Math.imul((h ^ (h >>> 16)) ^ ((size / 4294967296) | 0), 0x27d4eb2f);
  return h ^ (h >>> 15);
}
