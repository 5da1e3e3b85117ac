/**
 * OCaml 5.3's major GC pacing (runtime/major_gc.c): how much sweeping and marking each slice
 * does, and so when a major cycle ends — which matters to memprof because every cycle ends with
 * a stop-the-world that empties the minor heaps (a minor collection, a new memprof trigger) and
 * reports the tracked blocks found dead.
 *
 * The accounting is 5.3's: allocation in the major heap (direct, or by promotion) adds to the
 * domain's `allocated_words`; each slice turns them into work owed (`alloc_counter`, about four
 * words of work per word allocated at the default `space_overhead` of 120: the heap's sweep plus
 * its marking, spread over the allocation of two thirds of its free memory) and does work until
 * the shared `work_counter` reaches that target, in chunks, sweeping first, then marking, then
 * the phase changes that end the cycle. Forced slices (`Gc.major`, `Gc.full_major`) run with a
 * budget of 10,000,000 words and put the work counter ahead of the allocation counter, so that
 * automatic slices then do nothing until allocation catches up.
 *
 * What the simulation does not know exactly is the program's fixed part: the runtime's and the
 * harness's own data. {@linkcode MajorGcInitialState} describes it, calibrated against the real
 * runtime for the exported harness (docs/memprof.md, "Major GC pacing"). Marking is then an
 * amount of work taken `min(budget, left)` a slice — unless the state has a layout (an exported
 * program's, lib/export/_harness_heap.ts): then each slice runs 5.3's mark loop over it
 * (lib/runtime/_mark.ts), which can do more than the slice's budget (major_gc.c,
 * `do_some_marking` drains its prefetch buffer) and reads the keep sites' slots when it scans
 * them, so that the write barrier spares exactly the blocks marking had not reached.
 *
 * Each domain has its own heap, as in 5.3 (shared_heap.c): it allocates and promotes into it, its
 * slices compute their work from its size (`caml_heap_size (dom_st->shared_heap)`: a freshly
 * spawned domain's is 0) and sweep only it; the counters (`work_counter`, `alloc_counter`) and the
 * phase are global, and a phase ends only once every domain of the cycle has swept its heap and
 * each has run a slice in the phase (`num_domains_to_sweep`, `num_domains_to_final_update_first`
 * and `_last`, `num_domains_to_ephe_sweep`). A domain spawned during a cycle has nothing to sweep
 * or mark in it; a terminating domain sweeps what is left of its heap without counting the work
 * (`caml_finish_sweeping`), and its pools go to global lists until another domain adopts one
 * (lib/runtime/_major_heap.ts), or the next cycle's start gives them all to the main domain.
 * Marking is the main domain's: the roots the model marks (the program's globals, the main
 * domain's stack, memprof's) go on its mark stack when a cycle starts. Races of 5.3 the simulation
 * settles: the globals go to whichever domain's stop-the-world gets there first, so do the
 * orphaned pools; and a domain waiting at a barrier may do some of its own work
 * (`caml_do_opportunistic_major_slice`), which the simulation does not model.
 *
 * @module
 */

import { Colour, type MajorBlock, MajorHeap, OrphanPools, type PoolState } from "./_major_heap.ts";
import {
  type LocalMarkRoot,
  Marker,
  type MemprofMarkRoots,
  type ProgramMarkLayout,
} from "./_mark.ts";
import { REACHED_SITE } from "./roots.ts";

/** `caml_percent_free` default (`space_overhead`). */
export const PERCENT_FREE_DEFAULT = 120;
/** `Chunk_size`: the most work done in one go. */
const CHUNK_SIZE = 0x4000;
/** Budget of the slices that finish a cycle (`caml_finish_major_cycle`). */
const FINISH_BUDGET = 10_000_000;
/** Work per ephemeron, marking and sweeping it (observed: 4 words each). */
const EPHEMERON_WORK = 4;

/** Kind of slice (`howmuch` and `collection_slice_mode`). */
export const enum SliceKind {
  /** `AUTO_TRIGGERED_MAJOR_SLICE`: interruptible, target = allocation counter. */
  AUTO = 0,
  /** `Gc.major_slice 0` (`GC_CALCULATE_MAJOR_SLICE`). */
  CALCULATE = 1,
  /** A slice of `caml_finish_major_cycle` (budget 10,000,000). */
  FINISH = 2,
}

/** GC phases (`caml_gc_phase`). */
const enum Phase {
  SWEEP_AND_MARK_MAIN = 0,
  MARK_FINAL = 1,
  SWEEP_EPHE = 2,
}

/** The fixed part of the program's major heap when the scenario starts. */
export interface MajorGcInitialState {
  /** `work_counter - alloc_counter`: work done ahead of allocation (forced cycles). */
  readonly workAhead: number;
  /** Pools, head of each size class's list first. */
  readonly pools: readonly PoolState[];
  /** Large allocations (sizes with header), head first; none swept yet. */
  readonly large: readonly number[];
  /** Marking work of the fixed part's live data in the current cycle. */
  readonly markWork: number;
  /** Marking work of the fixed part in the cycles after the current one (default
   * {@linkcode markWork}): data the program allocated during the current cycle is marked from
   * the next one on. */
  readonly fixedMark?: number;
  /** Ephemerons (each costs a little marking and sweeping work per cycle). */
  readonly ephemerons: number;
  /** What marking reaches, block by block (an exported program's): marking then runs 5.3's
   * mark loop over it (lib/runtime/_mark.ts) instead of taking {@linkcode markWork} and
   * {@linkcode fixedMark} as amounts; the roots' blocks are found through their keep sites. */
  readonly layout?: ProgramMarkLayout;
}

/**
 * The state of a program exported by memprof-lab when its scenario starts: after the harness's
 * `Gc.full_major ()` and `Gc.minor ()`, the fourth cycle has begun; the runtime's and harness's
 * data fill twelve pools and one large block (`ord_of_index`). Measured with OCaml 5.3.0's
 * debug runtime (`OCAMLRUNPARAM=v=0x800` and a pool dump at each `caml_cycle_heap`), the program
 * run as `deno task diff` runs it, as `/tmp/memprof-lab-XXXXXXXXXXXXXXXX/program` (`Sys.argv`
 * holds that path: a 7-word string). From the fifth cycle on, marking also visits the
 * `Gc.quick_stat ()` record the harness keeps on its stack for the whole run (promoted during
 * the fourth cycle): 23 more words.
 */
export const EXPORTED_HARNESS_STATE: MajorGcInitialState = {
  workAhead: 138_621,
  pools: [
    { sz: 1, fixed: 40, swept: true },
    { sz: 2, fixed: 21, swept: false },
    { sz: 3, fixed: 8, swept: false },
    { sz: 4, fixed: 2, swept: false },
    { sz: 5, fixed: 6, swept: false },
    { sz: 6, fixed: 5, swept: false },
    { sz: 7, fixed: 2, swept: false },
    { sz: 8, fixed: 2, swept: false },
    { sz: 10, fixed: 1, swept: false },
    { sz: 11, fixed: 1, swept: false },
    { sz: 13, fixed: 1, swept: true },
    { sz: 21, fixed: 2, swept: false },
    { sz: 25, fixed: 1, swept: false },
  ],
  large: [257],
  markWork: 558,
  fixedMark: 581,
  ephemerons: 1,
};

/**
 * A root as the major GC sees it when a cycle starts (a runtime `Root` is one): the block it
 * holds, whether it is a local root (darkened in the cycle's stop-the-world, before marking
 * scans anything) or a slot of the program's global data (reached when marking scans that
 * data), and the marking work of its block when darkened directly (-1: from its size and
 * contents, {@linkcode darkenWork}).
 */
export interface MajorRoot {
  /** The block's address, or -1. */
  readonly addr: number;
  /** A local root rather than a global slot. */
  readonly local: boolean;
  /** Marking work when darkened directly, or -1. */
  readonly darken: number;
  /** Its keep site, -1, or {@linkcode REACHED_SITE} (marking by layout). */
  readonly site?: number;
  /** The root whose block its block's first field links, or null (marking by layout). */
  readonly link?: MajorRoot | null;
  /** Reached from memprof's roots: a profile's config block, or what it holds. */
  readonly viaMemprof?: boolean;
}

/**
 * Marking work of a block darkened directly (`caml_darken`, from a root or the write barrier),
 * not reached by scanning: `mark_stack_push_block` pushes nothing for a block without fields
 * to scan, nor for one whose at most eight fields are all immediates; a longer one of
 * immediates is pushed from its ninth field, and only the fields pushed are scanned later. (A
 * block reached by scanning costs its header and every field: its size with header.)
 */
export function darkenWork(whsize: number, noScan: boolean): number {
  const wosize = whsize - 1;
  return noScan || wosize <= 8 ? 0 : wosize - 8;
}

/** A domain's side of the pacing. */
export class DomainMajorState {
  /** `allocated_words`: major allocation since the last slice. */
  allocatedWords = 0;
  /** `allocated_words_direct`: the part allocated directly (`caml_alloc_shr`). */
  allocatedDirect = 0;
  /** `slice_target`. */
  sliceTarget = 0;
  /** `slice_budget`. */
  sliceBudget = 0;
  /** `requested_global_major_slice`. */
  requestedGlobal = false;
  /** `extra_heap_resources`: out-of-heap memory, as a share of a cycle's worth. */
  extraResources = 0;
  /** @internal Its heap (`shared_heap`), given by {@linkcode MajorGc.addDomain}. */
  heap: MajorHeap | null = null;
  /** @internal `sweeping_done`: a fresh domain has nothing to sweep in the cycle running. */
  sweepingDone = true;
  /** @internal `final_info->updated_first`: its slice ran in the mark-final phase (a fresh
   * domain takes part: `num_domains_to_final_update_first` counts it). */
  finalFirst = false;
  /** @internal `final_info->updated_last`: its slice ran in the ephemeron-sweeping phase. */
  finalLast = false;
  /** @internal `ephe_info->must_sweep_ephe`, or its ephemerons still to sweep: it took part in
   * the change to the ephemeron-sweeping phase (`num_domains_to_ephe_sweep`). */
  epheSweep = false;
}

/** What a slice computed and did (one object, reused by every slice). */
export class SliceReport {
  /** `caml_heap_size` in words when the slice began. */
  heapWords = 0;
  /** Words allocated since the last slice. */
  allocated = 0;
  /** Work owed for them. */
  allocWork = 0;
  /** Work owed for out-of-heap resources. */
  extraWork = 0;
  /** `work_counter` after the update. */
  workCounter = 0;
  /** `alloc_counter` after the update. */
  allocCounter = 0;
  /** `slice_target`. */
  sliceTarget = 0;
  /** `slice_budget`. */
  sliceBudget = 0;
  /** Words swept by the slice. */
  swept = 0;
  /** Words marked by the slice. */
  marked = 0;
  /** Whether sweeping was not done when the slice began: OCaml then enters EV_MAJOR_SWEEP,
   * even with no budget (the ring's events only). */
  sweepEntered = false;
  /** Whether the slice entered marking (marking not done and work left when it got there):
   * EV_MAJOR_MARK (the ring's events only). */
  markEntered = false;
  /** Whether the slice marked the ephemerons (EV_MAJOR_EPHE_MARK; the ring's events only). */
  epheMarkEntered = false;
  /** Whether the slice swept the ephemerons (EV_MAJOR_EPHE_SWEEP; the ring's events only). */
  epheSweepEntered = false;
  /** Phase changes (`stw_try_complete_gc_phase`) the slice made. */
  phaseChanges = 0;
  /** Whether the slice ends the cycle. */
  endsCycle = false;
}

/** What the host's roots are walked through: each root in order, as an array's `forEach`. */
export interface MajorRoots {
  /** Calls `fn` with each root, in order. */
  forEach(fn: (r: MajorRoot) => void): void;
}

/** Hooks the runtime gives the major GC. */
export interface MajorGcHost {
  /** End of cycle (`stw_cycle_all_domains`): memprof, a minor collection, the new cycle. */
  endCycle(): void;
  /** Roots now: the blocks the program holds, and how (an array, or the runtime's
   * `RootSet`, walked with `forEach`). */
  roots(): MajorRoots;
  /** The address of the block in slot `slot` of keep site `site`, or -1 (marking by layout). */
  siteSlot?(site: number, slot: number): number;
  /** The profiles whose config blocks memprof's roots hold (marking by layout). */
  memprofRoots?(): MemprofMarkRoots;
  /** The profile (by number among those started) whose config block slot `j` of the
   * program's `prof` array holds, or -1 (marking by layout). */
  profileSlot?(j: number): number;
  /** Whether the program's `doms` array holds domain `k`'s handle (`k` by number in the
   * scenario's domains). */
  domainHandle?(k: number): boolean;
  /** Whether domain `k` ended (its result stored in its `term_sync`). */
  domainEnded?(k: number): boolean;
  /** Whether domain `k`'s `term_sync` is one of the runtime's global roots (the domain has not
   * terminated). */
  domainRooted?(k: number): boolean;
  /** Whether systhread `k` (1: the first created) lives (marking by layout). */
  threadAlive?(k: number): boolean;
  /** A slice computed its work (`update_major_slice_work`) and is about to do it. */
  sliceBegin?(report: SliceReport): void;
  /** A slice did its work; if it ends the cycle, {@linkcode endCycle} follows. */
  sliceEnd?(report: SliceReport): void;
}

/** Options of {@linkcode MajorGc}. */
export interface MajorGcOptions {
  /** The fixed part (default {@linkcode EXPORTED_HARNESS_STATE}). */
  initial?: MajorGcInitialState;
  /** `space_overhead` (default 120). */
  percentFree?: number;
  /** Marking work of the fixed part from the next cycle on (default: the initial state's). */
  fixedMark?: number;
}

/** One runtime's major GC pacing. */
export class MajorGc {
  readonly #host: MajorGcHost;
  readonly #percentFree: number;
  readonly #initial: MajorGcInitialState;
  /** The domains, the main one (whose mark stack holds the marking) first. */
  readonly #domains: DomainMajorState[] = [];
  /** The pools of terminated domains. */
  readonly #orphans = new OrphanPools();
  readonly #blocks: Map<number, MajorBlock> = new Map();
  #fixedMark: number;
  /** Ephemerons on the ephemeron lists' `todo` side: marked and swept in every cycle. */
  #ephemerons: number;
  /** Ephemerons made in this cycle (`caml_ephe_create` links them on `live`): this cycle's
   * ephemeron sweep takes them too, its marking does not; they join the others when the next
   * cycle starts. */
  #ephemeronsNew = 0;
  /** `work_counter`. */
  workCounter: number;
  /** `alloc_counter`. */
  allocCounter = 0;
  #phase = Phase.SWEEP_AND_MARK_MAIN;
  /** The main domain's `marking_done` (the other domains have no marking of their own). */
  #markingDone = false;
  #markLeft: number;
  /** Marking began this cycle: the write barrier no longer spares it any work. */
  #markingStarted = false;
  #epheMarked = false;
  /** Cycles completed by slices. */
  cycles = 0;
  /** 5.3's mark loop over the program's layout, if the initial state has one. */
  readonly #marker: Marker | null = null;
  /** The block each keep.list block's first field links, by address (built when a cycle
   * starts: marking reads it for blocks already major then). */
  #links = new Map<number, number>();
  /** The last slice's report. */
  readonly report: SliceReport = new SliceReport();

  /** Pacing for a runtime whose hooks are `host`. */
  constructor(host: MajorGcHost, opts: MajorGcOptions = {}) {
    this.#host = host;
    const init = opts.initial ?? EXPORTED_HARNESS_STATE;
    this.#initial = init;
    this.#percentFree = opts.percentFree ?? PERCENT_FREE_DEFAULT;
    this.#fixedMark = opts.fixedMark ?? init.fixedMark ?? init.markWork;
    this.#ephemerons = init.ephemerons;
    this.#markLeft = init.markWork;
    this.workCounter = init.workAhead;
    if (init.layout !== undefined) {
      const blocks = this.#blocks;
      this.#marker = new Marker(init.layout, {
        siteSlot: (site, slot) => host.siteSlot?.(site, slot) ?? -1,
        block: (addr) => blocks.get(addr),
        link: (addr) => this.#links.get(addr) ?? -1,
        threadAlive: (k) => host.threadAlive?.(k) ?? false,
        profileSlot: (j) => host.profileSlot?.(j) ?? -1,
        domainHandle: (k) => host.domainHandle?.(k) ?? false,
        domainEnded: (k) => host.domainEnded?.(k) ?? false,
        domainRooted: (k) => host.domainRooted?.(k) ?? false,
        heapWords: () => this.#domains[0]?.heap?.heapWords ?? 0,
      });
      // The scenario starts in a cycle whose roots are the harness's: no block of its own, no
      // profile, not yet the Gc.quick_stat record, and every systhread waiting for its turn.
      this.#marker.startCycle(0, [], { roots: [] }, false, true);
    }
  }

  /** @internal The main domain's heap: its blocks, pools and free lists. */
  get heap(): MajorHeap {
    const d = this.#domains[0];
    if (d === undefined) throw new Error("MajorGc: no domain added");
    return d.heap!;
  }

  /**
   * A domain starts (`caml_init_major_gc`, `caml_init_shared_heap`): the first one added (the
   * main domain) gets the initial state's heap and is in the cycle running; another one gets an
   * empty heap, with nothing to sweep or mark until the next cycle, but takes part in the
   * phases' finaliser steps. Returns `d`.
   */
  addDomain(d: DomainMajorState = new DomainMajorState()): DomainMajorState {
    if (this.#domains.length === 0) {
      d.heap = new MajorHeap(this.#initial.pools, this.#initial.large, this.#orphans);
      d.sweepingDone = false;
    } else {
      d.heap = new MajorHeap([], [], this.#orphans);
      d.sweepingDone = true;
    }
    d.finalFirst = d.finalLast = false;
    d.epheSweep = false;
    this.#domains.push(d);
    return d;
  }

  /**
   * A domain terminates (`caml_domain_terminate`): it sweeps what is left of its heap and, if it
   * is the main domain, finishes marking, neither counted as work (`caml_finish_sweeping`,
   * `caml_finish_marking`); it leaves the phases' counts (`caml_orphan_finalisers`,
   * `caml_orphan_ephemerons`) and its pools go to the global lists (`caml_teardown_shared_heap`).
   */
  removeDomain(d: DomainMajorState): void {
    const k = this.#domains.indexOf(d);
    if (k < 0) return;
    const heap = d.heap!;
    heap.finishSweeping();
    d.sweepingDone = true;
    if (k === 0 && !this.#markingDone) {
      if (this.#marker !== null) {
        this.#marker.mark(Number.MAX_SAFE_INTEGER);
        this.#markingDone = this.#marker.done;
      } else {
        this.#markLeft = 0;
        this.#markingDone = true;
      }
    }
    d.finalFirst = d.finalLast = true;
    d.epheSweep = false;
    heap.teardown();
    heap.workBetweenSlices = 0;
    this.#domains.splice(k, 1);
  }

  /** A block allocated in the major heap: by `caml_alloc_shr` (`direct`) or by promotion;
   * `noScan`: a block without fields to scan (see {@linkcode MajorBlock.noScan}). */
  allocate(
    d: DomainMajorState,
    addr: number,
    whsize: number,
    direct: boolean,
    noScan = false,
  ): void {
    const b = d.heap!.allocate(addr, whsize, noScan);
    b.markedIn = this.cycles;
    this.#blocks.set(addr, b);
    d.allocatedWords += whsize;
    if (direct) d.allocatedDirect += whsize;
  }

  /**
   * A block of the program's own data that stays live for good, allocated by `caml_alloc_shr`
   * (`direct`) or by promotion; `markCost` is what marking it costs each cycle from the next.
   */
  allocatePermanent(d: DomainMajorState, whsize: number, markCost: number, direct: boolean): void {
    d.heap!.allocatePermanent(whsize);
    this.#fixedMark += markCost;
    d.allocatedWords += whsize;
    if (direct) d.allocatedDirect += whsize;
  }

  /** An ephemeron made now (`caml_ephe_create`; lib/export/_harness_heap.ts: the harness's empty
   * weak array): swept from this cycle on, marked from the next. */
  ephemeronCreated(): void {
    this.#ephemeronsNew++;
  }

  /** The marking work of the cycle running changes by `words` (lib/export/_harness_heap.ts: a
   * table the harness held in a local root when the cycle started is darkened as a root, not
   * reached by scanning). */
  addCycleMark(words: number): void {
    this.#markLeft += words;
  }

  /** The marking work of the program's own data changes by `words` from the next cycle on
   * (data of the program that marking now reaches another way). Marking by layout ignores it:
   * it finds that data itself (lib/runtime/_mark.ts). */
  addFixedMark(words: number): void {
    this.#fixedMark += words;
  }

  /**
   * The state as {@linkcode MajorGcInitialState}: valid right after a cycle began (see
   * {@linkcode MajorHeap.snapshot}), with no block of the simulation's in the heap.
   */
  state(): MajorGcInitialState {
    const { pools, large } = this.heap.snapshot();
    return {
      workAhead: this.workCounter + this.heap.workBetweenSlices - this.allocCounter,
      pools,
      large,
      markWork: this.#markLeft,
      fixedMark: this.#fixedMark,
      ephemerons: this.#ephemerons + this.#ephemeronsNew,
    };
  }

  /**
   * The write barrier (`caml_modify`, memory.c: `write_barrier` calls `caml_darken` on the
   * value a field of a major block held) as a global slot of the program loses the block at
   * `addr`: a block the current cycle's marking was still to reach through that slot is
   * darkened now instead, which costs what darkening costs ({@linkcode darkenWork}) rather
   * than its size. Once marking has begun, the slots are taken as scanned already.
   */
  darken(addr: number): void {
    if (this.#marker !== null) {
      this.#marker.darken(addr);
      this.#markingDone = this.#marker.done;
      return;
    }
    if (this.#markingStarted) return;
    const b = this.#blocks.get(addr);
    if (b === undefined || b.scanPending !== this.cycles) return;
    b.scanPending = -1;
    this.#markLeft -= b.whsize - darkenWork(b.whsize, b.noScan);
  }

  /**
   * `caml_modify`'s write barrier on a store that no root models (a keep.list's new head,
   * replacing the block the site held, which stays reachable through the new one): the block
   * at `addr` is darkened. Only with marking by layout (the amounts of the other model were
   * calibrated without it).
   */
  writeBarrier(addr: number): void {
    if (this.#marker === null) return;
    this.#marker.darken(addr);
    this.#markingDone = this.#marker.done;
  }

  /**
   * Profile `j` (by number among those started) was started: its config block and boxed rate
   * are allocated marked in the cycle running (marking by layout; the other model counts their
   * roots, lib/runtime/runtime.ts).
   */
  profileStarted(j: number): void {
    this.#marker?.configAllocated(j);
  }

  /** Domain `k`'s handle was stored in the program's `doms` array (marking by layout only): its
   * blocks, allocated during this cycle, are not marked in it. */
  domainHandleStored(k: number): void {
    this.#marker?.domainAllocated(k, { ended: false });
  }

  /** Domain `k`'s result was stored in its `term_sync` (marking by layout only): allocated
   * during this cycle, it is not marked in it. */
  domainResultStored(k: number): void {
    this.#marker?.domainAllocated(k, { ended: true });
  }

  /**
   * The program's `prof` slot holding profile `j`'s config block got another profile's:
   * `caml_modify`'s write barrier darkens the block it held (marking by layout only).
   */
  profileOverwritten(j: number): void {
    if (this.#marker === null) return;
    this.#marker.darkenConfig(j);
    this.#markingDone = this.#marker.done;
  }

  /** A major block moved (compaction): same block, new address. */
  move(from: number, to: number): void {
    const b = this.#blocks.get(from);
    if (b === undefined || from === to) return;
    this.#blocks.delete(from);
    b.addr = to;
    this.#blocks.set(to, b);
  }

  /** `update_major_slice_work`. */
  #updateWork(d: DomainMajorState, kind: SliceKind, howmuch: number): void {
    const pf = this.#percentFree;
    const alloc = d.allocatedWords;
    const extra = d.extraResources;
    d.allocatedWords = 0;
    d.allocatedDirect = 0;
    d.extraResources = 0;
    const heap = d.heap!;
    const heapWords = heap.heapWords;
    const totalCycleWork = heapWords + Math.trunc(heapWords * 100.0 / (100.0 + pf));
    let allocWork = 0;
    if (heapWords > 0) {
      const ratio = totalCycleWork * 3.0 * (100 + pf) / heapWords / pf / 2.0;
      allocWork = Math.trunc(alloc * ratio);
    }
    const extraWork = Math.trunc(extra * totalCycleWork);
    const r = this.report;
    r.heapWords = heapWords;
    r.allocated = alloc;
    r.allocWork = allocWork;
    r.extraWork = extraWork;
    allocWork = Math.max(allocWork, extraWork);
    this.workCounter += heap.workBetweenSlices;
    heap.workBetweenSlices = 0;
    this.allocCounter += allocWork;
    if (kind === SliceKind.AUTO || kind === SliceKind.CALCULATE) {
      d.sliceTarget = this.allocCounter;
      d.sliceBudget = 0;
    } else {
      d.sliceTarget = this.workCounter;
      d.sliceBudget = howmuch;
    }
    r.workCounter = this.workCounter;
    r.allocCounter = this.allocCounter;
    r.sliceTarget = d.sliceTarget;
    r.sliceBudget = d.sliceBudget;
  }

  /** `get_major_slice_work`. */
  #work(d: DomainMajorState): number {
    const budget = Math.max(d.sliceTarget - this.workCounter, d.sliceBudget);
    return Math.min(budget, CHUNK_SIZE);
  }

  /** `commit_major_slice_work`. */
  #commit(d: DomainMajorState, done: number): void {
    d.sliceBudget -= done;
    this.workCounter += done;
    if (d.sliceTarget - this.workCounter <= 0) d.requestedGlobal = false;
  }

  /** Whether every domain has swept its heap (`num_domains_to_sweep` is 0). */
  #allSwept(): boolean {
    for (const d of this.#domains) if (!d.sweepingDone) return false;
    return true;
  }

  /** `is_complete_phase_sweep_and_mark_main` or `is_complete_phase_mark_final`. */
  #phaseComplete(): boolean {
    if (!this.#markingDone || !this.#epheMarked) return false;
    if (this.#phase === Phase.SWEEP_AND_MARK_MAIN) return this.#allSwept();
    for (const d of this.#domains) if (!d.finalFirst) return false;
    return true;
  }

  /** `is_complete_phase_sweep_ephe`. */
  #cycleComplete(): boolean {
    if (this.#phase !== Phase.SWEEP_EPHE) return false;
    for (const d of this.#domains) if (d.epheSweep || !d.finalLast) return false;
    return true;
  }

  /** `major_collection_slice` by domain `d`. Returns true if the slice ended a cycle. */
  slice(d: DomainMajorState, kind: SliceKind): boolean {
    this.#updateWork(d, kind, kind === SliceKind.FINISH ? FINISH_BUDGET : 0);
    const r = this.report;
    r.swept = r.marked = r.phaseChanges = 0;
    r.endsCycle = false;
    r.sweepEntered = !d.sweepingDone;
    r.markEntered = r.epheMarkEntered = r.epheSweepEntered = false;
    this.#host.sliceBegin?.(r);
    const heap = d.heap!;
    let budget: number;
    while (!d.sweepingDone && (budget = this.#work(d)) > 0) {
      const done = budget - heap.sweep(budget);
      this.#commit(d, done);
      r.swept += done;
      if (done === 0) d.sweepingDone = true;
    }
    // The main domain's mark stack holds the marking; the ephemerons are its too.
    const main = d === this.#domains[0];
    const marker = main ? this.#marker : null;
    if (main && !this.#markingDone && this.#work(d) > 0) r.markEntered = true;
    for (;;) {
      if (marker !== null) {
        // major_collection_slice's marking: mark() may do more than its budget (the prefetch
        // buffer's drain), and all of it is committed.
        while (!this.#markingDone && (budget = this.#work(d)) > 0) {
          const done = budget - marker.mark(budget);
          this.#commit(d, done);
          r.marked += done;
          this.#markingDone = marker.done;
        }
      }
      while (main && !this.#markingDone && (budget = this.#work(d)) > 0) {
        this.#markingStarted = true;
        const done = Math.min(budget, this.#markLeft);
        this.#markLeft -= done;
        this.#commit(d, done);
        r.marked += done;
        if (done < budget) this.#markingDone = true;
      }
      // caml_final_update_first and _last: once per domain and cycle, in a slice with work.
      if (this.#phase === Phase.MARK_FINAL && !d.finalFirst && this.#work(d) > 0) {
        d.finalFirst = true;
      }
      if (this.#phase === Phase.SWEEP_EPHE) {
        if (!d.finalLast && this.#work(d) > 0) d.finalLast = true;
        if (d.epheSweep) {
          const swept = this.#ephemerons + this.#ephemeronsNew;
          if (!main || swept === 0) d.epheSweep = false;
          else if (this.#work(d) > 0) {
            this.#commit(d, EPHEMERON_WORK * swept);
            d.epheSweep = false;
            r.epheSweepEntered = true;
          }
        }
        break;
      }
      if (!this.#markingDone) break;
      if (main && !this.#epheMarked) {
        if (this.#work(d) <= 0) break;
        this.#commit(d, EPHEMERON_WORK * this.#ephemerons);
        this.#epheMarked = true;
        r.epheMarkEntered = this.#ephemerons > 0;
      }
      if (!this.#phaseComplete()) break;
      // stw_try_complete_gc_phase, then on to the next phase if work is left.
      if (this.#phase === Phase.SWEEP_AND_MARK_MAIN) this.#phase = Phase.MARK_FINAL;
      else {
        this.#phase = Phase.SWEEP_EPHE;
        for (const e of this.#domains) e.epheSweep = true;
      }
      r.phaseChanges++;
      if (this.#work(d) <= 0) break;
    }
    r.endsCycle = this.#cycleComplete();
    this.#host.sliceEnd?.(r);
    if (r.endsCycle) {
      this.#host.endCycle();
      return true;
    }
    return false;
  }

  /** The mark stack of a new cycle, for the marking by layout. */
  #startMarking(roots: MajorRoots): void {
    const locals: LocalMarkRoot[] = [];
    const links = new Map<number, number>();
    roots.forEach((r) => {
      if (r.addr < 0 || r.viaMemprof) return;
      // A block another one holds is reached through it (its link), not darkened itself.
      if (r.local && r.site !== REACHED_SITE) locals.push(r);
      const l = r.link;
      if (l !== null && l !== undefined && l.addr >= 0) links.set(r.addr, l.addr);
    });
    this.#links = links;
    const memprof = this.#host.memprofRoots?.() ?? { roots: [] };
    this.#marker!.startCycle(this.cycles, locals, memprof, true);
    this.#markingDone = this.#marker!.done;
  }

  /**
   * The new cycle (`cycle_major_heap_from_stw_single` and `caml_cycle_heap`, then marking the
   * roots): colours rotate, everything is to be swept again, and the blocks reachable now are
   * what marking will visit this cycle (OCaml 5 marks what was reachable when the cycle began:
   * the write barrier darkens what a slot loses before marking reached it). Local roots are
   * darkened first, in the stop-the-world ({@linkcode darkenWork}); a block held by a global
   * slot costs its size when marking scans the slot, unless the slot loses it before that
   * ({@linkcode darken}). With `compact` (the last cycle of `Gc.compact`), each domain's heap is
   * then compacted ({@linkcode MajorHeap.compact}), as `caml_compact_heap` does right after
   * `caml_cycle_heap`.
   */
  startCycle(opts: { readonly compact?: boolean } = {}): void {
    this.cycles++;
    // Sweeping finished before the cycle could end: the last cycle's garbage is gone.
    for (const [addr, b] of this.#blocks) {
      if (b.colour === Colour.GARBAGE) this.#blocks.delete(addr);
      else b.colour = b.colour === Colour.MARKED ? Colour.UNMARKED : Colour.GARBAGE;
    }
    for (const d of this.#domains) {
      // The main domain takes the terminated domains' pools (a race in 5.3).
      d.heap!.cycle({ adopt: d === this.#domains[0] });
      if (opts.compact === true) d.heap!.compact();
      d.sweepingDone = false;
      d.finalFirst = d.finalLast = false;
      d.epheSweep = false;
    }
    let mark = this.#fixedMark;
    const roots = this.#host.roots();
    const blocks = this.#blocks;
    roots.forEach((r) => {
      if (!r.local || r.addr < 0) return;
      const b = blocks.get(r.addr);
      if (b !== undefined && b.colour === Colour.UNMARKED) {
        b.colour = Colour.MARKED;
        mark += r.darken >= 0 ? r.darken : darkenWork(b.whsize, b.noScan);
      }
    });
    const cycle = this.cycles;
    roots.forEach((r) => {
      if (r.local || r.addr < 0) return;
      const b = blocks.get(r.addr);
      if (b !== undefined && b.colour === Colour.UNMARKED) {
        b.colour = Colour.MARKED;
        b.scanPending = cycle;
        mark += b.whsize;
      }
    });
    this.#markLeft = mark;
    this.#ephemerons += this.#ephemeronsNew;
    this.#ephemeronsNew = 0;
    this.#markingStarted = false;
    this.#phase = Phase.SWEEP_AND_MARK_MAIN;
    this.#markingDone = false;
    this.#epheMarked = false;
    if (this.#marker !== null) this.#startMarking(roots);
  }
}
