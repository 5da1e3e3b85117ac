/**
 * The shapes compiled steps share, in both forms: a step on one domain (`domainOp`: tick, make
 * the domain current, run the work under the step's guard), a step that ticks and then works,
 * and the visitor types each family's compiler fills in for its step kinds.
 * @module
 */
import type { Domain } from "../../runtime/mod.ts";
import { type Resumable, runToEnd } from "../../memprof/mod.ts";
import type { Step } from "../spec.ts";
import type { StepKind, StepOf } from "../walk.ts";
import type { GOp, Op, RunContext } from "./_context.ts";

/** The compilers of steps of kinds `K`, plain. */
export type PlainSteps<K extends StepKind> = { readonly [P in K]: (st: StepOf<P>) => Op };

/** The compilers of steps of kinds `K`, resumable. */
export type ResumableSteps<K extends StepKind> = { readonly [P in K]: (st: StepOf<P>) => GOp };

/** Compiles a body (the steps a step holds), in the form of the compiler asking. */
export type BodyCompiler<O> = (steps: readonly Step[]) => O;

/** A step's work on its domain that runs no callback, or none that may block: the same in
 * both forms. */
export type DomainWork = (d: Domain) => void;

/** A step on domain `st.domain`: ticks the clock, makes the domain current, and runs `f` under
 * the step's guard (OCaml exceptions logged or passed to an attempt; anything else fails the
 * run naming the step). */
export function domainOp(run: RunContext, st: Step & { domain: string }, f: DomainWork): Op {
  const at = st.at;
  const domainOf = run.domainCache(st.domain, at);
  return () => {
    run.tick(at);
    const d = domainOf();
    run.cur = d;
    run.guard(at, () => f(d));
  };
}

/** {@linkcode domainOp}, resumable: `f` runs no callback that may block. */
export function domainOpG(run: RunContext, st: Step & { domain: string }, f: DomainWork): GOp {
  return domainOpY(run, st, (d) => plainG(() => f(d)));
}

/** {@linkcode domainOp}, resumable, with a resumable `f`. */
export function domainOpY(
  run: RunContext,
  st: Step & { domain: string },
  f: (d: Domain) => Resumable<void>,
): GOp {
  const at = st.at;
  const domainOf = run.domainCache(st.domain, at);
  return () => domainStepG(run, { domainOf, at }, f);
}

function* domainStepG(
  run: RunContext,
  { domainOf, at }: { readonly domainOf: () => Domain; readonly at: string },
  f: (d: Domain) => Resumable<void>,
): Resumable<void> {
  yield* run.tickG(at);
  const d = domainOf();
  run.cur = d;
  yield* run.guardG(at, () => f(d));
}

/** A step's work that never yields, as a resumable computation. */
// deno-lint-ignore require-yield
function* plainG(f: () => void): Resumable<void> {
  f();
}

/** Step `at` that ticks, then does `f` (which guards itself where it must): plain. */
export function tickedOp(run: RunContext, at: string, f: () => void): Op {
  return () => {
    run.tick(at);
    f();
  };
}

/** {@linkcode tickedOp}, resumable. */
export function tickedOpG(run: RunContext, at: string, f: () => void): GOp {
  return () => tickedG(run, at, f);
}

function* tickedG(run: RunContext, at: string, f: () => void): Resumable<void> {
  yield* run.tickG(at);
  f();
}

/** {@linkcode tickedOp}, resumable, with a resumable `f`. */
export function tickedOpY(run: RunContext, at: string, f: () => Resumable<void>): GOp {
  return function* () {
    yield* run.tickG(at);
    yield* f();
  };
}

/** The plain form of a step written once, resumable (`op`): it runs to its end at once
 * (`runToEnd`, which fails naming step `at` if a callback blocks: only thread programs, which
 * run resumably, pass the baton). For steps off the hot paths. */
export function plainOf(op: GOp, at: string): Op {
  return () => runToEnd(op(), `step ${at}`);
}

/** Steps run one after the other, as one step. */
export function sequence(ops: readonly Op[]): Op {
  // Short bodies, the loops' common case, call each step from a call site of its own.
  if (ops.length === 2) {
    const [a, b] = ops;
    return () => {
      a();
      b();
    };
  }
  if (ops.length === 3) {
    const [a, b, c] = ops;
    return () => {
      a();
      b();
      c();
    };
  }
  const n = ops.length;
  return () => {
    for (let i = 0; i < n; i++) ops[i]();
  };
}

/** Runs a generator to its end, dropping what it returns. */
export function* discardG<T>(r: Resumable<T>): Resumable<void> {
  yield* r;
}
