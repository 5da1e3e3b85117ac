/**
 * Tracking entries and entry tables, as in memprof.c: one entry per sampled block, kept in
 * resizable tables with three cursors (`young`, `evict`, `active`) that record the lowest index
 * at which some work may be needed.
 *
 * Cursor meanings (memprof.c): before `young`, neither the block nor the user data points into
 * the minor heap; before `evict`, no entry is deleted; before `active`, no callback is pending.
 * All three are ≤ `size`.
 *
 * A table is a structure of arrays (memprof.c's `entry_s` fields, one typed array each; the user
 * data and the thread running a callback on the entry in parallel JS arrays), so that sampling
 * allocates no object per entry and the passes over a table are plain loops.
 *
 * @module
 */

import type { Profile } from "./profile.ts";
import { ProfileStatus } from "./profile.ts";

/** Callback indexes (CB_*). */
export const CB_NONE = 0;
/** Allocation callback. */
export const CB_ALLOC = 1;
/** Promotion callback. */
export const CB_PROMOTE = 2;
/** Deallocation callback. */
export const CB_DEALLOC = 3;

/** memprof.c's `CB_MASK(cb)`. */
export function cbMask(cb: number): number {
  return 1 << (cb - 1);
}

/** `block` of an entry whose block is gone (OCaml's Val_unit): dead, deleted or never set. */
export const NO_BLOCK = -1;

// An entry's flags, the callbacks it ran, the one running and its source share one word of
// `meta` (memprof.c's bit fields of entry_s), so that a pass reads one array for all of them.

/** Meta bit: `block` is an offset in a combined allocation not made yet. */
export const F_OFFSET = 1;
/** Meta bit: allocated in the minor heap. */
export const F_ALLOC_YOUNG = 2;
/** Meta bit: promoted. */
export const F_PROMOTED = 4;
/** Meta bit: deallocated. */
export const F_DEALLOCATED = 8;
/** Meta bit: marked for deletion. */
export const F_DELETED = 16;
/** Meta bit: a thread runs a callback on the entry (`runner` is set). */
export const F_RUNNING = 32;
/** Shift of the mask of callbacks called (started) so far (`CB_MASK` bits) in `meta`. */
export const CALLBACKS_SHIFT = 6;
/** Meta bit: the allocation callback was called (`CB_MASK(CB_ALLOC)`, shifted). */
export const M_ALLOC = 1 << CALLBACKS_SHIFT;
/** Meta bit: the promotion callback was called. */
export const M_PROMOTE = 2 << CALLBACKS_SHIFT;
/** Meta bit: a deallocation callback was called. */
export const M_DEALLOC = 4 << CALLBACKS_SHIFT;
/** Meta bits of the callbacks mask. */
export const M_CALLBACKS = 7 << CALLBACKS_SHIFT;
/** Shift of the running callback's index (`CB_*`, 2 bits) in `meta`. */
export const CALLBACK_SHIFT = 9;
/** Shift of the allocation source (2 bits) in `meta`. */
export const SOURCE_SHIFT = 11;

/** Meta bit: promoted through a remembered set whose promotion several domains shared (a race
 * point) before its allocation callback ran: whether memprof found it dead there is decided when
 * that callback gives the block its number (memprof.ts, `#endCallback`). */
export const F_RACE_PENDING = 1 << 13;

/** Minimum capacity of a thread's table. */
export const MIN_ENTRIES_THREAD_CAPACITY = 16;
/** Minimum capacity of a domain's table. */
export const MIN_ENTRIES_DOMAIN_CAPACITY = 128;
/** Minimum capacity of an orphan table. */
export const MIN_ENTRIES_ORPHAN_CAPACITY = 16;
/** Growth factor of a table. */
export const ENTRIES_GROWTH_FACTOR = 2;
/** A table shrinks only when this much too large. */
export const ENTRIES_SHRINK_FACTOR = 4;

/** The part of a thread state an entry table needs: where its running callback's entry is. */
export interface Runner {
  /** Table of the entry whose callback this thread runs, or null. */
  runningTable: Entries | null;
  /** Index of that entry. */
  runningIndex: number;
}

/** One entry read out of a table (for tests and checks; the tables hold no such objects). */
export interface EntryView {
  /** The block's address, its offset (`offset`), or null (Val_unit). */
  readonly block: number | null;
  /** Last callback's result, or the callstack before the allocation callback. */
  readonly userData: unknown;
  /** Number of samples. */
  readonly samples: number;
  /** Block size in words, excluding header. */
  readonly wosize: number;
  /** Allocation source. */
  readonly source: number;
  /** Thread running a callback on this entry, or null. */
  readonly runner: Runner | null;
  /** `block` is an offset. */
  readonly offset: boolean;
  /** Allocated in the minor heap. */
  readonly allocYoung: boolean;
  /** Promoted. */
  readonly promoted: boolean;
  /** Deallocated. */
  readonly deallocated: boolean;
  /** Marked for deletion. */
  readonly deleted: boolean;
  /** Callback currently running (CB_*). */
  readonly callback: number;
  /** Mask of callbacks called (started) so far. */
  readonly callbacks: number;
}

/** Physical length of a table's arrays when first used. */
const INITIAL_LENGTH = 16;

/**
 * A resizable table of entries (`entries_s`), one array per field; index `i < size` is entry
 * `i`, the rest is garbage. `capacity` follows the C's allocation management (growth and shrink
 * rules, observable for tests); the arrays themselves grow geometrically and never shrink but on
 * {@linkcode clear}, so a table refilled after every minor collection is not reallocated.
 */
export class Entries {
  /** Weak pointer to each block (a word address), a comballoc offset, or {@linkcode NO_BLOCK}.
   * (Addresses, sizes and sample counts are plain arrays of small integers, not Float64Arrays: a
   * number read from them stays a small integer, so passing it on or returning it from a
   * callback boxes nothing.) */
  block: number[] = [];
  /** Strong roots: last callback's result, or the callstack before the allocation callback. */
  userData: unknown[] = [];
  /** Address of the heap block `userData` is, or {@linkcode NO_BLOCK}: a callstack array
   * allocated by memprof (`capture_callstack_GC`, `unstash_callstack`), which a minor
   * collection promotes while the entry holds it. (The exported program's callbacks return
   * `Some` of an immediate: their results are no blocks.) */
  dataBlock: number[] = [];
  /** Number of samples. */
  samples: number[] = [];
  /** Block size in words, excluding header. */
  wosize: number[] = [];
  /** Flags (`F_*`), callbacks called (`M_*`), running callback and source, packed. */
  meta: Int32Array = new Int32Array(0);
  /** Thread running a callback on each entry (meaningful where `meta` has `F_RUNNING`). */
  runner: (Runner | null)[] = [];
  /** Capacity never goes below this (once the table is used). */
  readonly minCapacity: number;
  /** Simulated capacity. */
  capacity = 0;
  /** Number of entries. */
  size = 0;
  /** No young pointers before this index. */
  young = 0;
  /** No deleted entries before this index. */
  evict = 0;
  /** No pending callbacks before this index. */
  active = 0;
  /** The profile all entries were sampled under, or null (CONFIG_NONE). */
  config: Profile | null;

  /** memprof.c's `entries_init`. */
  constructor(minCapacity: number, config: Profile | null) {
    this.minCapacity = minCapacity;
    this.config = config;
  }

  /** Entry `i`, read out (for tests and invariant checks). */
  view(i: number): EntryView {
    const m = this.meta[i], b = this.block[i];
    return {
      block: b === NO_BLOCK ? null : b,
      userData: this.userData[i],
      samples: this.samples[i],
      wosize: this.wosize[i],
      source: (m >> SOURCE_SHIFT) & 3,
      runner: m & F_RUNNING ? this.runner[i] : null,
      offset: (m & F_OFFSET) !== 0,
      allocYoung: (m & F_ALLOC_YOUNG) !== 0,
      promoted: (m & F_PROMOTED) !== 0,
      deallocated: (m & F_DEALLOCATED) !== 0,
      deleted: (m & F_DELETED) !== 0,
      callback: (m >> CALLBACK_SHIFT) & 3,
      callbacks: (m & M_CALLBACKS) >> CALLBACKS_SHIFT,
    };
  }

  /** Physical length of the arrays. */
  get length(): number {
    return this.meta.length;
  }

  /** memprof.c's `entries_clear`: empties the table and forgets its profile. */
  clear(): void {
    this.block = [];
    this.userData = [];
    this.dataBlock = [];
    this.samples = [];
    this.wosize = [];
    this.meta = new Int32Array(0);
    this.runner = [];
    this.capacity =
      this.size =
      this.young =
      this.evict =
      this.active =
        0;
    this.config = null;
  }

  /** Grows every array to `n` entries. */
  #grow(n: number): void {
    const meta = new Int32Array(n);
    meta.set(this.meta.subarray(0, this.size));
    this.meta = meta;
    for (let i = this.block.length; i < n; i++) {
      this.block.push(NO_BLOCK);
      this.samples.push(0);
      this.wosize.push(0);
      this.userData.push(undefined);
      this.dataBlock.push(NO_BLOCK);
      this.runner.push(null);
    }
  }

  /** memprof.c's `entries_ensure`: grow or shrink the (simulated) capacity for `grow` more. */
  ensure(grow: number): void {
    const newSize = this.size + grow, capacity = this.capacity;
    if (
      newSize <= capacity && newSize <= this.meta.length &&
      (ENTRIES_SHRINK_FACTOR * newSize >= capacity || capacity === this.minCapacity)
    ) return; // the common case, kept small enough to inline
    this.#ensureSlow(grow);
  }

  /** {@linkcode ensure} when the capacity changes (or the arrays must grow). */
  #ensureSlow(grow: number): void {
    const newSize = this.size + grow;
    if (newSize > this.meta.length) {
      this.#grow(Math.max(newSize * ENTRIES_GROWTH_FACTOR, INITIAL_LENGTH));
    }
    if (grow === 0 && this.capacity === 0) return;
    if (
      newSize <= this.capacity &&
      (ENTRIES_SHRINK_FACTOR * newSize >= this.capacity || this.capacity === this.minCapacity)
    ) return;
    let newCapacity = newSize * ENTRIES_GROWTH_FACTOR;
    if (newCapacity < this.minCapacity) newCapacity = this.minCapacity;
    this.capacity = newCapacity;
  }

  /**
   * memprof.c's `new_entry` for a block of `wosize` words sampled `samples` times, whose user
   * data is `userData` (its callstack, a heap block at `dataBlock` if not stashed); returns the
   * new index. Its `meta` is 0 (source NORMAL, no flag): the caller sets `F_OFFSET`,
   * `F_ALLOC_YOUNG` and the source there if needed.
   */
  newEntry(
    block: number,
    userData: unknown,
    wosize: number,
    samples: number,
    dataBlock: number = NO_BLOCK,
  ): number {
    this.ensure(1);
    const i = this.size++;
    this.block[i] = block;
    this.userData[i] = userData;
    this.dataBlock[i] = dataBlock;
    this.samples[i] = samples;
    this.wosize[i] = wosize;
    this.meta[i] = 0;
    return i;
  }

  /** Thread `r` starts running callback `cb` on entry `i`. */
  setRunner(i: number, r: Runner, cb: number): void {
    this.runner[i] = r;
    this.meta[i] = (this.meta[i] & ~(3 << CALLBACK_SHIFT)) | F_RUNNING | (cb << CALLBACK_SHIFT) |
      (1 << (cb - 1 + CALLBACKS_SHIFT));
  }

  /** The callback running on entry `i` ended. */
  clearRunner(i: number): void {
    this.runner[i] = null;
    this.meta[i] &= ~(F_RUNNING | (3 << CALLBACK_SHIFT));
  }

  /** memprof.c's `entry_delete`. Never on an entry whose callback is running. */
  delete(i: number): void {
    this.meta[i] = (this.meta[i] & ~F_OFFSET) | F_DELETED;
    this.userData[i] = undefined;
    this.dataBlock[i] = NO_BLOCK;
    this.block[i] = NO_BLOCK;
    if (i < this.evict) this.evict = i;
  }

  /** memprof.c's `entries_evict`: compacts out deleted entries, fixing cursors and runners. */
  evictDeleted(): void {
    if (this.evict < this.size) this.#compact();
    this.ensure(0);
  }

  /** {@linkcode evictDeleted}'s loop (some entry at or after `evict` may be deleted). */
  #compact(): void {
    const size = this.size;
    const meta = this.meta, userData = this.userData, block = this.block;
    // Entries before the first deleted one stay where they are (the loop below would leave
    // them, and the cursors, as they are): skip them.
    let i = this.evict;
    while (i < size && (meta[i] & F_DELETED) === 0) ++i;
    let j = i;
    const samples = this.samples, wosize = this.wosize;
    let young = this.young, active = this.active;
    while (i < size) {
      const m = meta[i];
      if ((m & F_DELETED) === 0) {
        if (i !== j) {
          block[j] = block[i];
          userData[j] = userData[i];
          this.dataBlock[j] = this.dataBlock[i];
          samples[j] = samples[i];
          wosize[j] = wosize[i];
          meta[j] = m;
          if (m & F_RUNNING) {
            const r = this.runner[i]!;
            this.runner[j] = r;
            this.runner[i] = null;
            r.runningIndex = j;
          }
        }
        ++j;
      }
      ++i;
      if (young === i) young = j;
      if (active === i) active = j;
    }
    this.young = young;
    this.active = active;
    for (let k = j; k < size; k++) userData[k] = undefined;
    this.evict = this.size = j;
  }

  /**
   * memprof.c's `entries_clear_offsets`: offset entries whose allocation callback ran become
   * deallocated (so a dealloc callback balances it); others are deleted.
   */
  clearOffsets(): void {
    const meta = this.meta;
    for (let i = 0; i < this.size; ++i) {
      const m = meta[i];
      if (m & F_OFFSET) {
        if (m & M_ALLOC) {
          this.block[i] = NO_BLOCK;
          meta[i] = (m & ~F_OFFSET) | F_DEALLOCATED;
          if (i < this.active) this.active = i;
        } else {
          this.delete(i);
        }
      }
    }
    this.evictDeleted();
  }

  /** memprof.c's `entries_clear_inactive`: delete every entry not running a callback. */
  clearInactive(): void {
    for (let i = 0; i < this.size; ++i) {
      if (!(this.meta[i] & F_RUNNING)) this.delete(i);
    }
    this.evictDeleted();
  }

  /**
   * memprof.c's `validated_config`: a discarded profile becomes null and the table loses its
   * inactive entries. Returns the (possibly updated) profile.
   */
  validatedConfig(): Profile | null {
    const c = this.config;
    if (c !== null && c.status === ProfileStatus.DISCARDED) return this.#discarded();
    return c;
  }

  /** {@linkcode validatedConfig} of a discarded profile. */
  #discarded(): null {
    this.config = null;
    this.clearInactive();
    return null;
  }

  /**
   * memprof.c's `entries_transfer`: moves every entry of this table to `to` (entries that never
   * ran a callback are deleted on the way), keeping cursors and runners right.
   */
  transferTo(to: Entries): void {
    const n = this.size;
    if (n === 0) return;
    this.validatedConfig();
    to.validatedConfig();
    to.ensure(n);
    const delta = to.size;
    to.size = delta + n;
    const block = this.block, userData = this.userData, meta = this.meta;
    const toBlock = to.block, toUserData = to.userData, toMeta = to.meta;
    for (let i = 0, k = delta; i < n; ++i, ++k) {
      let m = meta[i];
      if ((m & M_CALLBACKS) === 0) {
        this.delete(i);
        m = meta[i];
      }
      toBlock[k] = block[i];
      toUserData[k] = userData[i];
      userData[i] = undefined;
      to.dataBlock[k] = this.dataBlock[i];
      this.dataBlock[i] = NO_BLOCK;
      to.samples[k] = this.samples[i];
      to.wosize[k] = this.wosize[i];
      toMeta[k] = m;
      if (m & F_RUNNING) {
        const r = this.runner[i]!;
        to.runner[k] = r;
        this.runner[i] = null;
        r.runningTable = to;
        r.runningIndex = k;
      }
    }
    if (to.young === delta) to.young = this.young + delta;
    if (to.evict === delta) to.evict = this.evict + delta;
    if (to.active === delta) to.active = this.active + delta;
    this.young =
      this.evict =
      this.active =
      this.size =
        0;
    this.ensure(0);
  }
}
