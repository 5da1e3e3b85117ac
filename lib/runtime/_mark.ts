/**
 * OCaml 5.3's mark loop (runtime/major_gc.c: `mark`, `do_some_marking`, `mark_stack_push_block`,
 * `caml_darken`) run over a model of what an exported program's marking reaches, so that each
 * slice marks what 5.3's would — including the work it does past its budget.
 *
 * Why the loop matters and not only the amount of marking: `do_some_marking` scans a block's
 * fields into a prefetch buffer of up to 256 pointers and only takes blocks out of it once it
 * holds more than 64 (its waterline) — or, once the budget is spent or the mark stack is empty,
 * all of them (drain mode). Every block taken out that is still unmarked is marked and charged:
 * its header, and its whole size if it has no fields to scan (a string, a float array); a block
 * with fields has them scanned, as far as the budget goes, the rest pushed back on the mark stack.
 * So a slice whose budget runs out still marks everything in the buffer: with the kept strings
 * of a keep site in it, thousands of words more than its budget, and the cycle can end a slice
 * earlier. And the order of marking (the mark stack is a stack; the buffer a queue) decides when
 * a keep site's slots are scanned, hence whether a block a slot loses first is reached by
 * scanning (its size charged) or darkened by `caml_modify`'s write barrier (nothing charged but
 * the fields `mark_stack_push_block` pushes).
 *
 * The model: the blocks marking reaches are graph blocks (the runtime's and standard library's
 * data, lib/runtime/_mark_fixed.ts, and the program's own module, lib/export/_harness_heap.ts)
 * whose fields are fixed, keep sites (the program's arrays of kept blocks, whose slots are read
 * when scanned), and the simulation's blocks (`MajorBlock`, by address). Marking starts from the
 * ranges 5.3's `caml_darken_all_roots_start` leaves on the mark stack: the stack's and C roots'
 * (bottom), the library's globals, the program module's globals, memprof's roots (top).
 *
 * Where in OCaml 5.3.0's sources (runtime/): the prefetch buffer, major_gc.c:216-270 (256
 * entries, a waterline of 64 in fill mode, 0 in drain mode); `do_some_marking`, major_gc.c:978-1108
 * (a block taken out costs its header, line 1034, and its size when it has no fields to scan; the
 * fields scanned cost one each, the ones left when the budget or the buffer runs out are pushed
 * back, line 1094; with the budget spent, drain mode takes everything out, line 1054); `mark`,
 * major_gc.c:1128-1157 (marking is done when a call returns with budget left);
 * `mark_stack_push_block`, major_gc.c:852-893; `caml_darken`, major_gc.c:1193-1219, used by the
 * roots' darkening at a cycle's start (major_gc.c:1499-1512: `caml_do_roots`, then
 * `caml_scan_global_roots` — globroots.c:187-211 walks each module's globals in link order —
 * then memprof's roots, memprof.c:1464-1487) and by `caml_modify`'s write barrier (memory.c:183-
 * 203, which darkens the value a field of a major block loses); `major_collection_slice` commits
 * whatever `mark` did, past the budget too (major_gc.c:1709-1715).
 * @module
 */

import type { FixedMarkGraph } from "./_mark_fixed.ts";
import type { MajorBlock } from "./_major_heap.ts";

/** `PREFETCH_BUFFER_SIZE`. */
const PB_SIZE = 256;
/** `PREFETCH_BUFFER_MIN`: the fill mode's waterline. */
const PB_MIN = 64;
/** `mark_stack_push_block` looks for a pointer among this many first fields. */
const PUSH_LOOKAHEAD = 8;
/** `MARK_STACK_INIT_SIZE`: the mark stack's first capacity, in entries. */
const MARK_STACK_INIT_SIZE = 1 << 12;
/** `sizeof(mark_entry)`: two pointers. */
const MARK_ENTRY_BYTES = 16;
/** `BITS_PER_WORD`: entries longer than this many fields stay on the stack when it is pruned. */
const BITS_PER_WORD = 64;

/** Field codes of graph blocks. */
const F_IMM = -1;
/** A pointer to static data or to a block the roots' darkening marked: queued, then skipped. */
const F_FREE = -2;
/** Slot J of the program's profiles (`prof.(J)`): the config block of the profile the program
 * keeps there, read when marking scans it ({@linkcode MarkHost.profileSlot}), or an immediate
 * before one started: code `F_PROFILE - J`. */
const F_PROFILE = -10;
/** Slot K of the program's `doms` array: domain K's handle once `Domain.spawn` returned it
 * ({@linkcode MarkHost.domainHandle}), or an immediate before: code `F_DOMAIN - K`. */
const F_DOMAIN = -(1 << 24);
/** The `state` field of domain K's `term_sync`: `Finished (Ok ())` once the domain ended
 * ({@linkcode MarkHost.domainEnded}), `Running` (an immediate) before: code `F_DSTATE - K`. */
const F_DSTATE = -(2 << 24);

/** References in the mark stack and the prefetch buffer: a graph block (>= 0), a pointer that
 * marking skips ({@linkcode R_FREE}), or the simulation's block at `addr` (`-4 - addr`); a
 * field read as {@linkcode F_IMM} is not markable. */
const R_FREE = -3;
const keptRef = (addr: number) => -4 - addr;
const keptAddr = (ref: number) => -4 - ref;

/** The program module's data, as the exporter describes it (lib/export/_harness_heap.ts). */
export interface ProgramMarkLayout {
  /** The captured part it is linked with (lib/runtime/_mark_fixed.ts). */
  readonly fixed: FixedMarkGraph;
  /** The module's global blocks, in the module's field order: each darkened when a cycle
   * starts (`scan_native_globals`). Same syntax as the captured blocks, where `bK` is block K
   * of {@linkcode blocks} and `kS` the array of keep site S. */
  readonly globals: readonly string[];
  /** The blocks the globals reach (same syntax). */
  readonly blocks: readonly string[];
  /** Slots of each keep site (the exported program's `site_capacity`). */
  readonly sites: readonly number[];
  /** The program's systhreads, the first created first: their descriptor (`[id; closure;
   * status]`, the closure field cleared once the thread runs) and their condition in the
   * harness's `th_cond`, as indexes in {@linkcode blocks}. While a thread lives, the
   * systhreads' roots hook (`caml_thread_scan_roots`) darkens its descriptor when a cycle
   * starts, and its stack, waiting in `Condition.wait`, holds its condition; once it ended,
   * marking reaches both by scanning the harness's `th_handle` and `th_cond`. */
  readonly threads?: readonly { readonly descriptor: number; readonly cond: number }[];
  /** Blocks (indexes in {@linkcode blocks}) that registered global roots of the runtime hold,
   * in the order `caml_scan_global_roots` darkens them, before the captured ones: the list of
   * the user events the program registered (runtime_events.c, `user_events`). */
  readonly globalRoots?: readonly number[];
  /** Each domain's handle and its result (`Finished (Ok ())`) as blocks of {@linkcode blocks},
   * by domain number from 1 (index 0: domain 1): what `dK` and `eK` fields refer to. */
  readonly domains?: readonly { readonly handle: number; readonly finished: number }[];
}

/** What the marker reads from the simulation. */
export interface MarkHost {
  /** The address of the block that slot `slot` of keep site `site` holds, or -1. */
  siteSlot(site: number, slot: number): number;
  /** The simulation's major block at `addr` (undefined: young, or not a block it knows). */
  block(addr: number): MajorBlock | undefined;
  /** The block that the first field of the block at `addr` links (a keep.list), or -1. */
  link(addr: number): number;
  /** Whether the program's systhread `k` (1: the first created) lives. */
  threadAlive?(k: number): boolean;
  /** The profile (its number among the profiles started, from 0) whose config block slot `j`
   * of the program's `prof` array holds now, or -1. */
  profileSlot?(j: number): number;
  /** Whether slot `k` of the program's `doms` array holds domain `k`'s handle. */
  domainHandle?(k: number): boolean;
  /** Whether domain `k` ended (its result stored in its `term_sync`). */
  domainEnded?(k: number): boolean;
  /** Whether domain `k`'s `term_sync` is a generational global root of the runtime: from
   * `caml_domain_spawn` until the domain's thread frees it, once the domain terminated. */
  domainRooted?(k: number): boolean;
  /** The marking domain's major heap, pools and large blocks, in words (`caml_heap_size`):
   * what decides whether a full mark stack grows or is compressed. */
  heapWords?(): number;
}

/** Memprof's side when a cycle starts: the profiles (by number among those started) whose
 * config blocks memprof's roots darken, in the order its tables are visited
 * (`caml_memprof_scan_roots`: the config of each entries table whose profile is not
 * discarded). */
export interface MemprofMarkRoots {
  /** Profiles whose config block memprof's roots darken, in order. */
  readonly roots: readonly number[];
}

/** A local root when a cycle starts: the block at `addr`, with the marking work of its fields
 * when darkened given by `darken` (-1: as `mark_stack_push_block` finds them). */
export interface LocalMarkRoot {
  readonly addr: number;
  readonly darken: number;
}

/** Blocks of the graph, in flat arrays. */
class Graph {
  readonly wosize: number[] = [];
  readonly noScan: boolean[] = [];
  readonly env: number[] = [];
  /** Field codes (null for a keep site's array, whose slots are read when scanned). */
  readonly fields: (Int32Array | null)[] = [];
  /** Keep site of a site array, else -1. */
  readonly site: number[] = [];

  add(wosize: number, noScan: boolean, env: number, fields: Int32Array | null, site = -1): number {
    this.wosize.push(wosize);
    this.noScan.push(noScan);
    this.env.push(env);
    this.fields.push(fields);
    this.site.push(site);
    return this.wosize.length - 1;
  }
}

/** Field codes of `text` (`i`, `s`, `bK`, `kS`, `pJ`, each maybe `*N`): `bK` is `blocks[K]`,
 * `kS` `sites[S]` (graph indexes). */
function parseFields(
  text: string,
  blocks: readonly number[],
  sites: readonly number[],
): Int32Array {
  const out: number[] = [];
  for (const tok of text.split(" ")) {
    if (tok === "") continue;
    const star = tok.indexOf("*");
    const atom = star < 0 ? tok : tok.slice(0, star);
    const n = star < 0 ? 1 : Number(tok.slice(star + 1));
    let code: number;
    if (atom === "i") code = F_IMM;
    else if (atom === "s") code = F_FREE;
    else if (atom[0] === "b") code = blocks[Number(atom.slice(1))];
    else if (atom[0] === "k") code = sites[Number(atom.slice(1))];
    else if (atom[0] === "p") code = F_PROFILE - Number(atom.slice(1));
    else if (atom[0] === "d") code = F_DOMAIN - Number(atom.slice(1));
    else if (atom[0] === "e") code = F_DSTATE - Number(atom.slice(1));
    else throw new Error(`bad mark graph field ${tok}`);
    if (code === undefined) throw new Error(`mark graph field ${tok} refers to nothing`);
    for (let k = 0; k < n; k++) out.push(code);
  }
  return Int32Array.from(out);
}

/** Adds blocks given as text to `g` (two passes: fields may refer to later blocks); `bK` in
 * their fields is the K-th of `refs` (default: of these blocks). */
function addBlocks(
  g: Graph,
  texts: readonly string[],
  sites: readonly number[],
  refs?: readonly number[],
): number[] {
  const ids: number[] = [];
  const heads: [number, number, number][] = [];
  for (const t of texts) {
    const [w, tag, env] = t.split("|")[0].trim().split(" ").map(Number);
    const noScan = tag >= 251; // No_scan_tag
    heads.push([w, tag, env]);
    ids.push(g.add(w, noScan, env, noScan ? new Int32Array(0) : null));
  }
  texts.forEach((t, k) => {
    const bar = t.indexOf("|");
    if (g.noScan[ids[k]]) return;
    const f = parseFields(bar < 0 ? "" : t.slice(bar + 1), refs ?? ids, sites);
    const [w, , env] = heads[k];
    if (f.length !== w - env) throw new Error(`mark graph block "${t}": ${f.length} fields`);
    // Fields are indexed from 0: the closure's code part is never read.
    const all = new Int32Array(w).fill(F_IMM);
    all.set(f, env);
    g.fields[ids[k]] = all;
  });
  return ids;
}

/** One runtime's marking (see the module doc). */
export class Marker {
  readonly #host: MarkHost;
  readonly #g = new Graph();
  /** Pseudo-blocks holding the captured ranges' fields, bottom first. */
  readonly #fixedLocals: number[] = [];
  readonly #fixedGlobals: number[] = [];
  /** The program module's globals (graph blocks). */
  readonly #globals: number[] = [];
  /** The config block of each profile started (`caml_memprof_start`'s 9-word block). */
  readonly #configs: number[] = [];
  /** The systhreads' descriptors and conditions (graph blocks), the first created first. */
  readonly #threadDescr: number[] = [];
  readonly #threadCond: number[] = [];
  /** How many of the captured local ranges come before the systhreads' descriptors. */
  readonly #stackRanges: number;
  /** Each domain's handle and result (graph blocks), from domain 1. */
  readonly #domains: { handle: number; finished: number }[] = [];
  /** The program's blocks that registered global roots hold (graph blocks). */
  readonly #globalRoots: number[] = [];
  /** Cycle in which each graph block was marked. */
  #marked: Int32Array;
  #cycle = 0;
  // The mark stack (`struct mark_stack`): what, from, to.
  #stkRef: number[] = [];
  #stkStart: number[] = [];
  #stkEnd: number[] = [];
  #count = 0;
  /** The mark stack's capacity in entries (`stk->size`): it only grows, across cycles. */
  #size = MARK_STACK_INIT_SIZE;
  /** The compressed mark stack (`compressed_stack`): ranges of at most 64 fields whose values
   * are darkened once the mark stack is empty, in this order from {@linkcode #cNext}. */
  #cRef: number[] = [];
  #cStart: number[] = [];
  #cEnd: number[] = [];
  #cNext = 0;
  readonly #pb = new Float64Array(PB_SIZE);
  /** `marking_done`. */
  done = false;
  /** Blocks marked by scanning in the last {@linkcode mark} (`stat_blocks_marked`). */
  blocksMarked = 0;

  /** A marker for `layout`, reading the simulation through `host`. */
  constructor(layout: ProgramMarkLayout, host: MarkHost) {
    this.#host = host;
    const g = this.#g;
    const fixed = layout.fixed;
    const fixedIds = addBlocks(g, fixed.blocks, []);
    fixed.ranges.forEach((r, k) => {
      const f = parseFields(r, fixedIds, []);
      const id = g.add(f.length, false, 0, f);
      (k < fixed.locals ? this.#fixedLocals : this.#fixedGlobals).push(id);
    });
    const sites = layout.sites.map((cap, s) => g.add(Math.max(cap, 1), false, 0, null, s));
    const ids = addBlocks(g, layout.blocks, sites);
    for (const t of layout.globals) this.#globals.push(addBlocks(g, [t], sites, ids)[0]);
    for (const t of layout.threads ?? []) {
      this.#threadDescr.push(ids[t.descriptor]);
      this.#threadCond.push(ids[t.cond]);
    }
    for (const b of layout.globalRoots ?? []) this.#globalRoots.push(ids[b]);
    for (const t of layout.domains ?? []) {
      this.#domains.push({ handle: ids[t.handle], finished: ids[t.finished] });
    }
    this.#stackRanges = fixed.stackRanges;
    this.#marked = new Int32Array(g.wosize.length).fill(-1);
  }

  /**
   * A new cycle (`caml_darken_all_roots_start` after the heap's cycling): the mark stack gets the
   * roots' ranges, bottom first — the captured stack and C roots (`withQuickStat`: with the
   * harness's `Gc.quick_stat ()` record, the first of them, which the program holds from the
   * fifth cycle on), the descriptors of the systhreads alive (`allThreads`: all of them, the
   * program's initialisation having created them), the registered global roots (the program's
   * first), the simulation's `locals`, the library's globals, the program module's globals, then
   * the config blocks memprof's roots hold.
   */
  startCycle(
    cycle: number,
    locals: Iterable<LocalMarkRoot>,
    memprof: MemprofMarkRoots,
    withQuickStat: boolean,
    allThreads = false,
  ): void {
    this.#cycle = cycle;
    this.#count = 0;
    this.#clearCompressed();
    this.done = false;
    const fl = this.#fixedLocals;
    for (let k = 0; k <= fl.length; k++) {
      if (k === this.#stackRanges) {
        this.#darkenThreads(allThreads);
        for (const id of this.#globalRoots) this.#darkenRef(id);
        // Each living spawned domain's term_sync (domain.c, caml_domain_spawn registers it), in
        // the order the domains were spawned (the roots' list is sorted by address, and their
        // slots are allocated in that order).
        this.#domains.forEach((t, i) => {
          if (this.#host.domainRooted?.(i + 1)) this.#darkenRef(this.#g.fields[t.handle]![1]);
        });
      }
      if (k < fl.length && (k > 0 || withQuickStat)) this.#push(fl[k], 0, this.#g.wosize[fl[k]]);
    }
    for (const r of locals) {
      if (r.darken >= 0) {
        // A block whose darkening work is given: that many fields of immediates.
        const b = this.#host.block(r.addr);
        if (b === undefined || b.markedIn === cycle) continue;
        b.markedIn = cycle;
        if (r.darken > 0) this.#push(R_FREE, 0, r.darken);
      } else this.#darkenRef(keptRef(r.addr));
    }
    for (const id of this.#fixedGlobals) this.#push(id, 0, this.#g.wosize[id]);
    for (const id of this.#globals) this.#darkenRef(id);
    for (const j of memprof.roots) this.#darkenRef(this.#config(j));
    if (this.#count === 0) this.done = true;
  }

  /** `caml_thread_scan_roots`: from the active thread (here the main one, whose descriptor the
   * captured ranges hold) round the systhreads' ring, which `Thread.create` links each new
   * thread into after the active one: the last created first. Each living thread's descriptor
   * is darkened (its fields pushed from the status), and its stack, waiting in
   * `Condition.wait`, holds its condition (a custom block: marked, nothing to push). */
  #darkenThreads(all: boolean): void {
    for (let k = this.#threadDescr.length; k >= 1; k--) {
      if (!all && !this.#host.threadAlive?.(k)) continue;
      this.#darkenRef(this.#threadDescr[k - 1]);
      this.#darkenRef(this.#threadCond[k - 1]);
    }
  }

  /** The config block of profile `j` (by number among those started), made at its first use. */
  #config(j: number): number {
    while (this.#configs.length <= j) this.#configs.push(this.#newConfig());
    return this.#configs[j];
  }

  /** A profile started: its config block and boxed rate, allocated during this cycle, are
   * marked in it (OCaml 5 allocates blocks marked). */
  configAllocated(j: number): void {
    const id = this.#config(j);
    this.#marked[id] = this.#cycle;
    this.#marked[this.#g.fields[id]![2]] = this.#cycle;
  }

  /** Domain `k`'s handle (with its `term_sync`, mutex and condition) or, once `ended`, its
   * result (`Finished` and `Ok ()`), allocated during this cycle (OCaml 5 allocates blocks
   * marked; young ones are promoted marked). */
  domainAllocated(k: number, opts: { readonly ended: boolean }): void {
    const t = this.#domains[k - 1];
    if (t === undefined) return;
    const f = this.#g.fields;
    const marked = this.#marked;
    if (opts.ended) {
      marked[t.finished] = marked[f[t.finished]![0]] = this.#cycle;
    } else {
      const sync = f[t.handle]![1];
      marked[t.handle] = marked[sync] = this.#cycle;
      marked[f[sync]![1]] = marked[f[sync]![2]] = this.#cycle;
    }
  }

  /** `caml_modify`'s write barrier on the program's `prof` slot that held profile `j`'s config
   * block: `caml_darken` of that block. */
  darkenConfig(j: number): void {
    const id = this.#config(j);
    if (this.#marked[id] === this.#cycle) return;
    if (this.done) this.done = false;
    this.#darkenRef(id);
  }

  /** A profile's config block as the real runtime shows it (memprof.c's 9-field config): its
   * status (an immediate), static data, the boxed sampling rate (a float block), the callstack
   * size, the tracker's five closures (static). Darkened, it pushes its fields from the second. */
  #newConfig(): number {
    const g = this.#g;
    const rate = g.add(1, true, 0, new Int32Array(0));
    const f = Int32Array.from([
      F_IMM,
      F_FREE,
      rate,
      F_IMM,
      F_FREE,
      F_FREE,
      F_FREE,
      F_FREE,
      F_FREE,
    ]);
    const id = g.add(9, false, 0, f);
    if (this.#marked.length < g.wosize.length) {
      const m = new Int32Array(g.wosize.length * 2).fill(-1);
      m.set(this.#marked);
      this.#marked = m;
    }
    return id;
  }

  /** `caml_darken` of the simulation's block at `addr` (the write barrier): marked now, its
   * fields pushed as `mark_stack_push_block` does; marking resumes if it was done. */
  darken(addr: number): void {
    const b = this.#host.block(addr);
    if (b === undefined || b.markedIn === this.#cycle) return;
    if (this.done) this.done = false;
    this.#darkenRef(keptRef(addr));
  }

  #push(ref: number, start: number, end: number): void {
    if (this.#count === this.#size) this.#reallocStack();
    const n = this.#count++;
    this.#stkRef[n] = ref;
    this.#stkStart[n] = start;
    this.#stkEnd[n] = end;
  }

  /** `realloc_mark_stack`, when a push finds the stack full: the stack doubles (its entries of
   * more than 64 fields, which pruning would keep, not counted) while it stays under a 32nd of
   * the domain's heap; else it is pruned. */
  #reallocStack(): void {
    const bsize = this.#size * MARK_ENTRY_BYTES;
    const bound = Math.floor((this.#host.heapWords?.() ?? 0) * 8 / 32);
    let large = 0;
    if (bsize >= bound) {
      for (let i = 0; i < this.#count; i++) {
        if (this.#stkEnd[i] - this.#stkStart[i] > BITS_PER_WORD) large += MARK_ENTRY_BYTES;
      }
    }
    if (bsize - large < bound) {
      this.#size = Math.floor(((bsize - large) * 2 + large) / MARK_ENTRY_BYTES);
      return;
    }
    this.#prune();
  }

  /** `mark_stack_prune`: the compressed ranges not yet darkened are kept, then every entry of at
   * most 64 fields leaves the stack for the compressed stack; the longer ones stay, in order.
   * (OCaml keeps the compressed fields in a hash table of 64-word address chunks and darkens
   * them chunk by chunk in the table's order, which follows the addresses' hashes; the
   * simulation, which has no addresses, keeps them in the order they were compressed, one range
   * at a time. Only the order of marking can differ, and with it, for a block that both a
   * compressed field and a scanned one reach, whether its header is charged.) */
  #prune(): void {
    const ref = this.#cRef.slice(this.#cNext);
    const start = this.#cStart.slice(this.#cNext);
    const end = this.#cEnd.slice(this.#cNext);
    let kept = 0;
    for (let i = 0; i < this.#count; i++) {
      const r = this.#stkRef[i], s = this.#stkStart[i], e = this.#stkEnd[i];
      if (e - s > BITS_PER_WORD) {
        this.#stkRef[kept] = r;
        this.#stkStart[kept] = s;
        this.#stkEnd[kept] = e;
        kept++;
      } else if (s < e) {
        ref.push(r);
        start.push(s);
        end.push(e);
      }
    }
    this.#count = kept;
    this.#cRef = ref;
    this.#cStart = start;
    this.#cEnd = end;
    this.#cNext = 0;
  }

  #clearCompressed(): void {
    this.#cRef = [];
    this.#cStart = [];
    this.#cEnd = [];
    this.#cNext = 0;
  }

  /** `mark`'s step once the mark stack is empty: the next compressed range's fields, each
   * darkened as `mark_slice_darken` does. Returns the budget left (negative: work done past it). */
  #darkenCompressed(budget: number): number {
    // Read before darkening: a push may prune the stack, which rebuilds the compressed one from
    // the next range on (as `mark` moves its iterator before darkening a chunk).
    const k = this.#cNext++;
    const ref = this.#cRef[k], end = this.#cEnd[k];
    for (let i = this.#cStart[k]; i < end; i++) {
      budget = this.#sliceDarken(this.#field(ref, i), budget);
    }
    return budget;
  }

  /** `mark_slice_darken` of `ref`: an unmarked block is marked, costing its size if it has no
   * fields to scan, else what `mark_stack_push_block` skips (all of it, header included, if it
   * pushes nothing). */
  #sliceDarken(ref: number, budget: number): number {
    if (ref === F_IMM || !this.#takeUnmarked(ref)) return budget;
    this.blocksMarked++;
    if (this.#noScan(ref)) return budget - this.#wosize(ref);
    return budget - this.#pushBlock(ref);
  }

  /** `mark_stack_push_block`: pushes the fields of `ref` (a block with fields to scan) from the
   * first pointer among its first eight (from the ninth if none; nothing if it has no more), and
   * returns the work it skipped — the fields before, or all of them and the header if it pushed
   * nothing. */
  #pushBlock(ref: number): number {
    const w = this.#wosize(ref);
    const offset = ref >= 0 ? this.#g.env[ref] : 0;
    const end = w < PUSH_LOOKAHEAD ? w : PUSH_LOOKAHEAD;
    let i = offset;
    for (; i < end; i++) if (this.#field(ref, i) !== F_IMM) break;
    if (i === w) return w - offset + 1;
    this.#push(ref, i, w);
    return i - offset;
  }

  /** Whether `ref` is a block marking has still to mark, marking it if so. */
  #takeUnmarked(ref: number): boolean {
    if (ref === R_FREE) return false;
    if (ref >= 0) {
      if (this.#marked[ref] === this.#cycle) return false;
      this.#marked[ref] = this.#cycle;
      return true;
    }
    const b = this.#host.block(keptAddr(ref));
    if (b === undefined || b.markedIn === this.#cycle) return false;
    b.markedIn = this.#cycle;
    return true;
  }

  #wosize(ref: number): number {
    if (ref >= 0) return this.#g.wosize[ref];
    return this.#host.block(keptAddr(ref))!.whsize - 1;
  }

  #noScan(ref: number): boolean {
    if (ref >= 0) return this.#g.noScan[ref];
    return this.#host.block(keptAddr(ref))!.noScan;
  }

  /** Field `i` of `ref` as a reference if it is markable (`Is_markable`: a block outside the
   * minor heaps), else {@linkcode F_IMM}. */
  #field(ref: number, i: number): number {
    if (ref === R_FREE) return F_IMM;
    if (ref >= 0) {
      const f = this.#g.fields[ref];
      if (f !== null) {
        const c = f[i];
        if (c >= F_IMM) return c;
        if (c === F_FREE) return R_FREE;
        if (c <= F_DSTATE) {
          const k = F_DSTATE - c;
          return this.#host.domainEnded?.(k) ? this.#domains[k - 1].finished : F_IMM;
        }
        if (c <= F_DOMAIN) {
          const k = F_DOMAIN - c;
          return this.#host.domainHandle?.(k) ? this.#domains[k - 1].handle : F_IMM;
        }
        const j = this.#host.profileSlot?.(F_PROFILE - c) ?? -1;
        return j >= 0 ? this.#config(j) : F_IMM;
      }
      const addr = this.#host.siteSlot(this.#g.site[ref], i);
      return addr >= 0 && this.#host.block(addr) !== undefined ? keptRef(addr) : F_IMM;
    }
    if (i !== 0) return F_IMM;
    const to = this.#host.link(keptAddr(ref));
    return to >= 0 && this.#host.block(to) !== undefined ? keptRef(to) : F_IMM;
  }

  /** `caml_darken` of a block: marked, and its fields pushed ({@linkcode #pushBlock}; the work
   * skipped is not charged). */
  #darkenRef(ref: number): void {
    if (!this.#takeUnmarked(ref)) return;
    if (!this.#noScan(ref)) this.#pushBlock(ref);
  }

  /** `do_some_marking`: marks until `budget` is spent (then drains the prefetch buffer) or the
   * mark stack is empty; returns what is left of the budget (negative: work done past it). */
  #doSomeMarking(budget: number): number {
    const pb = this.#pb;
    let enq = 0, deq = 0, waterline = PB_MIN;
    let ref = 0, start = 0, end = 0;
    for (;;) {
      if (enq - deq > waterline) {
        ref = pb[deq++ & (PB_SIZE - 1)];
        if (!this.#takeUnmarked(ref)) continue;
        this.blocksMarked++;
        budget--; // header
        if (this.#noScan(ref)) {
          budget -= this.#wosize(ref);
          continue;
        }
        start = 0;
        end = this.#wosize(ref);
        if (ref >= 0 && this.#g.env[ref] > 0) {
          budget -= this.#g.env[ref];
          start = this.#g.env[ref];
        }
      } else if (budget <= 0 || this.#count === 0) {
        if (waterline > 0) {
          waterline = 0; // drain mode
          continue;
        }
        break;
      } else {
        const n = --this.#count;
        ref = this.#stkRef[n];
        start = this.#stkStart[n];
        end = this.#stkEnd[n];
      }
      let scanEnd = end;
      if (scanEnd - start > budget) scanEnd = start + (budget < 0 ? 0 : budget);
      for (; start < scanEnd; start++) {
        const child = this.#field(ref, start);
        budget--;
        if (child !== F_IMM) {
          if (enq === deq + PB_SIZE) break;
          pb[enq++ & (PB_SIZE - 1)] = child;
        }
      }
      if (start < end) {
        this.#push(ref, start, end);
        if (enq - deq > PB_MIN) waterline = PB_MIN;
      }
    }
    return budget;
  }

  /** `mark`: marks until `budget` is spent or marking is done (then `done`); returns what is
   * left of the budget. */
  mark(budget: number): number {
    this.blocksMarked = 0;
    while (budget > 0 && !this.done) {
      budget = this.#doSomeMarking(budget);
      if (budget > 0) {
        if (this.#cNext < this.#cRef.length) budget = this.#darkenCompressed(budget);
        else {
          this.#clearCompressed();
          this.done = true;
        }
      }
    }
    return budget;
  }
}
