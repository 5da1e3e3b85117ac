/**
 * What `Domain.spawn` does more in a program that links the systhreads library, as any program
 * with systhreads running programs of their own does (the exported program links
 * `threads.cmxa`, whose `Event` module links `Random`):
 *
 * - In the parent, `Domain.DLS.get_initial_keys` (stdlib/domain.ml) splits the parent's
 *   `Random` state for the new domain (`Random.random_key` is a key with `split_from_parent`,
 *   stdlib/random.ml). The parent's own state is made first if it has none yet
 *   (`mk_default`): the main domain at its first spawn; a spawned domain got one from its
 *   parent.
 * - In the new domain, before its body runs, `caml_thread_domain_initialize_hook`
 *   (otherlibs/systhreads/st_stubs.c) allocates the descriptor of the domain's main thread:
 *   `caml_threadstatus_new` (a custom block of 2 words) and `caml_alloc_3`, from C, with no
 *   OCaml frame on the new domain's stack.
 *
 * The sizes, sources, order and callstack depths are those OCaml 5.3.0 reported sampling every
 * word (`Gc.Memprof` at rate 1, threads.cmxa linked): a state is `Array1.create Int64
 * C_layout 4` — the dimensions array `[|4|]` (1 word, OCaml), then `caml_ba_create` (a custom
 * block of 6 words and 4 words of out-of-heap memory, from C) — and `State.set` boxes one
 * int64 (2 words); `State.split` boxes its four `bits64` results in one combined allocation
 * (4 × 2 words, after the new state's array: ocamlopt allocates 96 bytes at once there);
 * `get_initial_keys` allocates the `KV` pair (2 words) and `List.map` its cons cell (2 words).
 * @module
 */
import type { Domain, Root } from "../../runtime/mod.ts";
import type { Resumable } from "../../memprof/mod.ts";
import type { RunContext } from "./_context.ts";
import { stdlibFrames } from "./_frames.ts";
import { usesThreadPrograms } from "../walk.ts";

/** Frames the standard library's functions put above the spawning step's callstack, for each
 * allocation (the innermost first: `Array1.create`, `mk_default` or `State.split`,
 * `DLS.get`, `get_initial_keys`'s function, `List.map`, `Domain.spawn`; inlined functions
 * have no frame of their own). */
const DEPTH = {
  defaultArray: 6,
  defaultSet: 6,
  splitArray: 5,
  splitBoxes: 4,
  splitSet: 5,
  keyValue: 3,
  cons: 2,
} as const;

/** Domains that have a `Random` state in their domain-local storage, per run. */
const hasRandomState = new WeakMap<RunContext, WeakSet<Domain>>();

/** `DLS.get_initial_keys` in `parent` with the threads library linked: its `Random` state made
 * if it has none, then split. Returns the blocks it keeps: for the whole run (the parent's own
 * state, held by its domain-local storage), until the new domain's body returns (the `KV` pair
 * and cons cell, which `Domain.spawn`'s closure holds), and as long as the new domain's state
 * (the split state, in its DLS array). */
export function* randomSplitG(
  run: RunContext,
  parent: Domain,
): Resumable<{ forever: Root[]; untilEnd: Root[]; withState: Root[] }> {
  let states = hasRandomState.get(run);
  if (states === undefined) hasRandomState.set(run, states = new WeakSet());
  const forever: Root[] = [];
  const untilEnd: Root[] = [];
  const withState: Root[] = [];
  const t = parent.current;
  const at = (depth: number) => {
    t.callstack = run.frames.stackOf(t, stdlibFrames(run.opts.exportHarness, depth));
  };
  if (!states.has(parent)) {
    // DLS.get: mk_default (), then caml_domain_dls_compare_and_set (a C call) stores it.
    at(DEPTH.defaultArray);
    forever.push(yield* newStateG(run, parent));
    at(DEPTH.defaultSet);
    yield* parent.allocG(2);
    parent.returnFromC();
    states.add(parent);
  }
  at(DEPTH.splitArray);
  withState.push(yield* newStateG(run, parent));
  at(DEPTH.splitBoxes);
  yield* parent.allocCombinedG(SPLIT_BOXES);
  at(DEPTH.splitSet);
  yield* parent.allocG(2);
  at(DEPTH.keyValue);
  untilEnd.push(run.rt.root(yield* parent.allocG(2), 2));
  at(DEPTH.cons);
  untilEnd.push(run.rt.root(yield* parent.allocG(2), 2));
  return { forever, untilEnd, withState };
}

/** The four boxed int64 of `State.split`, one combined allocation. */
const SPLIT_BOXES: readonly number[] = [2, 2, 2, 2];

/** The new domain `child` has the split state in its domain-local storage
 * (`DLS.set_initial_keys`, which allocates nothing). */
export function randomStateInherited(run: RunContext, child: Domain): void {
  hasRandomState.get(run)?.add(child);
}

/** `State.create ()`: `[|4|]`, then `caml_ba_create`'s custom block; returns its root. */
function* newStateG(run: RunContext, d: Domain): Resumable<Root> {
  yield* d.allocG(1);
  const ba = run.rt.root(d.allocCustom(6, 4), 6);
  d.returnFromC();
  return ba;
}

/** `caml_thread_domain_initialize_hook` in the new domain `child`, with the threads library
 * linked: its main thread's descriptor, which the domain holds until its body returns (the
 * domain's stop hook frees the thread's record); then the thread becomes the domain's current
 * one (`caml_memprof_enter_thread`, which draws a new sampling trigger). */
export function threadHook(run: RunContext, child: Domain): Root[] {
  child.current.callstack = [];
  const status = run.rt.root(child.allocFromRuntime(2), 2); // caml_threadstatus_new
  const descr = run.rt.root(child.allocFromRuntime(3, false), 3); // caml_alloc_3
  child.switchTo(child.current);
  return [status, descr];
}

/** Whether the program links the systhreads library: any scenario whose threads run programs
 * of their own. */
export function linksThreads(run: RunContext): boolean {
  let v = linked.get(run);
  if (v === undefined) linked.set(run, v = usesThreadPrograms(run.sc));
  return v;
}
const linked = new WeakMap<RunContext, boolean>();
