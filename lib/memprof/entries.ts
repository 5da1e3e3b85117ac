/**
 * Tracking entries and entry tables, as in memprof.c: one entry per sampled block, kept in
 * resizable tables with three cursors (`young`, `evict`, `active`) that record the lowest index
 * at which some work may be needed.
 *
 * Cursor meanings (memprof.c): before `young`, neither the block nor the user data points into
 * the minor heap; before `evict`, no entry is deleted; before `active`, no callback is pending.
 * All three are ≤ `size`.
 *
 * @module
 */

import { type AllocationSource, type Profile, ProfileStatus } from "./profile.ts";

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

/** What memprof.c's `new_entry` records about a sampled block. */
export interface EntryInit {
  /** The block's address, or its offset within a combined allocation (`offset`). */
  block: number | null;
  /** The callstack (stashed or allocated), the entry's user data until the allocation callback. */
  userData: unknown;
  /** Block size in words, excluding header. */
  wosize: number;
  /** Number of samples. */
  samples: number;
  /** Allocation source. */
  source: AllocationSource;
  /** Allocated in the minor heap. */
  isYoung: boolean;
  /** `block` is an offset in a combined allocation not made yet. */
  offset: boolean;
}

/**
 * One tracked block. `block` is the block's address (a word address in the simulated heap), or
 * `null` (OCaml's Val_unit) once dead/deleted, or — while `offset` is set — the block's offset in
 * words within a combined allocation that has not happened yet.
 */
export class Entry {
  /** Weak pointer to the block (or a comballoc offset). */
  block: number | null;
  /** Last callback's result, or the callstack before the allocation callback. Strong root. */
  userData: unknown;
  /** Number of samples. */
  samples: number;
  /** Block size in words, excluding header. */
  wosize: number;
  /** Thread running a callback on this entry, or null. */
  runner: Runner | null = null;
  /** Allocation source. */
  source: AllocationSource;
  /** Is `block` an offset? */
  offset: boolean;
  /** Allocated in the minor heap? */
  allocYoung: boolean;
  /** Promoted? */
  promoted = false;
  /** Deallocated? */
  deallocated = false;
  /** Marked for deletion? */
  deleted = false;
  /** Callback currently running (CB_*). */
  callback: number = CB_NONE;
  /** Mask of callbacks called (started) so far. */
  callbacks = 0;

  /** Creates an entry, as memprof.c's `new_entry` initialises it. */
  constructor(init: EntryInit) {
    this.block = init.block;
    this.userData = init.userData;
    this.samples = init.samples;
    this.wosize = init.wosize;
    this.source = init.source;
    this.offset = init.offset;
    this.allocYoung = init.isYoung;
  }
}

/**
 * A resizable table of entries (`entries_s`). `capacity` mirrors the C's allocation management
 * (growth and shrink rules) though the JS array grows by itself; it is observable for tests.
 */
export class Entries {
  /** The entries; indexes ≥ `size` are garbage. */
  t: Entry[] = [];
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

  /** memprof.c's `entries_clear`: empties the table and forgets its profile. */
  clear(): void {
    this.t = [];
    this.capacity =
      this.size =
      this.young =
      this.evict =
      this.active =
        0;
    this.config = null;
  }

  /** memprof.c's `entries_ensure`: grow or shrink the (simulated) capacity for `grow` more. */
  ensure(grow: number): void {
    if (this.capacity === 0 && grow === 0) return;
    const newSize = this.size + grow;
    if (
      newSize <= this.capacity &&
      (ENTRIES_SHRINK_FACTOR * newSize >= this.capacity || this.capacity === this.minCapacity)
    ) return;
    let newCapacity = newSize * ENTRIES_GROWTH_FACTOR;
    if (newCapacity < this.minCapacity) newCapacity = this.minCapacity;
    this.capacity = newCapacity;
    if (this.t.length > newCapacity) this.t.length = newCapacity;
  }

  /** memprof.c's `new_entry`; returns the new index. */
  newEntry(init: EntryInit): number {
    this.ensure(1);
    const i = this.size++;
    this.t[i] = new Entry(init);
    return i;
  }

  /** memprof.c's `entry_delete`. Never on an entry whose callback is running. */
  delete(i: number): void {
    const e = this.t[i];
    e.deleted = true;
    e.offset = false;
    e.userData = undefined;
    e.block = null;
    if (i < this.evict) this.evict = i;
  }

  /** memprof.c's `entries_evict`: compacts out deleted entries, fixing cursors and runners. */
  evictDeleted(): void {
    let i = this.evict;
    let j = i;
    const t = this.t;
    while (i < this.size) {
      const e = t[i];
      if (!e.deleted) {
        if (i !== j) {
          t[j] = e;
          if (e.runner) e.runner.runningIndex = j;
        }
        ++j;
      }
      ++i;
      if (this.young === i) this.young = j;
      if (this.active === i) this.active = j;
    }
    this.evict = this.size = j;
    if (t.length > j) t.length = j;
    this.ensure(0);
  }

  /**
   * memprof.c's `entries_clear_offsets`: offset entries whose allocation callback ran become
   * deallocated (so a dealloc callback balances it); others are deleted.
   */
  clearOffsets(): void {
    for (let i = 0; i < this.size; ++i) {
      const e = this.t[i];
      if (e.offset) {
        if (e.callbacks & cbMask(CB_ALLOC)) {
          e.block = null;
          e.offset = false;
          e.deallocated = true;
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
      if (this.t[i].runner === null) this.delete(i);
    }
    this.evictDeleted();
  }

  /**
   * memprof.c's `validated_config`: a discarded profile becomes null and the table loses its
   * inactive entries. Returns the (possibly updated) profile.
   */
  validatedConfig(): Profile | null {
    const c = this.config;
    if (c !== null && c.status === ProfileStatus.DISCARDED) {
      this.config = null;
      this.clearInactive();
    }
    return this.config;
  }

  /**
   * memprof.c's `entries_transfer`: moves every entry of this table to `to` (entries that never
   * ran a callback are deleted on the way), keeping cursors and runners right.
   */
  transferTo(to: Entries): void {
    if (this.size === 0) return;
    this.validatedConfig();
    to.validatedConfig();
    to.ensure(this.size);
    const delta = to.size;
    to.size += this.size;
    for (let i = 0; i < this.size; ++i) {
      if (this.t[i].callbacks === 0) this.delete(i);
      const e = this.t[i];
      to.t[i + delta] = e;
      const runner = e.runner;
      if (runner) {
        runner.runningTable = to;
        runner.runningIndex = i + delta;
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
    // The array is kept (indexes ≥ size are garbage): a thread's table is emptied after every
    // sample, and refilling a fresh array would grow it again each time.
    this.ensure(0);
  }
}
