/**
 * Allocation steps: `alloc`, `allocCombined`, `unmarshal` and `extAlloc`. This is the engine's
 * hot path: a loop of small allocations runs the `alloc` closure once per block, so everything
 * a step can decide once (size source, keeper, domain, callstack cache) is decided when it is
 * compiled (`prepare…`), and the closures only do the allocation and count it. An allocation
 * whose callbacks may block stops there (the runtime's `allocFirst`, `allocCombinedFirst`):
 * the rest of the step, counting and keeping the block, is then what it returns.
 * @module
 */
import { type Domain, MAX_YOUNG_WOSIZE, type Thread } from "../../runtime/mod.ts";
import type { Resumable } from "../../memprof/mod.ts";
import type { Keeper } from "../lifetimes.ts";
import { sizeSource } from "../rng.ts";
import type { AllocSource } from "../spec.ts";
import { maxSize } from "../polling.ts";
import type { StepOf } from "../walk.ts";
import type { Op, Rest, RunContext } from "./_context.ts";
import { domainOp, firstOf, restOfG, type Steps, tickedOp } from "./_step.ts";

/** The step kinds compiled here. */
export type AllocKind = "alloc" | "allocCombined" | "unmarshal" | "extAlloc";

/** The compilers of allocation steps. */
export function allocSteps(run: RunContext): Steps<AllocKind> {
  return {
    alloc: (st) => {
      const plan = prepareAlloc(run, st);
      const work = allocWork(run, plan);
      return withUnit(tickedOp(run, st.at, work), allocUnit(run, st, plan, work));
    },
    allocCombined: (st) => {
      const plan = prepareCombined(run, st);
      const work = combinedWork(run, plan);
      return withUnit(tickedOp(run, st.at, work), combinedUnit(run, st, plan, work));
    },
    unmarshal: (st) => {
      const plan = prepareUnmarshal(run, st);
      return domainOp(run, st, (d) => firstOf(unmarshalG(run, plan, d)));
    },
    // Printexc.get_callstack's allocation runs its callbacks to their end (none may block).
    extAlloc: (st) => tickedOp(run, st.at, extAllocWork(run, st)),
  };
}

// ---- alloc ---------------------------------------------------------------------------------

/** What an `alloc` step decides once. */
interface AllocPlan {
  readonly at: string;
  readonly source: AllocSource;
  readonly size: () => number;
  /** Out-of-heap words of a custom block. */
  readonly mem: (() => number) | undefined;
  readonly keep: Keeper | undefined;
  readonly domainOf: () => Domain;
  readonly stackOf: (t: Thread) => readonly string[];
}

function prepareAlloc(run: RunContext, st: StepOf<"alloc">): AllocPlan {
  const frames = st.frames;
  return {
    at: st.at,
    source: st.source,
    size: sizeSource(st.size, run.rng),
    mem: st.customMem === undefined ? undefined : sizeSource(st.customMem, run.rng),
    keep: run.lifetimes.keeper(st.lifetime, st),
    domainOf: run.domainCache(st.domain, st.at),
    stackOf: run.frames.cache((t) => run.frames.stackOf(t, frames)),
  };
}

/** The work of an `alloc` step, after its tick (the step the loops of small blocks run, from
 * `caml`). Fields whose value does not change are not written again (no write barrier). */
function allocWork(run: RunContext, plan: AllocPlan): () => Rest {
  const { at, source, size, mem, keep, domainOf, stackOf } = plan;
  return () => {
    const d = domainOf();
    if (run.cur !== d) run.cur = d;
    const t = d.current;
    const stack = stackOf(t);
    if (t.callstack !== stack) t.callstack = stack;
    const n = size();
    try {
      let addr: number;
      switch (source) {
        case "caml": {
          const rest = d.allocFirst(n);
          if (rest !== null) return allocatedAfterG(run, plan, { d, n, rest });
          addr = d.youngPtr;
          break;
        }
        case "array":
        case "unmarshal": {
          const g = source === "array" ? d.makeArrayG(n) : firstBlockG(d, n);
          const r = g.next();
          if (r.done !== true) {
            return allocatedAfterG(run, plan, { d, n, rest: restOfG(g, r.value) });
          }
          addr = r.value;
          break;
        }
        default:
          addr = allocFromC(d, source, n, mem);
      }
      allocated(run, keep, addr, n);
    } catch (e) {
      run.stepFailed(at, e);
    }
    return null;
  };
}

/** What is left of an `alloc` step whose allocation of `n` words on `d` stopped where a
 * callback may block: the allocation's rest (`rest`, returning the block's address, or nothing
 * when the block is at young_ptr), then the block counted and kept, under the step's guard. */
function* allocatedAfterG(
  run: RunContext,
  { at, keep }: AllocPlan,
  { d, n, rest }: {
    readonly d: Domain;
    readonly n: number;
    readonly rest: Resumable<number | void>;
  },
): Resumable<void> {
  try {
    allocated(run, keep, (yield* rest) ?? d.youngPtr, n);
  } catch (e) {
    run.stepFailed(at, e);
  }
}

/** An unmarshalled value of one block of `n` words: returns the block's address. */
function* firstBlockG(d: Domain, n: number): Resumable<number> {
  return (yield* d.unmarshalValueG([n]))[0];
}

/** Counts a block of `n` words allocated at `addr` and keeps it as `keep` says. */
function allocated(run: RunContext, keep: Keeper | undefined, addr: number, n: number): void {
  const counts = run.counts;
  counts.allocations++;
  counts.words += n + 1;
  if (keep !== undefined) keep(addr, n);
}

/** An allocation by a C primitive (its callbacks wait for a poll): the same in both forms. */
function allocFromC(
  d: Domain,
  source: "runtime" | "major" | "custom",
  n: number,
  mem: (() => number) | undefined,
): number {
  let addr: number;
  switch (source) {
    case "runtime":
      addr = d.allocFromRuntime(n);
      break;
    case "major":
      addr = d.allocMajor(n);
      break;
    case "custom":
      addr = d.allocCustom(n, mem!());
      break;
  }
  d.returnFromC();
  return addr;
}

// ---- loop bodies of allocations -----------------------------------------------------------

/**
 * An allocation step as a loop's bulk run does it (see {@linkcode BulkBody}): the compiled
 * step's own size sources and keeper, so that a bulk run and the step draw and keep alike.
 */
export interface BulkUnit {
  /** The step's work after its tick, as the compiled step does it. */
  readonly work: () => Rest;
  /** The step's position. */
  readonly at: string;
  /** Domain name. */
  readonly domain: string;
  /** The sizes drawn, in order: one for `alloc`, one per block for `allocCombined`. */
  readonly sizes: readonly (() => number)[];
  /** The fixed sizes, when all are. */
  readonly fixed: readonly number[] | undefined;
  /** Their words, headers included (0 when the sizes are drawn). */
  readonly fixedWords: number;
  /** The most words, headers included, one execution can allocate (Infinity if unbounded). */
  readonly maxWords: number;
  /** Per block, what keeps it (undefined: dropped); empty when nothing is kept. */
  readonly keeps: readonly (Keeper | undefined)[];
  /** The fewest steps a kept block waits before its release is due (Infinity: none). */
  readonly delay: number;
  /** For `alloc`: the callstack it leaves on the domain's thread. */
  readonly stackOf: ((t: Thread) => readonly string[]) | undefined;
}

/** The bulk units of compiled allocation steps, by their compiled closure. */
const bulkUnits = new WeakMap<Op, BulkUnit>();

/** The {@linkcode BulkUnit} of a compiled step, when it is an allocation that a loop's bulk run
 * can do: OCaml code's inline allocation, of sizes no larger than the minor heap's blocks. */
export function bulkUnitOf(op: Op): BulkUnit | undefined {
  return bulkUnits.get(op);
}

/** `op`, registered as the compiled step of bulk unit `unit` (if any). */
function withUnit(op: Op, unit: BulkUnit | undefined): Op {
  if (unit !== undefined) bulkUnits.set(op, unit);
  return op;
}

/** The bulk unit of an `alloc` step, if it can be one. */
function allocUnit(
  run: RunContext,
  st: StepOf<"alloc">,
  plan: AllocPlan,
  work: () => Rest,
): BulkUnit | undefined {
  const max = maxSize(st.size);
  if (st.source !== "caml" || max > MAX_YOUNG_WOSIZE) return undefined;
  return {
    at: st.at,
    work,
    domain: st.domain,
    sizes: [plan.size],
    fixed: typeof st.size === "number" ? [st.size] : undefined,
    fixedWords: typeof st.size === "number" ? st.size + 1 : 0,
    maxWords: max + 1,
    keeps: plan.keep === undefined ? [] : [plan.keep],
    delay: run.lifetimes.delayOf(st.lifetime),
    stackOf: plan.stackOf,
  };
}

/** The bulk unit of an `allocCombined` step. */
function combinedUnit(
  run: RunContext,
  st: StepOf<"allocCombined">,
  plan: CombinedPlan,
  work: () => Rest,
): BulkUnit {
  let maxWords = 0;
  for (const sz of st.sizes) maxWords += maxSize(sz) + 1;
  return {
    at: st.at,
    work,
    domain: st.domain,
    sizes: plan.sizes,
    fixed: plan.fixed,
    fixedWords: plan.fixed === undefined ? 0 : maxWords,
    maxWords,
    keeps: plan.anyKept ? plan.keeps : [],
    delay: st.lifetimes.reduce((m, l) => Math.min(m, run.lifetimes.delayOf(l)), Infinity),
    stackOf: undefined,
  };
}

// ---- allocCombined -------// ---- allocCombined -------------------------------------------------------------------------

/** What an `allocCombined` step decides once. */
interface CombinedPlan {
  readonly at: string;
  readonly sizes: readonly (() => number)[];
  readonly keeps: readonly (Keeper | undefined)[];
  readonly anyKept: boolean;
  /** The sizes, when they are all fixed. */
  readonly fixed: readonly number[] | undefined;
  readonly domainOf: () => Domain;
  readonly stacksOf: (t: Thread) => readonly (readonly string[])[];
}

function prepareCombined(run: RunContext, st: StepOf<"allocCombined">): CombinedPlan {
  const keeps = st.lifetimes.map((l) => run.lifetimes.keeper(l, st));
  const frameLists = st.frames;
  return {
    at: st.at,
    sizes: st.sizes.map((sz) => sizeSource(sz, run.rng)),
    keeps,
    anyKept: keeps.some((k) => k !== undefined),
    fixed: st.sizes.every((sz) => typeof sz === "number") ? st.sizes as number[] : undefined,
    domainOf: run.domainCache(st.domain, st.at),
    stacksOf: run.frames.cache((t) => frameLists.map((f) => run.frames.stackOf(t, f))),
  };
}

/** The work of an `allocCombined` step, after its tick. With fixed sizes, the runtime's inline
 * path (`Domain.bump`, `Domain.allocCombined`'s first test) is taken here without building the
 * arguments of its slow path. */
function combinedWork(run: RunContext, plan: CombinedPlan): () => Rest {
  const { at, sizes, domainOf, stacksOf, anyKept, fixed } = plan;
  if (fixed === undefined) {
    // (A step runs again only once what is left of it ran: its sizes' array is reused.)
    const lens = new Array<number>(sizes.length);
    return () => {
      const d = domainOf();
      run.cur = d;
      for (let k = 0; k < sizes.length; k++) lens[k] = sizes[k]();
      const stacks = stacksOf(d.current);
      try {
        const rest = d.allocCombinedFirst(lens, stacks);
        if (rest !== null) return combinedAfterG(run, plan, { d, lens, rest });
        combinedDone(run, plan, d.youngPtr, lens);
      } catch (e) {
        run.stepFailed(at, e);
      }
      return null;
    };
  }
  let whsize = 0;
  for (const n of fixed) whsize += n + 1;
  const blocks = fixed.length;
  return () => {
    const d = domainOf();
    if (run.cur !== d) run.cur = d;
    try {
      let base = d.bump(whsize);
      if (base < 0) {
        const rest = d.allocCombinedFirst(fixed, stacksOf(d.current));
        if (rest !== null) return combinedAfterG(run, plan, { d, lens: fixed, rest });
        base = d.youngPtr;
      }
      run.counts.allocations += blocks;
      run.counts.words += whsize;
      if (anyKept) combinedDone(run, plan, base, fixed, { counted: true });
    } catch (e) {
      run.stepFailed(at, e);
    }
    return null;
  };
}

/** What is left of an `allocCombined` step whose allocation on `d` of blocks of sizes `lens`
 * stopped where a callback may block: the allocation's rest, then the blocks (at young_ptr)
 * counted and kept, under the step's guard. */
function* combinedAfterG(
  run: RunContext,
  plan: CombinedPlan,
  { d, lens, rest }: {
    readonly d: Domain;
    readonly lens: readonly number[];
    readonly rest: Resumable<void>;
  },
): Resumable<void> {
  try {
    yield* rest;
    combinedDone(run, plan, d.youngPtr, lens);
  } catch (e) {
    run.stepFailed(plan.at, e);
  }
}

/** Counts the blocks of a combined allocation at `base` and keeps those its lifetimes keep. */
function combinedDone(
  run: RunContext,
  { keeps, anyKept }: CombinedPlan,
  base: number,
  lens: readonly number[],
  { counted = false }: { readonly counted?: boolean } = {},
): void {
  if (!counted) {
    run.counts.allocations += lens.length;
    for (let k = 0; k < lens.length; k++) run.counts.words += lens[k] + 1;
  }
  if (!anyKept) return;
  let a = base;
  for (let k = 0; k < lens.length; k++) {
    keeps[k]?.(a, lens[k]);
    a += lens[k] + 1;
  }
}

// ---- unmarshal -----------------------------------------------------------------------------

/** What an `unmarshal` step decides once. */
interface UnmarshalPlan {
  readonly sizes: readonly (() => number)[];
  readonly keep: Keeper | undefined;
  readonly stackOf: (t: Thread) => readonly string[];
}

function prepareUnmarshal(run: RunContext, st: StepOf<"unmarshal">): UnmarshalPlan {
  const frames = st.frames;
  return {
    sizes: st.blocks.map((b) => sizeSource(b, run.rng)),
    keep: run.lifetimes.keeper(st.lifetime, st),
    stackOf: run.frames.cache((t) => run.frames.stackOf(t, frames)),
  };
}

/** The work of an `unmarshal` step on its domain `d`. */
function* unmarshalG(run: RunContext, plan: UnmarshalPlan, d: Domain): Resumable<void> {
  d.current.callstack = plan.stackOf(d.current);
  const blocks = plan.sizes.map((sz) => sz());
  unmarshalDone(run, plan.keep, yield* d.unmarshalValueG(blocks), blocks);
}

/** Counts the blocks of an unmarshalled value and keeps it as its lifetime says. */
function unmarshalDone(
  run: RunContext,
  keep: Keeper | undefined,
  addrs: readonly number[],
  blocks: readonly number[],
): void {
  run.counts.allocations += blocks.length;
  for (let k = 0; k < blocks.length; k++) {
    run.counts.words += blocks[k] + 1;
    // The value is stored once, by its root; the other blocks hang from it.
    keep?.(addrs[k], blocks[k], k > 0);
  }
}

// ---- extAlloc ------------------------------------------------------------------------------

/**
 * An external allocation, after its step's tick: `Memtrace.External.alloc`, as memtrace's
 * `ext_alloc` and `ext_alloc_slowpath` run it. A sampled one takes the tracer's lock, draws its
 * gaps (its sampling loop polls at each back-edge), then captures the callstack with
 * `Printexc.get_callstack max_int`: `caml_get_current_callstack` allocates an array of one word
 * per frame with `caml_alloc` (a runtime allocation: its callbacks, and those of a collection
 * it runs, wait for a poll; over {@linkcode MAX_YOUNG_WOSIZE} words, in the major heap), its
 * frames those of the scenario and harness plus `RunOptions.harnessFrames.external` (the slow
 * path's own). The trace writing that follows, still locked, is not modelled, but for where
 * it first polls or allocates: there the callbacks made ready run, finding the tracer busy
 * (modelled as the exported program's `process_pending` right after the capture: a C call
 * running `caml_process_pending_actions`, whose return with an action pending, as memprof's
 * callbacks leave one, makes the next allocation or poll enter the runtime). The polls and the
 * allocation run callbacks on the plain path: one that blocks fails the run.
 */
function extAllocWork(run: RunContext, st: StepOf<"extAlloc">): () => void {
  const at = st.at;
  const bytes = sizeSource(st.bytes, run.rng);
  const lifetime = st.lifetime;
  const above = run.frames.externalFrames;
  return () => {
    const d = run.domain(st.domain, at);
    run.cur = d;
    const stack = run.frames.stackOf(d.current, []);
    d.current.callstack = stack;
    run.guard(at, () => {
      const id = run.tracer.extAlloc(d.id, bytes(), stack, {
        afterDraw: () => d.poll(),
        whileLocked: () => {
          const frames = above.length === 0 ? stack : [...above, ...stack];
          d.current.callstack = frames;
          try {
            if (frames.length > 0) d.allocFromRuntime(frames.length, false);
            d.returnFromC();
            d.processPendingActions();
            d.returnFromC();
          } finally {
            d.current.callstack = stack;
          }
        },
      });
      if (id !== undefined) run.lifetimes.end(lifetime, () => run.tracer.extFree(d.id, id));
    });
  };
}
