/**
 * The code of steps: one writer per step kind ({@linkcode STEP_WRITERS}). A leaf step is counted
 * (its tick), then runs, with what a callback raises logged unless an attempt takes it; a
 * compound step's body is written inside its loop, handler, condition or frame function.
 * Kinds the export refuses (exportable.ts) have no writer.
 * @module
 */
import type { Step } from "../scenario/spec.ts";
import type { StepKind, StepOf } from "../scenario/walk.ts";
import type { Ctx } from "./_plan.ts";
import { type Emitter, gcCode } from "./_emit.ts";
import { allocCode, combinedCode, unmarshalCode } from "./_emit_alloc.ts";
import { extAllocCode } from "./_emit_external.ts";

/** The code of steps `steps` where `ctx` runs them. */
export function stepsCode(em: Emitter, steps: readonly Step[], ctx: Ctx): string {
  if (steps.length === 0) return "();";
  return steps.map((st) => stepCode(em, st, { ...ctx, at: st.at, owner: st })).join("\n  ");
}

function stepCode(em: Emitter, st: Step, ctx: Ctx): string {
  const outer = em.stepAt;
  em.stepAt = st.at;
  const write = (STEP_WRITERS as Partial<Record<StepKind, StepWriter<Step>>>)[st.kind];
  if (write === undefined) {
    throw new Error(`internal error: step ${st.at} (${st.kind}) passed checkExportable`);
  }
  const code = write(em, st, ctx);
  em.stepAt = outer;
  // The code of steps without a body, and the functions of frames, are what the program is made
  // of (a body's code is in its step's, or in its frame's function).
  if (!("body" in st)) em.grow(code.length, st.at);
  return code;
}

/** Writes the code of a step of one kind. */
type StepWriter<S extends Step> = (em: Emitter, st: S, ctx: Ctx) => string;

/** The step kinds the export writes. */
type WrittenKind = Exclude<
  StepKind,
  "threadCreate" | "threadSwitch" | "threadExit" | "blocking"
>;

/** A leaf step: counted, then its body, with exceptions logged unless an attempt takes them.
 * `pre` (a `let … in` drawing a size) runs before the handler is set up, so that every path
 * through an allocating loop body still reaches the allocation (see lib/scenario/polling.ts). */
function leaf(em: Emitter, body: string, ctx: Ctx, pre = ""): string {
  const guarded = guard(em, body, ctx.inAttempt);
  const t = tick(em, ctx);
  return pre === "" ? `${t} ${guarded};` : `${t} (${pre}${guarded});`;
}

/** The step's tick: its releases may poll, and an exception a callback raises there is the
 * step's, logged (then the step goes on) unless an attempt takes it, as the simulation has
 * it. The handler is in a function of its own, so that the step is one call, as before. */
function tick(em: Emitter, ctx: Ctx): string {
  return !em.plan.canRaise || ctx.inAttempt ? "tick ();" : "tick_g ();";
}

/** `body` with what a callback raises in it logged, unless an attempt takes it. */
export function guard(em: Emitter, body: string, inAttempt: boolean): string {
  if (!em.plan.canRaise || inAttempt) return `(${body})`;
  return `(try ${body} with e -> escaped e)`;
}

/** Index in `loops` of domain (or systhread) `ord`'s loop depth. */
function loopBase(ord: number): string {
  return `(${ord} * (max_depth + 1))`;
}

/** A step that only runs `code`. */
function simple<S extends Step>(code: (st: S) => string): StepWriter<S> {
  return (em, st, ctx) => leaf(em, code(st), ctx);
}

/** The writers, by step kind. */
const STEP_WRITERS: { readonly [K in WrittenKind]: StepWriter<StepOf<K>> } = {
  alloc: (em, st, ctx) => {
    const { pre, code } = allocCode(em, st, ctx);
    return leaf(em, code, ctx, pre);
  },
  allocCombined: (em, st, ctx) => leaf(em, combinedCode(em, st, ctx), ctx),
  unmarshal: (em, st, ctx) => leaf(em, unmarshalCode(em, st, ctx), ctx),
  extAlloc: (em, st, ctx) => leaf(em, extAllocCode(em, st, ctx), ctx),
  gc: simple<StepOf<"gc">>((st) => gcCode(st.what)),
  poll: simple(() => "Sys.poll_actions ()"),
  spawn: (em, st, ctx) => {
    // The spawning domain's minor heap is emptied first, so that no block the program
    // keeps is young while two domains share a minor collection: OCaml 5.3 shares the
    // remembered sets' promotion among them, and memprof may test a kept block before
    // another domain promoted it (see docs/differential.md). The simulation does the same.
    const child = em.plan.domainOrd.get(st.child)!;
    return `${tick(em, ctx)} ${guard(em, "Gc.minor ()", ctx.inAttempt)}; resume_dom (); ${
      guard(
        em,
        `doms.(${child}) <- Obj.repr (Domain.spawn run_${child}); wait_started ${child}${
          em.plan.countedWaits ? ` ${ctx.ord}` : ""
        }`,
        ctx.inAttempt,
      )
    };`;
  },
  // (issue 22, polls helper) The domain's function returns into Domain.spawn's body, whose
  // do_at_exit polls in its prologue: callbacks still pending run there, and one raising would
  // end the domain with an exception that Domain.join re-raises for ever (join_dom). The domain
  // drains them first, each raise logged, as the simulation does.
  terminate: (em, _st, ctx) =>
    `${
      tick(em, ctx)
    } resume_dom (); (* the domain's function returns: Domain.join by the next domain *)`,
  // The main domain's are created at initialisation (so that the tick thread is stopped before
  // the scenario starts) and wait there for their first turn; a spawned domain's are created
  // here, by their domain (th_create_spawned), and wait for their first turn likewise.
  threadSpawn: (em, st, ctx) =>
    st.domain === "main"
      ? `${tick(em, ctx)} th_spawned.(${em.threadOf(st.thread)}) <- 1; ` +
        "(* Thread.create: the thread was created before the run; it waits *)"
      : `${tick(em, ctx)} ` +
        guard(
          em,
          `th_create_spawned ${em.threadOf(st.thread)} run_thread_${em.threadOf(st.thread)}`,
          ctx.inAttempt,
        ) + ";",
  yieldTo: (em, st, ctx) => `${tick(em, ctx)} th_pass ${ctx.thread} ${em.threadOf(st.thread)};`,
  threadJoin: (em, st, ctx) => `${tick(em, ctx)} th_join ${ctx.thread} ${em.threadOf(st.thread)};`,
  threadYield: simple(() => "Thread.yield ()"),
  memprofStart: (em, st, ctx) => leaf(em, `start_fns.(${em.profileSlot(st.profile.name)}) ()`, ctx),
  memprofStop: simple(() => "Gc.Memprof.stop ()"),
  memprofDiscard: (em, st, ctx) =>
    leaf(em, `Gc.Memprof.discard (Obj.obj prof.(${em.profileSlot(st.profile)}))`, ctx),
  call: (em, st, ctx) => `${em.frameFunction(st.frame, stepsCode(em, st.body, ctx))} ();`,
  repeat: (em, st, ctx) => {
    const k = ctx.depth + 1;
    em.maxDepth = Math.max(em.maxDepth, k);
    const lb = loopBase(ctx.ord);
    const i = `i${k}`;
    const body = stepsCode(em, st.body, { ...ctx, depth: k, bound: ctx.bound * st.count });
    const loop =
      `loops.(${lb}) <- ${k};\n  for ${i} = 1 to ${st.count} do\n  loops.(${lb} + ${k}) <- ${i};\n  ${body}\n  done;\n  loops.(${lb}) <- ${ctx.depth}`;
    // A callback raising at the loop's back-edge poll leaves the loop: outside attempts the
    // exception is logged there, as the simulation does, and the next step runs.
    if (!em.plan.canRaise || ctx.inAttempt) return `${loop};`;
    return `(try\n  ${loop}\n  with e -> loops.(${lb}) <- ${ctx.depth}; escaped e);`;
  },
  attempt: (em, st, ctx) => {
    const body = stepsCode(em, st.body, { ...ctx, inAttempt: true });
    if (!em.plan.canRaise) return `begin\n  ${body}\n  end;`;
    return `(try\n  ${body}\n  ()\n  with e -> caught_at ${loopBase(ctx.ord)} ${ctx.depth} e);`;
  },
  when: (em, st, ctx) => {
    const body = stepsCode(em, st.body, ctx);
    return `if loops.(${loopBase(ctx.ord)} + ${st.loop}) mod ${st.every} = ${st.offset} ` +
      `then begin\n  ${body}\n  end;`;
  },
  join: (em, st, ctx) => {
    const target = em.plan.domainOrd.get(st.target)!;
    return `${tick(em, ctx)} release_domain ${target}; ` +
      `join_dom (Obj.obj doms.(${target}) : unit Domain.t); resume_dom ();`;
  },
  userEvent: (em, st, ctx) => {
    em.usesEvents = true;
    const ev = em.userEvent(st.name, st.event.type);
    switch (st.event.type) {
      case "unit":
        return leaf(em, `Runtime_events.User.write ${ev} ()`, ctx);
      case "int":
        return leaf(em, `Runtime_events.User.write ${ev} (${st.event.value})`, ctx);
      case "span":
        return leaf(
          em,
          `Runtime_events.User.write ${ev} Runtime_events.Type.${
            st.event.phase === "begin" ? "Begin" : "End"
          }`,
          ctx,
        );
      case "custom":
        throw new Error(`internal error: step ${st.at} (custom user event) passed checkExportable`);
    }
  },
  release: (em, st, ctx) => {
    em.releaseOf(st.name);
    const i = [...em.releaseSites.keys()].indexOf(st.name);
    // Guarded as the simulation's release: its poll may raise.
    return leaf(em, `release_${i} ()`, ctx);
  },
  eventsStart: (em, _st, ctx) => {
    em.usesEvents = true;
    return leaf(em, "Runtime_events.start ()", ctx);
  },
  eventsPause: (em, _st, ctx) => {
    em.usesEvents = true;
    return leaf(em, "Runtime_events.pause ()", ctx);
  },
  eventsResume: (em, _st, ctx) => {
    em.usesEvents = true;
    return leaf(em, "Runtime_events.resume ()", ctx);
  },
};
