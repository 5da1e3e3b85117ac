/**
 * A simulated OCaml 5.3 runtime, just detailed enough for memprof to behave as in the real one:
 * per-domain minor heaps as word addresses growing down (young_ptr, young_trigger, the memprof
 * trigger, young_limit), the allocation slow path (`caml_alloc_small_dispatch`), pending
 * actions and poll points (`caml_do_pending_actions_res`, `caml_poll_gc_work`), stop-the-world
 * minor collections with promotion and death, major cycles marking from the roots the caller
 * holds, compaction, domains and systhreads.
 *
 * Nothing is allocated per simulated block: an allocation that does not reach a trigger only
 * lowers `youngPtr`. Blocks are identified by their header's word address; addresses are never
 * reused (each minor cycle gets a fresh address range), so an address names one block forever.
 * A block survives a collection only if a {@linkcode Root} the caller holds points to it.
 *
 * @module
 */

import { discard as memprofDiscard, MemprofDomain, MemprofShared } from "../memprof/memprof.ts";
import type { MemprofHost, MemprofThread, OrphanTable, StartOptions } from "../memprof/memprof.ts";
import { type Resumable, runToEnd } from "../memprof/resumable.ts";
export type { Resumable } from "../memprof/resumable.ts";
import type { Profile } from "../memprof/profile.ts";
import { AllocationSource } from "../memprof/profile.ts";
import {
  Lifecycle,
  NULL_SINK,
  RuntimeCounter,
  type RuntimeEventsSink,
  RuntimePhase,
} from "./events.ts";
import {
  DomainMajorState,
  MajorGc,
  type MajorGcInitialState,
  SliceKind,
  type SliceReport,
} from "./major_gc.ts";
import { DEFAULT_GC_TIME, GcClock, type GcTimeModel, TimedSink } from "./gc_time.ts";
import type { MemprofMarkRoots } from "./_mark.ts";
import { REACHED_SITE, Root, type RootOptions, RootSet } from "./roots.ts";
export { Root, type RootOptions, RootSet } from "./roots.ts";

/** Largest block (in words, excluding header) allocated in the minor heap. */
export const MAX_YOUNG_WOSIZE = 256;
/** `Bhsize_wosize(Max_young_wosize)` in words. */
export const MAX_YOUNG_WHSIZE: number = MAX_YOUNG_WOSIZE + 1;
const NO_FRAMES: readonly string[] = Object.freeze([]);

/** OCaml 5.3's default minor heap size, in words. */
export const DEFAULT_MINOR_HEAP_WORDS = 262_144;

/** The process id a simulated runtime reports when none is given (in lifecycle events, traces). */
export const DEFAULT_PID = 4242;

/** `custom_minor_max_bsz` default (bytes): larger out-of-heap memory goes to the major heap. */
const CUSTOM_MINOR_MAX_BSZ = 70_000;
/** `custom_minor_ratio` default (percent of the minor heap's size in bytes). */
const CUSTOM_MINOR_RATIO = 100;
/** `custom_major_ratio` default. */
export const CUSTOM_MAJOR_RATIO = 44;

/** Who enters `caml_alloc_small_dispatch`: OCaml code (callbacks run at once)… */
const FROM_OCAML = 0;
/** …the runtime, for a tracked allocation (`caml_alloc_small`; its callback waits)… */
const FROM_RUNTIME = 1;
/** …or the runtime, untracked (`Alloc_small_enter_GC_no_track`, e.g. intern's bulk block). */
const FROM_RUNTIME_UNTRACKED = 2;
type AllocFrom = typeof FROM_OCAML | typeof FROM_RUNTIME | typeof FROM_RUNTIME_UNTRACKED;

/** Slots per keep site in the key of a remembered-set entry (`site * SLOTS_PER_SITE + slot`). */
const SLOTS_PER_SITE = 1 << 24;
/** Entries the remembered set keeps in reserve beyond its size (minor_gc.c). */
const REF_TABLE_RESERVE = 256;

/** Options of {@linkcode Runtime}. */
export interface RuntimeOptions {
  /** Minor heap size per domain, in words (even; default 262,144). */
  minorHeapWords?: number;
  /** Where runtime_events go (default: nowhere). */
  events?: RuntimeEventsSink;
  /** Process id used as lifecycle payload (default 4242). */
  pid?: number;
  /** The fixed part of the major heap (default: the exported harness's, see major_gc.ts). */
  majorHeap?: MajorGcInitialState;
  /** Moves the virtual clock forward by whole nanoseconds while collections run (default: time
   * stands still during collections). */
  advanceClock?: (ns: number) => void;
  /** Costs of collections (default {@linkcode DEFAULT_GC_TIME}, see gc_time.ts). */
  gcTime?: Partial<GcTimeModel>;
}

/** A domain's statistics ({@linkcode Domain.stats}). */
export interface DomainStats {
  /** Words allocated in the minor heap before the last minor collection. */
  minorWordsBeforeLastGc: number;
  /** Words allocated in the minor heap, up to the last minor collection. */
  minorWords: number;
  /** Major slices run. */
  majorSlices: number;
  /** `EV_C_FORCE_MINOR_MEMPROF` counters emitted. */
  forcedMinorMemprof: number;
  /** Entries into the runtime from the allocation path (`caml_alloc_small_dispatch`). */
  runtimeEntries: number;
}

/** A systhread. */
export class Thread {
  /** Thread id (unique in the runtime). */
  readonly id: number;
  /** Owning domain. */
  readonly domain: Domain;
  /** Memprof state. */
  readonly memprof: MemprofThread;
  /** Current callstack, innermost frame first (what `caml_get_callstack` would see). */
  callstack: readonly string[] = [];
  /** False after `exit`. */
  alive = true;
  /** @internal */
  constructor(id: number, domain: Domain, mp: MemprofThread) {
    this.id = id;
    this.domain = domain;
    this.memprof = mp;
  }
  /** Thread termination (`caml_thread_stop`): memprof entries go to the domain. */
  exit(): void {
    this.domain.exitThread(this);
  }
}

/** A domain: its minor heap, its threads, its memprof state. */
export class Domain implements MemprofHost {
  /** Domain id. */
  readonly id: number;
  /** Owning runtime. */
  readonly runtime: Runtime;
  #youngStart: number = 0;
  /** Lowest address of the minor heap. */
  get youngStart(): number {
    return this.#youngStart;
  }
  #youngEnd: number = 0;
  /** One past the highest address of the minor heap. */
  get youngEnd(): number {
    return this.#youngEnd;
  }
  #youngPtr: number = 0;
  /** Allocation pointer (`young_ptr`): the header of the last block allocated in the minor heap. */
  get youngPtr(): number {
    return this.#youngPtr;
  }
  #youngTrigger: number = 0;
  /** GC trigger: the middle, then the start, of the minor heap. */
  get youngTrigger(): number {
    return this.#youngTrigger;
  }
  #memprofYoungTrigger: number = 0;
  /** memprof's trigger. */
  get memprofYoungTrigger(): number {
    return this.#memprofYoungTrigger;
  }
  #youngLimit: number = 0;
  /** Allocation below this enters the runtime; +Infinity forces it (an interrupt). */
  get youngLimit(): number {
    return this.#youngLimit;
  }
  #actionPending: boolean = false;
  /** `Caml_state->action_pending`. */
  get actionPending(): boolean {
    return this.#actionPending;
  }
  #requestedMinorGc: boolean = false;
  /** A minor collection was requested. */
  get requestedMinorGc(): boolean {
    return this.#requestedMinorGc;
  }
  #requestedMajorSlice: boolean = false;
  /** A major slice was requested. */
  get requestedMajorSlice(): boolean {
    return this.#requestedMajorSlice;
  }
  /** This domain's side of the major GC's pacing (allocated words, slice target). */
  readonly major: DomainMajorState = new DomainMajorState();
  #promotedWords = 0;
  /** @internal Words (headers included) the minor collection in progress promoted from this
   * domain's minor heap. */
  get promotedWords(): number {
    return this.#promotedWords;
  }
  #majorSliceEpoch: number = -1;
  /** `major_slice_epoch`: the global epoch when this domain's last slice began. A new domain
   * starts at 0, behind any epoch (domain.c), so its first poll runs a slice. */
  get majorSliceEpoch(): number {
    return this.#majorSliceEpoch;
  }
  #alive = true;
  /** Still running. */
  get alive(): boolean {
    return this.#alive;
  }
  /** memprof state. */
  readonly memprof: MemprofDomain;
  /** Systhreads (the first is the domain's main thread). */
  readonly threads: Thread[] = [];
  #current: Thread;
  /** Thread holding the domain lock. */
  get current(): Thread {
    return this.#current;
  }
  /** Per-component callstacks of the combined allocation in progress, if any. */
  #comballocStacks: readonly (readonly string[])[] | null = null;
  /** The thread whose combined allocation `#comballocStacks` belongs to: a callback of that
   * allocation may switch to another thread, whose own allocations have their own stacks. */
  #comballocThread: Thread | null = null;
  /** The remembered set (`minor_tables->major_ref`): entries since the last minor collection,
   * the table's size and its current limit (size, then size + reserve once a collection was
   * requested). */
  #refEntries = 0;
  /** Young custom blocks with out-of-heap memory (`minor_tables->custom`): address, bytes. */
  #customTable: number[] = [];
  /** `extra_heap_resources_minor`. */
  #extraMinor = 0;
  #refSize: number;
  #refLimit: number;

  readonly #stats: DomainStats = {
    minorWordsBeforeLastGc: 0,
    minorWords: 0,
    majorSlices: 0,
    forcedMinorMemprof: 0,
    runtimeEntries: 0,
  };
  /** Statistics (the runtime's to count). */
  get stats(): Readonly<DomainStats> {
    return this.#stats;
  }

  /** Use {@linkcode Runtime.spawnDomain}. */
  constructor(runtime: Runtime, id: number, parent: Domain | null) {
    this.runtime = runtime;
    this.id = id;
    // minor_gc.c allocates the ref table with minor_heap_wsz / 8 entries (and 256 in reserve).
    this.#refSize = Math.floor(runtime.minorHeapWords / 8);
    this.#refLimit = this.#refSize;
    // The main domain's last slice was the harness's own (see Runtime.majorSliceEpoch).
    if (parent === null) this.#majorSliceEpoch = runtime.majorSliceEpoch;
    this.#newMinorArena();
    this.memprof = new MemprofDomain(this, runtime.memprofShared, parent ? parent.memprof : null);
    const t = new Thread(runtime.nextThreadId++, this, this.memprof.current!);
    this.threads.push(t);
    this.#current = t;
    // allocate_minor_heap: place the triggers.
    this.memprof.setTrigger();
    this.resetYoungLimit();
  }

  #newMinorArena(): void {
    const size = this.runtime.minorHeapWords;
    this.#youngStart = this.runtime.takeAddresses(size);
    this.#youngEnd = this.#youngStart + size;
    this.#youngPtr = this.#youngEnd;
    this.#youngTrigger = this.#youngStart + size / 2;
  }

  get #events(): RuntimeEventsSink {
    return this.runtime.events;
  }

  // ---- MemprofHost ----

  /** `caml_reset_young_limit` (5.3): also sets action_pending. */
  resetYoungLimit(): void {
    this.#youngLimit = this.#youngTrigger > this.#memprofYoungTrigger
      ? this.#youngTrigger
      : this.#memprofYoungTrigger;
    if (
      this.#requestedMinorGc || this.#requestedMajorSlice ||
      this.#majorSliceEpoch < this.runtime.majorSliceEpoch
    ) this.#youngLimit = Infinity;
    this.#actionPending = true;
  }

  /**
   * `caml_modify` by this domain of a slot in the major heap (a global, an array the program
   * keeps blocks in) from the block at `old` (-1: an immediate) to the block at `addr`. Storing
   * a young block over anything but a young block adds an entry to this domain's remembered
   * set; when the table is full (minor heap / 8 entries), OCaml requests a minor collection
   * (`realloc_generic_table`), and when even its reserve of 256 fills, it doubles the table.
   */
  rememberStore(addr: number, old: number): void {
    if (addr < 0 || !this.isYoung(addr)) return;
    if (old >= 0 && this.isYoung(old)) return;
    if (this.#refEntries >= this.#refLimit) {
      if (this.#refLimit === this.#refSize) {
        this.#events.counter(this.id, RuntimeCounter.EV_C_REQUEST_MINOR_REALLOC_REF_TABLE, 1);
        this.#refLimit = this.#refSize + REF_TABLE_RESERVE;
        this.#requestedMinorGc = true;
        this.#youngLimit = Infinity; // caml_request_minor_gc interrupts the domain
      } else {
        this.#refSize *= 2;
        this.#refLimit = this.#refSize + REF_TABLE_RESERVE;
      }
    }
    this.#refEntries++;
  }

  /** `caml_interrupt_self`: the next allocation or poll of this domain enters the runtime. */
  interrupt(): void {
    this.#youngLimit = Infinity;
  }

  /** @internal During a minor collection: `words` (headers included) promoted from this
   * domain's minor heap. */
  addPromoted(words: number): void {
    this.#promotedWords += words;
  }

  /** @internal The domain ended ({@linkcode Runtime.terminateDomain}). */
  markTerminated(): void {
    this.#alive = false;
  }

  /** `Caml_state->young_ptr += words` (memprof undoing, then redoing, a sampled allocation). */
  moveYoungPtr(words: number): void {
    this.#youngPtr += words;
  }

  /** `Caml_state->memprof_young_trigger = addr`. */
  setMemprofTrigger(addr: number): void {
    this.#memprofYoungTrigger = addr;
  }

  /** `caml_set_action_pending`: a flag only; it does not move young_limit in 5.3. */
  setActionPending(): void {
    this.#actionPending = true;
  }

  /**
   * `caml_update_young_limit_after_c_call` (callback.c runs it in `caml_callback*` before
   * entering OCaml code): with an action pending, young_limit is set so that the next
   * allocation or poll enters the runtime. memprof's own trigger resets set the flag, so the
   * first allocation of a callback (its `Some`) enters the runtime and does the GC work due.
   */
  enterOCamlFromC(): void {
    if (this.#actionPending) this.#youngLimit = Infinity;
  }

  /**
   * A C primitive returning normally to OCaml (`RET_FROM_C_CALL` after `caml_c_call`, amd64.S):
   * with an action pending, young_limit is set so that the next allocation or poll enters the
   * runtime. Since every reset of young_limit flags an action as pending, this is what makes the
   * poll after `Array.make`, `Gc.minor ()` or `Bytes.create` run what callbacks a collection or
   * an earlier callback made ready.
   */
  returnFromC(): void {
    if (this.#actionPending) this.#youngLimit = Infinity;
  }

  /**
   * `caml_poll_gc_work`. A domain that has used half its minor heap, or is asked for a minor
   * collection before that, moves the global major slice epoch to the number of minor
   * collections so far; a domain whose last slice began in an earlier epoch runs one. So a
   * minor cycle brings at most one automatic slice per domain.
   */
  pollGcWork(): void {
    const rt = this.runtime;
    if (this.#youngPtr - MAX_YOUNG_WHSIZE < this.#youngTrigger) {
      if (this.#youngTrigger === this.#youngStart) {
        this.#requestedMinorGc = true;
      } else {
        // Half the arena used: the trigger moves to the start.
        rt.advanceMajorSliceEpoch();
        this.#youngTrigger = this.#youngStart;
      }
    } else if (this.#requestedMinorGc) {
      rt.advanceMajorSliceEpoch();
    }
    if (this.#majorSliceEpoch < rt.majorSliceEpoch) this.#requestedMajorSlice = true;
    if (this.#requestedMinorGc) {
      this.#requestedMinorGc = false;
      this.runtime.minorCollection(this);
    }
    if (this.#requestedMajorSlice || this.major.requestedGlobal) {
      this.#requestedMajorSlice = false;
      this.#events.beginPhase(this.id, RuntimePhase.EV_MAJOR);
      this.#slice(SliceKind.AUTO);
      this.#events.endPhase(this.id, RuntimePhase.EV_MAJOR);
    }
    if (this.major.requestedGlobal) {
      // The slice fell short of its target (a cycle ended first): every domain is asked for a
      // slice (stw_global_major_slice), which runs at its next poll.
      this.major.requestedGlobal = false;
      // caml_try_run_on_all_domains_async: a stop-the-world section of its own.
      this.#events.beginPhase(this.id, RuntimePhase.EV_STW_LEADER);
      this.#events.endPhase(this.id, RuntimePhase.EV_STW_LEADER);
      for (const d of this.runtime.domains) {
        d.#requestedMajorSlice = true;
        d.#youngLimit = Infinity;
      }
    }
    this.resetYoungLimit();
  }

  /** A major slice of this domain (`caml_major_collection_slice`); it records the epoch it
   * began in. */
  #slice(kind: SliceKind): void {
    this.#stats.majorSlices++;
    const epoch = this.runtime.majorSliceEpoch;
    this.runtime.majorSlice(this, kind);
    this.#majorSliceEpoch = epoch;
  }

  /** Memprof's own minor-heap allocation (callstack arrays, sample_info), from C: the young
   * block's address, or -1 (a block too large for the minor heap). */
  allocForMemprof(wosize: number): number {
    if (wosize > MAX_YOUNG_WOSIZE) {
      this.runtime.takeAddresses(wosize + 1);
      return -1;
    }
    return this.allocFromRuntime(wosize);
  }

  /** `caml_get_callstack`: the current thread's frames (or a comballoc component's). */
  captureCallstack(max: number, allocIdx: number): readonly string[] {
    const cs = this.#comballocStacks;
    const frames = cs !== null && allocIdx >= 0 && allocIdx < cs.length &&
        this.#comballocThread === this.#current
      ? cs[allocIdx]
      : this.#current.callstack;
    if (frames.length === 0 || max === 0) return NO_FRAMES;
    // By reference when whole: a thread's callstack array is replaced, never changed in place.
    return frames.length <= max ? frames : frames.slice(0, max);
  }

  /** `Is_young`: in some domain's minor heap. */
  isYoung(addr: number): boolean {
    // This domain's own minor heap first: where nearly every block memprof asks about lives.
    return (addr >= this.#youngStart && addr < this.#youngEnd) || this.runtime.isYoung(addr);
  }

  /** Where the minor collection in progress moved a young block, or -1 if it died. */
  promotedTo(addr: number): number {
    return this.runtime.forwardedTo(addr);
  }

  /** Whether this run resolves the promotion race of `addr` as a death
   * ({@linkcode Runtime.promotionRace}). */
  promotionRaceDead(addr: number, userData: unknown): boolean {
    return this.promotionRacing(addr) && this.pendingRaceDead(userData);
  }

  /** Whether `addr`'s promotion is a race point ({@linkcode Runtime.promotionRace} set). */
  promotionRacing(addr: number): boolean {
    const rt = this.runtime;
    return rt.promotionRace !== null && rt.isPromotionRace(addr);
  }

  /** The outcome of a race point decided once its block's allocation callback returned
   * `userData` ({@linkcode Runtime.promotionRace}). */
  pendingRaceDead(userData: unknown): boolean {
    const rt = this.runtime;
    return rt.promotionRace !== null && rt.promotionRace(userData);
  }

  /** After a major cycle's marking: is the block dead? */
  isUnmarked(addr: number): boolean {
    return this.runtime.isUnmarked(addr);
  }

  /** Emits `EV_C_FORCE_MINOR_MEMPROF` (memprof had to poll GC work to make room). */
  forceMinorMemprofCounter(): void {
    this.#stats.forcedMinorMemprof++;
    this.#events.counter(this.id, RuntimeCounter.EV_C_FORCE_MINOR_MEMPROF, 1);
  }

  /** Where compaction moves a live major block. */
  compactedTo(addr: number): number {
    return this.runtime.compactedTo(addr);
  }

  // ---- allocation ----
  //
  // Each runtime path that may run callbacks is written once, as a generator (`…G`), for runs
  // whose callbacks may block their systhread (memprof's `Blocking`): it passes on what a blocked
  // callback yields to the caller's scheduler. The plain methods drive it to its end
  // (`runToEnd`, which fails naming the operation if a callback blocks); only the bump-pointer
  // fast paths (`alloc`, `allocCombined`) are written out in both. The hottest
  // ones (the allocation slow path, pending actions) run as plain code up to the first callback
  // due, and return the rest of the path as a generator, or null if none is due: a plain run
  // makes no generator where no callback runs (see lib/memprof/resumable.ts).

  /**
   * An allocation by OCaml code of one block of `wosize` words (an `Alloc_small` at a poll
   * point). OCaml code cannot allocate blocks over {@linkcode MAX_YOUNG_WOSIZE} inline: those
   * are taken as {@linkcode makeArray} (major heap, then pending actions). Returns the block's address. May run callbacks,
   * collect, and throw what a callback throws (then nothing is allocated).
   */
  alloc(wosize: number): number {
    const p = this.#youngPtr - wosize - 1;
    if (p >= this.#youngLimit && wosize <= MAX_YOUNG_WOSIZE) {
      this.#youngPtr = p;
      return p;
    }
    // Kept out of line so that the common case stays small enough to inline everywhere.
    return runToEnd(this.#allocSlow(wosize, p), "caml_alloc_small_dispatch") ?? this.#youngPtr;
  }

  /** {@linkcode alloc}, resumable. */
  *allocG(wosize: number): Resumable<number> {
    const rest = this.allocFirst(wosize);
    return (rest === null ? undefined : yield* rest) ?? this.#youngPtr;
  }

  /** {@linkcode alloc} as far as it runs as plain code: null when it ran to its end (no
   * callback was to run in a loop, raise or block, so no generator is made), else its rest.
   * The block is then at {@linkcode youngPtr}, unless the rest returns its address (a block
   * too large for the minor heap, allocated by `Array.make`). */
  allocFirst(wosize: number): Resumable<number | void> | null {
    const p = this.#youngPtr - wosize - 1;
    if (p >= this.#youngLimit && wosize <= MAX_YOUNG_WOSIZE) {
      this.#youngPtr = p;
      return null;
    }
    return this.#allocSlow(wosize, p);
  }

  /** {@linkcode alloc} past the young limit (the young pointer would be `p`), or of a block too
   * large for the minor heap, as far as it runs as plain code: null if it ran to its end, else
   * its rest. Either way the block is at young_ptr then, unless the rest returns its address
   * (a block too large, allocated by `Array.make`). */
  #allocSlow(wosize: number, p: number): Resumable<number | void> | null {
    if (wosize > MAX_YOUNG_WOSIZE) return this.makeArrayG(wosize);
    this.#youngPtr = p;
    return this.#dispatch(wosize, FROM_OCAML, null);
  }

  /**
   * `Array.make` (`caml_make_vect`): a runtime allocation (`caml_alloc_small` up to
   * {@linkcode MAX_YOUNG_WOSIZE} words, else `caml_alloc_shr`), then pending actions — so the
   * allocation callback of a sampled array runs before `Array.make` returns.
   */
  makeArray(wosize: number): number {
    return runToEnd(this.makeArrayG(wosize), "Array.make");
  }

  /** {@linkcode makeArray}, resumable. */
  *makeArrayG(wosize: number): Resumable<number> {
    const addr = wosize <= MAX_YOUNG_WOSIZE
      ? this.allocFromRuntime(wosize, false)
      : this.#allocShrSampled(wosize, AllocationSource.NORMAL, false);
    const res = (yield* this.#pendingActionsHoldingG([addr], [wosize]))[0];
    this.returnFromC();
    return res;
  }

  /**
   * The local root holding a value's blocks: the first block's (the value), the others reached
   * through it, a chain through first fields as the exported program builds an unmarshalled
   * value (roots of their own, so that a minor collection promotes them, but neither darkened
   * when a cycle starts nor written: marking reaches them from the value's block).
   */
  #valueRoots(addrs: readonly number[], sizes: readonly number[]): Root[] {
    const roots: Root[] = [];
    for (let k = 0; k < addrs.length; k++) {
      const r = this.runtime.root(addrs[k], sizes[k], {
        local: true,
        site: k === 0 ? -1 : REACHED_SITE,
      });
      if (k > 0) roots[k - 1].link = r;
      roots.push(r);
    }
    return roots;
  }

  /**
   * `caml_process_pending_actions` in a C primitive that holds its result `addr` in a local
   * root (`CAMLlocal`/`CAMLparam`), as `caml_uniform_array_make` and intern's `intern_end`
   * do: a collection run by a callback keeps the blocks alive and may move them. Returns where
   * they are afterwards. Throws what a callback throws.
   */
  *#pendingActionsHoldingG(
    addrs: readonly number[],
    sizes: readonly number[],
  ): Resumable<readonly number[]> {
    if (!(this.#youngPtr < this.#youngLimit || this.#actionPending)) return addrs;
    const locals = this.#valueRoots(addrs, sizes);
    try {
      yield* this.processPendingActionsG();
      return locals.map((r) => r.addr);
    } finally {
      for (const r of locals) r.release();
    }
  }

  /**
   * A combined allocation by OCaml code: several blocks allocated at one poll point. `lens`
   * lists their sizes (words, no header) in the compiler's order (`encoded_lens`); block `k`
   * lives at `base + Σ_{j<k} (lens[j] + 1)` where `base` is the returned address (see
   * {@linkcode comballocBlock}). `callstacks[k]` optionally gives component k's callstack.
   */
  allocCombined(lens: readonly number[], callstacks?: readonly (readonly string[])[]): number {
    let whsize = 0;
    for (let k = 0; k < lens.length; k++) whsize += lens[k] + 1;
    const p = this.#youngPtr - whsize;
    if (p >= this.#youngLimit) {
      this.#youngPtr = p;
      return p;
    }
    runToEnd(this.#allocCombinedSlow(lens, callstacks, p), "caml_alloc_small_dispatch");
    return this.#youngPtr;
  }

  /** {@linkcode allocCombined}, resumable. The components' callstacks are captured before any
   * callback runs, so another thread running meanwhile does not see them. */
  *allocCombinedG(
    lens: readonly number[],
    callstacks?: readonly (readonly string[])[],
  ): Resumable<number> {
    const rest = this.allocCombinedFirst(lens, callstacks);
    if (rest !== null) yield* rest;
    return this.#youngPtr;
  }

  /** {@linkcode allocCombined} as far as it runs as plain code: null when it ran to its end,
   * else its rest; either way the blocks are at {@linkcode youngPtr} once it is done. */
  allocCombinedFirst(
    lens: readonly number[],
    callstacks?: readonly (readonly string[])[],
  ): Resumable<void> | null {
    let whsize = 0;
    for (let k = 0; k < lens.length; k++) whsize += lens[k] + 1;
    const p = this.#youngPtr - whsize;
    if (p >= this.#youngLimit) {
      this.#youngPtr = p;
      return null;
    }
    return this.#allocCombinedSlow(lens, callstacks, p);
  }

  /** {@linkcode allocCombined} past the young limit (the young pointer would be `p`), as far as
   * it runs as plain code: null if it ran to its end, else its rest. The blocks are at
   * young_ptr then. */
  #allocCombinedSlow(
    lens: readonly number[],
    callstacks: readonly (readonly string[])[] | undefined,
    p: number,
  ): Resumable<void> | null {
    const whsize = this.#youngPtr - p;
    this.#youngPtr = p;
    this.#comballocStacks = callstacks ?? null;
    this.#comballocThread = this.#current;
    let rest: Resumable<void> | null = null;
    try {
      rest = this.#dispatch(whsize - 1, FROM_OCAML, lens);
      if (rest !== null) return this.#combinedRestG(rest);
    } finally {
      if (rest === null) this.#endCombined();
    }
    return null;
  }

  /** A combined allocation's rest: the components' callstacks stay until it ends. */
  *#combinedRestG(rest: Resumable<void>): Resumable<void> {
    try {
      yield* rest;
    } finally {
      this.#endCombined();
    }
  }

  #endCombined(): void {
    this.#comballocStacks = null;
    this.#comballocThread = null;
  }

  /**
   * The inline part of an allocation by OCaml code of `whsize` words, headers included (one
   * block or a combined allocation): when it stays at or above `young_limit`, the young pointer
   * moves down and the address of the first block is returned; otherwise nothing changes and -1
   * is returned (the caller takes the runtime's path: {@linkcode alloc},
   * {@linkcode allocCombined}).
   */
  bump(whsize: number): number {
    const p = this.#youngPtr - whsize;
    if (p < this.#youngLimit) return -1;
    this.#youngPtr = p;
    return p;
  }

  /**
   * `words` words (headers included) of inline allocations by OCaml code at once, as many
   * {@linkcode bump}s would do them: the young pointer must stay strictly above `young_limit`
   * (so that no allocation nor poll among them would have entered the runtime), else this
   * throws a RangeError and nothing changes. For bulk runs of allocation loops.
   */
  advanceYoung(words: number): void {
    const p = this.#youngPtr - words;
    if (!(words >= 0 && p > this.#youngLimit)) {
      throw new RangeError(
        `advanceYoung(${words}): the young pointer ${this.#youngPtr} would reach the limit ${this.#youngLimit}`,
      );
    }
    this.#youngPtr = p;
  }

  /**
   * An allocation by the runtime (C code, `from_caml` false, tracked): e.g. `caml_alloc_small`
   * in a primitive. A sample is recorded but its callback waits for the next poll point.
   * `noScan` says the block has no fields to scan (a string, as the exported program's
   * `Bytes.create`; false for a block of fields, as `Array.make`'s), which only changes what
   * marking it may cost. Over {@linkcode MAX_YOUNG_WOSIZE} words, see {@linkcode allocMajor}.
   */
  allocFromRuntime(wosize: number, noScan = true): number {
    if (wosize > MAX_YOUNG_WOSIZE) {
      return this.allocMajor(wosize, AllocationSource.NORMAL, noScan);
    }
    const p = this.#youngPtr - wosize - 1;
    this.#youngPtr = p;
    if (p < this.#youngLimit) {
      runToEnd(this.#dispatch(wosize, FROM_RUNTIME, null), "caml_alloc_small");
    }
    if (noScan) this.runtime.youngNoScan(this.#youngPtr);
    return this.#youngPtr;
  }

  /**
   * A direct major-heap allocation by a C primitive (`caml_alloc_shr` + its
   * `caml_memprof_sample_block`, then `caml_check_urgent_gc`, as `caml_alloc_string`,
   * `caml_alloc` and `caml_alloc_custom_mem` do for large blocks): sampled by a binomial draw
   * over its words (header included), its callback waiting for a poll point. If the allocation
   * asked for GC work (a slice past a fifth of the minor heap's words), it is done at once,
   * the new block held in a local root. `noScan` as {@linkcode allocFromRuntime}'s. Returns
   * the block's address.
   */
  allocMajor(
    wosize: number,
    source: AllocationSource = AllocationSource.NORMAL,
    noScan = true,
  ): number {
    return this.checkUrgentGc(this.#allocShrSampled(wosize, source, noScan), wosize);
  }

  /** `caml_alloc_shr` with its memprof sampling. */
  #allocShrSampled(wosize: number, source: AllocationSource, noScan: boolean): number {
    const addr = this.allocShr(wosize, noScan);
    this.memprof.sampleBlock(addr, wosize, wosize + 1, source);
    return addr;
  }

  /**
   * `caml_check_urgent_gc(v)` (minor_gc.c): with an interrupt pending (`young_limit` moved),
   * `caml_handle_gc_interrupt` does the GC work due — a minor collection, a major slice, which
   * may end the cycle — while `v` (the block at `addr`, of `wosize` words) is held in a local
   * root. No callback runs (they wait for the next poll). Returns the block's address.
   */
  checkUrgentGc(addr: number, wosize: number): number {
    if (!(this.#youngPtr < this.#youngLimit)) return addr;
    const r = this.runtime.root(addr, wosize, { local: true });
    try {
      this.pollGcWork();
      return r.addr;
    } finally {
      r.release();
    }
  }

  /**
   * `caml_alloc_shr` without memprof: the block is placed in the major heap and counted as
   * allocated directly; past a fifth of the minor heap's size in such words since the last
   * slice, a slice is requested from every domain (`caml_request_major_slice(1)`). `noScan` as
   * {@linkcode allocFromRuntime}'s (default false: a block of fields).
   */
  allocShr(wosize: number, noScan = false): number {
    const addr = this.runtime.takeAddresses(wosize + 1);
    const m = this.major;
    this.runtime.majorGc.allocate(m, addr, wosize + 1, true, noScan);
    if (m.allocatedDirect > this.runtime.minorHeapWords / 5) {
      this.#events.counter(this.id, RuntimeCounter.EV_C_REQUEST_MAJOR_ALLOC_SHR, 1);
      m.requestedGlobal = true;
      this.#youngLimit = Infinity;
    }
    return addr;
  }

  /**
   * A custom block with out-of-heap memory (`caml_alloc_custom_mem`): the block itself is an
   * ordinary runtime allocation (minor if small, tracked as such; else `caml_alloc_shr`'s, then
   * `caml_adjust_gc_speed` and `caml_check_urgent_gc`), then memprof samples the out-of-heap
   * memory separately: `memWords` words reported and sampled, source `custom`.
   */
  allocCustom(wosize: number, memWords: number): number {
    const mem = memWords * 8;
    let addr: number;
    if (wosize <= MAX_YOUNG_WOSIZE && mem <= CUSTOM_MINOR_MAX_BSZ) {
      addr = this.allocFromRuntime(wosize);
      if (mem !== 0) {
        // add_to_custom_table, then caml_adjust_minor_gc_speed(mem, get_max_minor ()): young
        // out-of-heap memory past the minor heap's size in bytes asks for a minor collection.
        this.#customTable.push(addr, mem);
        const maxMinor = Math.trunc(this.runtime.minorHeapWords * 8 / 100) * CUSTOM_MINOR_RATIO;
        this.#extraMinor += mem / maxMinor;
        if (this.#extraMinor > 1.0) {
          this.#requestedMinorGc = true;
          this.#youngLimit = Infinity;
        }
      }
    } else {
      addr = this.#allocShrSampled(wosize, AllocationSource.NORMAL, true);
      this.adjustGcSpeed(mem);
      addr = this.checkUrgentGc(addr, wosize);
    }
    this.memprof.sampleBlock(addr, memWords, memWords, AllocationSource.CUSTOM);
    return addr;
  }

  /**
   * `caml_adjust_gc_speed(res, 0)`: out-of-heap memory held by major blocks, as a share of
   * `caml_custom_get_max_major ()` (the heap's size / 150 × custom_major_ratio 44); past 0.2 of
   * it since the last slice, every domain is asked for a slice, whose work then covers that
   * share of a whole cycle.
   */
  adjustGcSpeed(res: number): void {
    // caml_custom_get_max_major: this domain's heap.
    const max = Math.trunc(this.major.heap!.heapWords * 8 / 150) * CUSTOM_MAJOR_RATIO;
    if (res > max) res = max;
    this.major.extraResources += res / max;
    if (this.major.extraResources > 0.2) {
      this.#events.counter(this.id, RuntimeCounter.EV_C_REQUEST_MAJOR_ADJUST_GC_SPEED, 1);
      this.major.requestedGlobal = true;
      this.#youngLimit = Infinity;
    }
  }

  /**
   * Unmarshalling a value (`intern.c`), given the sizes in words of its blocks in the order they
   * are read (the root first). When all of them fit in one minor-heap block of at most
   * {@linkcode MAX_YOUNG_WOSIZE} words, that bulk block is allocated untracked and the blocks
   * are laid out in it; otherwise each block is allocated in the major heap. Either way memprof
   * samples each block on its own (source `marshal`, binomial over its words with header), and
   * pending actions run before the value is returned, as `caml_input_val` ends with
   * `caml_process_pending_actions`. Returns the root's address; the blocks are contiguous, block
   * `k` at `root + Σ_{j<k} (blocks[j] + 1)` (see {@linkcode comballocBlock}). Throws what a
   * callback throws.
   */
  unmarshal(blocks: readonly number[]): number {
    return this.unmarshalValue(blocks)[0] ?? -1;
  }

  /**
   * {@linkcode unmarshal}, returning the address of every block of the value, in order: a
   * callback that collects while `intern_end` holds the value may move them.
   */
  unmarshalValue(blocks: readonly number[]): readonly number[] {
    return runToEnd(this.unmarshalValueG(blocks), "caml_input_val");
  }

  /** {@linkcode unmarshalValue}, resumable. */
  *unmarshalValueG(blocks: readonly number[]): Resumable<readonly number[]> {
    const addrs = this.#internAlloc(blocks);
    if (addrs.length === 0) return addrs;
    // intern_end holds the root, and through it every block of the value.
    const res = yield* this.#pendingActionsHoldingG(addrs, blocks);
    this.returnFromC();
    return res;
  }

  /** intern.c's allocation and sampling of a value's blocks (no callback runs yet). */
  #internAlloc(blocks: readonly number[]): number[] {
    let whsize = 0;
    for (const w of blocks) whsize += w + 1;
    if (whsize === 0) return [];
    const bulkWosize = whsize - 1;
    let dest: number;
    if (bulkWosize <= MAX_YOUNG_WOSIZE && bulkWosize !== 0) {
      // Alloc_small_enter_GC_no_track: from C, not tracked as a whole.
      const p = this.#youngPtr - whsize;
      this.#youngPtr = p;
      if (p < this.#youngLimit) {
        runToEnd(this.#dispatch(bulkWosize, FROM_RUNTIME_UNTRACKED, null), "intern_alloc");
      }
      dest = this.#youngPtr;
    } else dest = -1;
    const addrs: number[] = [];
    for (const w of blocks) {
      let addr: number;
      if (dest >= 0) {
        addr = dest;
        dest += w + 1;
      } else {
        // intern_alloc_obj: counted as allocated (directly) without a slice request.
        addr = this.runtime.takeAddresses(w + 1);
        this.runtime.majorGc.allocate(this.major, addr, w + 1, true);
      }
      addrs.push(addr);
      this.memprof.sampleBlock(addr, w, w + 1, AllocationSource.MARSHAL);
    }
    return addrs;
  }

  /** `caml_alloc_small_dispatch`, entered `from` OCaml code or the runtime ({@linkcode
   * FROM_OCAML}, …); `lens` are a combined allocation's block sizes. Only from OCaml code may
   * callbacks run (from the runtime, they wait for a poll point). Runs as plain code up to the
   * first callback due: returns null if none was, else the rest of the dispatch. */
  #dispatch(
    wosize: number,
    from: AllocFrom,
    lens: readonly number[] | null,
  ): Resumable<void> | null {
    this.#stats.runtimeEntries++;
    this.#youngPtr += wosize + 1;
    return this.#dispatchLoop(wosize, from, lens);
  }

  /** {@linkcode #dispatch}'s loop: pending actions (GC work, callbacks), until the allocation
   * fits above young_trigger; then the allocation and its sample. */
  #dispatchLoop(
    wosize: number,
    from: AllocFrom,
    lens: readonly number[] | null,
  ): Resumable<void> | null {
    do {
      if (from === FROM_OCAML) {
        if (this.#beginPendingActions()) return this.#dispatchCallbacksG(wosize, lens);
      } else {
        this.pollGcWork();
        this.#actionPending = true;
      }
    } while (!this.#fits(wosize + 1));
    return this.#dispatchSample(wosize, from, lens);
  }

  /** Whether `whsize` words fit above young_trigger; if not, a forced minor collection's work
   * is polled. */
  #fits(whsize: number): boolean {
    if (this.#youngPtr - whsize >= this.#youngTrigger) return true;
    this.#events.counter(this.id, RuntimeCounter.EV_C_FORCE_MINOR_ALLOC_SMALL, 1);
    this.pollGcWork();
    return false;
  }

  /** {@linkcode #dispatchLoop} from OCaml code, from the pending actions' callbacks on. */
  *#dispatchCallbacksG(wosize: number, lens: readonly number[] | null): Resumable<void> {
    const res = yield* this.#pendingCallbacksG();
    if (res) yield* this.raiseG(res.exn);
    const rest = this.#fits(wosize + 1)
      ? this.#dispatchSample(wosize, FROM_OCAML, lens)
      : this.#dispatchLoop(wosize, FROM_OCAML, lens);
    if (rest !== null) yield* rest;
  }

  /** {@linkcode #dispatch}'s end: the allocation, sampled if it crossed memprof's trigger. */
  #dispatchSample(
    wosize: number,
    from: AllocFrom,
    lens: readonly number[] | null,
  ): Resumable<void> | null {
    this.#youngPtr -= wosize + 1;
    if (this.#youngPtr < this.#memprofYoungTrigger) {
      if (from === FROM_OCAML) return this.memprof.sampleYoung(wosize, lens);
      if (from === FROM_RUNTIME) this.memprof.sampleYoungFromC(wosize);
      else {
        this.memprof.setTrigger();
        this.resetYoungLimit();
      }
    }
    return null;
  }

  /**
   * `caml_raise` (fail_nat.c): an exception leaving the runtime for OCaml code first lets the
   * pending actions run once (`caml_process_pending_actions_with_root_res`), so callbacks made
   * pending meanwhile (say, the deallocations of a cancelled combined allocation) run before
   * the exception is raised; an exception they raise is raised instead.
   */
  raise(exn: unknown): never {
    return runToEnd(this.raiseG(exn), "caml_raise");
  }

  /** {@linkcode raise}, resumable. */
  *raiseG(exn: unknown): Resumable<never> {
    if (this.#youngPtr < this.#youngLimit || this.#actionPending) {
      const res = yield* this.doPendingActionsG();
      if (res) throw res.exn;
    }
    throw exn;
  }

  /**
   * `caml_do_pending_actions_res`: GC work, then memprof callbacks. Returns the exception a
   * callback raised (wrapped), or null.
   */
  doPendingActions(): { exn: unknown } | null {
    return runToEnd(this.doPendingActionsG(), "caml_do_pending_actions_res");
  }

  /** {@linkcode doPendingActions}, resumable. */
  *doPendingActionsG(): Resumable<{ exn: unknown } | null> {
    return this.#beginPendingActions() ? yield* this.#pendingCallbacksG() : null;
  }

  /** {@linkcode doPendingActions} up to its callbacks: whether any are due. */
  #beginPendingActions(): boolean {
    this.pollGcWork();
    this.#actionPending = false;
    return this.memprof.callbacksDue();
  }

  /** {@linkcode doPendingActions}'s callbacks. */
  *#pendingCallbacksG(): Resumable<{ exn: unknown } | null> {
    const res = yield* this.memprof.runCallbacksG();
    if (res) this.#actionPending = true;
    return res;
  }

  /**
   * A poll point in OCaml code (`Ipoll`: a loop back-edge, `Sys.poll_actions`). It enters the
   * runtime when `young_ptr <= young_limit` (amd64 emits `jbe`, where an allocation's check is
   * `jb`: a minor heap filled exactly to the limit is noticed at a poll, not by the allocation
   * that filled it), then runs `caml_process_pending_actions`. Throws what a callback throws.
   */
  poll(): void {
    runToEnd(this.pollFirst(), "caml_process_pending_actions");
  }

  /** {@linkcode poll}, resumable. */
  *pollG(): Resumable<void> {
    const rest = this.pollFirst();
    if (rest !== null) yield* rest;
  }

  /** {@linkcode poll} as far as it runs as plain code: null when it ran to its end (no callback
   * was due), else its rest, which the caller runs to its end ({@linkcode runToEnd}) or yields
   * through. */
  pollFirst(): Resumable<void> | null {
    return this.#youngPtr <= this.#youngLimit ? this.pendingActionsFirst() : null;
  }

  /**
   * `caml_process_pending_actions` (what C primitives and `Thread.yield` do): runs pending
   * actions if any are flagged. Throws what a callback throws.
   */
  processPendingActions(): void {
    runToEnd(this.pendingActionsFirst(), "caml_process_pending_actions");
  }

  /** {@linkcode processPendingActions}, resumable. */
  *processPendingActionsG(): Resumable<void> {
    const rest = this.pendingActionsFirst();
    if (rest !== null) yield* rest;
  }

  /** {@linkcode processPendingActions} as far as it runs as plain code: null when it ran to its
   * end (no callback was due), else its rest, which the caller runs to its end
   * ({@linkcode runToEnd}) or yields through. */
  pendingActionsFirst(): Resumable<void> | null {
    if (!(this.#youngPtr < this.#youngLimit || this.#actionPending)) return null;
    return this.#beginPendingActions() ? this.#pendingActionsRestG() : null;
  }

  /** {@linkcode pendingActionsFirst}'s rest: the callbacks, then what one raised is raised. */
  *#pendingActionsRestG(): Resumable<void> {
    const res = yield* this.#pendingCallbacksG();
    if (res) yield* this.raiseG(res.exn);
  }

  // ---- explicit GC (Gc module) ----

  /** Runs `body` between the begin and end events of `phase` on this domain (the end event is
   * emitted even if `body` throws, but for `Gc.full_major`: {@linkcode #endsWhenRaising}). */
  *#inPhaseG(phase: RuntimePhase, body: Resumable<void>): Resumable<void> {
    this.#events.beginPhase(this.id, phase);
    try {
      yield* body;
    } catch (e) {
      if (Domain.#endsWhenRaising(phase)) this.#events.endPhase(this.id, phase);
      throw e;
    }
    this.#events.endPhase(this.id, phase);
  }

  /** Whether an explicit GC phase ends when a callback run inside it raises: all do but
   * `Gc.full_major`'s, which returns the exception before its CAML_EV_END (gc_ctrl.c,
   * `gc_full_major_res`; seen in the real ring of `exception_callback`). */
  static #endsWhenRaising(phase: RuntimePhase): boolean {
    return phase !== RuntimePhase.EV_EXPLICIT_GC_FULL_MAJOR;
  }

  /** The phase of `Gc.full_major ()`, or of `Gc.compact ()` (whose last cycle compacts). */
  static #cyclesPhase(compact: boolean): RuntimePhase {
    return compact ? RuntimePhase.EV_EXPLICIT_GC_COMPACT : RuntimePhase.EV_EXPLICIT_GC_FULL_MAJOR;
  }

  /** `Gc.minor ()`: a minor collection, then pending actions (callbacks). */
  minorGc(): void {
    runToEnd(this.minorGcG(), "Gc.minor");
  }

  /** {@linkcode minorGc}, resumable. */
  *minorGcG(): Resumable<void> {
    yield* this.#inPhaseG(RuntimePhase.EV_EXPLICIT_GC_MINOR, this.#minorGcBodyG());
  }

  *#minorGcBodyG(): Resumable<void> {
    this.#requestedMinorGc = true;
    this.pollGcWork();
    yield* this.processPendingActionsG();
    this.returnFromC();
  }

  /** `Gc.major_slice 0`: a slice with the work due (`GC_CALCULATE_MAJOR_SLICE`), then callbacks. */
  majorSlice(): void {
    runToEnd(this.majorSliceG(), "Gc.major_slice");
  }

  /** {@linkcode majorSlice}, resumable. */
  *majorSliceG(): Resumable<void> {
    yield* this.#inPhaseG(RuntimePhase.EV_EXPLICIT_GC_MAJOR_SLICE, this.#majorSliceBodyG());
  }

  *#majorSliceBodyG(): Resumable<void> {
    this.#slice(SliceKind.CALCULATE);
    yield* this.processPendingActionsG();
    this.returnFromC();
  }

  /** `Gc.major ()` (gc_ctrl.c, `gc_major_res`): the minor heaps emptied once
   * (`caml_empty_minor_heaps_once`), the current major cycle finished (which empties them
   * twice more), then callbacks: three minor collections in all. */
  majorGc(): void {
    runToEnd(this.majorGcG(), "Gc.major");
  }

  /** {@linkcode majorGc}, resumable. */
  *majorGcG(): Resumable<void> {
    yield* this.#inPhaseG(RuntimePhase.EV_EXPLICIT_GC_MAJOR, this.#majorGcBodyG());
  }

  *#majorGcBodyG(): Resumable<void> {
    this.runtime.minorCollection(this);
    this.runtime.finishMajorCycle(this);
    yield* this.processPendingActionsG();
    this.returnFromC();
  }

  /** `Gc.full_major ()` (or, with `compact`, `Gc.compact ()`): three major cycles, the last one
   * compacting if asked, pending actions after each. */
  *#threeCyclesG(compact: boolean): Resumable<void> {
    yield* this.#inPhaseG(Domain.#cyclesPhase(compact), this.#threeCyclesBodyG(compact));
  }

  *#threeCyclesBodyG(compact: boolean): Resumable<void> {
    for (let i = 0; i < 3; i++) {
      this.runtime.finishMajorCycle(this, { compact: compact && i === 2 });
      try {
        yield* this.processPendingActionsG();
      } catch (e) {
        // gc_ctrl.c: `Gc.compact` counts the collection before raising, `Gc.full_major` not.
        if (compact) this.runtime.gcTotals.forcedMajors++;
        throw e;
      }
    }
    this.runtime.gcTotals.forcedMajors++;
    this.returnFromC();
  }

  /** `Gc.full_major ()`: three major cycles, pending actions after each. */
  fullMajor(): void {
    runToEnd(this.fullMajorG(), "Gc.full_major");
  }

  /** `Gc.compact ()`: three major cycles, the last one compacting, callbacks after each. */
  compact(): void {
    runToEnd(this.compactG(), "Gc.compact");
  }

  /**
   * {@linkcode fullMajor}, resumable. (`fullMajorG(true)`, the older spelling of
   * {@linkcode compactG}, is still accepted.)
   */
  *fullMajorG(compact: boolean | { compact?: boolean } = {}): Resumable<void> {
    yield* this.#threeCyclesG(typeof compact === "boolean" ? compact : compact.compact === true);
  }

  /** {@linkcode compact}, resumable. */
  *compactG(): Resumable<void> {
    yield* this.#threeCyclesG(true);
  }

  // ---- Gc.Memprof on this domain's current thread ----

  /**
   * `Gc.Memprof.start` on this domain (allocates the boxed 1/log1p(-λ) on the minor heap).
   * `place` is where the exported program keeps the profile: its slot in the harness's `prof`
   * array and the array's length (by default, the next slot of an array as long as the
   * profiles started so far). See {@linkcode Runtime} for what marking them costs.
   */
  memprofStart<M, J>(opts: StartOptions<M, J>, place?: ProfilePlace): Profile {
    let config: Root | undefined, lambda: Root | undefined;
    const profile = this.memprof.start(opts, () => {
      // caml_copy_double, then caml_initialize into the config block (caml_alloc_shr of 9
      // fields): a young value stored in the major heap, one remembered-set entry. The program
      // keeps the profile (the config block, holding the boxed float) in its `prof` array.
      // Memprof's roots reach both (`viaMemprof`: the marking by layout models them itself).
      const l = this.allocFromRuntime(1);
      lambda = this.runtime.root(l, 1, { viaMemprof: true });
      config = this.runtime.root(this.allocShr(9), 9, {
        local: true,
        darken: CONFIG_DARKEN,
        viaMemprof: true,
      });
      this.rememberStore(l, -1);
    });
    this.runtime.keepProfile(profile, config!, lambda!, place);
    this.returnFromC();
    return profile;
  }

  /** `Gc.Memprof.stop`. */
  memprofStop(): void {
    runToEnd(this.memprofStopG(), "Gc.Memprof.stop");
  }

  /** {@linkcode memprofStop}, resumable. */
  *memprofStopG(): Resumable<void> {
    yield* this.memprof.stopG();
    this.returnFromC();
  }

  /** `Gc.Memprof.discard`. */
  memprofDiscard(p: Profile): void {
    memprofDiscard(p);
    this.returnFromC();
  }

  // ---- systhreads ----

  /** `Thread.create`: a new systhread of this domain (does not switch to it). */
  createThread(callstack: readonly string[] = []): Thread {
    const t = new Thread(this.runtime.nextThreadId++, this, this.memprof.newThread());
    t.callstack = callstack;
    this.threads.push(t);
    this.runtime.threadsCreated.push(t);
    return t;
  }

  /** A systhread switch: `t` takes the domain lock (`caml_memprof_enter_thread`). */
  switchTo(t: Thread): void {
    if (!t.alive || t.domain !== this) {
      throw new Error("switchTo: not a live thread of this domain");
    }
    this.#current = t;
    this.memprof.enterThread(t.memprof);
  }

  /**
   * A blocking section of the current thread (`caml_enter/leave_blocking_section`): while it
   * runs, `during` may switch to other threads; on leaving, this thread takes the lock back.
   */
  blockingSection(during?: () => void): void {
    const me = this.#current;
    during?.();
    if (me.alive) this.switchTo(me);
  }

  /**
   * The part of `caml_enter_blocking_section` before the lock is released: with an interrupt
   * or an action pending, `caml_handle_gc_interrupt` does the GC work due (`caml_poll_gc_work`;
   * memprof callbacks wait). If that leaves an interrupt (a slice asked of every domain), the
   * thread takes the lock back (`caml_memprof_enter_thread`) and tries again, as the C loops.
   */
  enterBlockingSection(): void {
    for (;;) {
      if (this.#youngLimit === Infinity || this.#actionPending) this.pollGcWork();
      if (this.#youngLimit !== Infinity) return;
      this.switchTo(this.#current);
    }
  }

  /**
   * @internal Thread termination. With `handOver` false, no thread of the domain takes the lock
   * yet (the systhreads library releases it; the next thread's {@linkcode switchTo} takes it),
   * where by default the domain's first thread does at once.
   */
  exitThread(t: Thread, opts: { handOver?: boolean } = {}): void {
    if (!t.alive) return;
    t.alive = false;
    this.memprof.deleteThread(t.memprof);
    const k = this.threads.indexOf(t);
    if (k >= 0) this.threads.splice(k, 1);
    if (opts.handOver === false) return;
    if (this.#current === t && this.threads.length) this.switchTo(this.threads[0]);
  }

  /** Sets the current thread's callstack (innermost frame first). */
  setCallstack(frames: readonly string[]): void {
    this.#current.callstack = frames;
  }

  // ---- collections (called by the runtime) ----

  /** @internal This domain's part of a stop-the-world minor collection, before promotion. */
  minorScanRoots(): void {
    const ev = this.#events;
    const t = this.runtime.gcClock;
    ev.beginPhase(this.id, RuntimePhase.EV_MINOR);
    t.phase(this.id, RuntimePhase.EV_MINOR_GLOBAL_ROOTS, t.minorShare("globalRoots"));
    ev.beginPhase(this.id, RuntimePhase.EV_MINOR_REMEMBERED_SET);
    t.phase(this.id, RuntimePhase.EV_MINOR_FINALIZERS_OLDIFY, t.minorShare("finalizersOldify"));
    ev.beginPhase(this.id, RuntimePhase.EV_MINOR_MEMPROF_ROOTS);
    this.memprof.scanRoots({ youngOnly: true });
    t.spend(t.minorShare("memprofRoots"));
    ev.endPhase(this.id, RuntimePhase.EV_MINOR_MEMPROF_ROOTS);
  }

  /** @internal This domain's part of a minor collection, after promotion. */
  minorFinish(): void {
    const ev = this.#events;
    const t = this.runtime.gcClock;
    const id = this.id;
    t.phase(
      id,
      RuntimePhase.EV_MINOR_REMEMBERED_SET_PROMOTE,
      t.minorShare("rememberedSetPromote") + this.#refEntries * t.model.perRememberedNs,
    );
    t.spend(t.minorShare("rememberedSet"));
    ev.endPhase(id, RuntimePhase.EV_MINOR_REMEMBERED_SET);
    ev.beginPhase(id, RuntimePhase.EV_MINOR_LOCAL_ROOTS);
    t.phase(
      id,
      RuntimePhase.EV_MINOR_LOCAL_ROOTS_PROMOTE,
      t.minorShare("localRootsPromote") + this.#promotedWords * t.model.perPromotedWordNs,
    );
    t.spend(t.minorShare("localRoots"));
    ev.endPhase(id, RuntimePhase.EV_MINOR_LOCAL_ROOTS);
    this.#extraMinor = 0;
    const allocated = this.#youngEnd - this.#youngPtr;
    this.#stats.minorWords += allocated;
    this.#stats.minorWordsBeforeLastGc = allocated;
    ev.beginPhase(id, RuntimePhase.EV_MINOR_MEMPROF_CLEAN);
    this.memprof.afterMinorGc();
    t.spend(t.minorShare("memprofClean"));
    ev.endPhase(id, RuntimePhase.EV_MINOR_MEMPROF_CLEAN);
    this.#newMinorArena();
    this.#refEntries = 0;
    this.#refLimit = this.#refSize;
    this.memprof.setTrigger();
    this.resetYoungLimit();
    // 5.3 reports both in bytes, headers included for the promoted blocks.
    ev.counter(this.id, RuntimeCounter.EV_C_MINOR_PROMOTED, this.#promotedWords * 8);
    ev.counter(this.id, RuntimeCounter.EV_C_MINOR_ALLOCATED, allocated * 8);
    this.runtime.gcTotals.minorWords += allocated;
    this.runtime.gcTotals.promotedWords += this.#promotedWords;
    this.#promotedWords = 0;
    t.spend(t.minorRest());
    ev.endPhase(this.id, RuntimePhase.EV_MINOR);
    t.phaseAround(id, RuntimePhase.EV_MINOR_FINALIZED, t.minorShare("finalized"), () => {
      // custom_finalize_minor, inside EV_MINOR_FINALIZED (minor_gc.c): promoted custom blocks
      // now count against the major heap.
      const ct = this.#customTable;
      for (let k = 0; k < ct.length; k += 2) {
        if (this.promotedTo(ct[k]) >= 0) this.adjustGcSpeed(ct[k + 1]);
      }
      ct.length = 0;
    });
    t.phase(id, RuntimePhase.EV_MINOR_FINALIZERS_ADMIN, t.minorShare("finalizersAdmin"));
    t.phase(id, RuntimePhase.EV_MINOR_CLEAR, t.minorShare("clear"));
  }
}

/** Where the exported program keeps a profile: `prof.(slot)`, of an array of `slots`. */
export interface ProfilePlace {
  /** Its slot. */
  readonly slot: number;
  /** The array's length: the program's profiles. */
  readonly slots: number;
}

/** Marking work of a profile's config block darkened as one of memprof's roots
 * (`caml_memprof_scan_roots`, through `entries_finish_scan`): scanned from its second field (the
 * sampling rate, a static float in the exported program): 8 words. */
const CONFIG_DARKEN = 8;
/** Marking work of a config block reached by scanning the program's `prof` array: its header
 * and 9 fields. */
const CONFIG_SCANNED = 10;

/** A profile the program keeps: its config block's and boxed float's roots, and its slot. */
interface KeptProfile {
  readonly profile: Profile;
  readonly config: Root;
  readonly lambda: Root;
  readonly slot: number;
  /** Its number among the profiles started (its config block in the marking by layout). */
  readonly index: number;
  /** A later profile took its slot: only memprof's roots may still hold it. */
  superseded: boolean;
}

/** Entries of the runtime's filter of forwarded addresses (a power of 2). */
const FORWARDING_FILTER_SIZE = 4096;

/** Address of component `k` of a combined allocation at `base` with sizes `lens`. */
export function comballocBlock(base: number, lens: readonly number[], k: number): number {
  let a = base;
  for (let j = 0; j < k; j++) a += lens[j] + 1;
  return a;
}

/** The simulated runtime: domains, roots, the heap's address space, the GC. */
export class Runtime {
  /** Minor heap size of every domain, in words. */
  readonly minorHeapWords: number;
  /** Event sink. */
  readonly events: RuntimeEventsSink;
  /** Process id (lifecycle payloads). */
  readonly pid: number;
  /** memprof's shared state (global orphans). */
  readonly memprofShared: MemprofShared = new MemprofShared();
  /** Live domains, in creation order. */
  readonly domains: Domain[] = [];
  /** The caller's roots. */
  readonly roots: RootSet = new RootSet();
  /**
   * Collection statistics of every domain, terminated ones included, as OCaml's
   * `OCAMLRUNPARAM=v=0x400` prints them at exit (gc_stats.c sums the domains' and the orphaned
   * statistics): words allocated in minor heaps; words promoted and counted as allocated in the
   * major heap (direct and promoted), headers included; `Gc.full_major` and `Gc.compact` calls
   * counted (gc_ctrl.c: a full major whose callbacks raise is not, a compaction is).
   */
  readonly gcTotals = { minorWords: 0, promotedWords: 0, majorWords: 0, forcedMajors: 0 };
  /**
   * How this run resolves the promotion race (docs/differential.md, "Race points"): called with
   * the memprof entry's tracker value of each tracked block promoted through a remembered set
   * shared by several domains; true makes its domain's memprof report it dead (it stays alive,
   * untracked). Null: every such block is promoted.
   */
  promotionRace: ((userData: unknown) => boolean) | null = null;
  /** Young blocks the minor collection in progress promoted through a shared remembered set. */
  readonly #promotionRaces = new Set<number>();
  /**
   * How this run resolves the adoption race (docs/differential.md, "Race points"): when orphaned
   * memprof tables wait in the global list and several domains take part in a collection, each
   * of them scans memprof's roots and the first one adopts them all (memprof.c, orphans_adopt).
   * Called with the tracker values of the orphaned entries, the participants' ids and the
   * collecting domain's; returns the adopter's id. Null: the collecting domain adopts.
   */
  adoptionRace:
    | ((userData: readonly unknown[], participants: readonly number[], by: number) => number)
    | null = null;

  /** Before the participants of a collection scan memprof's roots: the adoption race, resolved
   * by letting the adopter take the global orphans first. */
  #adoptOrphans(order: readonly Domain[]): void {
    const orphans = this.memprofShared.orphans;
    if (orphans === null || order.length < 2 || this.adoptionRace === null) return;
    const userData: unknown[] = [];
    for (let t: OrphanTable | null = orphans; t !== null; t = t.next) {
      const e = t.entries;
      for (let i = 0; i < e.size; i++) userData.push(e.userData[i]);
    }
    const id = this.adoptionRace(userData, order.map((d) => d.id), order[0].id);
    (order.find((d) => d.id === id) ?? order[0]).memprof.orphansAdopt();
  }
  /** Forwarding of young blocks promoted by the minor collection in progress. */
  readonly forwarding: Map<number, number> = new Map();
  /** A filter of {@linkcode forwarding}'s keys (by their low bits): most blocks memprof asks
   * about died, and this answers for them without a map lookup. */
  #forwarded = new Uint8Array(FORWARDING_FILTER_SIZE);
  /** @internal */
  nextThreadId = 0;
  /** Completed major cycles. */
  majorCycles = 0;
  /** Minor collections. */
  minorCollections = 0;
  /** Words promoted (known sizes only). */
  promotedWords = 0;
  #nextAddr = 1 << 20;
  #nextDomainId = 0;
  #freeDomainIds: number[] = [];
  // Major-cycle model: snapshot at the beginning of the cycle.
  #cycleStart = 0;
  /** The addresses the roots held when the cycle began (its snapshot). */
  #snapshot: number[] = [];
  /** The addresses the roots held when the cycle ended. */
  #rootsAtEnd: number[] = [];
  /** Between the cycle's end and the next cycle's start, while memprof asks which blocks are
   * dead: the union of the two, made at the first question ({@linkcode isUnmarked}). */
  #marked: Set<number> | null = null;
  /** Within that window: outside it, no block is marked (see {@linkcode isUnmarked}). */
  #askingMarks = false;
  #compaction: Map<number, number> | null = null;
  /** Young blocks without fields to scan, until the next minor collection. */
  readonly #youngNoScan: Set<number> = new Set();
  /** The major GC's pacing and heap. */
  readonly majorGc: MajorGc;
  /** `caml_major_slice_epoch`. */
  majorSliceEpoch: number = 0;
  /** @internal The systhreads created, in order (the exported program's threads 1, 2, …). */
  readonly threadsCreated: Thread[] = [];
  /** `caml_minor_collections_count`, counted from the harness's own `Gc.minor ()` (the
   * scenario starts one collection after the epoch was last moved). */
  #minorCount = 1;
  /** The virtual clock's advance during collections, and the cost model. */
  readonly gcClock: GcClock;
  /** Inside a stop-the-world section already (a finishing cycle's). */
  #inStw = false;
  /** The domain whose slice is running (it leads the end-of-cycle stop-the-world). */
  #slicing: Domain | null = null;
  #compactAtCycleEnd = false;
  /** The profiles the program keeps (see {@linkcode keepProfile}). */
  #kept: KeptProfile[] = [];
  /** Profiles started so far. */
  #profilesStarted = 0;
  /** The length of the program's `prof` array. */
  #profSlots = 0;

  /** Creates the runtime and its main domain (id 0). */
  constructor(opts: RuntimeOptions = {}) {
    const w = opts.minorHeapWords ?? DEFAULT_MINOR_HEAP_WORDS;
    if (!(Number.isInteger(w) && w >= 2 * MAX_YOUNG_WHSIZE && w % 2 === 0)) {
      throw new RangeError(`minorHeapWords must be an even integer >= ${2 * MAX_YOUNG_WHSIZE}`);
    }
    this.minorHeapWords = w;
    this.pid = opts.pid ?? DEFAULT_PID;
    this.#cycleStart = this.#nextAddr;
    const model = { ...DEFAULT_GC_TIME, ...opts.gcTime };
    const advance = opts.advanceClock;
    const sink = opts.events ?? NULL_SINK;
    this.events = advance === undefined || sink === NULL_SINK
      ? sink
      : new TimedSink(sink, () => this.gcClock.spend(model.perEventNs));
    this.gcClock = new GcClock(this.events, advance ?? (() => {}), model);
    this.majorGc = new MajorGc({
      endCycle: () => this.#endCycle(),
      roots: () => this.roots,
      siteSlot: (site, slot) => this.roots.siteSlot(site, slot),
      memprofRoots: () => this.#profileMarkRoots(),
      profileSlot: (j) => this.#profileSlot(j),
      domainHandle: (k) => this.#domainHandles.has(k),
      domainEnded: (k) => this.#domainsEnded.has(k),
      domainRooted: (k) => this.#domainHandles.get(k)?.alive ?? false,
      threadAlive: (k) => this.threadsCreated[k - 1]?.alive ?? false,
      sliceBegin: (r) => this.#sliceBegin(r),
      sliceEnd: (r) => this.#sliceEnd(r),
    }, { initial: opts.majorHeap });
    this.roots.onOverwrite = (addr) => this.majorGc.darken(addr);
    this.roots.onStore = (r) => this.#slotStored(r);
    this.spawnDomain(null);
  }

  /** Scenario domain numbers whose handle the exported program's `doms` array holds, and
   * their domains. */
  readonly #domainHandles = new Map<number, Domain>();

  /** @internal `Domain.spawn` returned domain `ord`'s handle (by number in the scenario's
   * domains), which the exported program keeps in its `doms` array from now on: marking finds it
   * there (lib/runtime/_mark.ts). */
  domainHandleStored(ord: number, d: Domain): void {
    this.#domainHandles.set(ord, d);
    this.majorGc.domainHandleStored(ord);
  }

  /** Scenario domain numbers whose result (`Finished (Ok ())`) their `term_sync` holds. */
  readonly #domainsEnded = new Set<number>();

  /** @internal Domain `ord` (by number in the scenario's domains) ended: the runtime stored its
   * result in its `term_sync`, which its handle reaches (lib/runtime/_mark.ts). */
  domainResultStored(ord: number): void {
    this.#domainsEnded.add(ord);
    this.majorGc.domainResultStored(ord);
  }

  /**
   * @internal A profile just started, whose config block and boxed float `config` and `lambda`
   * hold, kept by the program at `place` (default: the next slot). When its slot held another
   * profile, that one is no longer the program's (its blocks die once memprof's roots no longer
   * hold its config: see `#markProfiles`).
   */
  keepProfile(profile: Profile, config: Root, lambda: Root, place?: ProfilePlace): void {
    const slot = place?.slot ?? this.#kept.length;
    this.#profSlots = Math.max(this.#profSlots, place?.slots ?? 0, slot + 1);
    const index = this.#profilesStarted++;
    this.majorGc.profileStarted(index);
    for (const k of this.#kept) {
      if (k.slot !== slot || k.superseded) continue;
      k.superseded = true;
      this.majorGc.profileOverwritten(k.index); // `prof.(slot) <- ...`
    }
    this.#kept.push({ profile, config, lambda, slot, index, superseded: false });
  }

  /** The profiles whose config blocks memprof's roots darken when a cycle starts
   * (`caml_memprof_scan_roots`: the config of each table of entries whose profile is not
   * discarded), each once, in the order the roots are visited: the slicing domain's first. */
  #memprofConfigs(): Profile[] {
    const out: Profile[] = [];
    for (const d of [this.#slicing ?? this.mainDomain, ...this.domains]) {
      for (const c of d.memprof.rootConfigs()) if (!out.includes(c)) out.push(c);
    }
    return out;
  }

  /** The config blocks memprof's roots darken when a cycle starts (after `#markProfiles`), by
   * number among the profiles started, for the marking by layout. */
  #profileMarkRoots(): MemprofMarkRoots {
    const roots: number[] = [];
    for (const p of this.#memprofConfigs()) {
      const k = this.#kept.find((k) => k.profile === p);
      if (k !== undefined) roots.push(k.index);
    }
    return { roots };
  }

  /** The profile (by number among those started) that slot `j` of the program's `prof` array
   * holds, or -1. */
  #profileSlot(j: number): number {
    for (const k of this.#kept) if (k.slot === j && !k.superseded) return k.index;
    return -1;
  }

  /**
   * What marking the program's profiles costs in the cycle starting (major_gc.c: at a cycle's
   * start, `caml_do_roots` and `caml_scan_global_roots` darken the stacks' and the globals' values,
   * then `caml_memprof_scan_roots` darkens the config of each table of entries whose profile is
   * not discarded, `validated_config`). A config memprof's roots hold is darkened there:
   * {@linkcode CONFIG_DARKEN}; one they do not (a stopped profile after another started, or a
   * discarded one) is reached when marking scans the harness's `prof` array, whose darkening
   * (a global's, `caml_darken` then `mark_stack_push_block`) pushed its fields from the first
   * slot holding a profile (or past the eighth): {@linkcode CONFIG_SCANNED}, and the array's
   * fields scanned are counted once, on the first started profile's config. A profile whose slot
   * a later one took and that memprof no longer holds is garbage: its roots go.
   */
  #markProfiles(): void {
    if (this.#kept.length === 0) return;
    const held = new Set<Profile>(this.#memprofConfigs());
    this.#kept = this.#kept.filter((k) => {
      if (!k.superseded || held.has(k.profile)) return true;
      k.config.release();
      k.lambda.release();
      return false;
    });
    let first = Infinity;
    for (const k of this.#kept) if (!k.superseded && k.slot < first) first = k.slot;
    const n = this.#profSlots;
    const fields = first < Math.min(n, 8) ? n - first : n > 8 ? n - 8 : 0;
    let counted = false;
    for (const k of this.#kept) {
      let w = held.has(k.profile) ? CONFIG_DARKEN : CONFIG_SCANNED;
      if (!counted && !k.superseded && k.slot === first) {
        w += fields;
        counted = true;
      }
      k.config.darken = w;
    }
  }

  /** The domain whose minor heap holds `addr`, if any. */
  #youngOwner(addr: number): Domain | null {
    for (const d of this.domains) if (addr >= d.youngStart && addr < d.youngEnd) return d;
    return null;
  }

  /** The main domain (id 0 while it lives). */
  get mainDomain(): Domain {
    return this.domains[0];
  }

  /** @internal Reserve `n` fresh word addresses. */
  takeAddresses(n: number): number {
    const a = this.#nextAddr;
    this.#nextAddr += n;
    return a;
  }

  /** @internal The young block at `addr` has no fields to scan (see `MajorBlock.noScan`). */
  youngNoScan(addr: number): void {
    this.#youngNoScan.add(addr);
  }

  /**
   * Creates a root pointing at `addr` (or empty): a slot of the program's global data, or with
   * `local`, a local root (see {@linkcode Root}); `darken` overrides the marking work of its
   * block when darkened directly; `site` and `slot` place a global slot in the exported
   * program's keep sites, `link` is the block its block's first field links.
   */
  root(addr = -1, wosize = 0, opts: RootOptions = {}): Root {
    const r = new Root(this.roots, addr, wosize, opts);
    this.roots.add(r);
    if (r.site >= 0) this.#slotStored(r);
    return r;
  }

  /** A store of a block into keep site slot `r`: a young block over anything but a young block
   * is the remembered set's entry for that slot, unless the slot has one since the last minor
   * collection (a later store promotes its block at that first entry's place). A ring's slot,
   * stored again and again ({@linkcode Root.set}), gets its entry at its first store after each
   * minor collection (rnd-15-31: the slots were promoted in their creation order, so that other
   * blocks than OCaml's filled the end of a pool). */
  #slotStored(r: Root): void {
    if (r.addr < 0 || !this.isYoung(r.addr)) return;
    const key = r.site * SLOTS_PER_SITE + r.slot;
    if (!this.#refSlots.has(key)) this.#refOrder.push(key);
    this.#refSlots.set(key, r);
  }
  /** Keep-site slots (`site * SLOTS_PER_SITE + slot`) that got a young block since the last
   * minor collection, in the order of their first store (the remembered set's entries, which
   * a later store to the same slot does not reorder), and the root each holds now. */
  #refOrder: number[] = [];
  readonly #refSlots = new Map<number, Root>();

  /** `Is_young`: in some domain's current minor heap. */
  isYoung(addr: number): boolean {
    const ds = this.domains;
    for (let i = 0; i < ds.length; i++) {
      const d = ds[i];
      if (addr >= d.youngStart && addr < d.youngEnd) return true;
    }
    return false;
  }

  /**
   * `Domain.spawn`: a new domain inheriting `parent`'s profile (memprof_new_domain). Reuses
   * the smallest free id, as OCaml reuses domain slots.
   */
  spawnDomain(parent: Domain | null = this.domains[0] ?? null): Domain {
    const id = this.#freeDomainIds.length
      ? this.#freeDomainIds.sort((a, b) => a - b).shift()!
      : this.#nextDomainId++;
    const d = new Domain(this, id, parent);
    this.majorGc.addDomain(d.major);
    this.domains.push(d);
    this.events.lifecycle(id, Lifecycle.EV_DOMAIN_SPAWN, this.pid);
    return d;
  }

  /**
   * Domain termination (`caml_domain_terminate`): its minor heap is emptied by a collection,
   * then memprof orphans its entries to the global list for another domain to adopt.
   * `afterCollection` runs between the two (what another domain does meanwhile: the `join`
   * race point, docs/differential.md).
   */
  terminateDomain(d: Domain, opts: { readonly afterCollection?: () => void } = {}): void {
    if (!d.alive) return;
    if (this.domains.length === 1) throw new Error("cannot terminate the last domain");
    this.minorCollection(d);
    opts.afterCollection?.();
    this.majorGc.removeDomain(d.major);
    d.memprof.destroy();
    d.markTerminated();
    this.domains.splice(this.domains.indexOf(d), 1);
    this.#freeDomainIds.push(d.id);
    this.events.lifecycle(d.id, Lifecycle.EV_DOMAIN_TERMINATE, this.pid);
  }

  /**
   * A stop-the-world minor collection of every domain, started by `by`: memprof roots are
   * scanned, rooted young blocks are promoted (fresh major addresses), the rest die; then each
   * domain updates its memprof entries, resets its minor heap and places new triggers.
   */
  minorCollection(by: Domain): void {
    const stw = !this.#inStw;
    if (stw) this.events.beginPhase(by.id, RuntimePhase.EV_STW_LEADER);
    this.minorCollections++;
    this.#minorCount++;
    const order = [by, ...this.domains.filter((d) => d !== by)];
    this.#adoptOrphans(order);
    for (const d of order) d.minorScanRoots();
    const fwd = this.forwarding;
    this.#clearForwarding();
    // With several domains, the remembered sets' promotion is shared among them (minor_gc.c,
    // caml_empty_minor_heap_promote): a block a global slot holds may be promoted by another
    // domain than its own, racing with its domain's memprof check. Local roots are promoted by
    // their own domain, before that check.
    const races = this.#promotionRaces;
    races.clear();
    const shared = this.domains.length > 1;
    const local: Set<number> | null = shared ? new Set() : null;
    let promoted = 0;
    /** `oldify_one` of young block `a` of `wosize` words: its new address. */
    const oldify = (a: number, wosize: number): number => {
      let to = fwd.get(a);
      if (to === undefined) {
        to = this.takeAddresses(wosize + 1);
        fwd.set(a, to);
        this.#forwarded[a & (FORWARDING_FILTER_SIZE - 1)] = 1;
        promoted += wosize;
        const owner = this.#youngOwner(a) ?? by;
        owner.addPromoted(wosize + 1);
        this.majorGc.allocate(owner.major, to, wosize + 1, false, this.#youngNoScan.has(a));
      }
      return to;
    };
    const promote = (r: Root) => {
      const a = r.addr;
      if (a >= 0 && this.isYoung(a)) {
        if (shared) {
          if (r.local) local!.add(a);
          else races.add(a);
        }
        r.addr = oldify(a, r.wosize);
      }
    };
    // The remembered set first (caml_empty_minor_heap_promote): a keep site's slot promotes the
    // block it holds now at the place of the slot's first entry, which decides the pools the
    // blocks go to, hence which pools later free slots or empty; then memprof's roots (the
    // callstack arrays its entries hold until their allocation callbacks run,
    // `caml_memprof_scan_roots` in EV_MINOR_MEMPROF_ROOTS); then the other roots (the local
    // roots, EV_MINOR_LOCAL_ROOTS).
    for (const key of this.#refOrder) {
      const r = this.#refSlots.get(key)!;
      if (this.roots.has(r)) promote(r);
    }
    this.#refOrder = [];
    this.#refSlots.clear();
    for (const d of order) d.memprof.promoteYoungData(oldify);
    this.roots.forEach(promote);
    this.promotedWords += promoted;
    this.#youngNoScan.clear();
    if (local !== null) { for (const a of local) races.delete(a); }
    for (const d of order) d.minorFinish();
    this.#clearForwarding();
    if (stw) this.events.endPhase(by.id, RuntimePhase.EV_STW_LEADER);
  }

  /** @internal During a minor collection: whether young block `addr` was promoted through a
   * remembered set whose promotion several domains shared (a race point). */
  isPromotionRace(addr: number): boolean {
    return this.#promotionRaces.has(addr);
  }

  /** @internal During a minor collection: where young block `addr` was promoted, or -1 if it
   * died. */
  forwardedTo(addr: number): number {
    if (this.#forwarded[addr & (FORWARDING_FILTER_SIZE - 1)] === 0) return -1;
    const to = this.forwarding.get(addr);
    return to === undefined ? -1 : to;
  }

  /** Empties {@linkcode forwarding} and its filter. */
  #clearForwarding(): void {
    const f = this.#forwarded;
    for (const a of this.forwarding.keys()) f[a & (FORWARDING_FILTER_SIZE - 1)] = 0;
    this.forwarding.clear();
  }

  /** @internal After a major cycle: is `addr` dead? */
  isUnmarked(addr: number): boolean {
    if (addr >= this.#cycleStart) return false;
    if (!this.#askingMarks) return true;
    let m = this.#marked;
    if (m === null) {
      m = this.#marked = new Set(this.#snapshot);
      for (const a of this.#rootsAtEnd) m.add(a);
    }
    return !m.has(addr);
  }

  /** @internal During compaction: the new address of a live major block. */
  compactedTo(addr: number): number {
    const m = this.#compaction;
    if (m === null) return addr;
    let to = m.get(addr);
    if (to === undefined) {
      to = this.takeAddresses(1);
      m.set(addr, to);
    }
    return to;
  }

  /**
   * `advance_global_major_slice_epoch`: the epoch becomes the number of minor collections; if
   * it moved, every domain is interrupted to run its slice.
   */
  advanceMajorSliceEpoch(): void {
    const old = this.majorSliceEpoch;
    this.majorSliceEpoch = this.#minorCount;
    if (old !== this.#minorCount) { for (const d of this.domains) d.interrupt(); }
  }

  /** @internal A slice by `by` (the major GC may end the cycle, led by `by`). */
  majorSlice(by: Domain, kind: SliceKind): void {
    const prev = this.#slicing;
    this.#slicing = by;
    try {
      this.majorGc.slice(by.major, kind);
    } finally {
      this.#slicing = prev;
    }
  }

  /**
   * Finishes a major cycle (`caml_finish_major_cycle`): the minor heaps are emptied, then every
   * domain runs slices with a budget of 10,000,000 words (`stw_finish_major_cycle`: each sweeps
   * its own heap and takes its part in the phases), `by` first, in turn, until the cycle ends
   * (see {@linkcode majorSlice}).
   * The cycle's end (`stw_cycle_all_domains`), in 5.3's order: every domain's memprof learns
   * which tracked blocks died (`caml_memprof_after_major_gc`), the minor heaps are emptied
   * again, the heap is cycled and, if asked, compacted. Dead = not reachable from the roots when
   * the cycle began nor now, and not allocated or promoted during the cycle (OCaml 5 marks what
   * was reachable at the cycle's start and allocates new blocks marked).
   */
  finishMajorCycle(by: Domain, options: { compact?: boolean } = {}): void {
    const compact = options.compact === true;
    const ev = this.events;
    const outer = this.#inStw;
    if (!outer) ev.beginPhase(by.id, RuntimePhase.EV_STW_LEADER);
    this.#inStw = true;
    this.#compactAtCycleEnd = compact;
    try {
      this.minorCollection(by);
      ev.beginPhase(by.id, RuntimePhase.EV_MAJOR_FINISH_CYCLE);
      const cycles = this.majorGc.cycles;
      const order = [by, ...this.domains.filter((d) => d !== by)];
      for (let k = 0; this.majorGc.cycles === cycles; k = (k + 1) % order.length) {
        this.majorSlice(order[k], SliceKind.FINISH);
      }
      ev.endPhase(by.id, RuntimePhase.EV_MAJOR_FINISH_CYCLE);
    } finally {
      this.#compactAtCycleEnd = false;
      this.#inStw = outer;
    }
    if (!outer) ev.endPhase(by.id, RuntimePhase.EV_STW_LEADER);
  }

  /** `update_major_slice_work`'s counters, then the slice begins. */
  #sliceBegin(r: SliceReport): void {
    const d = (this.#slicing ?? this.mainDomain).id;
    const ev = this.events;
    this.gcTotals.majorWords += r.allocated;
    ev.counter(d, RuntimeCounter.EV_C_MAJOR_HEAP_WORDS, r.heapWords);
    ev.counter(d, RuntimeCounter.EV_C_MAJOR_ALLOCATED_WORDS, r.allocated);
    ev.counter(d, RuntimeCounter.EV_C_MAJOR_ALLOCATED_WORK, r.allocWork);
    ev.counter(d, RuntimeCounter.EV_C_MAJOR_DEPENDENT_WORK, 0);
    ev.counter(d, RuntimeCounter.EV_C_MAJOR_EXTRA_WORK, r.extraWork);
    ev.counter(d, RuntimeCounter.EV_C_MAJOR_WORK_COUNTER, r.workCounter);
    ev.counter(d, RuntimeCounter.EV_C_MAJOR_ALLOC_COUNTER, r.allocCounter);
    ev.counter(d, RuntimeCounter.EV_C_MAJOR_SLICE_TARGET, r.sliceTarget);
    ev.counter(d, RuntimeCounter.EV_C_MAJOR_SLICE_BUDGET, r.sliceBudget);
    ev.beginPhase(d, RuntimePhase.EV_MAJOR_SLICE);
  }

  /** The slice's work, as phases: sweeping, marking, the phase changes; then it ends. */
  #sliceEnd(r: SliceReport): void {
    const d = (this.#slicing ?? this.mainDomain).id;
    const ev = this.events;
    const t = this.gcClock;
    const m = t.model;
    t.spend(m.sliceFixedNs);
    // As major_collection_slice: sweeping is entered whenever it is not done, marking whenever
    // it is not done and work is left.
    if (r.sweepEntered) t.phase(d, RuntimePhase.EV_MAJOR_SWEEP, r.swept * m.perSweptWordNs);
    if (r.markEntered) t.phase(d, RuntimePhase.EV_MAJOR_MARK, r.marked * m.perMarkedWordNs);
    if (r.epheMarkEntered) t.phase(d, RuntimePhase.EV_MAJOR_EPHE_MARK, 0);
    for (let k = 0; k < r.phaseChanges; k++) {
      // A slice run inside a stop-the-world section (finishing a cycle) completes the phase
      // there; otherwise through a stop-the-world section of its own.
      if (!this.#inStw) ev.beginPhase(d, RuntimePhase.EV_STW_LEADER);
      t.phase(d, RuntimePhase.EV_MAJOR_GC_PHASE_CHANGE, m.phaseChangeNs);
      if (!this.#inStw) ev.endPhase(d, RuntimePhase.EV_STW_LEADER);
      t.phase(
        d,
        k === 0 ? RuntimePhase.EV_FINALISE_UPDATE_FIRST : RuntimePhase.EV_FINALISE_UPDATE_LAST,
        m.memprofPhaseNs,
      );
    }
    if (r.epheSweepEntered) t.phase(d, RuntimePhase.EV_MAJOR_EPHE_SWEEP, 0);
    ev.endPhase(d, RuntimePhase.EV_MAJOR_SLICE);
  }

  #endCycle(): void {
    const by = this.#slicing ?? this.mainDomain;
    const compact = this.#compactAtCycleEnd;
    const ev = this.events;
    const t = this.gcClock;
    const outer = this.#inStw;
    if (!outer) ev.beginPhase(by.id, RuntimePhase.EV_STW_LEADER);
    this.#inStw = true;
    const order = [by, ...this.domains.filter((d) => d !== by)];
    this.#rootsAtEnd.length = 0;
    this.roots.addressesInto(this.#rootsAtEnd);
    this.#marked = null;
    this.#askingMarks = true;
    this.#adoptOrphans(order);
    for (const d of order) d.memprof.scanRoots();
    for (const d of order) {
      ev.beginPhase(d.id, RuntimePhase.EV_MAJOR_MEMPROF_CLEAN);
      d.memprof.afterMajorGc();
      t.spend(t.model.memprofPhaseNs);
      ev.endPhase(d.id, RuntimePhase.EV_MAJOR_MEMPROF_CLEAN);
    }
    this.#askingMarks = false;
    this.#marked = null;
    ev.beginPhase(by.id, RuntimePhase.EV_MAJOR_GC_CYCLE_DOMAINS);
    try {
      this.minorCollection(by);
    } finally {
      this.#inStw = outer;
    }
    ev.beginPhase(by.id, RuntimePhase.EV_MAJOR_GC_STW);
    this.majorCycles++;
    if (compact) {
      ev.beginPhase(by.id, RuntimePhase.EV_COMPACT);
      this.#compaction = new Map();
      for (const r of this.roots) {
        if (r.addr >= 0) {
          const to = this.compactedTo(r.addr);
          this.majorGc.move(r.addr, to);
          r.addr = to;
        }
      }
      for (const d of order) d.memprof.scanRoots({ weak: true });
      this.#compaction = null;
      ev.endPhase(by.id, RuntimePhase.EV_COMPACT);
    }
    this.#markProfiles();
    this.majorGc.startCycle({ compact });
    for (const d of order) {
      t.phase(d.id, RuntimePhase.EV_MAJOR_MARK_ROOTS, t.model.cycleEndNs);
      t.phase(d.id, RuntimePhase.EV_MAJOR_MEMPROF_ROOTS, t.model.memprofPhaseNs);
    }
    ev.endPhase(by.id, RuntimePhase.EV_MAJOR_GC_STW);
    ev.endPhase(by.id, RuntimePhase.EV_MAJOR_GC_CYCLE_DOMAINS);
    if (!outer) ev.endPhase(by.id, RuntimePhase.EV_STW_LEADER);
    this.#cycleStart = this.#nextAddr;
    this.#snapshot.length = 0;
    this.roots.addressesInto(this.#snapshot);
  }
}
