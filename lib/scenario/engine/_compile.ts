/**
 * Steps compiled once, in one of two forms: plain closures (`Op`), or, for scenarios with thread
 * programs, generators (`GOp`) that a blocking thread suspends. Each family of steps has its
 * compilers in a file of its own (`_compile_alloc.ts`, `_compile_runtime.ts`,
 * `_compile_domains.ts`, `_compile_control.ts`, `_threads.ts`); here they are put together
 * into one visitor per form, and lists of steps compiled into one step.
 * @module
 */
import type { Resumable } from "../../memprof/mod.ts";
import type { Domain } from "../../runtime/mod.ts";
import type { Step } from "../spec.ts";
import { type SegmentStart, segmentStarts, type StepVisitor, visitStep } from "../walk.ts";
import type { GOp, Op, RunContext } from "./_context.ts";
import type { Callbacks } from "./_callbacks.ts";
import { allocSteps, allocStepsG } from "./_compile_alloc.ts";
import { controlSteps, controlStepsG } from "./_compile_control.ts";
import { domainSteps, domainStepsG, harnessJoin } from "./_compile_domains.ts";
import { runtimeSteps, runtimeStepsG } from "./_compile_runtime.ts";
import { type Baton, threadProgramSteps, threadProgramStepsG } from "./_threads.ts";
import { sequence } from "./_step.ts";
import { waitBegins, waitEnds } from "./_domain_waits.ts";

const NO_STARTS: ReadonlyMap<Step, SegmentStart> = new Map();

/** Compiles the top-level steps of `run` into plain closures. */
export function compilePlain(run: RunContext, callbacks: Callbacks): Op {
  const visitor: StepVisitor<Op> = {
    ...allocSteps(run),
    ...runtimeSteps(run, callbacks),
    ...domainSteps(run),
    ...controlSteps(run, body),
    ...threadProgramSteps(),
  };
  function body(steps: readonly Step[]): Op {
    const ops = steps.map((st) => visitStep(st, visitor));
    return ops.length === 1 ? ops[0] : sequence(ops);
  }
  const steps = run.sc.steps;
  const starts = run.opts.exportHarness === true ? segmentStarts(run.sc).starts : NO_STARTS;
  if (run.opts.checkInvariants !== true && starts.size === 0) return body(steps);
  // With the export's harness, a domain resuming drains its pending actions first; memprof's invariants are checked after
  // each top-level step when asked.
  const ops = steps.map((st) => {
    const op = visitStep(st, visitor);
    const start = starts.get(st);
    if (start === undefined) return op;
    return () => {
      const d = run.domain(start.domain, st.at);
      turnComes(run, start, d);
      for (const ended of start.joins) harnessJoin(run, d, ended, st.at);
      run.drain(d, st.at);
      op();
    };
  });
  if (run.opts.checkInvariants !== true) return sequence(ops);
  return () => {
    for (let i = 0; i < ops.length; i++) {
      ops[i]();
      run.checkInvariants(steps[i].at);
    }
  };
}

/** Compiles the top-level steps of `run` into generators; the programs of its threads go to
 * `baton`. */
export function compileResumable(run: RunContext, callbacks: Callbacks, baton: Baton): GOp {
  const visitor: StepVisitor<GOp> = {
    ...allocStepsG(run),
    ...runtimeStepsG(run, callbacks),
    ...domainStepsG(run),
    ...controlStepsG(run, body),
    ...threadProgramStepsG(run, baton, body),
  };
  function body(steps: readonly Step[]): GOp {
    const ops = steps.map((st) => visitStep(st, visitor));
    // One step is itself (a loop's bulk run finds its allocation steps by their closures).
    return ops.length === 1 ? ops[0] : () => sequenceG(ops);
  }
  const steps = run.sc.steps;
  const starts = run.opts.exportHarness === true ? segmentStarts(run.sc).starts : NO_STARTS;
  if (run.opts.checkInvariants !== true && starts.size === 0) return body(steps);
  const ops = steps.map((st): GOp => {
    const op = visitStep(st, visitor);
    const start = starts.get(st);
    if (start === undefined) return op;
    return function* () {
      const d = run.domain(start.domain, st.at);
      turnComes(run, start, d);
      for (const ended of start.joins) harnessJoin(run, d, ended, st.at);
      yield* run.drainG(d, st.at);
      yield* op();
    };
  });
  if (run.opts.checkInvariants !== true) return () => sequenceG(ops);
  return () => checkedG(run, steps, ops);
}

function* sequenceG(ops: readonly GOp[]): Resumable<void> {
  for (let i = 0; i < ops.length; i++) yield* ops[i]();
}

/** The top-level steps, memprof's invariants checked after each. */
function* checkedG(run: RunContext, steps: readonly Step[], ops: readonly GOp[]): Resumable<void> {
  for (let i = 0; i < ops.length; i++) {
    yield* ops[i]();
    run.checkInvariants(steps[i].at);
  }
}

/** Domain `d`'s turn comes at segment start `start` (see lib/scenario/engine/_domain_waits.ts):
 * the domain whose segment ended begins to wait, and `d`'s wait ends (none before the first
 * segment, the main domain's first turn). */
function turnComes(run: RunContext, start: SegmentStart, d: Domain): void {
  if (start.previous === undefined) return;
  const prev = run.names.domains.get(start.previous);
  if (prev !== undefined) waitBegins(run, prev);
  waitEnds(run, d);
}
