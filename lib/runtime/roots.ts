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
 *
 * A root is a slot of the program's global data by default (a field of a major block the
 * program writes with `caml_modify`): overwriting, clearing or releasing it goes through the
 * write barrier, which darkens the block it held ({@linkcode RootSet.onOverwrite}). A `local`
 * root is a C local root or a stack slot (`CAMLlocal`, a value the program holds in a
 * variable): it is darkened when a major cycle starts, and dropping it darkens nothing.
 */
export class Root {
  /** Address of the block, or -1. */
  addr: number;
  /** Size of the block in words, if known (for promotion statistics). */
  wosize: number;
  /** A local root (see the class doc), not a global slot. */
  readonly local: boolean;
  /** Marking work of the block when the root is darkened directly (a local root, or a block
   * that memprof's roots reach first), or -1: what its size and contents give. The runtime
   * updates it for blocks whose cost changes (a profile's config block). */
  darken: number;
  /** The keep site (an array of the exported program's global data) whose slot this root is,
   * or -1; with {@linkcode slot}, where the major GC's marking finds its block. -2: a block
   * that another kept block holds (no slot; releasing it writes nothing). */
  readonly site: number;
  /** The slot of {@linkcode site}. */
  readonly slot: number;
  /** The root whose block the first field of this root's block links (a keep.list's previous
   * block, a block of an unmarshalled value), or null. */
  link: Root | null;
  /** A block that marking reaches from memprof's roots (a profile's config block, and what it
   * holds), not through the program's data. */
  readonly viaMemprof: boolean;
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
  constructor(
    set: RootSet,
    addr: number,
    wosize: number,
    opts: RootOptions = {},
  ) {
    this.#set = set;
    this.addr = addr;
    this.wosize = wosize;
    this.local = opts.local ?? false;
    this.darken = opts.darken ?? -1;
    this.site = opts.site ?? -1;
    this.slot = opts.slot ?? 0;
    this.link = opts.link ?? null;
    this.viaMemprof = opts.viaMemprof ?? false;
  }
  /** Points the root at another block (OCaml's `caml_modify` of a root slot). */
  set(addr: number, wosize = 0): void {
    if (this.addr !== addr) this.#overwrite();
    this.addr = addr;
    this.wosize = wosize;
    if (this.site >= 0) this.#set.onStore?.(this);
  }
  /** Empties the slot. */
  clear(): void {
    this.#overwrite();
    this.addr = -1;
  }
  /** Removes the root from the runtime. */
  release(): void {
    const slot = this.site === -1 || this.#set.holds(this);
    if (this.#set.delete(this) && slot) this.#overwrite();
    this.addr = -1;
  }
  /** The write barrier of a global slot losing its block (`caml_modify`'s `caml_darken`). A
   * root of a keep site that its slot no longer holds (a keep.list's older block, reached
   * through the newer one) is no slot: nothing is written; nor is a block memprof's roots
   * reach (the program's `prof` slots are the runtime's concern: `MajorGc.profileOverwritten`). */
  #overwrite(): void {
    if (this.addr < 0 || this.local || this.viaMemprof) return;
    if (this.site >= 0 && this.#set.has(this) && !this.#set.holds(this)) return;
    this.#set.onOverwrite?.(this.addr);
  }
}

/** Options of a {@linkcode Root} (see its fields). */
export interface RootOptions {
  /** {@linkcode Root.local} (default false). */
  readonly local?: boolean;
  /** {@linkcode Root.darken} (default -1). */
  readonly darken?: number;
  /** {@linkcode Root.site} (default -1). */
  readonly site?: number;
  /** {@linkcode Root.slot} (default 0). */
  readonly slot?: number;
  /** {@linkcode Root.link} (default null). */
  readonly link?: Root | null;
  /** {@linkcode Root.viaMemprof} (default false). */
  readonly viaMemprof?: boolean;
}

/** {@linkcode Root.site} of a block that another kept block holds: no slot of the program's. */
export const REACHED_SITE = -2;

/** The roots of a runtime, in creation order (see the module doc). */
export class RootSet implements Iterable<Root> {
  /** Called with the block a global slot (a root not `local`) held when the slot is
   * overwritten, cleared or released: OCaml's deletion barrier darkens that block. */
  onOverwrite: ((addr: number) => void) | null = null;
  /** Called with a keep site's slot (a root with a `site`) once a block was stored in it
   * again ({@linkcode Root.set}): the store's remembered set entry. */
  onStore: ((r: Root) => void) | null = null;
  #slots: (Root | null)[] = [];
  #live = 0;
  #walking = 0;
  /** The root in each slot of each keep site (the last one added there). */
  readonly #sites: (Root | null)[][] = [];

  /** Whether `r` is the root its keep site's slot holds. */
  holds(r: Root): boolean {
    return this.#sites[r.site]?.[r.slot] === r;
  }

  /** The address of the block in slot `slot` of keep site `site`, or -1. */
  siteSlot(site: number, slot: number): number {
    const r = this.#sites[site]?.[slot];
    return r === null || r === undefined ? -1 : r.addr;
  }

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
    if (r.site >= 0) (this.#sites[r.site] ??= [])[r.slot] = r;
  }

  /** Removes `r`; says whether it was in the set. */
  delete(r: Root): boolean {
    if (!this.has(r)) return false;
    this.#slots[slotOf(r)] = null;
    setSlot(r, -1);
    this.#live--;
    if (r.site >= 0 && this.#sites[r.site][r.slot] === r) this.#sites[r.site][r.slot] = null;
    return true;
  }

  /** Whether `r` is in the set. */
  has(r: Root): boolean {
    const i = slotOf(r);
    return i >= 0 && this.#slots[i] === r;
  }

  /** Calls `fn` with each root in creation order, as iterating the set does (roots `fn` adds
   * are visited, roots it removes before their turn are not), without a generator: the hot
   * loops of collections use it. */
  forEach(fn: (r: Root) => void): void {
    this.#walking++;
    try {
      const slots = this.#slots;
      for (let i = 0; i < slots.length; i++) {
        const r = slots[i];
        if (r !== null) fn(r);
      }
    } finally {
      this.#walking--;
    }
  }

  /** Appends the address of every root holding a block (`addr` ≥ 0), in creation order, to
   * `out`. */
  addressesInto(out: number[]): void {
    const slots = this.#slots;
    for (let i = 0; i < slots.length; i++) {
      const r = slots[i];
      if (r !== null && r.addr >= 0) out.push(r.addr);
    }
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
