/**
 * An insert-only hash index from the cube's keys (class, cell) to row numbers that stores only
 * the row numbers: 4 bytes a slot where `_index.ts`'s `KeyIndex` takes 32, the keys being read back
 * from the rows' own columns. On traces with millions of rows the index was most of the
 * aggregate's memory. Open addressing with linear probing, at most half full.
 * @module
 */
const EMPTY = -1;

/** Maps (class, cell) to a row ≥ 0, the row's keys given by the caller's columns. */
export class RowIndex {
  #slots: Int32Array;
  #mask: number;
  #size = 0;

  constructor(capacity = 1024) {
    let n = 16;
    while (n < 2 * capacity) n *= 2;
    this.#slots = new Int32Array(n).fill(EMPTY);
    this.#mask = n - 1;
  }

  /** The row of `(cls, cell)`, or −1 when absent; `rowCls[r]` and `rowCell[r]` are row r's keys. */
  get(cls: number, cell: number, rowCls: Int32Array, rowCell: Int32Array): number {
    const slots = this.#slots, mask = this.#mask;
    for (let i = hash(cls, cell) & mask;; i = (i + 1) & mask) {
      const r = slots[i];
      if (r === EMPTY || (rowCls[r] === cls && rowCell[r] === cell)) return r;
    }
  }

  /** Adds row `row` with keys `(cls, cell)` (absent so far: see {@linkcode get}); the columns
   * give every row's keys, for moving them when the index grows. */
  add(cls: number, cell: number, row: number, rowCls: Int32Array, rowCell: Int32Array): void {
    if (2 * (this.#size + 1) > this.#mask + 1) this.#grow(rowCls, rowCell);
    this.#put(hash(cls, cell), row);
    this.#size++;
  }

  #put(h: number, row: number): void {
    const slots = this.#slots, mask = this.#mask;
    let i = h & mask;
    while (slots[i] !== EMPTY) i = (i + 1) & mask;
    slots[i] = row;
  }

  #grow(rowCls: Int32Array, rowCell: Int32Array): void {
    const old = this.#slots;
    const n = 2 * (this.#mask + 1);
    this.#slots = new Int32Array(n).fill(EMPTY);
    this.#mask = n - 1;
    for (let i = 0; i < old.length; i++) {
      const r = old[i];
      if (r !== EMPTY) this.#put(hash(rowCls[r], rowCell[r]), r);
    }
  }
}

function hash(cls: number, cell: number): number {
  let h = Math.imul(0x2545f491 ^ cls, 0x9e3779b1);
  h = Math.imul((h ^ (h >>> 15)) ^ cell, 0x85ebca77);
  return h ^ (h >>> 13);
}
