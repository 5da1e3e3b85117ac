/**
 * Steps compiled once, into closures that run as plain code as far as they can and return what
 * is left of them where a thread may block (`Op`, see lib/scenario/engine/_context.ts): the same
 * closures serve plain runs and, for scenarios with thread programs, resumable ones. Each family
 * of steps has its compilers in a file of its own (`_compile_alloc.ts`, `_compile_runtime.ts`,
 * `_compile_domains.ts`, `_compile_control.ts`, `_threads.ts`); here they are put together into
 * one visitor, and lists of steps compiled into one step.
 * @module
 */
import type { Domain } from "../../runtime/mod.ts";
import type { Step } from "../spec.ts";
import { type SegmentStart, segmentStarts, type StepVisitor, visitStep } from "../walk.ts";
import type { Op, RunContext } from "./_context.ts";
import type { Callbacks } from "./_callbacks.ts";
import { allocSteps } from "./_compile_alloc.ts";
import { controlSteps } from "./_compile_control.ts";
import { domainSteps, harnessJoin } from "./_compile_domains.ts";
import { runtimeSteps } from "./_compile_runtime.ts";
import { type Baton, threadProgramSteps } from "./_threads.ts";
import { firstOf, sequence, thenG } from "./_step.ts";
import { waitBegins, waitEnds } from "./_domain_waits.ts";

const NO_STARTS: ReadonlyMap<Step, SegmentStart> = new Map();

/** Compiles the top-level steps of `run`; the programs of its threads go to `baton` (a run
 * with thread programs, resumable; without a baton, a thread program fails to compile). */
export function compile(run: RunContext, callbacks: Callbacks, baton: Baton | undefined): Op {
  const visitor: StepVisitor<Op> = {
    ...allocSteps(run),
    ...runtimeSteps(run, callbacks),
    ...domainSteps(run),
    ...controlSteps(run, body),
    ...threadProgramSteps(run, baton, body),
  };
  function body(steps: readonly Step[]): Op {
    // One step is itself (a loop's bulk run finds its allocation steps by their closures).
    return sequence(steps.map((st) => visitStep(st, visitor)));
  }
  const steps = run.sc.steps;
  const starts = run.opts.exportHarness === true ? segmentStarts(run.sc).starts : NO_STARTS;
  if (run.opts.checkInvariants !== true && starts.size === 0) return body(steps);
  // With the export's harness, a domain resuming drains its pending actions first; memprof's
  // invariants are checked after each top-level step when asked.
  const ops = steps.map((st): Op => {
    const op = visitStep(st, visitor);
    const start = starts.get(st);
    if (start === undefined) return op;
    return () => {
      const d = run.domain(start.domain, st.at);
      turnComes(run, start, d);
      for (const ended of start.joins) harnessJoin(run, d, ended, st.at);
      const rest = firstOf(run.drainG(d, st.at));
      return rest === null ? op() : thenG(rest, op);
    };
  });
  if (run.opts.checkInvariants !== true) return sequence(ops);
  return sequence(ops.map((op, i) => {
    const check = () => run.checkInvariants(steps[i].at);
    return () => {
      const rest = op();
      if (rest !== null) return thenG(rest, check);
      check();
      return null;
    };
  }));
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
