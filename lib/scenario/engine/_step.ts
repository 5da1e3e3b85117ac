/**
 * The shapes compiled steps share: a step on one domain (`domainOp`: tick, make the domain
 * current, run the work under the step's guard), a step that ticks and then works, steps in
 * sequence, and the few ways of going on from what is left of a step that stopped where its
 * thread may block ({@linkcode Rest}: `thenG`, `firstOf`).
 * @module
 */
import type { Domain } from "../../runtime/mod.ts";
import type { Resumable } from "../../memprof/mod.ts";
import type { Step } from "../spec.ts";
import type { StepKind, StepOf } from "../walk.ts";
import type { Op, Rest, RunContext } from "./_context.ts";

/** The compilers of steps of kinds `K`. */
export type Steps<K extends StepKind> = { readonly [P in K]: (st: StepOf<P>) => Op };

/** Compiles a body (the steps a step holds). */
export type BodyCompiler = (steps: readonly Step[]) => Op;

/** A step's work on its domain: what is left of it when it stopped where its thread may block
 * (nothing returned: it ran to its end). */
export type DomainWork = (d: Domain) => Rest | void;

/** A step on domain `st.domain`: ticks the clock, makes the domain current, and runs `f` under
 * the step's guard (OCaml exceptions logged or passed to an attempt; anything else fails the
 * run naming the step). */
export function domainOp(run: RunContext, st: Step & { domain: string }, f: DomainWork): Op {
  const at = st.at;
  const domainOf = run.domainCache(st.domain, at);
  const work = (): Rest => {
    const d = domainOf();
    run.cur = d;
    return run.guard(at, () => f(d));
  };
  return () => {
    const rest = run.tick(at);
    return rest === null ? work() : thenG(rest, work);
  };
}

/** Step `at` that ticks, then does `f` (which guards itself where it must). */
export function tickedOp(run: RunContext, at: string, f: () => Rest | void): Op {
  return () => {
    const rest = run.tick(at);
    return rest === null ? f() ?? null : thenG(rest, f);
  };
}

/** What is left of a step (`rest`), then `k` (as far as it runs, and what is left of it). */
export function* thenG(rest: Resumable<void>, k: () => Rest | void): Resumable<void> {
  yield* rest;
  const more = k();
  if (more) yield* more;
}

/** A step written as a generator (off the hot paths: each run of it makes one) run as plain
 * code up to its first yield: null when it ended without one, else what is left of it. */
export function firstOf(g: Resumable<void>): Rest {
  const r = g.next();
  return r.done === true ? null : restOfG(g, r.value);
}

/** What is left of generator `g`, which yielded `first`: `first`, then `g` on (what it is sent
 * passed on to it; abandoned, `g` is too, its `finally` blocks running). Returns what `g`
 * returns. */
export function* restOfG<R>(g: Resumable<R>, first: unknown): Resumable<R> {
  let done = false;
  try {
    let sent = yield first;
    for (;;) {
      const r = g.next(sent);
      if (r.done === true) {
        done = true;
        return r.value;
      }
      sent = yield r.value;
    }
  } finally {
    if (!done) g.return(undefined as R);
  }
}

/** Steps run one after the other, as one step: each as far as it runs as plain code; once one
 * stops where its thread may block, its rest and then the steps after it are what is left. */
export function sequence(ops: readonly Op[]): Op {
  // Short bodies, the loops' common case, call each step from a call site of its own.
  if (ops.length === 0) return () => null;
  if (ops.length === 1) return ops[0];
  if (ops.length === 2) {
    const [a, b] = ops;
    return () => {
      const rest = a();
      return rest === null ? b() : thenG(rest, b);
    };
  }
  if (ops.length === 3) {
    const [a, b, c] = ops;
    const bc = sequence([b, c]);
    return () => {
      let rest = a();
      if (rest !== null) return thenG(rest, bc);
      rest = b();
      return rest === null ? c() : thenG(rest, c);
    };
  }
  const n = ops.length;
  // The steps from the i-th on (what is left after step i - 1 stopped).
  const from = (i: number): Rest => {
    for (; i < n; i++) {
      const rest = ops[i]();
      if (rest !== null) return i + 1 < n ? thenG(rest, tails[i + 1]) : rest;
    }
    return null;
  };
  const tails = ops.map((_, i) => () => from(i));
  return tails[0];
}

/** What is left of a step (`rest`, maybe nothing), inside a step written as a generator. */
export function* restG(rest: Rest): Resumable<void> {
  if (rest !== null) yield* rest;
}

/** `f` under step `at`'s guard ({@linkcode RunContext.guard}), inside a step written as a
 * generator. */
export function* guardedG(
  run: RunContext,
  at: string,
  f: () => Resumable<void>,
): Resumable<void> {
  yield* restG(run.guard(at, () => firstOf(f())));
}
