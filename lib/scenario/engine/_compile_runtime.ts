/**
 * Steps calling into the runtime: collections (`Gc.*`), poll points, releases of kept blocks,
 * `Gc.Memprof` start/stop/discard, and runtime_events (start, pause, resume, user events).
 * @module
 */
import type { Domain } from "../../runtime/mod.ts";
import { type Resumable, runToEnd } from "../../memprof/mod.ts";
import { bytesType, Type, type UserEvent } from "../../runtime_events/mod.ts";
import type { GcKind, UserEventSpec } from "../spec.ts";
import type { StepOf } from "../walk.ts";
import type { Rest, RunContext } from "./_context.ts";
import type { Callbacks } from "./_callbacks.ts";
import { domainOp, type DomainWork, firstOf, type Steps, tickedOp } from "./_step.ts";

/** The step kinds compiled here. */
export type RuntimeKind =
  | "gc"
  | "poll"
  | "release"
  | "memprofStart"
  | "memprofStop"
  | "memprofDiscard"
  | "eventsStart"
  | "eventsPause"
  | "eventsResume"
  | "userEvent";

/** The compilers of steps calling into the runtime. */
export function runtimeSteps(run: RunContext, callbacks: Callbacks): Steps<RuntimeKind> {
  return {
    gc: (st) => domainOp(run, st, (d) => firstOf(runGcG(d, st.what))),
    poll: (st) => domainOp(run, st, (d) => d.pollFirst()),
    // The blocks of lifetime `st.name` go, then the poll of the exported program's release
    // loop (its back-edge), under the step's guard.
    release: (st) =>
      tickedOp(run, st.at, () => {
        run.lifetimes.release(st.name);
        return run.releasePoll(st.at);
      }),
    memprofStart: (st) => domainOp(run, st, memprofStartWork(run, callbacks, st)),
    memprofStop: (st) => domainOp(run, st, (d) => firstOf(memprofStopG(run, d))),
    memprofDiscard: (st) => domainOp(run, st, memprofDiscardWork(run, st)),
    eventsStart: (st) => tickedOp(run, st.at, eventsWork(run, st)),
    eventsPause: (st) => tickedOp(run, st.at, eventsWork(run, st)),
    eventsResume: (st) => tickedOp(run, st.at, eventsWork(run, st)),
    userEvent: (st) => domainOp(run, st, userEventWork(run, st)),
  };
}

function memprofStartWork(
  run: RunContext,
  callbacks: Callbacks,
  st: StepOf<"memprofStart">,
): DomainWork {
  return (d) => {
    callbacks.startProfile(d, st.profile, "");
    run.lifecycle(`Gc.Memprof.start ${[...run.names.profiles.keys()].at(-1)}`);
  };
}

function* memprofStopG(run: RunContext, d: Domain): Resumable<void> {
  yield* d.memprofStopG();
  run.lifecycle("Gc.Memprof.stop");
}

function memprofDiscardWork(run: RunContext, st: StepOf<"memprofDiscard">): DomainWork {
  return (d) => {
    const p = run.names.profiles.get(st.profile)?.profile;
    if (p === undefined) run.fail(st.at, `profile "${st.profile}" was never started`);
    d.memprofDiscard(p);
    run.lifecycle(`Gc.Memprof.discard ${st.profile}`);
  };
}

/** `Runtime_events.start`, `pause` or `resume`: C primitives. */
function eventsWork(
  run: RunContext,
  st: StepOf<"eventsStart" | "eventsPause" | "eventsResume">,
): () => Rest {
  const kind = st.kind;
  return () =>
    run.guard(st.at, () => {
      if (kind === "eventsStart") run.ring.start();
      else if (kind === "eventsPause") run.ring.pause();
      else run.ring.resume();
      run.cur.returnFromC();
    });
}

function userEventWork(run: RunContext, st: StepOf<"userEvent">): DomainWork {
  return (d) => {
    // Runtime_events.User.write (otherlibs/runtime_events/runtime_events.ml) calls the C
    // primitive `user_write` only when the ring is active (started and not paused):
    // `runtime_events_are_active` is a [@@noalloc] external, called without `caml_c_call`, so
    // a write to an inactive ring never returns through RET_FROM_C_CALL.
    const active = run.ring.active;
    writeUserEvent(run, d, st.name, st.event);
    if (active) d.returnFromC();
  };
}

function writeUserEvent(run: RunContext, d: Domain, name: string, ev: UserEventSpec): void {
  let e = run.names.userEvents.get(name);
  if (e === undefined) {
    const type = ev.type === "unit"
      ? Type.unit
      : ev.type === "int"
      ? Type.int
      : ev.type === "span"
      ? Type.span
      : bytesType();
    e = run.ring.registerUserEvent(name, type as never) as UserEvent<unknown>;
    run.names.userEvents.set(name, e);
  }
  switch (ev.type) {
    case "unit":
      return run.ring.writeUser(d.id, e as UserEvent<void>);
    case "int":
      return run.ring.writeUser(d.id, e, ev.value);
    case "span":
      return run.ring.writeUser(d.id, e, ev.phase);
    case "custom":
      return run.ring.writeUser(d.id, e, Uint8Array.from(ev.bytes));
  }
}

/** The collection `what` on domain `d`, as the `Gc` module function of that name. */
export function runGc(d: Domain, what: GcKind): void {
  runToEnd(runGcG(d, what), `Gc.${what}`);
}

/** {@linkcode runGc}, resumable. */
function runGcG(d: Domain, what: GcKind): Resumable<void> {
  switch (what) {
    case "minor":
      return d.minorGcG();
    case "majorSlice":
      return d.majorSliceG();
    case "major":
      return d.majorGcG();
    case "fullMajor":
      return d.fullMajorG();
    case "compact":
      return d.compactG();
  }
}
