/**
 * Steps around a body: `call` (a frame on the callstack), `attempt` (`try … with _ -> ()`),
 * `repeat` (a `for` loop, with ocamlopt's poll at its back-edge unless every path through the
 * body allocates or polls: lib/scenario/polling.ts), `when` (`if i mod every = offset`) and the
 * older form's `blocking` section, in both forms. A plain `repeat` runs its body's closure in a
 * plain loop.
 * @module
 */
import type { Domain } from "../../runtime/mod.ts";
import {
  OCamlException,
  OCamlFailure,
  OCamlInvalidArgument,
  type Resumable,
  runToEnd,
} from "../../memprof/mod.ts";
import { backEdgePolls } from "../polling.ts";
import type { StepOf } from "../walk.ts";
import { type BulkBody, bulkBody, bulkIterations, finishTicked, finishTickedG } from "./_bulk.ts";
import type { GOp, Op, RunContext } from "./_context.ts";
import {
  type BodyCompiler,
  domainOp,
  domainOpY,
  type PlainSteps,
  type ResumableSteps,
  sequence,
} from "./_step.ts";

/** The step kinds compiled here. */
export type ControlKind = "call" | "attempt" | "repeat" | "when" | "blocking";

/** The plain compilers of steps around a body; `body` compiles a body. */
export function controlSteps(run: RunContext, body: BodyCompiler<Op>): PlainSteps<ControlKind> {
  // Computed here, before any step is compiled: steps compile recursively, as deep as they nest.
  backEdgePolls(run.sc);
  return {
    call: (st) => callOp(run, st, body(st.body)),
    attempt: (st) => attemptOp(run, st, body(st.body)),
    repeat: (st) => repeatOp(run, st, st.body.map((s) => body([s]))),
    when: (st) => {
      const inner = body(st.body);
      const due = whenDue(run, st);
      return () => {
        if (due()) inner();
      };
    },
    blocking: (st) => {
      const inner = body(st.body);
      return domainOp(run, st, (d) => d.blockingSection(inner));
    },
  };
}

/** The resumable compilers of steps around a body. */
export function controlStepsG(
  run: RunContext,
  body: BodyCompiler<GOp>,
): ResumableSteps<ControlKind> {
  backEdgePolls(run.sc); // before any step is compiled (see controlSteps)
  return {
    call: (st) => {
      const inner = body(st.body);
      return () => callG(run, st, inner);
    },
    attempt: (st) => {
      const inner = body(st.body);
      return () => attemptG(run, st.at, inner);
    },
    repeat: (st) => {
      // Compiled once, step by step (a step compiled twice would keep its blocks twice).
      const ops = st.body.map((s) => body([s]));
      const inner: GOp = ops.length === 1 ? ops[0] : function* () {
        for (let u = 0; u < ops.length; u++) yield* ops[u]();
      };
      const plan = prepareRepeat(run, st);
      const bulk = run.opts.skipQuietIterations === false ? undefined : bulkBody(run, ops);
      return () => repeatG(run, plan, { body: inner, ops, bulk });
    },
    when: (st) => {
      const inner = body(st.body);
      const due = whenDue(run, st);
      return () => whenG(due, inner);
    },
    blocking: (st) => {
      const inner = body(st.body);
      return domainOpY(run, st, (d) => blockingG(d, inner));
    },
  };
}

// ---- call ----------------------------------------------------------------------------------

function callOp(run: RunContext, st: StepOf<"call">, body: Op): Op {
  return () => {
    const t = run.domain(st.domain, st.at).current;
    run.frames.push(t, st.frame);
    try {
      body();
    } finally {
      run.frames.pop(t);
    }
  };
}

function* callG(run: RunContext, st: StepOf<"call">, body: GOp): Resumable<void> {
  const t = run.domain(st.domain, st.at).current;
  run.frames.push(t, st.frame);
  try {
    yield* body();
  } finally {
    run.frames.pop(t);
  }
}

// ---- attempt -------------------------------------------------------------------------------

function attemptOp(run: RunContext, st: StepOf<"attempt">, body: Op): Op {
  const at = st.at;
  return () => {
    run.tryDepth++;
    try {
      body();
    } catch (e) {
      caught(run, at, e);
    } finally {
      run.tryDepth--;
    }
  };
}

function* attemptG(run: RunContext, at: string, body: GOp): Resumable<void> {
  run.tryDepth++;
  try {
    yield* body();
  } catch (e) {
    caught(run, at, e);
  } finally {
    run.tryDepth--;
  }
}

/** What attempt `at` does with what its body threw: it catches OCaml exceptions only. */
function caught(run: RunContext, at: string, e: unknown): void {
  if (!(e instanceof OCamlException)) throw e;
  run.log.line(`[${at}] exception ${e.ocamlName} caught`);
  run.emitException("caught", e.ocamlName);
}

// ---- repeat --------------------------------------------------------------------------------

/** What a `repeat` step decides once. */
interface RepeatPlan {
  readonly at: string;
  readonly count: number;
  readonly domainOf: () => Domain;
  /** ocamlopt's back-edge poll, unless every path through the body allocates or polls in the
   * loop's function (lib/scenario/polling.ts). */
  readonly polls: boolean;
}

function prepareRepeat(run: RunContext, st: StepOf<"repeat">): RepeatPlan {
  return {
    at: st.at,
    count: st.count,
    domainOf: run.domainCache(st.domain, st.at),
    polls: backEdgePolls(run.sc).has(st),
  };
}

/** A plain `repeat` of the steps compiled into `ops`. */
function repeatOp(run: RunContext, st: StepOf<"repeat">, ops: readonly Op[]): Op {
  const plan = prepareRepeat(run, st);
  const body = ops.length === 1 ? ops[0] : sequence(ops);
  const bulk = run.opts.skipQuietIterations === false ? undefined : bulkBody(run, ops);
  if (bulk !== undefined) return loopOp(run, plan, bulkIterate(run, plan, { ops, body, bulk }));
  const { count, polls } = plan;
  return loopOp(run, plan, (loopDomain, loops, depth) => {
    if (!polls) {
      for (let i = 1; i <= count; i++) {
        run.iter = i;
        loops[depth] = i;
        body();
      }
      return undefined;
    }
    for (let i = 1; i <= count; i++) {
      run.iter = i;
      loops[depth] = i;
      body();
      // The poll's own test first: it enters the runtime only at young_ptr <= young_limit.
      if (i < count && loopDomain.youngPtr <= loopDomain.youngLimit) {
        const left = backEdgePoll(run, plan, loopDomain);
        if (left !== undefined) return left;
      }
    }
    return undefined;
  });
}

/** Runs a loop's iterations on `loopDomain`, whose loop-index stack has the loop's index at
 * `depth`; returns the exception that left the loop at a back-edge, if any. */
type Iterate = (loopDomain: Domain, loops: number[], depth: number) => OCamlException | undefined;

/** A plain loop: its index pushed on its domain's loop stack while `iterate` runs. */
function loopOp(run: RunContext, plan: RepeatPlan, iterate: Iterate): Op {
  return () => {
    const minorsBefore = run.rt.minorCollections;
    const loopDomain = plan.domainOf();
    const loops = run.loopsOf(loopDomain);
    const depth = loops.length;
    loops.push(0);
    let left: OCamlException | undefined;
    try {
      left = iterate(loopDomain, loops, depth);
    } finally {
      loops.length = depth;
    }
    loopEnd(run, plan, { left, minorsBefore, loopDomain });
  };
}

/**
 * The iterations of a `repeat` whose body only allocates ({@linkcode BulkBody}): before each
 * iteration, a bulk run takes the iterations up to the next one where something can happen;
 * that one runs as usual (from where the bulk run stopped inside it, if it did).
 */
function bulkIterate(
  run: RunContext,
  plan: RepeatPlan,
  { ops, body, bulk }: { readonly ops: readonly Op[]; readonly body: Op; readonly bulk: BulkBody },
): Iterate {
  const { count, polls } = plan;
  return (loopDomain, loops, depth) => {
    for (let i = 1; i <= count; i++) {
      const k = bulkIterations(run, bulk, { left: count - i + 1, polls, loopDomain });
      i += k;
      if (i > count) break;
      run.iter = i;
      loops[depth] = i;
      const from = bulk.ticked ? finishTicked(run, bulk) : bulk.partial;
      if (from === 0) body();
      else for (let u = from; u < ops.length; u++) ops[u]();
      if (polls && i < count && loopDomain.youngPtr <= loopDomain.youngLimit) {
        const left = backEdgePoll(run, plan, loopDomain);
        if (left !== undefined) return left;
      }
    }
    return undefined;
  };
}

/** A resumable `repeat`: its body `body`, step by step `ops`; with `bulk`, as the plain loop
 * does ({@linkcode bulkIterate}), a bulk run takes the iterations up to the next one where
 * something can happen. */
function* repeatG(
  run: RunContext,
  plan: RepeatPlan,
  { body, ops, bulk }: {
    readonly body: GOp;
    readonly ops: readonly GOp[];
    readonly bulk: BulkBody | undefined;
  },
): Resumable<void> {
  const { count, domainOf, polls } = plan;
  const minorsBefore = run.rt.minorCollections;
  const loopDomain = domainOf();
  const loops = run.loopsOf(loopDomain);
  const depth = loops.length;
  loops.push(0);
  let left: OCamlException | undefined;
  try {
    for (let i = 1; i <= count; i++) {
      let from = 0;
      if (bulk !== undefined) {
        i += bulkIterations(run, bulk, { left: count - i + 1, polls, loopDomain });
        if (i > count) break;
      }
      run.iter = i;
      loops[depth] = i;
      if (bulk !== undefined) from = bulk.ticked ? yield* finishTickedG(run, bulk) : bulk.partial;
      if (from === 0) yield* body();
      else for (let u = from; u < ops.length; u++) yield* ops[u]();
      // The poll's own test first: it enters the runtime only at young_ptr <= young_limit.
      if (polls && i < count && loopDomain.youngPtr <= loopDomain.youngLimit) {
        left = yield* backEdgePollG(run, plan, loopDomain);
        if (left !== undefined) break;
      }
    }
  } finally {
    loops.length = depth;
  }
  loopEnd(run, plan, { left, minorsBefore, loopDomain });
}

/** After a loop: the exception that left it at a back-edge (if any) is logged, and the longest
 * loop so far is remembered (the fixture logs' headers). */
function loopEnd(
  run: RunContext,
  { at, count }: RepeatPlan,
  { left, minorsBefore, loopDomain }: {
    readonly left: OCamlException | undefined;
    readonly minorsBefore: number;
    readonly loopDomain: Domain;
  },
): void {
  if (left !== undefined) {
    // Outside any attempt, an exception at the back-edge leaves the loop; the step after
    // the loop runs (the export wraps such loops in a handler that logs it).
    run.counts.exceptions++;
    run.log.line(`[${at}] exception ${left.ocamlName} escaped the loop`);
    run.emitException("escaped", left.ocamlName);
  }
  run.iter = count + 1;
  if (count >= run.counts.mainLoop.count) {
    run.counts.mainLoop = {
      count,
      minors: run.rt.minorCollections - minorsBefore,
      domain: loopDomain.id,
    };
  }
}

/** The poll at a loop's back-edge on domain `d`. An OCaml exception a callback raises there
 * goes to the enclosing attempt, or, outside any, is returned: it leaves the loop. */
function backEdgePoll(run: RunContext, plan: RepeatPlan, d: Domain): OCamlException | undefined {
  return runToEnd(backEdgeFirst(run, plan, d), `step ${plan.at}`);
}

/** {@linkcode backEdgePoll}, resumable. */
function* backEdgePollG(
  run: RunContext,
  plan: RepeatPlan,
  d: Domain,
): Resumable<OCamlException | undefined> {
  const rest = backEdgeFirst(run, plan, d);
  return rest === null ? undefined : yield* rest;
}

/** {@linkcode backEdgePoll} as far as it runs as plain code: null when it ran to its end
 * (nothing left the loop; no callback was due, so no generator is made), else its rest. */
function backEdgeFirst(
  run: RunContext,
  plan: RepeatPlan,
  d: Domain,
): Resumable<OCamlException | undefined> | null {
  run.cur = d;
  let rest: Resumable<void> | null;
  try {
    rest = d.pollFirst();
  } catch (e) {
    return valueG(backEdgeFailure(run, plan, e));
  }
  return rest === null ? null : backEdgeRestG(run, plan, rest);
}

/** The back-edge poll's callbacks (`rest`), what they raise passed to
 * {@linkcode backEdgeFailure}. */
function* backEdgeRestG(
  run: RunContext,
  plan: RepeatPlan,
  rest: Resumable<void>,
): Resumable<OCamlException | undefined> {
  try {
    yield* rest;
  } catch (e) {
    return backEdgeFailure(run, plan, e);
  }
  return undefined;
}

/** `value`, as a computation that ends at once. */
// deno-lint-ignore require-yield
function* valueG<T>(value: T): Resumable<T> {
  return value;
}

/** What the back-edge poll's exception `e` does: an OCaml exception leaves the loop (returned)
 * or goes to the enclosing attempt; anything else (a refused call, a failed action) fails the
 * run naming the loop's step. */
function backEdgeFailure(run: RunContext, { at }: RepeatPlan, e: unknown): OCamlException {
  if (
    e instanceof OCamlException && !(e instanceof OCamlFailure) &&
    !(e instanceof OCamlInvalidArgument)
  ) {
    if (run.tryDepth === 0) return e;
    throw e;
  }
  run.stepFailed(at, e);
  throw e; // (stepFailed throws for anything but OCaml exceptions)
}

// ---- when, blocking ------------------------------------------------------------------------

/** Whether a `when` step's body runs now: `i mod every = offset` for the index `i` of its loop. */
function whenDue(run: RunContext, st: StepOf<"when">): () => boolean {
  const domainOf = run.domainCache(st.domain, st.at);
  const depth = st.loop - 1, every = st.every, offset = st.offset;
  return () => run.loopsOf(domainOf())[depth] % every === offset;
}

function* whenG(due: () => boolean, body: GOp): Resumable<void> {
  if (due()) yield* body();
}

/** The older form's blocking section: other threads' steps run in `body`. */
function* blockingG(d: Domain, body: GOp): Resumable<void> {
  const me = d.current;
  yield* body();
  if (me.alive) d.switchTo(me);
}
