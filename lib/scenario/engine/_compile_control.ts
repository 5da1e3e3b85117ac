/**
 * Steps around a body: `call` (a frame on the callstack), `attempt` (`try … with _ -> ()`),
 * `repeat` (a `for` loop, with ocamlopt's poll at its back-edge unless every path through the
 * body allocates or polls: lib/scenario/polling.ts), `when` (`if i mod every = offset`) and the
 * older form's `blocking` section. A `repeat` runs its body's closure in a plain loop; an
 * iteration that stops where a callback may block leaves the loop's rest to a generator, which
 * goes on with the same loop once that iteration's rest ran.
 * @module
 */
import type { Domain, Thread } from "../../runtime/mod.ts";
import {
  OCamlException,
  OCamlFailure,
  OCamlInvalidArgument,
  type Resumable,
} from "../../memprof/mod.ts";
import { backEdgePolls } from "../polling.ts";
import type { StepOf } from "../walk.ts";
import { type BulkBody, bulkBody, bulkIterations, finishTicked } from "./_bulk.ts";
import type { Op, Rest, RunContext } from "./_context.ts";
import { type BodyCompiler, domainOp, sequence, type Steps, thenG } from "./_step.ts";

/** The step kinds compiled here. */
export type ControlKind = "call" | "attempt" | "repeat" | "when" | "blocking";

/** The compilers of steps around a body; `body` compiles a body. */
export function controlSteps(run: RunContext, body: BodyCompiler): Steps<ControlKind> {
  // Computed here, before any step is compiled: steps compile recursively, as deep as they nest.
  backEdgePolls(run.sc);
  return {
    call: (st) => callOp(run, st, body(st.body)),
    attempt: (st) => attemptOp(run, st, body(st.body)),
    // Compiled once, step by step (a step compiled twice would keep its blocks twice).
    repeat: (st) => repeatOp(run, st, st.body.map((s) => body([s]))),
    when: (st) => {
      const inner = body(st.body);
      const due = whenDue(run, st);
      return () => due() ? inner() : null;
    },
    blocking: (st) => {
      const inner = body(st.body);
      return domainOp(run, st, (d) => blockingWork(d, inner));
    },
  };
}

// ---- call ----------------------------------------------------------------------------------

function callOp(run: RunContext, st: StepOf<"call">, body: Op): Op {
  return () => {
    const t = run.domain(st.domain, st.at).current;
    run.frames.push(t, st.frame);
    let rest: Rest = null;
    try {
      rest = body();
    } finally {
      if (rest === null) run.frames.pop(t);
    }
    return rest === null ? null : callRestG(run, t, rest);
  };
}

/** What is left of a call's body (`rest`), the call's frame on thread `t`'s callstack. */
function* callRestG(run: RunContext, t: Thread, rest: Resumable<void>): Resumable<void> {
  try {
    yield* rest;
  } finally {
    run.frames.pop(t);
  }
}

// ---- attempt -------------------------------------------------------------------------------

function attemptOp(run: RunContext, st: StepOf<"attempt">, body: Op): Op {
  const at = st.at;
  return () => {
    run.tryDepth++;
    let rest: Rest = null;
    try {
      rest = body();
    } catch (e) {
      caught(run, at, e);
    } finally {
      if (rest === null) run.tryDepth--;
    }
    return rest === null ? null : attemptRestG(run, at, rest);
  };
}

/** What is left of attempt `at`'s body (`rest`), inside the attempt. */
function* attemptRestG(run: RunContext, at: string, rest: Resumable<void>): Resumable<void> {
  try {
    yield* rest;
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

/** A loop's body: step by step (`ops`), and as one step (`body`). */
interface LoopBody {
  readonly ops: readonly Op[];
  readonly body: Op;
}

/** Where the back-edge comes in {@linkcode Loop.next}: past it. */
const PAST_BACK_EDGE = -1;

/** One run of a `repeat` step. */
interface Loop {
  readonly loopDomain: Domain;
  /** The loop-index stack of its domain, the loop's index at `depth`. */
  readonly loops: number[];
  readonly depth: number;
  /** The minor collections before the loop started. */
  readonly minorsBefore: number;
  /** The iteration running, */
  i: number;
  /** and where it is: the index of its body's next step (the body's length: its back-edge;
   * {@linkcode PAST_BACK_EDGE}: past it), once the iteration stopped where a callback may
   * block (what is left of it ran first). */
  next: number;
  /** The exception that left the loop at a back-edge, if any. */
  left: OCamlException | undefined;
}

/** Runs a loop's iterations from iteration `first` on, as far as they run as plain code: null
 * when they ran to the loop's end, or one left it (`lp.left`); else what is left of the
 * iteration that stopped (`lp.i`, `lp.next` saying where it goes on). */
type Iterate = (lp: Loop, first: number) => Rest;

/** A `repeat` of the steps compiled into `ops`. */
function repeatOp(run: RunContext, st: StepOf<"repeat">, ops: readonly Op[]): Op {
  const plan = prepareRepeat(run, st);
  const b: LoopBody = { ops, body: sequence(ops) };
  const bulk = run.opts.skipQuietIterations === false ? undefined : bulkBody(run, ops);
  const iterate = bulk !== undefined ? bulkIterate(run, plan, b, bulk) : plainIterate(run, plan, b);
  return () => {
    const minorsBefore = run.rt.minorCollections;
    const loopDomain = plan.domainOf();
    const loops = run.loopsOf(loopDomain);
    const depth = loops.length;
    loops.push(0);
    const lp: Loop = {
      loopDomain,
      loops,
      depth,
      minorsBefore,
      i: 0,
      next: PAST_BACK_EDGE,
      left: undefined,
    };
    let rest: Rest = null;
    try {
      rest = iterate(lp, 1);
    } finally {
      if (rest === null) loops.length = depth;
    }
    if (rest !== null) return loopRestG(run, plan, { b, iterate, lp, rest });
    loopEnd(run, plan, lp);
    return null;
  };
}

/** What is left of a loop run `lp` whose iteration stopped (`rest`, that iteration's rest):
 * each time what is left of an iteration ran, the loop goes on as plain code from there
 * ({@linkcode goOn}), until it ends. */
function* loopRestG(
  run: RunContext,
  plan: RepeatPlan,
  { b, iterate, lp, rest }: {
    readonly b: LoopBody;
    readonly iterate: Iterate;
    readonly lp: Loop;
    readonly rest: Resumable<void>;
  },
): Resumable<void> {
  try {
    let more: Rest = rest;
    while (more !== null) {
      yield* more;
      more = goOn(run, plan, { b, iterate, lp });
    }
  } finally {
    lp.loops.length = lp.depth;
  }
  loopEnd(run, plan, lp);
}

/** Loop run `lp` goes on once what is left of its stopped iteration ran: that iteration's next
 * steps and back-edge, then the iterations after it (see {@linkcode Iterate}). */
function goOn(
  run: RunContext,
  plan: RepeatPlan,
  { b, iterate, lp }: { readonly b: LoopBody; readonly iterate: Iterate; readonly lp: Loop },
): Rest {
  if (lp.next !== PAST_BACK_EDGE) {
    const rest = finishIteration(run, plan, b, lp);
    if (rest !== null) return rest;
  }
  return lp.left !== undefined ? null : iterate(lp, lp.i + 1);
}

/** The running iteration of loop run `lp` stopped where `rest` begins; it goes on at `next`
 * (see {@linkcode Loop.next}). Returns `rest`. */
function stopped(lp: Loop, next: number, rest: Resumable<void>): Resumable<void> {
  lp.next = next;
  return rest;
}

/** The running iteration of loop run `lp` (`lp.i`) from its body's step `lp.next` (0: the
 * whole body) on, then its back-edge: null when it ran to its end (`lp.left`: an exception left
 * the loop at its back-edge), else what is left of it. */
function finishIteration(
  run: RunContext,
  plan: RepeatPlan,
  { ops, body }: LoopBody,
  lp: Loop,
): Rest {
  const n = ops.length, from = lp.next;
  if (from === 0) {
    const rest = body();
    if (rest !== null) return stopped(lp, n, rest);
  } else {
    for (let u = from; u < n; u++) {
      const rest = ops[u]();
      if (rest !== null) return stopped(lp, u + 1, rest);
    }
  }
  return backEdgeDue(plan, lp.loopDomain, lp.i) ? backEdgePoll(run, plan, lp) : null;
}

/** Whether the loop's back-edge after iteration `i` enters the runtime: it polls, and the poll's
 * own test (`young_ptr <= young_limit` on the loop's domain `d`) passes. */
function backEdgeDue({ polls, count }: RepeatPlan, d: Domain, i: number): boolean {
  return polls && i < count && d.youngPtr <= d.youngLimit;
}

/** The iterations of a loop whose body is not a {@linkcode BulkBody}. */
function plainIterate(run: RunContext, plan: RepeatPlan, b: LoopBody): Iterate {
  const { count, polls } = plan;
  const { body, ops } = b;
  const n = ops.length;
  if (!polls) {
    return (lp, first) => {
      const { loops, depth } = lp;
      for (let i = first; i <= count; i++) {
        run.iter = i;
        loops[depth] = i;
        const rest = body();
        if (rest !== null) {
          lp.i = i;
          return stopped(lp, n, rest);
        }
      }
      return null;
    };
  }
  return (lp, first) => {
    const { loops, depth } = lp;
    for (let i = first; i <= count; i++) {
      run.iter = i;
      loops[depth] = i;
      lp.i = i;
      lp.next = 0;
      const rest = finishIteration(run, plan, b, lp);
      if (rest !== null || lp.left !== undefined) return rest;
    }
    return null;
  };
}

/**
 * The iterations of a `repeat` whose body only allocates ({@linkcode BulkBody}): before each
 * iteration, a bulk run takes the iterations up to the next one where something can happen;
 * that one runs as usual (from where the bulk run stopped inside it, if it did).
 */
function bulkIterate(run: RunContext, plan: RepeatPlan, b: LoopBody, bulk: BulkBody): Iterate {
  const { count, polls } = plan;
  return (lp, first) => {
    const { loopDomain, loops, depth } = lp;
    for (let i = first; i <= count; i++) {
      const k = bulkIterations(run, bulk, { left: count - i + 1, polls, loopDomain });
      i += k;
      if (i > count) break;
      run.iter = i;
      loops[depth] = i;
      lp.i = i;
      lp.next = bulk.partial;
      if (bulk.ticked) {
        const rest = finishTicked(run, bulk);
        if (rest !== null) return stopped(lp, bulk.partial + 1, rest);
        lp.next = bulk.partial + 1;
      }
      const rest = finishIteration(run, plan, b, lp);
      if (rest !== null || lp.left !== undefined) return rest;
    }
    return null;
  };
}

/** After a loop: the exception that left it at a back-edge (if any) is logged, and the longest
 * loop so far is remembered (the fixture logs' headers). */
function loopEnd(run: RunContext, { at, count }: RepeatPlan, lp: Loop): void {
  const left = lp.left;
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
      minors: run.rt.minorCollections - lp.minorsBefore,
      domain: lp.loopDomain.id,
    };
  }
}

/** The poll at the back-edge of loop run `lp` after its running iteration, on the loop's
 * domain, as far as it runs as plain code: null when it ran to its end, else what is left of it.
 * An OCaml exception a callback raises there goes to the enclosing attempt, or, outside any,
 * leaves the loop (`lp.left`). */
function backEdgePoll(run: RunContext, plan: RepeatPlan, lp: Loop): Rest {
  const d = lp.loopDomain;
  run.cur = d;
  let rest: Rest;
  try {
    rest = d.pollFirst();
  } catch (e) {
    lp.left = backEdgeFailure(run, plan, e);
    return null;
  }
  return rest === null ? null : stopped(lp, PAST_BACK_EDGE, backEdgeRestG(run, plan, lp, rest));
}

/** The back-edge poll's callbacks (`rest`), what they raise passed to
 * {@linkcode backEdgeFailure}. */
function* backEdgeRestG(
  run: RunContext,
  plan: RepeatPlan,
  lp: Loop,
  rest: Resumable<void>,
): Resumable<void> {
  try {
    yield* rest;
  } catch (e) {
    lp.left = backEdgeFailure(run, plan, e);
  }
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

/** The older form's blocking section on domain `d`: other threads' steps run in `body`; then
 * the thread that entered it runs again, if it still lives. */
function blockingWork(d: Domain, body: Op): Rest {
  const me = d.current;
  const back = () => {
    if (me.alive) d.switchTo(me);
  };
  const rest = body();
  if (rest !== null) return thenG(rest, back);
  back();
  return null;
}
