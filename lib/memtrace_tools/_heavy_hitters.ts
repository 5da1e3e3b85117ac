/**
 * memtrace's `Heavy_hitters` functor (in bin/hotspots.ml) applied to (caller, allocator) pairs
 * of function ids packed in one number: the Misra–Gries summary with `k` counters. A new key
 * when all counters are taken counts a miss against every counter and drops those whose hits no
 * longer exceed their misses.
 *
 * The summary is an OCaml `Hashtbl.Make` table whose traversal order reaches the report, so it
 * is {@linkcode OCamlHashtbl}'s model (same buckets, same head insertion, same order-keeping
 * growth, same traversal) specialised to number keys and these counters, in typed arrays: a cell
 * is an index, the chains are `next` links, freed cells are reused.
 *
 * A miss does not visit every counter (memtrace's `filter_map_inplace` does, which made misses
 * most of hotspots' time on traces with many distinct pairs): the misses are one global count M,
 * a counter made at count M0 has had M − M0 misses, and it goes once its hits no longer exceed
 * them, i.e. when M reaches its "key" hits + M0. Counters wait in lists by key, filed under the
 * key they had when filed (hits only raise it); when M reaches a list, each of its counters goes
 * if its key is still M and is filed again under its key otherwise. Removing a counter unlinks it
 * from its bucket's chain, keeping the others' order, so the table is the one memtrace has.
 * @module
 */

/** `Hashtbl.power_2_above 16 n`. */
function initialBuckets(n: number): number {
  let x = 16;
  while (x < n && x < 2 ** 30) x *= 2;
  return x;
}

const NIL = -1;

/** The Misra–Gries summary of memtrace's hotspots, on keys hashed by `hash`. */
export class PairHeavyHitters {
  readonly #k: number;
  readonly #hash: (key: number) => number;
  #buckets: Int32Array;
  // Cells: key, counters and the chain link.
  #key: Float64Array;
  #hits: Float64Array;
  /** The miss count when the counter was made. */
  #base: Float64Array;
  #skippedBefore: Float64Array;
  #next: Int32Array;
  /** The next counter in the same list by key. */
  #qnext: Int32Array;
  /** List heads by key. */
  readonly #lists = new Map<number, number>();
  /** Misses so far. */
  #missCount = 0;
  #free = NIL;
  #cells = 0;
  /** Bindings in the table (OCaml's `Tbl.length`, which decides growth). */
  #count = 0;
  #len = 0;
  #added = 0;
  #skipped = 0;

  /** A summary of `k` counters over keys hashed by `hash` (any integer whose low bits are
   * OCaml's hash). */
  constructor(k: number, hash: (key: number) => number) {
    this.#k = k;
    this.#hash = hash;
    this.#buckets = new Int32Array(initialBuckets(k)).fill(NIL);
    const cap = k + 1;
    this.#key = new Float64Array(cap);
    this.#hits = new Float64Array(cap);
    this.#base = new Float64Array(cap);
    this.#skippedBefore = new Float64Array(cap);
    this.#next = new Int32Array(cap);
    this.#qnext = new Int32Array(cap);
  }

  /** Counts one occurrence of `x`. */
  add(x: number): void {
    const buckets = this.#buckets, keys = this.#key, next = this.#next;
    const b = this.#hash(x) & (buckets.length - 1);
    for (let c = buckets[b]; c !== NIL; c = next[c]) {
      if (keys[c] === x) {
        this.#hits[c]++;
        this.#added++;
        return;
      }
    }
    if (this.#len < this.#k) {
      this.#len++;
      const c = this.#newCell();
      keys[c] = x;
      this.#hits[c] = 1;
      this.#base[c] = this.#missCount;
      this.#skippedBefore[c] = this.#skipped;
      this.#file(c, this.#missCount + 1);
      next[c] = buckets[b];
      buckets[b] = c;
      if (++this.#count > buckets.length * 2) this.#resize();
    } else {
      this.#skipped++;
      this.#missAll();
    }
    this.#added++;
  }

  #newCell(): number {
    if (this.#free !== NIL) {
      const c = this.#free;
      this.#free = this.#next[c];
      return c;
    }
    return this.#cells++;
  }

  /** Files counter `c` in the list of `key`. */
  #file(c: number, key: number): void {
    const head = this.#lists.get(key);
    this.#qnext[c] = head ?? NIL;
    this.#lists.set(key, c);
  }

  /** memtrace's `filter_map_inplace` on a miss: every counter gets a miss; those whose hits no
   * longer exceed their misses go (see the module doc). */
  #missAll(): void {
    const m = ++this.#missCount;
    const first = this.#lists.get(m);
    if (first === undefined) return;
    this.#lists.delete(m);
    let c: number = first;
    const hits = this.#hits, base = this.#base, qnext = this.#qnext;
    while (c !== NIL) {
      const after: number = qnext[c];
      const key = hits[c] + base[c];
      if (key > m) this.#file(c, key);
      else this.#remove(c);
      c = after;
    }
  }

  /** Unlinks counter `c` from its bucket's chain and frees it. */
  #remove(c: number): void {
    const buckets = this.#buckets, next = this.#next;
    const b = this.#hash(this.#key[c]) & (buckets.length - 1);
    if (buckets[b] === c) buckets[b] = next[c];
    else {
      let p = buckets[b];
      while (next[p] !== c) p = next[p];
      next[p] = next[c];
    }
    this.#count--;
    this.#len--;
    this.#skipped += this.#hits[c];
    next[c] = this.#free;
    this.#free = c;
  }

  /** Doubles the buckets; each old bucket's cells go, in order, to the tails of the new ones. */
  #resize(): void {
    const old = this.#buckets;
    const nsize = old.length * 2;
    if (nsize > 2 ** 30) return;
    const nb = new Int32Array(nsize).fill(NIL);
    const tails = new Int32Array(nsize).fill(NIL);
    const next = this.#next, keys = this.#key;
    for (let i = 0; i < old.length; i++) {
      for (let c = old[i]; c !== NIL;) {
        const after = next[c];
        const j = this.#hash(keys[c]) & (nsize - 1);
        if (tails[j] === NIL) nb[j] = c;
        else next[tails[j]] = c;
        tails[j] = c;
        c = after;
      }
    }
    for (let j = 0; j < nsize; j++) if (tails[j] !== NIL) next[tails[j]] = NIL;
    this.#buckets = nb;
  }

  /** The counters in OCaml's traversal order (buckets in index order, each from its head). */
  iter(f: (x: number, hits: number, skippedBefore: number) => void): void {
    const buckets = this.#buckets, next = this.#next;
    for (let i = 0; i < buckets.length; i++) {
      for (let c = buckets[i]; c !== NIL; c = next[c]) {
        f(this.#key[c], this.#hits[c], this.#skippedBefore[c]);
      }
    }
  }
}
