/**
 * The major heap an exported program holds when its scenario starts, for the simulation's
 * major GC pacing (lib/runtime/major_gc.ts): the runtime's and standard library's data, plus
 * the harness's tables, whose sizes depend on the scenario, in the state the harness's
 * initialisation leaves the major GC in.
 *
 * That state is computed by running the initialisation through the pacing model itself, from
 * the point where the harness starts allocating its tables (measured once with OCaml 5.3.0's
 * debug runtime, `OCAMLRUNPARAM=v=0x800` and a pool dump at each `caml_cycle_heap`): the tables
 * are allocated in program order (young ones are promoted at the next minor collection, those
 * over 256 words go straight to the major heap and may ask for slices), then the harness's
 * `Gc.full_major ()`, `Gc.quick_stat ()` and `Gc.minor ()` run. What follows is the fourth
 * major cycle's start, as the scenario finds it.
 *
 * Marking costs follow major_gc.c: a block reached by scanning costs its size with header; a
 * block darkened directly from a root (the module's globals) costs the fields scanned from its
 * first pointer among its first eight fields, or, with none, its fields past the eighth.
 * @module
 */

import {
  darkenWork,
  DomainMajorState,
  MajorGc,
  type MajorGcInitialState,
  SliceKind,
} from "../runtime/major_gc.ts";
import {
  HARNESS_TABLES,
  type HarnessShape,
  LayoutBuilder,
  tableIncluded,
} from "./_harness_tables.ts";
import { CUSTOM_MAJOR_RATIO } from "../runtime/runtime.ts";
import type { ProgramMarkLayout } from "../runtime/_mark.ts";
import {
  FIXED_EVENTS,
  FIXED_PLAIN,
  FIXED_THREADS,
  FIXED_THREADS_EVENTS,
} from "../runtime/_mark_fixed.ts";

/** One block the harness allocates at initialisation and keeps. */
export interface HarnessBlock {
  /** Fields. */
  readonly wosize: number;
  /** What its fields hold: immediates, pointers to heap or static blocks, or no fields to scan. */
  readonly fields: "ints" | "pointers" | "noscan";
  /** Reached from a global directly (a root) or by scanning another block; or `dead`: a
   * temporary block the initialisation drops (one over {@linkcode MAX_YOUNG_WOSIZE} words is
   * still allocated in the major heap, which later cycles sweep). */
  readonly via: "root" | "scan" | "dead";
  /** Marking work of the block in every cycle, when not what `fields` and `via` give (a root
   * whose first fields are immediates). */
  readonly mark?: number;
  /** A block of a registered user event ({@linkcode userEventBlocks}), which
   * {@linkcode harnessMarkLayout} lays out itself. */
  readonly userEvent?: true;
  /** Allocated straight into the major heap whatever its size (`caml_alloc_shr`: an
   * ephemeron), so that it counts as a direct allocation and may ask for a slice. */
  readonly direct?: true;
  /** An ephemeron (`Weak.create`), which the major GC's ephemeron phases visit. */
  readonly ephemeron?: true;
  /** Element `mapIndex` of an `Array.map` result (lib/export/_harness_tables.ts, `mapped`):
   * the result array, made after element 0, starts filled with element 0, which each later
   * element's store overwrites through the write barrier. */
  readonly mapIndex?: number;
  /** A `dead` block of at most {@linkcode MAX_YOUNG_WOSIZE} words that the next minor
   * collection promotes all the same (a major block's field, in the remembered set, holds it):
   * garbage of the major heap, which later cycles sweep. */
  readonly promoted?: true;
  /** The blocks of one marshalled value's making (its `sizes` array, `build`'s closure, its
   * blocks, then its string) share a group: until the string is made, all of them are live, and
   * a minor collection meanwhile promotes the young ones, after which every later young block of
   * the group is linked from a major one and promoted too (rnd-17-1264: a slice of the value's
   * own large blocks ended a cycle, whose minor collection promoted 248 words of them). */
  readonly group?: number;
  /** Bytes out of the heap that a young custom block holds (`caml_alloc_custom_mem`): its
   * promotion adds them to the major GC's `extra_heap_resources` (minor_gc.c, the custom
   * table's `caml_adjust_gc_speed`), which the next slice's work covers. */
  readonly customMem?: number;
}

/**
 * What registering a user event allocates and keeps (a `type Runtime_events.User.tag += Ev`
 * and a `Runtime_events.User.register` at the program's initialisation): the extension
 * constructor (its name, static, and its id: a global darkened from its first field), the
 * `Some tag` that `register` passes, the event record `{id; name; typ; tag}` that
 * caml_runtime_events_user_register allocates (a global, pushed from its name), and the cell
 * it adds to the runtime's list of user events (runtime_events.c, `user_events`, a global
 * root: its first cell darkened, 2 words, the others scanned, 3; the 2 words are counted on
 * the `first` event's cell, the same sum).
 */
export function userEventBlocks(first: boolean): HarnessBlock[] {
  return [
    { wosize: 2, fields: "pointers", via: "root", userEvent: true },
    { wosize: 1, fields: "pointers", via: "scan", userEvent: true },
    { wosize: 4, fields: "pointers", via: "root", mark: 3, userEvent: true },
    { wosize: 2, fields: "pointers", via: "scan", mark: first ? 2 : 3, userEvent: true },
  ];
}

/** Marking work of one block (see the module doc). */
function markCost(b: HarnessBlock): number {
  if (b.mark !== undefined) return b.mark;
  if (b.via === "scan") return b.wosize + 1;
  if (b.fields === "noscan") return 0;
  if (b.fields === "pointers") return b.wosize;
  return b.wosize <= 8 ? 0 : b.wosize - 8;
}

/** The harness's blocks for prelude parameters `p` and the scenario's own initialised values,
 * in the order the program allocates them: its tables (_harness_tables.ts), the exceptions'
 * constructors, the scenario's values, `start_fns` and the trackers. `threadsLibrary` says that
 * the program has the systhreads' baton (lib/export/_prelude.ts, `threadsPrelude`) for
 * `p.threads` threads with programs, which it creates at the end of its initialisation. */
export function harnessBlocks(
  p: HarnessShape,
  extra: readonly HarnessBlock[] = [],
  opts: { readonly threadsLibrary?: boolean; readonly countedWaits?: boolean } = {},
): HarnessBlock[] {
  const root = (wosize: number, fields: HarnessBlock["fields"]): HarnessBlock => ({
    wosize,
    fields,
    via: "root",
  });
  const out: HarnessBlock[] = [];
  for (const t of HARNESS_TABLES) {
    if (tableIncluded(t, opts)) out.push(...t.blocks(p));
  }
  for (let i = 0; i < p.exceptions; i++) out.push(root(2, "pointers")); // exception constructors
  for (const b of extra) out.push(b);
  const slots = Math.max(1, p.profiles);
  out.push(root(slots, "pointers")); // start_fns: static closures
  for (let i = 0; i < p.profiles; i++) out.push(root(5, "pointers")); // trackers
  if (opts.threadsLibrary) {
    // Thread.create, per thread (st_stubs.c: caml_thread_new_descriptor): its status (a custom
    // block) and its descriptor [id; closure; status]. The thread's start (caml_thread_start)
    // clears the closure field before running the closure, which no stack slot holds once
    // Thread.create's wrapper called the thread's function: it dies young. The systhreads'
    // roots hook (caml_thread_scan_roots) darkens each descriptor with the stacks, pushing its
    // fields from the status: 1 word, then the status is reached by scanning.
    for (let k = 0; k < (p.initThreads ?? p.threads ?? 0); k++) {
      // Thread.create's wrapper closure, [code; info; fn; arg], made first (the minor heap's
      // filling counts it).
      out.push({ wosize: 4, fields: "pointers", via: "dead" });
      out.push({ wosize: 2, fields: "noscan", via: "scan" });
      out.push({ wosize: 3, fields: "pointers", via: "root", mark: 1 });
    }
  }
  return out;
}

/** Largest block allocated in the minor heap (`Max_young_wosize`). */
const MAX_YOUNG_WOSIZE = 256;

/**
 * Where the harness starts allocating its tables (after the callback log's Bigarray, whose
 * out-of-heap memory ended the first cycle, and the slice that followed): the twelve pools of
 * the runtime's and standard library's data, four of them swept; the first cycle's marking
 * still to do; work done ahead of allocation. Measured with the program run as `deno task diff`
 * runs it, `/tmp/memprof-lab-XXXXXXXXXXXXXXXX/program` with that path as `argv[0]`: `Sys.argv`
 * holds it, a 7-word string (a program started as `./program` has a 3-word one, 4 words less
 * to allocate before this point and to mark in every cycle).
 *
 * The blocks each pool holds for good (`fixed`) decide when a pool of the scenario's blocks
 * fills and another is taken, 4,096 words more to sweep in every cycle. They are calibrated on
 * the live blocks of each size class when the scenario starts, counted in OCaml 5.3.0's release
 * runtime at each `caml_cycle_heap` (a counting patch of shared_heap.c) for exported programs
 * with and without runtime_events.cmxa, the program started as `deno task diff` starts it (its
 * `Sys.argv` string a 7-word block: counted first with a 3-word one, from `./program`), less
 * the blocks the model allocates itself (the
 * harness's tables, its references, the baton's mutex and condition, and the empty weak array's
 * ephemeron, each described in lib/export/_harness_tables.ts).
 */
const TABLES_START: MajorGcInitialState = {
  workAhead: 16_366 - 13_218,
  pools: [
    { sz: 1, fixed: 21, swept: true },
    { sz: 2, fixed: 14, swept: true },
    { sz: 3, fixed: 7, swept: true },
    { sz: 4, fixed: 2, swept: true },
    { sz: 5, fixed: 4, swept: false },
    { sz: 6, fixed: 5, swept: false },
    { sz: 7, fixed: 2, swept: false },
    { sz: 8, fixed: 2, swept: false },
    { sz: 10, fixed: 1, swept: false },
    { sz: 11, fixed: 1, swept: false },
    { sz: 21, fixed: 2, swept: false },
    { sz: 25, fixed: 1, swept: false },
  ],
  large: [],
  markWork: 296,
  ephemerons: 0,
};
/** Marking work of the runtime's own live data in later cycles. */
const RUNTIME_MARK = 296;

/** Marking work of the threads library's and Unix's data in every cycle: 255 words (the
 * `Major slice` lines of the cycle that ends before the harness's tables, which marks the
 * runtime's and the libraries' data only: 551 words, 296 without the threads library). */
const THREADS_MARK = 255;

/**
 * {@linkcode TABLES_START} of a program linked with the threads library and Unix (which it
 * needs): their modules' data adds blocks to the pools of eight size classes and fills pools of
 * two more (17 and 22 words), and its promotion puts the first cycle's work 1,224 words further
 * behind. Measured: pool dumps of OCaml 5.3.0 at that point of two exported programs alike but
 * for `threads.cmxa`, and the debug runtime's `Updated major work` lines
 * (`OCAMLRUNPARAM=v=0x800`), whose every later cycle takes more work: the two pools' sweeping,
 * and {@linkcode THREADS_MARK} words of marking. (236 words of marking and 1,232 words were
 * first taken: every such program's scenario then started 8 words of work behind OCaml's, and
 * marked 19 words a cycle fewer.)
 */
const THREADS_TABLES_START: MajorGcInitialState = {
  ...TABLES_START,
  workAhead: TABLES_START.workAhead - 1_224,
  pools: [
    ...TABLES_START.pools.map((p) => ({
      ...p,
      fixed: p.fixed + ({ 1: 5, 2: 11, 3: 25, 4: 7, 5: 3, 6: 1, 7: 1, 10: 4 }[p.sz] ?? 0),
    })),
    { sz: 12, fixed: 1, swept: false },
    { sz: 14, fixed: 1, swept: false },
  ].sort((a, b) => a.sz - b.sz),
  markWork: TABLES_START.markWork + THREADS_MARK,
};
/** {@linkcode RUNTIME_MARK} with the threads library and Unix. */
const THREADS_RUNTIME_MARK = RUNTIME_MARK + THREADS_MARK;

/** Marking work of runtime_events.cmxa's data in every cycle: 16 words (its capture,
 * lib/runtime/_mark_fixed.ts: 312 words without the program's own part, 296 without the
 * library). */
const EVENTS_MARK = 16;
/** Work further behind at the harness's tables' allocation in a program linked with
 * runtime_events.cmxa (its modules' initialisation allocates before the program's): with
 * {@linkcode EVENTS_MARK} words more marked in each of the initialisation's cycles, its scenario
 * starts 68 words of work behind a program without the library, as the debug runtime's `Updated
 * major work` lines (`OCAMLRUNPARAM=v=0x800`) showed for programs alike but for the library
 * (and 34, then 32 more per user event, which {@linkcode userEventBlocks} gives). */
const EVENTS_WORK_BEHIND = 116;

/** Blocks runtime_events.cmxa's data keeps, by size class (the same count as
 * {@linkcode TABLES_START}'s: live blocks when the scenario starts, with and without it). */
const EVENTS_BLOCKS: Readonly<Record<number, number>> = { 1: 2, 2: 3, 4: 2, 5: 1 };

/** `start` of a program linked with runtime_events.cmxa too. */
function withEvents(start: MajorGcInitialState): MajorGcInitialState {
  return {
    ...start,
    workAhead: start.workAhead - EVENTS_WORK_BEHIND,
    pools: start.pools.map((p) => ({ ...p, fixed: p.fixed + (EVENTS_BLOCKS[p.sz] ?? 0) })),
    markWork: start.markWork + EVENTS_MARK,
  };
}
/** `Gc.quick_stat ()`: the record and its three boxed floats, with what marking them costs in
 * every cycle of the run: the harness keeps the record on its stack until the run ends, so it
 * is darkened as a local root (its first field is a pointer: all 17 fields are scanned), and
 * the floats are reached by scanning it. */
const QUICK_STAT_BLOCKS = [
  { whsize: 18, mark: 17 },
  { whsize: 2, mark: 2 },
  { whsize: 2, mark: 2 },
  { whsize: 2, mark: 2 },
];

/**
 * The major heap of an exported program whose harness allocates `blocks` (from
 * {@linkcode harnessBlocks}), with a minor heap of `minorHeapWords`, when its scenario starts.
 */
export function harnessMajorHeap(
  blocks: readonly HarnessBlock[],
  minorHeapWords: number,
  opts: { readonly threadsLibrary?: boolean; readonly events?: boolean } = {},
): MajorGcInitialState {
  const d = new DomainMajorState();
  const start = opts.threadsLibrary ? THREADS_TABLES_START : TABLES_START;
  const fixedMark = (opts.threadsLibrary ? THREADS_RUNTIME_MARK : RUNTIME_MARK) +
    (opts.events ? EVENTS_MARK : 0);
  let young: { whsize: number; mark: number; dead?: boolean; customMem?: number }[] = [];
  let deadAddr = 0;
  const promote = () => {
    for (const b of young) {
      if (b.dead) gc.allocate(d, ++deadAddr, b.whsize, false);
      else gc.allocatePermanent(d, b.whsize, b.mark, false);
    }
    for (const b of young) if (b.customMem !== undefined) adjustGcSpeed(b.customMem);
    young = [];
  };
  // caml_adjust_gc_speed(mem, 0), as the runtime's (lib/runtime/runtime.ts, adjustGcSpeed).
  const adjustGcSpeed = (mem: number) => {
    const max = Math.trunc(d.heap!.heapWords * 8 / 150) * CUSTOM_MAJOR_RATIO;
    d.extraResources += Math.min(mem, max) / max;
    if (d.extraResources > 0.2) d.requestedGlobal = true;
  };
  // The minor heap: the words allocated in it since its last collection, and whether its
  // trigger is still at its middle. The first cycle's end emptied it just before the tables:
  // the debug runtime's young pointer at each of the tables' direct allocations is the sum of
  // the young blocks before it, dead ones included. As caml_poll_gc_work: an allocation past
  // the middle runs a slice first and moves the trigger to the start; one past the end, a
  // minor collection, without a slice (the middle's was this minor cycle's). A poll that runs
  // for another reason within a largest young block of the trigger does the same (rnd-14-691:
  // with a small minor heap, a user event's 13 words more at initialisation crossed the middle
  // and ended the first cycle before `Gc.full_major ()`, one cycle's work more done ahead).
  let youngUsed = 0;
  let midTrigger = true;
  const half = minorHeapWords / 2;
  // The marshalled value being made (`HarnessBlock.group`), all of it on the stack of its
  // `build` recursion: its young blocks (and whether the remembered set holds them), its blocks
  // in the major heap (what darkening each costs: a block of immediates, its fields past the
  // eighth, its first field not yet set; `build`'s closure, its environment field, then the
  // `sizes` array reached by scanning it), and whether one of them is major (every later young
  // block is then linked from a major one). A minor collection promotes its young blocks after
  // the others (local roots come last), and a cycle starting meanwhile darkens them all: they
  // outlive that cycle (rnd-17-1264: 755 words of marking, a sz-15 pool freed a cycle later).
  type Member = { whsize: number; promoted: boolean; darken: number };
  type Group = {
    id: number;
    young: Member[];
    major: { addr: number; darken: number }[];
    linked: boolean;
  };
  let group = null as Group | null;
  const memberDarken = (g: Group, whsize: number): number => {
    const made = g.young.length + g.major.length; // a minor collection moves young to major
    if (made === 0) return 0; // `sizes`: reached through the closure
    if (made === 1) return 1 + (g.young[0]?.whsize ?? 0); // the closure
    return darkenWork(whsize, false);
  };
  const minor = () => {
    promote();
    if (group !== null) {
      for (const m of group.young) {
        const addr = ++deadAddr;
        gc.allocate(d, addr, m.whsize, false);
        group.major.push({ addr, darken: m.darken });
      }
      group.young = [];
      group.linked = true;
    }
    youngUsed = 0;
    midTrigger = true;
  };
  const gc: MajorGc = new MajorGc({
    endCycle: () => {
      minor(); // the cycle's stop-the-world empties the minor heap
      gc.startCycle();
    },
    roots: () =>
      group === null
        ? []
        : group.major.map((m) => ({ addr: m.addr, local: true, darken: m.darken })),
  }, {
    initial: opts.events ? withEvents(start) : start,
    fixedMark,
  });
  gc.addDomain(d);
  // caml_poll_gc_work's test, `need` words short of the trigger: past the end, a minor
  // collection; past the middle, the trigger moves to the start and true says a slice is due.
  const triggered = (need: number): boolean => {
    if (youngUsed + need <= (midTrigger ? half : minorHeapWords)) return false;
    if (!midTrigger) {
      minor();
      return false;
    }
    midTrigger = false;
    return true;
  };
  const youngAllocated = (whsize: number) => {
    if (triggered(whsize)) gc.slice(d, SliceKind.AUTO);
    youngUsed += whsize;
  };
  // A poll for another reason: its own slice follows, which the middle's joins.
  const polled = () => triggered(MAX_YOUNG_WOSIZE + 1);
  // A direct allocation past a fifth of the minor heap asks for a global slice, which the
  // allocation's pending actions run (caml_make_vect ends with them). As caml_poll_gc_work: one
  // slice; if its work fell short of its target (the slice ended a cycle first, or owed nothing
  // since work done ahead already covers it), the request is cleared and every domain (here the
  // only one) is asked for one more slice (stw_global_major_slice), which the next poll runs:
  // `sliceDue`, run at the next block — before a young one (its allocation enters the runtime
  // first) or an element of `Array.map` after its second (the loop's back-edge polls), after a
  // direct one (caml_make_vect's pending actions). rnd-19-301: with sites of 4,096 and 35,784
  // slots, `ks`'s second array ended a cycle, and the slice asked then ran after `kd`'s first
  // array, 4,097 words later: 17,495 words of work, where running it at once owed 1,107.
  // No more: the request once looped here for ever when a slice had nothing to do (work ahead
  // of the target), as no work means no commit to clear it.
  //
  // A cycle that starts in the first of these slices finds the block just allocated in the
  // primitive's local root (caml_uniform_array_make's `res`), its fields still the initial
  // immediates: darkened as a root, which costs its fields past the eighth (`rootMark`), where
  // later cycles reach it by scanning (`mark`, its cost in `fixedMark`).
  //
  // `stored` runs between the two slices, told whether the first started a cycle: `Array.map`
  // stores the element the primitive returned before its loop's back-edge polls.
  //
  // The slice due (`requested_major_slice`, not global) is one slice, asking for no other; with
  // the block's own request, one slice runs for both.
  const slicesAsked = (mark = 0, rootMark = 0, stored = (_started: boolean) => {}) => {
    const global = d.requestedGlobal;
    if (!global && !sliceDue) return stored(false);
    sliceDue = false;
    polled();
    const cycles = gc.cycles;
    gc.slice(d, SliceKind.AUTO);
    const started = gc.cycles !== cycles;
    if (started) gc.addCycleMark(rootMark - mark);
    stored(started);
    if (!global || !d.requestedGlobal) return;
    d.requestedGlobal = false;
    sliceDue = true;
  };
  let sliceDue = false;
  // The slice due, run at a poll before a block: a young one's allocation enters the runtime
  // first; `Array.map`'s loop polls at its back-edge, before its third element on (g19-42).
  const runDue = () => slicesAsked();
  // The `Array.map` running: its element 0's marking costs (by scanning, or darkened directly),
  // the cycle in which the result array was made, and the last cycle element 0 was darkened in.
  // A store into the result array once a cycle has begun since it was made (it was promoted
  // then, with element 0) meets element 0 unmarked, and caml_modify's write barrier darkens
  // it: it then costs that cycle what darkening it costs, not what scanning it would.
  let first = { mark: 0, rootMark: 0, cycle: -1 };
  let firstDarkened = -1;
  const store = () => {
    if (gc.cycles === first.cycle || firstDarkened === gc.cycles) return;
    gc.addCycleMark(first.rootMark - first.mark);
    firstDarkened = gc.cycles;
  };
  for (const b of blocks) {
    if (b.mapIndex === 0) {
      // The result array is made by the next block, in this cycle (a cycle starting in the
      // element's own slices starts before it).
      first = { mark: markCost(b), rootMark: darkenWork(b.wosize + 1, false), cycle: -1 };
      firstDarkened = -1;
    }
    if (b.group !== group?.id) {
      // The value made: its young blocks the remembered set holds are promoted by the next minor
      // collection, garbage; the others die young.
      for (const m of group?.young ?? []) {
        if (m.promoted) young.push({ whsize: m.whsize, mark: 0, dead: true });
      }
      group = b.group === undefined ? null : { id: b.group, young: [], major: [], linked: false };
    }
    if (b.via === "dead") {
      // caml_alloc's caml_alloc_shr, then caml_check_urgent_gc; a young one dies young, unless
      // promoted.
      const whsize = b.wosize + 1;
      if (b.wosize <= MAX_YOUNG_WOSIZE) {
        runDue();
        youngAllocated(whsize);
        if (group === null) {
          if (b.promoted) young.push({ whsize, mark: 0, dead: true });
        } else {
          const darken = memberDarken(group, whsize);
          group.young.push({ whsize, promoted: b.promoted === true || group.linked, darken });
        }
        continue;
      }
      const addr = ++deadAddr;
      gc.allocate(d, addr, whsize, true, b.fields === "noscan");
      if (group !== null) {
        group.major.push({ addr, darken: memberDarken(group, whsize) });
        group.linked = true;
      }
      if (d.allocatedDirect > minorHeapWords / 5) d.requestedGlobal = true;
      slicesAsked();
      continue;
    }
    if (b.ephemeron === true) gc.ephemeronCreated();
    // Element 0 darkened as a root by a cycle starting in its own first slice; a later element
    // stored over it.
    const stored = b.mapIndex === undefined
      ? () => {}
      : b.mapIndex > 0
      ? store
      : (started: boolean) => {
        if (started) firstDarkened = gc.cycles;
      };
    if (b.wosize <= MAX_YOUNG_WOSIZE && b.direct !== true) {
      runDue();
      youngAllocated(b.wosize + 1);
      young.push({ whsize: b.wosize + 1, mark: markCost(b), customMem: b.customMem });
      stored(false);
    } else {
      if (b.mapIndex !== undefined && b.mapIndex >= 2) runDue();
      gc.allocatePermanent(d, b.wosize + 1, markCost(b), true);
      if (d.allocatedDirect > minorHeapWords / 5) d.requestedGlobal = true;
      slicesAsked(markCost(b), darkenWork(b.wosize + 1, b.fields === "noscan"), stored);
    }
    if (b.mapIndex === 0) first.cycle = gc.cycles;
  }
  for (let i = 0; i < 3; i++) { // Gc.full_major ()
    minor();
    const cycles = gc.cycles;
    while (gc.cycles === cycles) gc.slice(d, SliceKind.FINISH);
    // A slice still due runs at the first cycle's end (its stop-the-world polls).
    runDue();
  }
  young.push(...QUICK_STAT_BLOCKS);
  promote(); // Gc.minor (), then its slice
  gc.slice(d, SliceKind.AUTO);
  return gc.state();
}

/**
 * What the major GC's marking reaches in an exported program (lib/runtime/_mark.ts): the
 * runtime's and standard library's part as captured from OCaml 5.3.0 for the libraries the
 * program links, and the program module's globals as the prelude (lib/export/_prelude.ts) and
 * the scenario's own values define them, in the module's field order (the order `caml_darken`
 * meets them when a cycle starts, and the reverse of the order marking pops them). Only blocks
 * whose darkening pushes fields matter: arrays of more than eight immediates (pushed from their
 * ninth field), blocks holding pointers. The `prof` array's slots are read when marking scans
 * them (the runtime knows each profile's slot: lib/scenario/walk.ts, `profileSlots`); a value
 * built at initialisation and dropped (`via: "dead"`) is not the program's. Approximation: the
 * other domains' handles are taken as marked.
 */
export function harnessMarkLayout(
  p: HarnessShape,
  extra: readonly HarnessBlock[] = [],
  opts: {
    readonly threadsLibrary?: boolean;
    readonly countedWaits?: boolean;
    readonly events?: boolean;
    readonly userEvents?: number;
  } = {},
): ProgramMarkLayout {
  const lay = new LayoutBuilder();
  for (const t of HARNESS_TABLES) {
    if (tableIncluded(t, opts)) t.layout(p, lay);
  }
  const { globals, blocks } = lay;
  const block = (text: string) => lay.block(text);
  for (let i = 0; i < p.exceptions; i++) globals.push("2 248 0 | s i"); // exception constructors
  // User events: the constructor added to Runtime_events.User.tag (a block like an exception's),
  // then the event Runtime_events.User.register returns ({id; name; typ; tag}, its tag field
  // `Some` of the constructor, a block of its own). The runtime keeps the events registered in
  // a list (runtime_events.c, `user_events`, a generational global root), the last registered
  // first; the events in it are the globals here, marked when the list is scanned.
  const userEvents = opts.userEvents ?? 0;
  for (let i = 0; i < userEvents; i++) {
    globals.push("2 248 0 | s i", `3 0 0 | s i ${block("1 0 0 | s")}`);
  }
  const globalRoots: number[] = [];
  for (let i = 0; i < userEvents; i++) {
    const next = i === 0 ? "i" : `b${blocks.length - 1}`;
    globalRoots[0] = blocks.push(`2 0 0 | s ${next}`) - 1;
  }
  for (const b of extra) {
    if (b.via === "dead" || b.userEvent) continue; // dropped at initialisation; laid out above
    if (b.fields === "noscan") globals.push(`${b.wosize} 252 0`);
    else globals.push(`${b.wosize} 0 0 | ${b.fields === "ints" ? "i" : "s"}*${b.wosize}`);
  }
  const slots = Math.max(1, p.profiles);
  globals.push(`${slots} 0 0 | s*${slots}`); // start_fns: static closures
  for (let i = 0; i < p.profiles; i++) globals.push("5 0 0 | s*5"); // trackers
  const fixed = opts.threadsLibrary
    ? (opts.events ? FIXED_THREADS_EVENTS : FIXED_THREADS)
    : (opts.events ? FIXED_EVENTS : FIXED_PLAIN);
  return {
    fixed,
    globals,
    blocks,
    sites: p.sites,
    threads: lay.threads,
    globalRoots,
    domains: lay.domains,
  };
}
