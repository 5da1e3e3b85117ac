/**
 * Domain steps (`Domain.spawn`, a domain's end, `Domain.join`) and the older form of systhreads
 * (`Thread.create` without a program, `switchTo`, `Thread.exit`), in both forms.
 * @module
 */
import type { Domain } from "../../runtime/mod.ts";
import type { Resumable } from "../../memprof/mod.ts";
import type { StepOf } from "../walk.ts";
import type { RunContext } from "./_context.ts";
import {
  discardG,
  domainOp,
  domainOpG,
  domainOpY,
  type DomainWork,
  plainOf,
  type PlainSteps,
  type ResumableSteps,
  tickedOp,
  tickedOpG,
} from "./_step.ts";

/** The step kinds compiled here. */
export type DomainKind =
  | "spawn"
  | "terminate"
  | "join"
  | "threadCreate"
  | "threadSwitch"
  | "threadExit";

/** The plain compilers of domain steps and of the older form of systhreads. */
export function domainSteps(run: RunContext): PlainSteps<DomainKind> {
  return {
    spawn: (st) => plainOf(() => spawnG(run, st), st.at),
    terminate: (st) => plainOf(domainOpY(run, st, terminateWorkG(run, st)), st.at),
    join: (st) => {
      const work = joinWork(run, st);
      if (run.opts.exportHarness !== true) return domainOp(run, st, work);
      return domainOp(run, st, (d) => {
        work(d);
        run.drain(d, st.at);
      });
    },
    threadCreate: (st) => tickedOp(run, st.at, threadCreateWork(run, st)),
    threadSwitch: (st) => domainOp(run, st, threadSwitchWork(run, st)),
    threadExit: (st) => domainOp(run, st, threadExitWork(run, st)),
  };
}

/** The resumable compilers of domain steps and of the older form of systhreads. */
export function domainStepsG(run: RunContext): ResumableSteps<DomainKind> {
  return {
    spawn: (st) => () => spawnG(run, st),
    terminate: (st) => domainOpY(run, st, terminateWorkG(run, st)),
    join: (st) => {
      const work = joinWork(run, st);
      if (run.opts.exportHarness !== true) return domainOpG(run, st, work);
      return domainOpY(run, st, function* (d) {
        work(d);
        yield* run.drainG(d, st.at);
      });
    },
    threadCreate: (st) => tickedOpG(run, st.at, threadCreateWork(run, st)),
    threadSwitch: (st) => domainOpG(run, st, threadSwitchWork(run, st)),
    threadExit: (st) => domainOpG(run, st, threadExitWork(run, st)),
  };
}

/** `Domain.spawn` up to the new domain's first act: returns the parent and the child, which is
 * current, its callstack set. */
function spawnBegin(run: RunContext, st: StepOf<"spawn">): { parent: Domain; child: Domain } {
  const parent = run.domain(st.domain, st.at);
  run.cur = parent;
  const child = run.rt.spawnDomain(parent);
  run.names.domains.set(st.child, child);
  run.nameThread(child.current, st.child, parent.current);
  run.lifecycle(`Domain.spawn ${st.child}@${child.id}`);
  // The new domain's first act (Domain.spawn's body, DLS.create_dls): `Array.make 8`.
  run.cur = child;
  child.current.callstack = run.frames.stackOf(child.current, []);
  return { parent, child };
}

/** With the export's harness (`RunOptions.exportHarness`): the exported program's
 * `Gc.minor ()` before `Domain.spawn`, then the parent drains what callbacks it made ready. */
function* emptyBeforeSpawnG(run: RunContext, st: StepOf<"spawn">): Resumable<void> {
  if (run.opts.exportHarness !== true) return;
  const parent = run.domain(st.domain, st.at);
  run.cur = parent;
  yield* run.guardG(st.at, () => parent.minorGcG());
  yield* run.drainG(parent, st.at);
}

/** `Domain.spawn`. */
function* spawnG(run: RunContext, st: StepOf<"spawn">): Resumable<void> {
  yield* run.tickG(st.at);
  yield* emptyBeforeSpawnG(run, st);
  const { parent, child } = spawnBegin(run, st);
  yield* run.guardG(st.at, () => discardG(child.makeArrayG(8)));
  run.cur = parent;
}

/**
 * A domain's end: its function returns into `Domain.spawn`'s body, which calls `do_at_exit`
 * (stdlib/domain.ml), whose prologue polls (it tail-calls the at-exit closure, so ocamlopt's
 * polling analysis gives it a poll): callbacks still pending on the domain (of a C allocation,
 * a collection) run there, on the domain. What one raises would end the domain with that
 * exception, which `Domain.join` raises again: the exported program drains them at its
 * `terminate` step (`resume_dom`), each raise logged as the step's, and so does this.
 */
function terminateWorkG(
  run: RunContext,
  st: StepOf<"terminate">,
): (d: Domain) => Resumable<void> {
  return function* (d) {
    try {
      yield* run.drainG(d, st.at);
    } finally {
      endDomain(run, d);
    }
  };
}

function endDomain(run: RunContext, d: Domain): void {
  run.lifecycle("domain terminates");
  try {
    run.rt.terminateDomain(d);
  } finally {
    run.cur = run.rt.mainDomain;
  }
}

/** `Domain.join` of a domain that has not ended: it ends (its collection runs); the joiner then
 * drains what callbacks that made ready on it (the program's `join_g`, retried until it returns,
 * then `resume_g`: Domain.join's own poll runs them, and a raise aborts the join). */
function joinWork(run: RunContext, st: StepOf<"join">): DomainWork {
  return (d) => {
    const target = run.domain(st.target, st.at);
    run.lifecycle(`Domain.join ${st.target}@${target.id}`);
    // (issue 22, polls) Released, the target's function returns: do_at_exit's poll, drained
    // as at a `terminate` step (terminateWork).
    run.drain(target, st.at);
    run.cur = target;
    try {
      run.rt.terminateDomain(target);
    } finally {
      run.cur = d;
    }
  };
}

/** `Thread.create` of the older form: the thread starts with its creator's calls. */
function threadCreateWork(run: RunContext, st: StepOf<"threadCreate">): () => void {
  return () => {
    const d = run.domain(st.domain, st.at);
    const t = d.createThread(d.current.callstack);
    run.nameThread(t, st.thread, d.current);
    run.lifecycle(`Thread.create ${st.thread}`);
  };
}

function threadSwitchWork(run: RunContext, st: StepOf<"threadSwitch">): DomainWork {
  return (d) => d.switchTo(run.liveThread(st.thread, st.at));
}

function threadExitWork(run: RunContext, st: StepOf<"threadExit">): DomainWork {
  return () => run.liveThread(st.thread, st.at).exit();
}
