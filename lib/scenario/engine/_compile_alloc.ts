/**
 * Allocation steps: `alloc`, `allocCombined`, `unmarshal` and `extAlloc`, in both forms. This is
 * the engine's hot path: a loop of small allocations runs the plain `alloc` closure once per
 * block, so everything a step can decide once (size source, keeper, domain, callstack cache) is
 * decided when it is compiled (`prepare…`), and the closures only do the allocation and count it.
 * @module
 */
import type { Domain, Thread } from "../../runtime/mod.ts";
import type { Resumable } from "../../memprof/mod.ts";
import type { Keeper } from "../lifetimes.ts";
import { sizeSource } from "../rng.ts";
import type { AllocSource } from "../spec.ts";
import type { StepOf } from "../walk.ts";
import type { Op, RunContext } from "./_context.ts";
import {
  domainOp,
  domainOpY,
  type PlainSteps,
  type ResumableSteps,
  tickedOp,
  tickedOpG,
} from "./_step.ts";

/** The step kinds compiled here. */
export type AllocKind = "alloc" | "allocCombined" | "unmarshal" | "extAlloc";

/** The plain compilers of allocation steps. */
export function allocSteps(run: RunContext): PlainSteps<AllocKind> {
  return {
    alloc: (st) => allocOp(run, prepareAlloc(run, st)),
    allocCombined: (st) => combinedOp(run, prepareCombined(run, st)),
    unmarshal: (st) => {
      const plan = prepareUnmarshal(run, st);
      const blocks = new Array<number>(plan.sizes.length);
      return domainOp(run, st, (d) => {
        d.current.callstack = plan.stackOf(d.current);
        for (let k = 0; k < blocks.length; k++) blocks[k] = plan.sizes[k]();
        unmarshalDone(run, plan.keep, d.unmarshalValue(blocks), blocks);
      });
    },
    extAlloc: (st) => tickedOp(run, extAllocWork(run, st)),
  };
}

/** The resumable compilers of allocation steps (the runtime's resumable paths where a
 * callback may run). */
export function allocStepsG(run: RunContext): ResumableSteps<AllocKind> {
  return {
    alloc: (st) => {
      const p = prepareAlloc(run, st);
      return () => allocG(run, p);
    },
    allocCombined: (st) => {
      const p = prepareCombined(run, st);
      return () => combinedG(run, p);
    },
    unmarshal: (st) => {
      const plan = prepareUnmarshal(run, st);
      return domainOpY(run, st, (d) => unmarshalG(run, plan, d));
    },
    // Printexc.get_callstack's allocation runs its callbacks on the plain path.
    extAlloc: (st) => tickedOpG(run, extAllocWork(run, st)),
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
    keep: run.lifetimes.keeper(st.lifetime),
    domainOf: run.domainCache(st.domain, st.at),
    stackOf: run.frames.cache((t) => run.frames.stackOf(t, frames)),
  };
}

/** The plain `alloc` step: one block per call. */
function allocOp(run: RunContext, plan: AllocPlan): Op {
  const { at, source, size, mem, keep, domainOf, stackOf } = plan;
  return () => {
    run.tick();
    const d = domainOf();
    run.cur = d;
    d.current.callstack = stackOf(d.current);
    const n = size();
    try {
      let addr: number;
      switch (source) {
        case "caml":
          addr = d.alloc(n);
          break;
        case "array":
          addr = d.makeArray(n);
          break;
        case "unmarshal":
          addr = d.unmarshal([n]);
          break;
        default:
          addr = allocFromC(d, source, n, mem);
      }
      run.allocations++;
      run.words += n + 1;
      if (keep !== undefined) keep(addr, n);
    } catch (e) {
      run.stepFailed(at, e);
    }
  };
}

function* allocG(run: RunContext, plan: AllocPlan): Resumable<void> {
  const { at, source, size, mem, keep, domainOf, stackOf } = plan;
  yield* run.tickG();
  const d = domainOf();
  run.cur = d;
  d.current.callstack = stackOf(d.current);
  const n = size();
  try {
    let addr: number;
    switch (source) {
      case "caml":
        addr = yield* d.allocG(n);
        break;
      case "array":
        addr = yield* d.makeArrayG(n);
        break;
      case "unmarshal":
        addr = (yield* d.unmarshalValueG([n]))[0];
        break;
      default:
        addr = allocFromC(d, source, n, mem);
    }
    run.allocations++;
    run.words += n + 1;
    if (keep !== undefined) keep(addr, n);
  } catch (e) {
    run.stepFailed(at, e);
  }
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

// ---- allocCombined -------------------------------------------------------------------------

/** What an `allocCombined` step decides once. */
interface CombinedPlan {
  readonly at: string;
  readonly sizes: readonly (() => number)[];
  readonly keeps: readonly (Keeper | undefined)[];
  readonly anyKept: boolean;
  readonly domainOf: () => Domain;
  readonly stacksOf: (t: Thread) => readonly (readonly string[])[];
}

function prepareCombined(run: RunContext, st: StepOf<"allocCombined">): CombinedPlan {
  const keeps = st.lifetimes.map((l) => run.lifetimes.keeper(l));
  const frameLists = st.frames;
  return {
    at: st.at,
    sizes: st.sizes.map((sz) => sizeSource(sz, run.rng)),
    keeps,
    anyKept: keeps.some((k) => k !== undefined),
    domainOf: run.domainCache(st.domain, st.at),
    stacksOf: run.frames.cache((t) => frameLists.map((f) => run.frames.stackOf(t, f))),
  };
}

function combinedOp(run: RunContext, plan: CombinedPlan): Op {
  const { at, sizes, domainOf, stacksOf } = plan;
  const lens = new Array<number>(sizes.length);
  return () => {
    run.tick();
    const d = domainOf();
    run.cur = d;
    for (let k = 0; k < sizes.length; k++) lens[k] = sizes[k]();
    const stacks = stacksOf(d.current);
    try {
      combinedDone(run, plan, d.allocCombined(lens, stacks), lens);
    } catch (e) {
      run.stepFailed(at, e);
    }
  };
}

function* combinedG(run: RunContext, plan: CombinedPlan): Resumable<void> {
  const { at, sizes, domainOf, stacksOf } = plan;
  yield* run.tickG();
  const d = domainOf();
  run.cur = d;
  const lens = sizes.map((sz) => sz());
  const stacks = stacksOf(d.current);
  try {
    combinedDone(run, plan, yield* d.allocCombinedG(lens, stacks), lens);
  } catch (e) {
    run.stepFailed(at, e);
  }
}

/** Counts the blocks of a combined allocation at `base` and keeps those its lifetimes keep. */
function combinedDone(
  run: RunContext,
  { keeps, anyKept }: CombinedPlan,
  base: number,
  lens: readonly number[],
): void {
  run.allocations += lens.length;
  for (let k = 0; k < lens.length; k++) run.words += lens[k] + 1;
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
    keep: run.lifetimes.keeper(st.lifetime),
    stackOf: run.frames.cache((t) => run.frames.stackOf(t, frames)),
  };
}

/** The work of a resumable `unmarshal` step on its domain `d`. */
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
  run.allocations += blocks.length;
  for (let k = 0; k < blocks.length; k++) {
    run.words += blocks[k] + 1;
    // The value is stored once, by its root; the other blocks hang from it.
    keep?.(addrs[k], blocks[k], k > 0);
  }
}

// ---- extAlloc ------------------------------------------------------------------------------

/** An external allocation, after its step's tick (`Printexc.get_callstack`'s allocation runs
 * callbacks on the plain path: one that blocks fails the run). */
function extAllocWork(run: RunContext, st: StepOf<"extAlloc">): () => void {
  const at = st.at;
  const bytes = sizeSource(st.bytes, run.rng);
  const lifetime = st.lifetime;
  return () => {
    const d = run.domain(st.domain, at);
    run.cur = d;
    const stack = run.frames.stackOf(d.current, []);
    d.current.callstack = stack;
    run.guard(at, () => {
      const id = run.tracer.extAlloc(d.id, bytes(), stack, () => {
        // Printexc.get_callstack allocates the callstack array while the lock is held.
        if (stack.length > 0) d.alloc(Math.min(stack.length, 256));
        d.returnFromC();
      });
      if (id !== undefined) run.lifetimes.end(lifetime, () => run.tracer.extFree(d.id, id));
    });
  };
}
