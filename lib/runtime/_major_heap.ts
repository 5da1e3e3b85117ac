/**
 * OCaml 5.3's shared (major) heap as the major GC's pacing sees it (runtime/shared_heap.c):
 * blocks of at most 128 words with header live in 4,096-word pools of one size class each;
 * larger blocks are separate "large allocations" with a two-word header. Sweeping visits the
 * pools size class by size class (available pools first), then the large allocations, and costs
 * the pool's whole slab or the large block's size whatever it finds; an allocation that finds no
 * swept pool with room sweeps pools of its class lazily (`pool_find`), and a pool found empty
 * while sweeping is released.
 *
 * Each domain has its own heap (`Caml_state->shared_heap`): it allocates and promotes into it and
 * sweeps only it. A terminating domain's pools and large allocations go to global lists
 * ({@linkcode OrphanPools}, `pool_freelist`'s `global_avail_pools`, `global_full_pools` and
 * `global_large`): no domain's size counts them, nor sweeps them, until a domain that finds no
 * pool of its own for a size class adopts one (`pool_global_adopt`), or the next cycle begins
 * and a domain takes them all (`caml_cycle_heap`).
 *
 * Colours follow 5.3's rotation: a block allocated during a cycle is MARKED; at the start of the
 * next cycle MARKED becomes UNMARKED and UNMARKED becomes GARBAGE; marking turns reachable
 * UNMARKED blocks MARKED again; sweeping frees GARBAGE.
 *
 * @module
 */

/** Words in a pool (`POOL_WSIZE`). */
export const POOL_WSIZE = 4096;
/** Words of a pool's header (`POOL_HEADER_WSIZE`). */
const POOL_HEADER_WSIZE = 4;
/** Largest block (with header) allocated in a pool (`SIZECLASS_MAX`). */
export const SIZECLASS_MAX = 128;
/** Words of a large allocation's header (`LARGE_ALLOC_HEADER_SZ` / 8). */
export const LARGE_ALLOC_HEADER_WSIZE = 2;

/** Block size (with header) of each size class (`wsize_sizeclass`, sizeclasses.h). */
const WSIZE_SIZECLASS: readonly number[] = [
  1,
  2,
  3,
  4,
  5,
  6,
  7,
  8,
  10,
  12,
  14,
  16,
  17,
  19,
  22,
  25,
  28,
  32,
  33,
  37,
  42,
  47,
  53,
  59,
  65,
  73,
  81,
  89,
  99,
  108,
  118,
  128,
];
/** Words lost at the start of a pool of each size class (`wastage_sizeclass`). */
const WASTAGE_SIZECLASS: readonly number[] = [
  0,
  0,
  0,
  0,
  2,
  0,
  4,
  4,
  2,
  0,
  4,
  12,
  12,
  7,
  0,
  17,
  4,
  28,
  0,
  22,
  18,
  3,
  11,
  21,
  62,
  4,
  42,
  87,
  33,
  96,
  80,
  124,
];
const NUM_SIZECLASSES = WSIZE_SIZECLASS.length;

/** The size class of a block of `whsize` words with header (`sizeclass_wsize`). */
export function sizeclassOf(whsize: number): number {
  let sz = 0;
  while (WSIZE_SIZECLASS[sz] < whsize) sz++;
  return sz;
}

/** Sweeping work of one pool of size class `sz` (its slab). */
export function sweepWorkOf(sz: number): number {
  const capacity = (POOL_WSIZE - POOL_HEADER_WSIZE - WASTAGE_SIZECLASS[sz]) / WSIZE_SIZECLASS[sz];
  return capacity * WSIZE_SIZECLASS[sz];
}

/** Block colours (`caml_global_heap_state`), relative to the current cycle. */
export const enum Colour {
  MARKED = 0,
  UNMARKED = 1,
  GARBAGE = 2,
}

/** One block of the major heap that the simulation knows about. (A class, so that every block
 * has one shape from its creation: the sweep loops over them stay monomorphic.) */
export class MajorBlock {
  /** Header address (compaction moves a block: `MajorGc.move` in major_gc.ts). */
  addr: number;
  /** Size with header, in words. */
  readonly whsize: number;
  /** Colour. */
  colour: Colour;
  /** Its pool, or null for a large allocation. */
  pool: Pool | null;
  /** No field to scan (a string, a float, a custom block: a tag at or above `No_scan_tag`);
   * otherwise its fields are taken to be immediates. */
  readonly noScan: boolean;
  /** The cycle (`MajorGc.cycles`) whose marking is still to reach this block through the
   * global slot holding it, or -1. */
  scanPending = -1;
  /** The cycle (`MajorGc.cycles`) in which marking marked this block, or allocated it (OCaml 5
   * allocates blocks marked); -1 before. Used by the marking model (lib/runtime/_mark.ts). */
  markedIn = -1;
  /** A block at `addr` of `whsize` words, of colour `colour`, in `pool` (null: large). */
  constructor(
    addr: number,
    whsize: number,
    colour: Colour,
    pool: Pool | null,
    noScan = false,
  ) {
    this.addr = addr;
    this.whsize = whsize;
    this.colour = colour;
    this.pool = pool;
    this.noScan = noScan;
  }
}

/** A pool: one size class, a fixed number of slots. */
export class Pool {
  /** Size class. */
  readonly sz: number;
  /** Slots. */
  readonly capacity: number;
  /** Blocks the simulation allocated in it (until swept as garbage). */
  readonly blocks: MajorBlock[] = [];
  /** Live blocks of the program's fixed part (runtime and harness data; never freed). */
  fixed: number;
  /** A pool of size class `sz` holding `fixed` permanent blocks. */
  constructor(sz: number, fixed = 0) {
    this.sz = sz;
    this.capacity = (POOL_WSIZE - POOL_HEADER_WSIZE - WASTAGE_SIZECLASS[sz]) / WSIZE_SIZECLASS[sz];
    this.fixed = fixed;
  }
  /** Sweeping cost: the whole slab (`POOL_END - POOL_FIRST_BLOCK`). */
  get sweepWork(): number {
    return sweepWorkOf(this.sz);
  }
  /** Slots in use. */
  get used(): number {
    return this.fixed + this.blocks.length;
  }
  /** Live blocks of `p` once colours have rotated (UNMARKED ones, and its permanent ones). */
  static live(p: Pool): number {
    let n = p.fixed;
    for (const b of p.blocks) if (b.colour === Colour.UNMARKED) n++;
    return n;
  }
}

/** A large allocation of the program's fixed part, or one the simulation made. */
interface Large {
  readonly whsize: number;
  /** The simulation's block, or null for a permanent one. */
  readonly block: MajorBlock | null;
}

/** Where a pool starts, given by the calibrated initial state. */
export interface PoolState {
  /** Size class. */
  readonly sz: number;
  /** Permanent blocks in it. */
  readonly fixed: number;
  /** Already swept in the current cycle. */
  readonly swept: boolean;
}

/**
 * The pools and large allocations of terminated domains (`pool_freelist`'s global lists), shared
 * by every domain's heap. Lists are stacks whose head is the last element.
 */
export class OrphanPools {
  /** `global_avail_pools`, by size class. */
  readonly avail: Pool[][] = [];
  /** `global_full_pools`, by size class. */
  readonly full: Pool[][] = [];
  /** `global_large`. */
  readonly large: Large[] = [];
  /** Empty lists. */
  constructor() {
    for (let i = 0; i < NUM_SIZECLASSES; i++) {
      this.avail.push([]);
      this.full.push([]);
    }
  }
}

/** The heap. Lists are stacks whose head is the last element, as the C lists' heads. */
export class MajorHeap {
  #avail: Pool[][] = [];
  #full: Pool[][] = [];
  #unsweptAvail: Pool[][] = [];
  #unsweptFull: Pool[][] = [];
  #sweptLarge: Large[] = [];
  #unsweptLarge: Large[] = [];
  #nextToSweep = 0;
  /** `stats.pool_words`. */
  poolWords = 0;
  /** `stats.large_words` (headers included). */
  largeWords = 0;
  /** Sweeping done by allocations since the last slice (`major_work_done_between_slices`). */
  workBetweenSlices = 0;
  readonly #orphans: OrphanPools;

  /** A heap holding the given pools and permanent large blocks (sizes with header), adopting
   * the pools of terminated domains from `orphans` (default: lists of its own). */
  constructor(
    pools: readonly PoolState[],
    large: readonly number[],
    orphans: OrphanPools = new OrphanPools(),
  ) {
    this.#orphans = orphans;
    for (let i = 0; i < NUM_SIZECLASSES; i++) {
      this.#avail.push([]);
      this.#full.push([]);
      this.#unsweptAvail.push([]);
      this.#unsweptFull.push([]);
    }
    // Listed head first: push in reverse so the first listed is the head.
    for (let k = pools.length - 1; k >= 0; k--) {
      const p = pools[k];
      const pool = new Pool(p.sz, p.fixed);
      (p.swept ? this.#avail : this.#unsweptAvail)[p.sz].push(pool);
      this.poolWords += POOL_WSIZE;
    }
    for (let k = large.length - 1; k >= 0; k--) {
      this.#unsweptLarge.push({ whsize: large[k], block: null });
      this.largeWords += large[k] + LARGE_ALLOC_HEADER_WSIZE;
    }
  }

  /** `caml_heap_size` in words. */
  get heapWords(): number {
    return this.poolWords + this.largeWords;
  }

  /** `caml_shared_try_alloc`: places a new (MARKED) block (`noScan`: see {@linkcode
   * MajorBlock.noScan}). */
  allocate(addr: number, whsize: number, noScan = false): MajorBlock {
    const block = new MajorBlock(addr, whsize, Colour.MARKED, null, noScan);
    if (whsize <= SIZECLASS_MAX) {
      const pool = this.#placeSmall(whsize);
      pool.blocks.push(block);
      block.pool = pool;
      this.#fullIfFull(pool);
    } else {
      this.#sweptLarge.push({ whsize, block });
      this.largeWords += whsize + LARGE_ALLOC_HEADER_WSIZE;
    }
    return block;
  }

  /** Places a block that stays live for good (the program's own data). */
  allocatePermanent(whsize: number): void {
    if (whsize <= SIZECLASS_MAX) {
      const pool = this.#placeSmall(whsize);
      pool.fixed++;
      this.#fullIfFull(pool);
    } else {
      this.#sweptLarge.push({ whsize, block: null });
      this.largeWords += whsize + LARGE_ALLOC_HEADER_WSIZE;
    }
  }

  #placeSmall(whsize: number): Pool {
    return this.#poolFind(sizeclassOf(whsize));
  }

  #fullIfFull(pool: Pool): void {
    if (pool.used === pool.capacity) {
      this.#avail[pool.sz].pop();
      this.#full[pool.sz].push(pool);
    }
  }

  /**
   * The heap as a {@linkcode MajorGc} initial state can give it back: valid between cycles (no
   * block of the simulation's, nothing swept but by allocation, no large block swept).
   */
  snapshot(): { pools: PoolState[]; large: number[] } {
    const pools: PoolState[] = [];
    for (let sz = 0; sz < NUM_SIZECLASSES; sz++) {
      for (
        const [list, swept] of [[this.#avail[sz], true], [this.#full[sz], true], [
          this.#unsweptAvail[sz],
          false,
        ], [this.#unsweptFull[sz], false]] as const
      ) {
        for (let k = list.length - 1; k >= 0; k--) pools.push({ sz, fixed: list[k].used, swept });
      }
    }
    const large: number[] = [];
    for (const list of [this.#sweptLarge, this.#unsweptLarge]) {
      for (let k = list.length - 1; k >= 0; k--) large.push(list[k].whsize);
    }
    return { pools, large };
  }

  #poolFind(sz: number): Pool {
    const avail = this.#avail[sz];
    if (avail.length) return avail[avail.length - 1];
    const unswept = this.#unsweptAvail[sz];
    while (!avail.length && unswept.length) {
      this.workBetweenSlices += this.#poolSweep(unswept, sz, false);
    }
    if (avail.length) return avail[avail.length - 1];
    // pool_global_adopt: a terminated domain's available pool, else a full one, swept at once.
    const orphans = this.#orphans;
    const adopted = orphans.avail[sz].pop();
    if (adopted !== undefined) {
      this.poolWords += POOL_WSIZE;
      avail.push(adopted);
      return adopted;
    }
    const full = orphans.full[sz].pop();
    if (full !== undefined) {
      this.poolWords += POOL_WSIZE;
      this.#full[sz].push(full);
      this.workBetweenSlices += this.#poolSweep(this.#full[sz], sz, false);
      if (avail.length) return avail[avail.length - 1];
    }
    const pool = new Pool(sz);
    this.poolWords += POOL_WSIZE;
    avail.push(pool);
    return pool;
  }

  /** `pool_sweep`: the head pool of `list`; returns the work (the whole slab). */
  #poolSweep(list: Pool[], sz: number, release: boolean): number {
    const pool = list.pop();
    if (pool === undefined) return 0;
    const work = pool.sweepWork;
    const blocks = pool.blocks;
    let kept = 0;
    for (let i = 0; i < blocks.length; i++) {
      const b = blocks[i];
      if (b.colour === Colour.GARBAGE) b.pool = null;
      else blocks[kept++] = b;
    }
    blocks.length = kept;
    if (release && pool.used === 0) {
      this.poolWords -= POOL_WSIZE;
    } else {
      (pool.used === pool.capacity ? this.#full : this.#avail)[sz].push(pool);
    }
    return work;
  }

  /** `large_alloc_sweep`: returns the work (the block's size). */
  #largeSweep(): number {
    const a = this.#unsweptLarge.pop();
    if (a === undefined) return 0;
    if (a.block !== null && a.block.colour === Colour.GARBAGE) {
      this.largeWords -= a.whsize + LARGE_ALLOC_HEADER_WSIZE;
    } else this.#sweptLarge.push(a);
    return a.whsize;
  }

  /** `caml_sweep`: sweeps until `work` is used up; returns what is left (may be negative). */
  sweep(work: number): number {
    while (work > 0 && this.#nextToSweep < NUM_SIZECLASSES) {
      const sz = this.#nextToSweep;
      const availWork = this.#poolSweep(this.#unsweptAvail[sz], sz, true);
      work -= availWork;
      let fullWork = 0;
      if (work > 0) {
        fullWork = this.#poolSweep(this.#unsweptFull[sz], sz, true);
        work -= fullWork;
      }
      if (availWork + fullWork === 0) this.#nextToSweep++;
    }
    while (work > 0 && this.#unsweptLarge.length) work -= this.#largeSweep();
    return work;
  }

  /** `caml_finish_sweeping` (a terminating domain): sweeps what is left, work not counted. */
  finishSweeping(): void {
    this.sweep(Infinity);
  }

  /**
   * `caml_teardown_shared_heap` (a terminated domain, swept): its pools and large allocations
   * go to the global lists, where its size no longer counts them.
   */
  teardown(): void {
    const orphans = this.#orphans;
    for (let sz = 0; sz < NUM_SIZECLASSES; sz++) {
      // move_all_pools: from the head, each pushed on the global list's head.
      for (
        const [src, dst] of [[this.#avail[sz], orphans.avail[sz]], [
          this.#full[sz],
          orphans.full[sz],
        ]]
      ) {
        while (src.length) dst.push(src.pop()!);
      }
    }
    while (this.#sweptLarge.length) orphans.large.push(this.#sweptLarge.pop()!);
    this.poolWords = 0;
    this.largeWords = 0;
  }

  /**
   * `caml_compact_heap`'s part in this heap, right after {@linkcode cycle} (colours rotated:
   * UNMARKED is live, GARBAGE died in the cycle that ended): size class by size class, the
   * partially filled pools (`unswept_avail_pools`, head first) are kept until their free slots
   * can hold the live blocks of the pools after them; those are evacuated into the list's head
   * pool (which goes to the full list once it fills), their garbage dropped, and released
   * (`pool_free`). Full pools and large allocations stay. Which slot a block had is not
   * modelled: an evacuated pool's blocks move in the reverse of their allocation order (a fresh
   * pool hands out its slots from the highest address down), its permanent blocks last.
   */
  compact(): void {
    for (let sz = 1; sz < NUM_SIZECLASSES; sz++) {
      const list = this.#unsweptAvail[sz];
      const n = list.length;
      if (n === 0) continue;
      let totalLive = 0;
      for (const p of list) totalLive += Pool.live(p);
      if (totalLive === 0) continue;
      // Keep pools from the head while the free slots kept are fewer than the live blocks left.
      let free = 0;
      let remaining = totalLive;
      let k = n - 1;
      for (; k >= 0 && free < remaining; k--) {
        const p = list[k];
        free += p.capacity - p.used;
        remaining -= Pool.live(p);
      }
      // list[0..k] (the tail of the C list, its last pool first here) are evacuated.
      const evacuated = list.splice(0, k + 1);
      for (let e = evacuated.length - 1; e >= 0; e--) {
        const from = evacuated[e];
        const blocks = from.blocks;
        for (let i = blocks.length - 1; i >= 0; i--) {
          const b = blocks[i];
          if (b.colour === Colour.GARBAGE) b.pool = null;
          else this.#evacuateInto(sz, b);
        }
        for (let i = 0; i < from.fixed; i++) this.#evacuateInto(sz, null);
        blocks.length = 0;
        from.fixed = 0;
        this.poolWords -= POOL_WSIZE;
      }
    }
  }

  /** One live block (`null`: a permanent one) copied into the head of the size class's
   * partially filled pools, which moves to the full ones once it has no free slot. */
  #evacuateInto(sz: number, b: MajorBlock | null): void {
    const avail = this.#unsweptAvail[sz];
    const to = avail[avail.length - 1];
    if (b === null) to.fixed++;
    else {
      to.blocks.push(b);
      b.pool = to;
    }
    if (to.used === to.capacity) this.#unsweptFull[sz].push(avail.pop()!);
  }

  /**
   * `caml_cycle_heap`: every pool and large allocation is to be swept again; with `adopt`, the
   * terminated domains' pools and large allocations become this heap's, to be swept first (in
   * 5.3 the first domain of the cycle's stop-the-world to take the lock gets them all).
   */
  cycle(opts: { readonly adopt?: boolean } = {}): void {
    for (let i = 0; i < NUM_SIZECLASSES; i++) {
      this.#unsweptAvail[i] = this.#avail[i];
      this.#avail[i] = [];
      this.#unsweptFull[i] = this.#full[i];
      this.#full[i] = [];
    }
    this.#unsweptLarge = this.#sweptLarge;
    this.#sweptLarge = [];
    this.#nextToSweep = 0;
    if (opts.adopt !== true) return;
    const orphans = this.#orphans;
    for (let sz = 0; sz < NUM_SIZECLASSES; sz++) {
      // move_all_pools, then adopt_all_pool_stats_with_lock.
      for (
        const [src, dst] of [[orphans.avail[sz], this.#unsweptAvail[sz]], [
          orphans.full[sz],
          this.#unsweptFull[sz],
        ]]
      ) {
        while (src.length) {
          dst.push(src.pop()!);
          this.poolWords += POOL_WSIZE;
        }
      }
    }
    while (orphans.large.length) {
      const a = orphans.large.pop()!;
      this.#unsweptLarge.push(a);
      this.largeWords += a.whsize + LARGE_ALLOC_HEADER_WSIZE;
    }
  }
}
