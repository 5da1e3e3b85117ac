/**
 * A port of OCaml 5.3's runtime/memprof.c: thread and domain states, orphan tables, sampling
 * (minor-heap trigger, combined allocations, runtime and major allocations), callbacks, GC
 * hooks, and `Gc.Memprof.start` / `stop` / `discard`.
 *
 * The code follows the C function by function (names in the JSDoc) so that every observable
 * effect — which variates are drawn when, which callbacks run in which order, how entries move
 * between tables — is the same. It sees the runtime only through {@linkcode MemprofHost}.
 *
 * @module
 */

import {
  CB_ALLOC,
  CB_DEALLOC,
  CB_PROMOTE,
  Entries,
  F_ALLOC_YOUNG,
  F_DEALLOCATED,
  F_DELETED,
  F_OFFSET,
  F_PROMOTED,
  F_RACE_PENDING,
  F_RUNNING,
  M_ALLOC,
  M_DEALLOC,
  M_PROMOTE,
  MIN_ENTRIES_DOMAIN_CAPACITY,
  MIN_ENTRIES_ORPHAN_CAPACITY,
  MIN_ENTRIES_THREAD_CAPACITY,
  NO_BLOCK,
  SOURCE_SHIFT,
} from "./entries.ts";
import { OCamlFailure, OCamlInvalidArgument } from "./errors.ts";
import {
  type AllocationInfo,
  AllocationSource,
  isSampling,
  MEMPROF_FAILURES,
  Profile,
  ProfileStatus,
  type Tracker,
} from "./profile.ts";
import { MemprofRng, oneLog1mLambda as computeOneLog1mLambda, RAND_BLOCK_SIZE } from "./rng.ts";
import { BlockedOutsideResumableRun, Blocking, type Resumable, runToEnd } from "./resumable.ts";

/**
 * What memprof needs from the runtime of one domain. Addresses are word addresses; the minor
 * heap grows down from `youngEnd` to `youngStart`. Block addresses are header addresses.
 */
export interface MemprofHost {
  /** `caml_raise`: raises `exn` in OCaml code after running the pending actions once (whose
   * callbacks may block the thread). */
  raiseG(exn: unknown): Resumable<never>;
  /** Domain id (seeds the RNG). */
  readonly id: number;
  /** Allocation pointer (header of the last block allocated in the minor heap). */
  readonly youngPtr: number;
  /** Lowest address of the minor heap. */
  readonly youngStart: number;
  /** The GC's trigger (middle or start of the minor heap). */
  readonly youngTrigger: number;
  /** memprof's trigger: allocation below it enters memprof. */
  readonly memprofYoungTrigger: number;
  /** `Caml_state->young_ptr += words`: memprof undoes an allocation from OCaml code while its
   * callbacks run (`words` > 0) and redoes it after (`words` < 0). */
  moveYoungPtr(words: number): void;
  /** `Caml_state->memprof_young_trigger = addr`. */
  setMemprofTrigger(addr: number): void;
  /** `caml_reset_young_limit`. */
  resetYoungLimit(): void;
  /** `caml_set_action_pending`. */
  setActionPending(): void;
  /** `caml_update_young_limit_after_c_call`, which `caml_callback` runs before entering OCaml
   * code: a pending action becomes an interrupt, so the callback's first allocation or poll
   * enters the runtime. */
  enterOCamlFromC(): void;
  /** `caml_poll_gc_work`. */
  pollGcWork(): void;
  /**
   * An allocation by the runtime itself on behalf of memprof (callstack arrays, the sample_info
   * record): `caml_alloc`/`caml_alloc_small` while sampling is suspended. Returns the young
   * block's address, or -1 if it is not in the minor heap.
   */
  allocForMemprof(wosize: number): number;
  /** `caml_get_callstack`: at most `max` frames; `allocIdx` selects a comballoc component. */
  captureCallstack(max: number, allocIdx: number): readonly string[];
  /** `Is_young`. */
  isYoung(addr: number): boolean;
  /**
   * During memprof's after-minor-GC update: the new address of a young block the minor GC just
   * promoted (memprof.c reads its forwarding pointer), or -1 if it died.
   */
  promotedTo(addr: number): number;
  /**
   * A race point of OCaml 5.3 (docs/differential.md, "Race points"): the block at `addr`, which
   * the minor GC just promoted, was reached through a remembered set that several domains shared
   * the promotion of, so its domain's memprof may find it not yet forwarded and report it dead.
   * Returns true when this run resolves the race that way. `userData` is the entry's tracker
   * value. Absent: promoted.
   */
  promotionRaceDead?(addr: number, userData: unknown): boolean;
  /**
   * Whether the block at `addr`, which the minor GC just promoted, is such a race point whose
   * outcome is to be decided later: its entry's allocation callback has not run yet, so it has
   * no number (see {@linkcode pendingRaceDead}). Absent: no race.
   */
  promotionRacing?(addr: number): boolean;
  /** The outcome of a race point left pending ({@linkcode promotionRacing}), once the block's
   * allocation callback returned `userData`: true when this run resolves it as a death. */
  pendingRaceDead?(userData: unknown): boolean;
  /** `is_unmarked` after a major cycle: the block is dead. */
  isUnmarked(addr: number): boolean;
  /** Emit a runtime_events counter (e.g. EV_C_FORCE_MINOR_MEMPROF). */
  forceMinorMemprofCounter(): void;
  /** Moves a major block during compaction; returns its new address. */
  compactedTo(addr: number): number;
}

/** Exceptional result of running a callback (C's caml_result with an exception). */
export interface ExnResult {
  /** The thrown value (an OCaml exception). */
  readonly exn: unknown;
}

/** A callback's outcome: null (returned normally) or the exception it raised. */
export type CallbackResult = ExnResult | null;
type Result = CallbackResult;

export { BlockedOutsideResumableRun, Blocking, type Resumable, runToEnd } from "./resumable.ts";

/** Call sites of {@linkcode invoke}, one per tracker callback. */
const SITE_ALLOC_MINOR = 0, SITE_ALLOC_MAJOR = 1, SITE_PROMOTE = 2, SITE_DEALLOC_MINOR = 3;
const SITE_DEALLOC_MAJOR = 4;

/**
 * Calls tracker callback `cb` on `param` from the call site `site` names: each callback of a
 * tracker has a call site of its own, so that each site sees one closure (a monomorphic call V8
 * can inline) where a single site would see all five.
 */
function invoke(cb: (x: unknown) => unknown, param: unknown, site: number): unknown {
  switch (site) {
    case SITE_ALLOC_MINOR:
      return cb(param);
    case SITE_ALLOC_MAJOR:
      return cb(param);
    case SITE_PROMOTE:
      return cb(param);
    case SITE_DEALLOC_MINOR:
      return cb(param);
    default:
      return cb(param);
  }
}

/** {@linkcode MemprofDomain.nextCallback}: nothing to run in the table any more. */
const STOP = -1;
/** {@linkcode MemprofDomain.nextCallback}: nothing to run on this entry; look again. */
const NEXT = -2;
/** {@linkcode MemprofDomain.sampleYoung}'s plain part stopped where the callbacks' loop runs. */
const LOOP = Symbol("loop");

/** A stashed callstack: captured when the heap could not be allocated in. */
class Stash {
  constructor(readonly frames: readonly string[]) {}
}

/** An orphaned entries table in a linked list (`memprof_orphan_table_s`). */
export class OrphanTable {
  /** The table. */
  readonly entries: Entries;
  /** Next table. */
  next: OrphanTable | null = null;
  /** Creates an empty orphan table for `config`'s entries. */
  constructor(config: Profile | null) {
    this.entries = new Entries(MIN_ENTRIES_ORPHAN_CAPACITY, config);
  }
}

/** State shared by all domains of one runtime: the global orphans list (memprof.c's globals). */
export class MemprofShared {
  /** @internal Orphan tables not yet adopted by any domain. */
  orphans: OrphanTable | null = null;
  /** Counts of callbacks run, by kind, and of orphan tables (and their entries) adopted by a
   * domain, for tests and summaries. */
  readonly stats = {
    alloc: 0,
    promote: 0,
    dealloc: 0,
    exceptions: 0,
    orphanTablesAdopted: 0,
    orphanEntriesAdopted: 0,
  };
}

/** Per-systhread memprof state (`memprof_thread_s`). */
/* Structurally a Runner (entries.ts); not declared, to keep that internal type out of the API. */
export class MemprofThread {
  /** Sampling suspended (a callback is running). */
  suspended = false;
  /** Index of the entry whose callback this thread is running. */
  runningIndex = 0;
  /** @internal Table of that entry, or null. */
  runningTable: Entries | null = null;
  /** @internal Entries allocated by this thread whose allocation callback has not completed. */
  readonly entries: Entries;
  /** Owning domain. */
  readonly domain: MemprofDomain;
  /** False once destroyed. */
  alive = true;

  /** memprof.c's `thread_create`. */
  constructor(domain: MemprofDomain) {
    this.domain = domain;
    this.entries = new Entries(MIN_ENTRIES_THREAD_CAPACITY, domain.entries.config);
    domain.threads.unshift(this);
  }
}

/** Options of {@linkcode MemprofDomain.start}, mirroring `Gc.Memprof.start`. */
export interface StartOptions<M = unknown, J = unknown> {
  /** lambda in [0, 1]. */
  samplingRate: number;
  /** Maximum callstack length; default OCaml's max_int. */
  callstackSize?: number;
  /** The callbacks. */
  tracker: Tracker<M, J>;
}

const MAX_INT = 2 ** 62 - 1;

/**
 * Per-domain memprof state (`memprof_domain_s`), plus the `Gc.Memprof` entry points acting on
 * the domain's current thread. A simulated runtime's domain has one as `domain.memprof`.
 *
 * @example `Gc.Memprof.start` and `stop` on a domain
 * ```ts
 * import { Runtime } from "../runtime/mod.ts";
 * import { isSampling } from "./mod.ts";
 * import assert from "node:assert/strict";
 *
 * const d = new Runtime().mainDomain;
 * let samples = 0;
 * const profile = d.memprof.start({
 *   samplingRate: 1,
 *   callstackSize: 0,
 *   tracker: { allocMinor: (info) => void (samples += info.nSamples) },
 * });
 * assert.ok(isSampling(profile));
 * d.alloc(2);
 * d.memprof.stop();
 * assert.equal(samples, 3);
 * ```
 */
export class MemprofDomain {
  /** The runtime side. */
  readonly host: MemprofHost;
  /** Shared state (global orphans). */
  readonly shared: MemprofShared;
  /** @internal Entries whose allocation callback completed; `entries.config` is the domain's profile. */
  readonly entries: Entries;
  /** @internal Orphaned tables. */
  orphans: OrphanTable | null = null;
  /** There may be callbacks to run on orphan tables. */
  orphansPending = false;
  /** There may be callbacks pending for this domain. */
  pending = false;
  /** Threads of the domain (most recent first, as memprof.c's list). */
  readonly threads: MemprofThread[] = [];
  /** Current thread. */
  current: MemprofThread | null = null;
  /** The domain's sampling RNG, seeded once from the domain id. */
  readonly rng: MemprofRng;

  /**
   * memprof.c's `caml_memprof_new_domain`: creates the state, its first thread, inherits the
   * parent's profile, seeds the RNG and runs `rand_init`.
   */
  constructor(host: MemprofHost, shared: MemprofShared, parent: MemprofDomain | null) {
    this.host = host;
    this.shared = shared;
    this.entries = new Entries(MIN_ENTRIES_DOMAIN_CAPACITY, null);
    this.current = new MemprofThread(this);
    if (parent) {
      this.current.entries.config = this.entries.config = parent.entries.config;
    }
    this.rng = new MemprofRng(host.id);
    this.#randInit();
  }

  // ---- RNG glue ----

  /** `rand_init`. */
  #randInit(): void {
    const c = this.entries.config;
    this.rng.init(c === null ? null : c.oneLog1mLambda);
  }

  /** `rand_binom`. */
  #randBinom(len: number): number {
    return this.rng.binom(len, this.entries.config!.oneLog1mLambda);
  }

  // ---- orphans ----

  /** memprof.c's `orphans_create`: move all surviving entries to a new orphan table. */
  orphansCreate(): void {
    let total = 0;
    for (const th of this.threads) {
      th.entries.clearOffsets();
      total += th.entries.size;
    }
    this.entries.evictDeleted();
    total += this.entries.size;
    if (total === 0) return;
    const ot = new OrphanTable(this.entries.config);
    ot.entries.ensure(total);
    this.entries.transferTo(ot.entries);
    for (const th of this.threads) th.entries.transferTo(ot.entries);
    ot.next = this.orphans;
    this.orphans = ot;
  }

  /** memprof.c's `orphans_abandon`: hand all orphans to the global list. */
  orphansAbandon(): void {
    let ot = this.orphans;
    if (!ot) return;
    while (ot.next) ot = ot.next;
    ot.next = this.shared.orphans;
    this.shared.orphans = this.orphans;
    this.orphans = null;
  }

  /** memprof.c's `orphans_adopt`: take every global orphan table. */
  orphansAdopt(): void {
    if (this.shared.orphans === null) return;
    for (let t: OrphanTable | null = this.shared.orphans; t !== null; t = t.next) {
      this.shared.stats.orphanTablesAdopted++;
      this.shared.stats.orphanEntriesAdopted += t.entries.size;
    }
    if (this.orphans === null) this.orphans = this.shared.orphans;
    else {
      let ot = this.orphans;
      while (ot.next) ot = ot.next;
      ot.next = this.shared.orphans;
    }
    this.shared.orphans = null;
  }

  /** memprof.c's `orphans_update_pending`. */
  orphansUpdatePending(): void {
    let prev: OrphanTable | null = null;
    let ot = this.orphans;
    let pending = false;
    while (ot) {
      const next = ot.next;
      const config = ot.entries.validatedConfig();
      if (config === null) ot.entries.clearInactive();
      if (ot.entries.size === 0) {
        ot.entries.clear();
        if (prev) prev.next = next;
        else this.orphans = next;
      } else {
        pending ||= ot.entries.active < ot.entries.size;
        prev = ot;
      }
      ot = next;
    }
    this.orphansPending = pending;
  }

  /** @internal Orphan tables as an array (for inspection). */
  orphanTables(): OrphanTable[] {
    const r: OrphanTable[] = [];
    for (let ot = this.orphans; ot; ot = ot.next) r.push(ot);
    return r;
  }

  // ---- pending flag / suspension ----

  /** memprof.c's `set_action_pending_as_needed`. */
  setActionPendingAsNeeded(): void {
    const cur = this.current!;
    if (cur.suspended) return;
    this.pending = this.entries.active < this.entries.size || cur.entries.size > 0 ||
      this.orphansPending;
    if (this.pending) this.host.setActionPending();
  }

  /** memprof.c's `update_suspended`: also resets the trigger and young limit. */
  updateSuspended(s: boolean): void {
    this.current!.suspended = s;
    if (!s) this.setActionPendingAsNeeded();
    this.setTrigger();
    this.host.resetYoungLimit();
  }

  // ---- GC interface ----

  /** Every table this domain manages: its own, its threads', its orphans'. */
  #allTables(): Entries[] {
    const r: Entries[] = [this.entries];
    for (const th of this.threads) r.push(th.entries);
    for (let ot = this.orphans; ot; ot = ot.next) r.push(ot.entries);
    return r;
  }

  /** The profiles whose config blocks {@linkcode scanRoots} darkens (`entries_finish_scan`),
   * each once, in the order it visits its tables. */
  rootConfigs(): Profile[] {
    const out: Profile[] = [];
    for (const es of this.#allTables()) {
      const c = es.validatedConfig();
      if (c !== null && !out.includes(c)) out.push(c);
    }
    return out;
  }

  /**
   * `caml_memprof_scan_roots`: adopts global orphans, then visits the roots. With `weak` (for
   * compaction) block pointers are updated through `host.compactedTo`. Returns the number of
   * strong roots visited (user data and configs), for statistics.
   */
  scanRoots(options: { youngOnly?: boolean; weak?: boolean } = {}): number {
    const youngOnly = options.youngOnly === true, weak = options.weak === true;
    this.orphansAdopt();
    let n = 0;
    for (const es of this.#allTables()) {
      if (es.validatedConfig() === null) continue;
      const from = youngOnly ? es.young : 0;
      n += es.size - from + 1;
      if (!weak) continue;
      const block = es.block, meta = es.meta;
      for (let i = from; i < es.size; ++i) {
        const b = block[i];
        if (!(meta[i] & F_OFFSET) && b !== NO_BLOCK && !this.host.isYoung(b)) {
          block[i] = this.host.compactedTo(b);
        }
      }
    }
    return n;
  }

  /**
   * The minor collection's part of `caml_memprof_scan_roots` that moves blocks: each table's
   * entries from its young cursor on (`domain_apply_actions` with `young`) hold their callstack
   * arrays until their allocation callbacks run; `oldify` promotes a young one (`oldify_one`,
   * given its address and size) and returns its new address.
   */
  promoteYoungData(oldify: (addr: number, wosize: number) => number): void {
    const host = this.host;
    for (const es of this.#allTables()) {
      if (es.validatedConfig() === null) continue;
      const data = es.dataBlock;
      for (let i = es.young; i < es.size; ++i) {
        const a = data[i];
        if (a !== NO_BLOCK && host.isYoung(a)) {
          data[i] = oldify(a, (es.userData[i] as readonly string[]).length);
        }
      }
    }
  }

  /** `caml_memprof_after_minor_gc`: notice promotions and deaths of young tracked blocks. */
  afterMinorGc(): void {
    this.orphansAdopt();
    const host = this.host;
    for (const es of this.#allTables()) {
      if (es.validatedConfig() === null) continue;
      const block = es.block, meta = es.meta, size = es.size;
      let active = es.active;
      for (let i = es.young; i < size; ++i) {
        const b = block[i];
        if (!(meta[i] & F_OFFSET) && b !== NO_BLOCK && host.isYoung(b)) {
          const to = host.promotedTo(b);
          if (to >= 0 && !(meta[i] & M_ALLOC) && (host.promotionRacing?.(b) ?? false)) {
            // Promoted or found dead: decided once its allocation callback numbers it.
            block[i] = to;
            meta[i] |= F_PROMOTED | F_RACE_PENDING;
          } else if (to >= 0 && !(host.promotionRaceDead?.(b, es.userData[i]) ?? false)) {
            block[i] = to;
            meta[i] |= F_PROMOTED;
          } else {
            block[i] = NO_BLOCK;
            meta[i] |= F_DEALLOCATED;
          }
          if (active > i) active = i;
        }
      }
      es.active = active;
      es.young = size;
    }
    this.orphansUpdatePending();
    this.setActionPendingAsNeeded();
  }

  /** `caml_memprof_after_major_gc`: notice deaths of major tracked blocks. */
  afterMajorGc(): void {
    this.orphansAdopt();
    const host = this.host;
    for (const es of this.#allTables()) {
      if (es.validatedConfig() === null) continue;
      const block = es.block, meta = es.meta;
      for (let i = 0; i < es.size; ++i) {
        const b = block[i];
        if (!(meta[i] & F_OFFSET) && b !== NO_BLOCK && !host.isYoung(b)) {
          if (host.isUnmarked(b)) {
            block[i] = NO_BLOCK;
            meta[i] |= F_DEALLOCATED;
            if (es.active > i) es.active = i;
          }
        }
      }
    }
    this.orphansUpdatePending();
    this.setActionPendingAsNeeded();
  }

  /** `caml_memprof_delete_domain` (`domain_destroy`): orphan everything to the global list. */
  destroy(): void {
    this.orphansCreate();
    this.orphansAbandon();
    for (const th of [...this.threads]) this.#threadDestroy(th);
    this.entries.clear();
  }

  // ---- callstacks ----

  /** `capture_callstack_no_GC`: stash frames; the array is allocated at callback time. */
  #captureCallstackNoGC(): unknown {
    const frames = this.host.captureCallstack(this.entries.config!.callstackSize, -1);
    return frames.length ? new Stash(frames) : EMPTY;
  }

  /** Address of the array the last {@linkcode #captureCallstackGC} or {@linkcode #unstash}
   * allocated, or {@linkcode NO_BLOCK} (an empty callstack is the atom, no allocation). */
  #callstackBlock = NO_BLOCK;

  /** `capture_callstack_GC`: the array is allocated now (sampling is suspended); its address
   * is left in {@linkcode #callstackBlock}. */
  #captureCallstackGC(allocIdx: number): readonly string[] {
    const frames = this.host.captureCallstack(this.entries.config!.callstackSize, allocIdx);
    this.#callstackBlock = frames.length ? this.host.allocForMemprof(frames.length) : NO_BLOCK;
    return frames;
  }

  /** `unstash_callstack`: a stashed callstack's array is allocated now (its address left in
   * {@linkcode #callstackBlock}); an array is returned as it is. */
  #unstash(cs: unknown): readonly string[] {
    if (Array.isArray(cs)) return cs; // captured with the heap usable, or empty
    const frames = (cs as Stash).frames;
    this.#callstackBlock = this.host.allocForMemprof(frames.length);
    return frames;
  }

  // ---- running callbacks ----
  //
  // Each path that runs callbacks is written once, as a generator (`…G`), for runs in which a
  // callback may block its systhread (see Blocking): a blocked callback suspends the generators
  // up to the caller's scheduler, and the thread resumes later inside the callback, with its
  // memprof state as memprof.c leaves it meanwhile (the entry's `runner` set, sampling suspended
  // on that thread). A plain caller drives it to its end (`runToEnd`), which fails if a callback
  // blocks.

  /** memprof.c's `run_callback_res`, up to `caml_callback_res`: false when another thread
   * got to the entry first. */
  #beginCallback(thread: MemprofThread, es: Entries, i: number, cbIndex: number): boolean {
    if (es.meta[i] & F_RUNNING) return false;
    thread.runningTable = es;
    thread.runningIndex = i;
    es.setRunner(i, thread, cbIndex);
    es.userData[i] = undefined; // `e->user_data = Val_unit`: the callstack array is garbage now
    es.dataBlock[i] = NO_BLOCK;

    const stats = this.shared.stats;
    if (cbIndex === CB_ALLOC) stats.alloc++;
    else if (cbIndex === CB_PROMOTE) stats.promote++;
    else stats.dealloc++;
    return true;
  }

  /** memprof.c's `run_callback_res`, after `caml_callback_res` returned `value` or raised
   * (`res`). The entry may have moved meanwhile: the thread's running table and index say
   * where it is now. */
  #endCallback(
    thread: MemprofThread,
    value: unknown,
    res: Result,
    cbIndex: number,
  ): Result {
    if (cbIndex === CB_DEALLOC) value = undefined; // dealloc callbacks return unit

    const es = thread.runningTable!;
    thread.runningTable = null;
    const i = thread.runningIndex;
    es.clearRunner(i);

    if (es.validatedConfig() === null) {
      // Discarded during the callback: the table lost its inactive entries, this one included
      // (memprof.c would then delete the stale index; there is nothing left to delete).
      return res;
    }
    if (res !== null || value === undefined || value === null) {
      es.delete(i);
      return res;
    }
    es.userData[i] = value;
    if (es.meta[i] & F_RACE_PENDING) {
      es.meta[i] &= ~F_RACE_PENDING;
      if (cbIndex === CB_ALLOC && (this.host.pendingRaceDead?.(value) ?? false)) {
        // memprof found the block not yet forwarded at the collection: reported dead.
        es.meta[i] = (es.meta[i] & ~F_PROMOTED) | F_DEALLOCATED;
        es.block[i] = NO_BLOCK;
      }
    }
    // memprof.c moves the young cursor back only for a young block; the exported program's
    // callbacks return `Some` of an immediate (an id), so it stays.
    const m = es.meta[i];
    if (
      i < es.active && ((m & F_DEALLOCATED) || ((m & F_PROMOTED) && cbIndex !== CB_PROMOTE))
    ) {
      es.active = i;
    }
    return null;
  }

  /** memprof.c's `run_callback_res`, as plain code: the callback's outcome (null, or the
   * exception it raised, wrapped), or, when the callback returned a {@linkcode Blocking}, that
   * Blocking: the callback is still running, and its caller finishes it on a resumable path
   * ({@linkcode #blockedCallbackG}). */
  #runCallback(
    thread: MemprofThread,
    es: Entries,
    i: number,
    site: number,
    param: unknown,
    cbIndex: number,
  ): Result | Blocking {
    const cb = this.#callbackAt(es, site);
    if (!this.#beginCallback(thread, es, i, cbIndex)) return null;
    let value: unknown = undefined;
    let res: Result = null;
    try {
      if (cb) {
        this.host.enterOCamlFromC();
        value = invoke(cb, param, site);
        if (typeof value === "object" && value instanceof Blocking) return value;
      }
    } catch (exn) {
      res = this.#raised(exn);
    }
    return this.#endCallback(thread, value, res, cbIndex);
  }

  /** The rest of {@linkcode #runCallback} for a callback that returned `blocking`: its body
   * runs, passing on what it yields, then the callback ends. */
  *#blockedCallbackG(
    thread: MemprofThread,
    blocking: Blocking,
    cbIndex: number,
  ): Resumable<Result> {
    let value: unknown = undefined;
    let res: Result = null;
    try {
      value = yield* blocking.run;
    } catch (exn) {
      res = this.#raised(exn);
    }
    return this.#endCallback(thread, value, res, cbIndex);
  }

  /** What a callback threw, as its outcome (an OCaml exception it raised); a plain path inside
   * the callback (an action's allocation) that a callback blocked fails the operation. */
  #raised(exn: unknown): Result {
    if (exn instanceof BlockedOutsideResumableRun) throw exn;
    this.shared.stats.exceptions++;
    return { exn };
  }

  /** memprof.c's `run_alloc_callback_res`, up to the call: the `sample_info` record. */
  #allocInfo(es: Entries, i: number): AllocationInfo {
    const stashed = !Array.isArray(es.userData[i]);
    const callstack = this.#unstash(es.userData[i]);
    es.userData[i] = callstack;
    if (stashed) es.dataBlock[i] = this.#callstackBlock;
    // The sample_info record: a minor collection it causes promotes the callstack array, held
    // by the entry (if at or after the young cursor, which memprof.c scans from).
    this.host.allocForMemprof(4);
    return {
      nSamples: es.samples[i],
      size: es.wosize[i],
      source: ((es.meta[i] >> SOURCE_SHIFT) & 3) as AllocationSource,
      callstack,
    };
  }

  /** memprof.c's `run_alloc_callback_res`, as {@linkcode #runCallback}. */
  #runAllocCallback(thread: MemprofThread, es: Entries, i: number): Result | Blocking {
    const info = this.#allocInfo(es, i);
    return this.#runCallback(
      thread,
      es,
      i,
      es.meta[i] & F_ALLOC_YOUNG ? SITE_ALLOC_MINOR : SITE_ALLOC_MAJOR,
      info,
      CB_ALLOC,
    );
  }

  /**
   * One turn of memprof.c's `entries_run_callbacks_res` loop, up to the callback it runs on
   * entry `es.active`: {@linkcode STOP} (a discarded profile), {@linkcode NEXT} (nothing to run
   * there: the cursor moved or the entry was deleted), or the callback's index (`CB_*`).
   */
  #nextCallback(es: Entries): number {
    const config = es.validatedConfig();
    if (config === null) return STOP;
    const i = es.active;
    const m = es.meta[i];
    if (m & (F_DELETED | F_RUNNING)) {
      ++es.active;
      return NEXT;
    }
    if (!(m & M_ALLOC)) {
      if (config.status === ProfileStatus.SAMPLING) return CB_ALLOC;
      es.delete(i); // sampling stopped, e.g. by a previous callback: drop this entry
      return NEXT;
    }
    if ((m & (F_PROMOTED | M_PROMOTE)) === F_PROMOTED) return CB_PROMOTE;
    if ((m & (F_DEALLOCATED | M_DEALLOC)) === F_DEALLOCATED) return CB_DEALLOC;
    ++es.active;
    return NEXT;
  }

  /** The call site (`SITE_*`) of promote or dealloc callback `k` for entry `i` of `es`. */
  #siteOf(es: Entries, i: number, k: number): number {
    if (k === CB_PROMOTE) return SITE_PROMOTE;
    const m = es.meta[i];
    return (m & F_PROMOTED || !(m & F_ALLOC_YOUNG)) ? SITE_DEALLOC_MAJOR : SITE_DEALLOC_MINOR;
  }

  /** The tracker's callback for call site `site` (`SITE_*`) of a table of `es`'s profile. */
  #callbackAt(es: Entries, site: number): ((x: unknown) => unknown) | undefined {
    // (The alloc callbacks take an AllocationInfo: the caller passes one for those sites.)
    const tr = es.config!.tracker as Tracker<unknown, unknown> & {
      allocMinor?: (x: unknown) => unknown;
      allocMajor?: (x: unknown) => unknown;
    };
    switch (site) {
      case SITE_ALLOC_MINOR:
        return tr.allocMinor;
      case SITE_ALLOC_MAJOR:
        return tr.allocMajor;
      case SITE_PROMOTE:
        return tr.promote;
      case SITE_DEALLOC_MINOR:
        return tr.deallocMinor;
      default:
        return tr.deallocMajor;
    }
  }

  /** memprof.c's `entries_run_callbacks_res`. */
  *#entriesRunCallbacksG(thread: MemprofThread, es: Entries): Resumable<Result> {
    let res: Result = null;
    while (es.active < es.size) {
      const k = this.#nextCallback(es);
      if (k === STOP) break;
      if (k === NEXT) continue;
      const i = es.active;
      const r = k === CB_ALLOC
        ? this.#runAllocCallback(thread, es, i)
        : this.#runCallback(thread, es, i, this.#siteOf(es, i, k), es.userData[i], k);
      res = r instanceof Blocking ? yield* this.#blockedCallbackG(thread, r, k) : r;
      if (res) break;
    }
    es.evictDeleted();
    return res;
  }

  /** Whether {@linkcode runCallbacksG} has anything to run: callbacks are pending and the
   * current thread is not suspended. */
  callbacksDue(): boolean {
    return !this.current!.suspended && this.pending;
  }

  /**
   * `caml_memprof_run_callbacks_res`: run pending callbacks of the domain, the current thread
   * and the orphans; they may block their thread. Returns the exception a callback raised,
   * wrapped, or null.
   */
  *runCallbacksG(): Resumable<CallbackResult> {
    const thread = this.current!;
    let res: Result = null;
    if (!this.callbacksDue()) return res;
    this.orphansAdopt();
    this.updateSuspended(true);
    res = yield* this.#entriesRunCallbacksG(thread, this.entries);
    if (!res) {
      res = yield* this.#entriesRunCallbacksG(thread, thread.entries);
      if (!res) {
        thread.entries.transferTo(this.entries);
        for (let ot = this.orphans; ot; ot = ot.next) {
          const es = ot.entries;
          if (es.validatedConfig() !== null && es.active < es.size) {
            res = yield* this.#entriesRunCallbacksG(thread, es);
            if (res) break;
          }
        }
      }
    }
    this.orphansUpdatePending();
    this.updateSuspended(false);
    return res;
  }

  // ---- sampling ----

  /** memprof.c's `sampling`: is the current thread sampling? */
  sampling(): boolean {
    const thread = this.current;
    if (thread === null || thread.suspended) return false;
    const config = thread.entries.validatedConfig();
    return config !== null && config.status === ProfileStatus.SAMPLING && !config.minLambda;
  }

  /** memprof.c's `maybe_track_block`. */
  #maybeTrackBlock(block: number, samples: number, wosize: number, src: number): void {
    if (samples === 0) return;
    const callstack = this.#captureCallstackNoGC();
    const es = this.current!.entries;
    const i = es.newEntry(block, callstack, wosize, samples);
    es.meta[i] = (src << SOURCE_SHIFT) | (this.host.isYoung(block) ? F_ALLOC_YOUNG : 0);
    this.setActionPendingAsNeeded();
  }

  /** `caml_memprof_set_trigger`: place the memprof trigger for the next minor-heap sample. */
  setTrigger(): void {
    const host = this.host;
    let trigger = host.youngStart;
    if (this.sampling()) {
      // rand_geom, reading the batch in place (refilled when exhausted).
      const rng = this.rng;
      if (rng.pos === RAND_BLOCK_SIZE) rng.refill(this.entries.config!.oneLog1mLambda);
      const geom = rng.batch[rng.pos++];
      if (host.youngPtr - host.youngStart > geom) trigger = host.youngPtr - (geom - 1);
    }
    host.setMemprofTrigger(trigger);
  }

  /**
   * `caml_memprof_sample_block`: a block allocated outside the minor-heap trigger mechanism
   * (major heap, custom, unmarshalled). No callback now; it runs at the next poll.
   */
  sampleBlock(block: number, allocatedWords: number, sampledWords: number, source: number): void {
    if (this.sampling()) {
      this.#maybeTrackBlock(block, this.#randBinom(sampledWords), allocatedWords, source);
    }
  }

  /**
   * `caml_memprof_sample_young` from OCaml code: the allocation pointer crossed the memprof
   * trigger. `lens` lists a combined allocation's block sizes (encoded_lens order), or is null;
   * the allocation has been made (young_ptr lowered by the total) and is undone, callbacks run,
   * then it is redone unless a callback raised (then the exception is rethrown). A callback of
   * the allocation may block its thread: the allocation is redone when it resumes, wherever
   * young_ptr is then.
   *
   * It runs as plain code as far as it can: for what nearly every sample is (one block, by a
   * thread whose table is empty, whose callback returns), to its end, and then it returns null.
   * Otherwise it returns the rest (from the callback that blocked or raised, or from the
   * callbacks' loop on), which the caller runs to its end ({@linkcode runToEnd}) or, on a
   * resumable path, yields through.
   */
  sampleYoung(wosize: number, lens: readonly number[] | null): Resumable<void> | null {
    const thread = this.current!;
    const es = thread.entries;
    if (lens === null && es.size === 0) {
      const r = this.#sampleYoungOne(thread, es, wosize);
      if (r === null) {
        this.#sampleYoungEnd(thread, wosize, null);
        return null;
      }
      return this.#sampleYoungRestG(thread, wosize, r);
    }
    this.#sampleYoungBegin(thread, wosize, lens);
    return this.#sampleYoungRestG(thread, wosize, LOOP);
  }

  /** {@linkcode sampleYoung} from where its plain part stopped (`from`): the allocation
   * callback that blocked (its Blocking), the exception one raised, or {@linkcode LOOP} (the
   * callbacks' loop is to run). */
  *#sampleYoungRestG(
    thread: MemprofThread,
    wosize: number,
    from: Result | Blocking | typeof LOOP,
  ): Resumable<void> {
    const es = thread.entries;
    let res = from;
    if (res instanceof Blocking) {
      res = this.#afterFirstCallback(es, yield* this.#blockedCallbackG(thread, res, CB_ALLOC));
    }
    if (res === LOOP) res = yield* this.#entriesRunCallbacksG(thread, es);
    this.#sampleYoungEnd(thread, wosize, res);
    if (res) yield* this.host.raiseG(res.exn);
  }

  /**
   * {@linkcode sampleYoung}'s first part for what nearly every sample is — one block, not a
   * combined allocation, by a thread whose table is empty: `#sampleYoungBegin` and
   * `#entriesRunCallbacks` written out for that one entry, with the same effects in the same
   * order. Returns the outcome of the entry's callback (null, or the exception it raised), the
   * Blocking it returned, or {@linkcode LOOP}: anything but the plain outcome (the callback
   * returned a value and left its entry alone) goes on through the general code.
   */
  #sampleYoungOne(
    thread: MemprofThread,
    es: Entries,
    wosize: number,
  ): Result | Blocking | typeof LOOP {
    const host = this.host;
    const triggerOfs = host.memprofYoungTrigger - host.youngPtr;
    host.moveYoungPtr(wosize + 1);
    // update_suspended(true): sampling stops, so set_trigger puts the trigger at the start.
    thread.suspended = true;
    host.setMemprofTrigger(host.youngStart);
    host.resetYoungLimit();
    // The block is at offset 0 of the (undone) allocation.
    const samples = this.#samplesAt(0, triggerOfs);
    if (samples === 0) return LOOP;
    const callstack = this.#captureCallstackGC(0);
    const i = es.newEntry(0, callstack, wosize, samples, this.#callstackBlock);
    es.meta[i] = F_ALLOC_YOUNG | F_OFFSET;
    const config = es.validatedConfig();
    if (i !== 0 || es.active !== 0 || config === null || config.status !== ProfileStatus.SAMPLING) {
      return LOOP;
    }
    // entries_run_callbacks, first turn: the entry's allocation callback.
    const res = this.#runAllocCallback(thread, es, 0);
    return res instanceof Blocking ? res : this.#afterFirstCallback(es, res);
  }

  /** {@linkcode #sampleYoungOne} after the entry's callback returned (`res`): the loop's second
   * turn, for an entry left alone, or {@linkcode LOOP}. */
  #afterFirstCallback(es: Entries, res: Result): Result | typeof LOOP {
    if (res !== null) {
      es.evictDeleted();
      return res;
    }
    // Second turn: nothing more to run on an entry that is still alone, neither deleted nor
    // promoted nor deallocated, whose callback is over; the cursor passes it and the evict
    // pass keeps it.
    if (
      es.size === 1 && es.active === 0 && es.validatedConfig() !== null &&
      (es.meta[0] & (F_DELETED | F_RUNNING | F_PROMOTED | F_DEALLOCATED | M_ALLOC)) === M_ALLOC
    ) {
      es.active = 1;
      es.evict = 1;
      es.ensure(0);
      return null;
    }
    return LOOP;
  }

  /** `caml_memprof_sample_young` for an allocation from C (the runtime): tracked, its callback
   * runs later. */
  sampleYoungFromC(wosize: number): void {
    const host = this.host;
    const samples = 1 + this.#randBinom(host.memprofYoungTrigger - 1 - host.youngPtr);
    this.#maybeTrackBlock(host.youngPtr, samples, wosize, AllocationSource.NORMAL);
    this.setTrigger();
    host.resetYoungLimit();
  }

  /** The trigger offset {@linkcode #samplesAt} left. */
  #triggerOfs = 0;

  /**
   * `caml_memprof_sample_young`'s draw: the samples of the block at offset `allocOfs` of an
   * allocation whose trigger is at offset `triggerOfs` (rand_geom per sample, the batch read in
   * place with rand_pos in a local); the trigger's new offset is left in `#triggerOfs`.
   */
  #samplesAt(allocOfs: number, triggerOfs: number): number {
    let samples = 0;
    if (allocOfs < triggerOfs) {
      const rng = this.rng;
      const buf = rng.batch;
      let pos = rng.pos;
      do {
        ++samples;
        if (pos === RAND_BLOCK_SIZE) {
          rng.refill(this.entries.config!.oneLog1mLambda);
          pos = 0;
        }
        triggerOfs -= buf[pos++];
      } while (allocOfs < triggerOfs);
      rng.pos = pos;
    }
    this.#triggerOfs = triggerOfs;
    return samples;
  }

  /** `caml_memprof_sample_young` from OCaml code, before the callbacks: the allocation is
   * undone, sampling suspended, and each sampled component gets an offset entry in the
   * thread's table. */
  #sampleYoungBegin(
    thread: MemprofThread,
    wosize: number,
    lens: readonly number[] | null,
  ): void {
    const host = this.host;
    const entries = thread.entries;
    const whsize = wosize + 1;
    let triggerOfs = host.memprofYoungTrigger - host.youngPtr;
    let allocOfs = whsize;
    host.moveYoungPtr(whsize);
    this.updateSuspended(true);

    const allocs = lens === null ? 1 : lens.length;
    let subAlloc = allocs;
    do {
      --subAlloc;
      const allocWosz = lens === null ? wosize : lens[subAlloc];
      allocOfs -= allocWosz + 1;
      const samples = this.#samplesAt(allocOfs, triggerOfs);
      triggerOfs = this.#triggerOfs;
      if (samples) {
        const callstack = this.#captureCallstackGC(subAlloc);
        const i = entries.newEntry(allocOfs, callstack, allocWosz, samples, this.#callstackBlock);
        entries.meta[i] = F_ALLOC_YOUNG | F_OFFSET;
      }
    } while (subAlloc);
  }

  /** `caml_memprof_sample_young` from OCaml code, after the callbacks (`res`: the exception
   * one raised, which cancels the allocation): the allocation is redone at young_ptr and the
   * offset entries become blocks, or are cleared; sampling resumes. (memprof.c asserts that
   * a profile restarted by a callback left the thread's table empty.) */
  #sampleYoungEnd(thread: MemprofThread, wosize: number, res: Result): void {
    const host = this.host;
    const entries = thread.entries;
    const whsize = wosize + 1;
    const cancelled = res !== null;

    if (!cancelled) {
      while (host.youngPtr - whsize < host.youngTrigger) {
        host.forceMinorMemprofCounter();
        host.pollGcWork();
      }
      host.moveYoungPtr(-whsize);
    }

    if (cancelled) {
      entries.clearOffsets();
    } else {
      const meta = entries.meta, block = entries.block, youngPtr = host.youngPtr;
      for (let i = 0; i < entries.size; ++i) {
        const m = meta[i];
        if (m & F_OFFSET) {
          block[i] += youngPtr;
          meta[i] = m & ~F_OFFSET;
          if (i < entries.young) entries.young = i;
        }
      }
      entries.transferTo(this.entries);
    }
    this.updateSuspended(false);
  }

  // ---- systhreads ----

  /** `caml_memprof_new_thread`. */
  newThread(): MemprofThread {
    return new MemprofThread(this);
  }

  /** `thread_destroy`. */
  #threadDestroy(thread: MemprofThread): void {
    thread.entries.clear();
    if (this.current === thread) this.current = null;
    const k = this.threads.indexOf(thread);
    if (k >= 0) this.threads.splice(k, 1);
    thread.alive = false;
  }

  /** `caml_memprof_delete_thread`: entries go to the domain, then the state is destroyed. */
  deleteThread(thread: MemprofThread): void {
    thread.entries.transferTo(this.entries);
    this.#threadDestroy(thread);
  }

  /** `caml_memprof_enter_thread`. */
  enterThread(thread: MemprofThread): void {
    this.current = thread;
    this.updateSuspended(thread.suspended);
  }

  // ---- Gc.Memprof ----

  /**
   * `Gc.Memprof.start` (`caml_memprof_start`). `allocBoxedFloat` models the runtime's
   * `caml_copy_double` of 1/log1p(-lambda) on the minor heap; it is called by the runtime's
   * wrapper, so this method takes it as a callback.
   */
  start<M, J>(opts: StartOptions<M, J>, allocBoxedFloat: () => void = () => {}): Profile {
    const lambda = opts.samplingRate;
    const sz = opts.callstackSize ?? MAX_INT;
    if (sz < 0 || !(lambda >= 0.0 && lambda <= 1.0)) {
      throw new OCamlInvalidArgument("Gc.Memprof.start");
    }
    const cur = this.current!;
    if (isSampling(cur.entries.validatedConfig())) {
      throw new OCamlFailure(MEMPROF_FAILURES.alreadyStarted);
    }
    this.orphansCreate();
    const o = computeOneLog1mLambda(lambda);
    allocBoxedFloat();
    const config = new Profile({
      samplingRate: lambda,
      oneLog1mLambda: o,
      callstackSize: sz,
      tracker: opts.tracker as Tracker<unknown, unknown>,
    });
    this.entries.config = config;
    for (const th of this.threads) th.entries.config = config;
    this.#randInit();
    this.setTrigger();
    this.host.resetYoungLimit();
    this.orphansUpdatePending();
    this.setActionPendingAsNeeded();
    return config;
  }

  /** `Gc.Memprof.stop` (`caml_memprof_stop`). (Plain: a callback that blocks fails; see
   * {@linkcode stopG}.) */
  stop(): void {
    runToEnd(this.stopG(), "Gc.Memprof.stop");
  }

  /** {@linkcode stop}: the thread's pending allocation callbacks run first, and may block
   * their thread. */
  *stopG(): Resumable<void> {
    const thread = this.current!;
    if (!thread.suspended) {
      this.updateSuspended(true);
      const res = yield* this.#entriesRunCallbacksG(thread, thread.entries);
      this.updateSuspended(false);
      if (res) yield* this.host.raiseG(res.exn);
    }
    this.#stopProfile(thread);
  }

  /** `caml_memprof_stop` after the thread's pending allocation callbacks ran. */
  #stopProfile(thread: MemprofThread): void {
    const config = thread.entries.validatedConfig();
    if (config === null || config.status !== ProfileStatus.SAMPLING) {
      throw new OCamlFailure(MEMPROF_FAILURES.noProfileRunning);
    }
    config.status = ProfileStatus.STOPPED;
    this.setTrigger();
    this.host.resetYoungLimit();
  }

  /** Number of live entries in every table of this domain (for summaries). */
  entryCount(): number {
    let n = 0;
    for (const es of this.#allTables()) n += es.size;
    return n;
  }

  /** @internal Every table of the domain, labelled (for invariant checks). */
  tables(): { label: string; entries: Entries }[] {
    const r = [{ label: `domain ${this.host.id}`, entries: this.entries }];
    this.threads.forEach((th, k) => r.push({ label: `thread ${k}`, entries: th.entries }));
    let k = 0;
    for (let ot = this.orphans; ot; ot = ot.next) {
      r.push({ label: `orphan ${k++}`, entries: ot.entries });
    }
    return r;
  }
}

const EMPTY: readonly string[] = Object.freeze([]);

/** `Gc.Memprof.discard` (`caml_memprof_discard`). */
export function discard(profile: Profile): void {
  switch (profile.status) {
    case ProfileStatus.STOPPED:
      break;
    case ProfileStatus.SAMPLING:
      throw new OCamlFailure(MEMPROF_FAILURES.notStopped);
    case ProfileStatus.DISCARDED:
      throw new OCamlFailure(MEMPROF_FAILURES.alreadyDiscarded);
  }
  profile.status = ProfileStatus.DISCARDED;
}
