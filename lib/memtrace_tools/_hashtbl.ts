/**
 * A model of OCaml 5.3's `Hashtbl` (stdlib/hashtbl.ml), for the tables whose iteration order
 * reaches memtrace's tools' output. Same bucket array (a power of two, at least 16, from
 * `create n`), same bucket index (`hash land (size - 1)`), same insertion at the head of a bucket
 * (`add`), same growth (the array doubles once there are more than two bindings per bucket, each
 * old bucket's bindings keeping their order in the new buckets), same traversal (buckets in
 * index order, each from its head) for `iter`, `fold` and `filter_map_inplace`. `add` does not
 * replace: a later binding of an equal key shadows the earlier one until it is removed.
 * @module
 */

/** What `Hashtbl.Make` needs: a hash and an equality. `hash` may return any integer whose low
 * 31 bits are those of OCaml's hash (`Math.imul` products are fine): only `hash land (size - 1)`
 * is used, and a table never has more than 2^30 buckets here. */
export interface HashedType<K> {
  hash(key: K): number;
  equal(a: K, b: K): boolean;
}

interface Cell<K, V> {
  key: K;
  data: V;
  next: Cell<K, V> | null;
}

/** `Hashtbl.power_2_above 16 n`, capped (as `Sys.max_array_length` caps OCaml's) at 2^30. */
function initialBuckets(n: number): number {
  let x = 16;
  while (x < n && x < 2 ** 30) x *= 2;
  return x;
}

/** An OCaml `Hashtbl.Make(H).t` (unseeded: `Make` ignores the seed). */
export class OCamlHashtbl<K, V> {
  #data: (Cell<K, V> | null)[];
  #count = 0;
  #traversals = 0;
  readonly #h: HashedType<K>;

  /** `Tbl.create n`. */
  constructor(h: HashedType<K>, initialSize: number) {
    this.#h = h;
    this.#data = new Array(initialBuckets(initialSize)).fill(null);
  }

  #index(key: K): number {
    return this.#h.hash(key) & (this.#data.length - 1);
  }

  /** Number of bindings (`Tbl.length`). */
  get length(): number {
    return this.#count;
  }

  /** Number of buckets (`(Tbl.stats t).num_buckets`). */
  get buckets(): number {
    return this.#data.length;
  }

  /** `Tbl.add`: a new binding at the head of its bucket, shadowing any equal key. */
  add(key: K, data: V): void {
    const i = this.#index(key);
    this.#data[i] = { key, data, next: this.#data[i] };
    this.#count++;
    if (this.#count > this.#data.length * 2) this.#resize();
  }

  /** Doubles the bucket array; each old bucket's cells are appended, in order, to the tails of
   * the new buckets. During a traversal, OCaml copies the cells instead of relinking them so
   * that the traversal goes on over the old array; we do the same. */
  #resize(): void {
    const odata = this.#data;
    const nsize = odata.length * 2;
    if (nsize > 2 ** 30) return;
    const inplace = this.#traversals === 0;
    const ndata: (Cell<K, V> | null)[] = new Array(nsize).fill(null);
    const tails: (Cell<K, V> | null)[] = new Array(nsize).fill(null);
    this.#data = ndata;
    for (let i = 0; i < odata.length; i++) {
      for (let c = odata[i]; c !== null; c = c.next) {
        const cell = inplace ? c : { key: c.key, data: c.data, next: null };
        const j = this.#index(c.key);
        const tail = tails[j];
        if (tail === null) ndata[j] = cell;
        else tail.next = cell;
        tails[j] = cell;
      }
    }
    for (const tail of tails) if (tail !== null) tail.next = null;
  }

  /** `Tbl.find_opt`: the most recent binding of `key`, or undefined. */
  find(key: K): V | undefined {
    for (let c = this.#data[this.#index(key)]; c !== null; c = c.next) {
      if (this.#h.equal(key, c.key)) return c.data;
    }
    return undefined;
  }

  /** `Tbl.mem`. */
  mem(key: K): boolean {
    for (let c = this.#data[this.#index(key)]; c !== null; c = c.next) {
      if (this.#h.equal(c.key, key)) return true;
    }
    return false;
  }

  /** `Tbl.remove`: removes the most recent binding of `key`, uncovering any older one. */
  remove(key: K): void {
    const i = this.#index(key);
    let prev: Cell<K, V> | null = null;
    for (let c = this.#data[i]; c !== null; prev = c, c = c.next) {
      if (this.#h.equal(c.key, key)) {
        this.#count--;
        if (prev === null) this.#data[i] = c.next;
        else prev.next = c.next;
        return;
      }
    }
  }

  /** `Tbl.clear`: empties the table, keeping its bucket array (unlike `reset`). */
  clear(): void {
    if (this.#count > 0) {
      this.#count = 0;
      this.#data.fill(null);
    }
  }

  /** `Tbl.iter`: buckets in index order, each from its head (most recent binding first). */
  iter(f: (key: K, data: V) => void): void {
    this.#traversals++;
    try {
      const d = this.#data;
      for (let i = 0; i < d.length; i++) {
        for (let c = d[i]; c !== null; c = c.next) f(c.key, c.data);
      }
    } finally {
      this.#traversals--;
    }
  }

  /** `Tbl.fold f t init`, in {@linkcode iter}'s order. */
  fold<A>(f: (key: K, data: V, acc: A) => A, init: A): A {
    let acc = init;
    this.iter((k, v) => {
      acc = f(k, v, acc);
    });
    return acc;
  }

  /** `Tbl.filter_map_inplace`: in {@linkcode iter}'s order, keeps (with the new data) the
   * bindings for which `f` returns a value and drops those for which it returns undefined. */
  filterMapInplace(f: (key: K, data: V) => V | undefined): void {
    this.#traversals++;
    try {
      const d = this.#data;
      for (let i = 0; i < d.length; i++) {
        let prev: Cell<K, V> | null = null;
        for (let c = d[i]; c !== null; c = c.next) {
          const v = f(c.key, c.data);
          if (v === undefined) {
            this.#count--;
            continue;
          }
          c.data = v;
          if (prev === null) d[i] = c;
          else prev.next = c;
          prev = c;
        }
        if (prev === null) d[i] = null;
        else prev.next = null;
      }
    } finally {
      this.#traversals--;
    }
  }
}

/**
 * A table used only through `add`, `find`, `mem` and `remove` (never traversed), so that its
 * bucket layout cannot show in any output: a `Map`, with OCaml's shadowing semantics kept
 * (`add` of a bound key hides the old binding; `remove` uncovers it).
 */
export class ShadowingMap<K, V> {
  readonly #top = new Map<K, V>();
  readonly #hidden = new Map<K, V[]>();

  /** `Tbl.add`. */
  add(key: K, data: V): void {
    if (this.#top.has(key)) {
      const older = this.#hidden.get(key);
      if (older === undefined) this.#hidden.set(key, [this.#top.get(key)!]);
      else older.push(this.#top.get(key)!);
    }
    this.#top.set(key, data);
  }

  /** `Tbl.find_opt`. */
  find(key: K): V | undefined {
    return this.#top.get(key);
  }

  /** `Tbl.mem`. */
  mem(key: K): boolean {
    return this.#top.has(key);
  }

  /** `Tbl.remove`. */
  remove(key: K): void {
    if (!this.#top.has(key)) return;
    const older = this.#hidden.get(key);
    if (older === undefined) {
      this.#top.delete(key);
      return;
    }
    this.#top.set(key, older.pop()!);
    if (older.length === 0) this.#hidden.delete(key);
  }
}
