/**
 * Whole backtraces interned while a trace streams by, with the stack node after each of their
 * codes: a backtrace seen before costs a hash of its new codes and a comparison of all its codes,
 * sequential in memory, rather than one lookup per frame in the (node, code) → node table, whose
 * random accesses into a table as large as the tree dominate on deep stacks. Bounded: at most
 * {@linkcode STACK_CACHE_CODES} codes in all (12 bytes each); past them, new backtraces are not
 * interned and are walked frame by frame.
 * @module
 */
import { GrowI32 } from "./_grow.ts";

/** Most codes the cache holds, over all its backtraces (24 MiB). */
export const STACK_CACHE_CODES = 2 ** 21;

/** Interned backtraces: codes → the node after each code. */
export class StackCache {
  /** Open addressing, at most half full: backtrace index + 1, or 0 for an empty slot. */
  #table = new Int32Array(1024);
  #hash = new GrowI32();
  #start = new GrowI32();
  #len = new GrowI32();
  #codes = new Float64Array(1 << 14);
  #nodes = new Int32Array(1 << 14);
  #used = 0;

  /** Where the nodes of backtrace `buf[0, len)` (of hash `h`) start in {@linkcode nodes}, or
   * −1 when it is not interned. */
  find(buf: Float64Array, len: number, h: number): number {
    const table = this.#table, mask = table.length - 1;
    const hashes = this.#hash.data, lens = this.#len.data, codes = this.#codes;
    for (let i = h & mask;; i = (i + 1) & mask) {
      const s = table[i] - 1;
      if (s < 0) return -1;
      if (hashes[s] !== h || lens[s] !== len) continue;
      const base = this.#start.data[s];
      let j = 0;
      while (j < len && codes[base + j] === buf[j]) j++;
      if (j === len) return base;
    }
  }

  /** The nodes of the interned backtraces (index with {@linkcode find}'s result). */
  get nodes(): Int32Array {
    return this.#nodes;
  }

  /** Interns backtrace `buf[0, len)` of hash `h` (not interned yet) and its nodes
   * `nodes[0, len)`, unless the cache is full. */
  add(buf: Float64Array, nodes: Int32Array, len: number, h: number): void {
    if (this.#used + len > STACK_CACHE_CODES) return;
    while (this.#used + len > this.#codes.length) {
      const codes = new Float64Array(this.#codes.length * 2);
      codes.set(this.#codes);
      this.#codes = codes;
      const grown = new Int32Array(this.#nodes.length * 2);
      grown.set(this.#nodes);
      this.#nodes = grown;
    }
    const base = this.#used;
    this.#codes.set(buf.subarray(0, len), base);
    this.#nodes.set(nodes.subarray(0, len), base);
    this.#used += len;
    const s = this.#hash.push(h);
    this.#start.push(base);
    this.#len.push(len);
    if (2 * (s + 1) > this.#table.length) {
      this.#table = new Int32Array(this.#table.length * 2);
      for (let t = 0; t < s; t++) this.#place(t);
    }
    this.#place(s);
  }

  #place(s: number): void {
    const table = this.#table, mask = table.length - 1;
    let i = this.#hash.data[s] & mask;
    while (table[i] !== 0) i = (i + 1) & mask;
    table[i] = s + 1;
  }
}
