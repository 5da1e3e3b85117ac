/**
 * Domain steps (`Domain.spawn`, a domain's end, `Domain.join`) and the older form of systhreads
 * (`Thread.create` without a program, `switchTo`, `Thread.exit`), in both forms.
 * @module
 */
import type { Domain } from "../../runtime/mod.ts";
import type { Resumable } from "../../memprof/mod.ts";
import type { StepOf } from "../walk.ts";
import type { Op, RunContext } from "./_context.ts";
import {
  discardG,
  domainOp,
  domainOpG,
  type DomainWork,
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
    spawn: (st) => spawnOp(run, st),
    terminate: (st) => domainOp(run, st, terminateWork(run)),
    join: (st) => domainOp(run, st, joinWork(run, st)),
    threadCreate: (st) => tickedOp(run, st.at, threadCreateWork(run, st)),
    threadSwitch: (st) => domainOp(run, st, threadSwitchWork(run, st)),
    threadExit: (st) => domainOp(run, st, threadExitWork(run, st)),
  };
}

/** The resumable compilers of domain steps and of the older form of systhreads. */
export function domainStepsG(run: RunContext): ResumableSteps<DomainKind> {
  return {
    spawn: (st) => () => spawnG(run, st),
    terminate: (st) => domainOpG(run, st, terminateWork(run)),
    join: (st) => domainOpG(run, st, joinWork(run, st)),
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
  run.domains.set(st.child, child);
  run.nameThread(child.current, st.child, parent.current);
  run.lifecycle(`Domain.spawn ${st.child}@${child.id}`);
  // The new domain's first act (Domain.spawn's body, DLS.create_dls): `Array.make 8`.
  run.cur = child;
  child.current.callstack = run.frames.stackOf(child.current, []);
  return { parent, child };
}

function spawnOp(run: RunContext, st: StepOf<"spawn">): Op {
  return () => {
    run.tick(st.at);
    const { parent, child } = spawnBegin(run, st);
    run.guard(st.at, () => child.makeArray(8));
    run.cur = parent;
  };
}

function* spawnG(run: RunContext, st: StepOf<"spawn">): Resumable<void> {
  yield* run.tickG(st.at);
  const { parent, child } = spawnBegin(run, st);
  yield* run.guardG(st.at, () => discardG(child.makeArrayG(8)));
  run.cur = parent;
}

function terminateWork(run: RunContext): DomainWork {
  return (d) => {
    run.lifecycle("domain terminates");
    try {
      run.rt.terminateDomain(d);
    } finally {
      run.cur = run.rt.mainDomain;
    }
  };
}

function joinWork(run: RunContext, st: StepOf<"join">): DomainWork {
  return (d) => {
    const target = run.domain(st.target, st.at);
    run.lifecycle(`Domain.join ${st.target}@${target.id}`);
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
