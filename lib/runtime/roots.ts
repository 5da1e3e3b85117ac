/**
 * The caller's GC roots: {@linkcode Root} slots and the {@linkcode RootSet} the runtime scans.
 *
 * The set keeps roots in the order they were created (the order a minor collection promotes
 * them, which decides promoted blocks' addresses) with O(1) insertion and removal and no hashing:
 * an array of slots, a removed root's slot emptied, the array compacted when more than half of it
 * is empty and nobody is walking it. Walking it while roots are added or removed behaves like a
 * `Set`'s iteration: roots added during the walk are visited, roots removed before their turn
 * are not.
 *
 * @module
 */

let slotOf: (r: Root) => number;
let setSlot: (r: Root, slot: number) => void;

/**
 * A GC root held by the caller: a mutable slot pointing to a block (or empty, -1). The runtime
 * updates it when the block moves (promotion, compaction). Create roots once and re-`set` them;
 * roots are the only thing keeping simulated blocks alive.
 */
export class Root {
  /** Address of the block, or -1. */
  addr: number;
  /** Size of the block in words, if known (for promotion statistics). */
  wosize: number;
  readonly #set: RootSet;
  /** Index in the set's slots while the root is in it, else -1. */
  #slot = -1;

  static {
    slotOf = (r) => r.#slot;
    setSlot = (r, slot) => {
      r.#slot = slot;
    };
  }

  /** Use `Runtime.root`, which creates the root and adds it to the runtime's set. */
  constructor(set: RootSet, addr: number, wosize: number) {
    this.#set = set;
    this.addr = addr;
    this.wosize = wosize;
  }
  /** Points the root at another block (OCaml's `caml_modify` of a root slot). */
  set(addr: number, wosize = 0): void {
    this.addr = addr;
    this.wosize = wosize;
  }
  /** Empties the slot. */
  clear(): void {
    this.addr = -1;
  }
  /** Removes the root from the runtime. */
  release(): void {
    this.#set.delete(this);
    this.addr = -1;
  }
}

/** The roots of a runtime, in creation order (see the module doc). */
export class RootSet implements Iterable<Root> {
  #slots: (Root | null)[] = [];
  #live = 0;
  #walking = 0;

  /** How many roots the set holds. */
  get size(): number {
    return this.#live;
  }

  /** Adds `r` at the end (nothing if it is already in the set). */
  add(r: Root): void {
    if (this.has(r)) return;
    const slots = this.#slots;
    if (this.#walking === 0 && slots.length >= 64 && this.#live * 2 < slots.length) this.#compact();
    setSlot(r, this.#slots.length);
    this.#slots.push(r);
    this.#live++;
  }

  /** Removes `r`; says whether it was in the set. */
  delete(r: Root): boolean {
    if (!this.has(r)) return false;
    this.#slots[slotOf(r)] = null;
    setSlot(r, -1);
    this.#live--;
    return true;
  }

  /** Whether `r` is in the set. */
  has(r: Root): boolean {
    const i = slotOf(r);
    return i >= 0 && this.#slots[i] === r;
  }

  /** The roots in creation order. */
  *[Symbol.iterator](): Iterator<Root> {
    this.#walking++;
    try {
      const slots = this.#slots;
      for (let i = 0; i < slots.length; i++) {
        const r = slots[i];
        if (r !== null) yield r;
      }
    } finally {
      this.#walking--;
    }
  }

  #compact(): void {
    const slots = this.#slots;
    let n = 0;
    for (let i = 0; i < slots.length; i++) {
      const r = slots[i];
      if (r !== null) {
        slots[n] = r;
        setSlot(r, n);
        n++;
      }
    }
    slots.length = n;
  }
}
