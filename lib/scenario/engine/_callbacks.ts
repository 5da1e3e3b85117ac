/**
 * The trackers a run gives memprof: each callback counts itself, writes its log line and its
 * `onEvent` record, runs the scenario's actions due at this call (`act.raise`, `act.stop`, …),
 * and returns what the scenario says, tracing the block through the tracer. In resumable runs a
 * callback with `act.yieldTo` blocks its thread inside the callback (memprof's `Blocking`).
 *
 * An action the runtime refuses, or that cannot run, fails the run naming the action's path in
 * the scenario (`step 3, callback allocMinor, act.start: …`); an OCaml exception it raises goes
 * where OCaml sends it.
 * @module
 */
import type { Domain } from "../../runtime/mod.ts";
import {
  type AllocationInfo,
  Blocking,
  OCamlException,
  OCamlFailure,
  OCamlInvalidArgument,
  type Resumable,
  runToEnd,
  ThreadExit,
  type Tracker,
} from "../../memprof/mod.ts";
import type { CallbackKind } from "../result.ts";
import { ScenarioError } from "../errors.ts";
import type { CallbackAction, CallbackSpec, ProfileSpec, TrackerSpec, Trigger } from "../spec.ts";
import { ActionError } from "./_action_error.ts";
import type { ProfileState, RunContext, Tracked } from "./_context.ts";
import type { Baton } from "./_threads.ts";
import type { Keeper } from "../lifetimes.ts";
import { runGc } from "./_compile_runtime.ts";
import { profileSlots } from "../walk.ts";

const LOG_NAMES: Record<CallbackKind, string> = {
  allocMinor: "alloc_minor",
  allocMajor: "alloc_major",
  promote: "promote",
  deallocMinor: "dealloc_minor",
  deallocMajor: "dealloc_major",
};

/** `Gc.Memprof.allocation_source` names, by number. */
const SOURCE_NAMES = ["normal", "marshal", "custom"];

type Outcome = "some" | "none" | "unit" | { raise: string };

/** A callback's start: its number among its kind's calls in its profile, its log line's head,
 * the reporter of its record, and the serial of the allocation it is about. */
interface CallbackStart {
  readonly n: number;
  readonly head: string;
  readonly report: (outcome: Outcome) => void;
  readonly serial: number;
}

/** One callback of a profile: its kind, behaviour and path in the scenario. */
interface CallbackCtx {
  readonly p: ProfileState;
  readonly kind: CallbackKind;
  readonly spec: CallbackSpec;
  /** `callback allocMinor`, after the profile's own path. */
  readonly within: string;
}

/** The callbacks of a run's profiles. */
export class Callbacks {
  readonly #run: RunContext;
  /** The baton of a resumable run (`act.yieldTo`), undefined in plain runs. */
  readonly #baton: Baton | undefined;
  /** The exported program's slot of each named profile. */
  readonly #slots: ReadonlyMap<string, number>;
  /** The keeper of each `act.alloc` action, made at its first run: the exported program has
   * one keep site per action (its ring's slots, its list's head, its cycle's turn), which every
   * run of the action shares. */
  readonly #keepers = new Map<CallbackAction, Keeper | undefined>();

  /** The callbacks of `run`; `baton` passes the baton in resumable runs. */
  constructor(run: RunContext, baton: Baton | undefined) {
    this.#run = run;
    this.#baton = baton;
    this.#slots = profileSlots(run.sc);
  }

  /** `Gc.Memprof.start` on domain `d` of profile `spec`, whose path in the scenario is `within`
   * (empty for a step, the `act.start` action for a profile a callback starts). */
  startProfile(d: Domain, spec: ProfileSpec, within: string): void {
    const run = this.#run;
    const name = spec.name ?? `p${run.names.profiles.size + 1}`;
    const rate = run.opts.samplingRate ?? spec.samplingRate;
    const state: ProfileState = {
      name,
      spec,
      within,
      profile: undefined,
      calls: { allocMinor: 0, allocMajor: 0, promote: 0, deallocMinor: 0, deallocMajor: 0 },
      tracked: 0,
      ended: 0,
      live: new Set(),
    };
    if (run.names.profiles.size === 0) run.counts.minorsAtFirstStart = run.rt.minorCollections;
    run.names.profiles.set(name, state);
    // The exported program keeps the profile in its slot of the harness's `prof` array.
    const slot = spec.name === undefined ? undefined : this.#slots.get(spec.name);
    state.profile = d.memprofStart(
      {
        samplingRate: rate,
        callstackSize: spec.callstackSize,
        tracker: this.#tracker(state, spec.tracker),
      },
      slot === undefined ? undefined : { slot, slots: this.#slots.size },
    );
  }

  #tracker(p: ProfileState, t: TrackerSpec): Tracker<Tracked, Tracked> {
    const callback = (kind: CallbackKind): CallbackCtx => ({
      p,
      kind,
      spec: t[kind] ?? { result: kind.startsWith("dealloc") ? "none" : "track", actions: [] },
      within: pathJoin(p.within, `callback ${kind}`),
    });
    const am = callback("allocMinor"), aj = callback("allocMajor"), pr = callback("promote");
    const dm = callback("deallocMinor"), dj = callback("deallocMajor");
    // A callback that may pass the baton (act.yieldTo, in a resumable run) returns memprof's
    // Blocking: its body, which memprof runs; any other runs its body to its end at once, and
    // one without actions (nearly all) makes no generator: its begin, then its end.
    const blocks = (c: CallbackCtx) =>
      this.#baton !== undefined && c.spec.actions.some(({ action }) => passesBaton(action));
    const form = <R>(c: CallbackCtx, r: () => Resumable<R>): R =>
      blocks(c) ? new Blocking(r()) as unknown as R : runToEnd(r(), `callback ${c.kind}`);
    const onAlloc = (c: CallbackCtx): (info: AllocationInfo) => Tracked | undefined =>
      c.spec.actions.length === 0
        ? (info) => this.#allocEnd(c, info, this.#allocBegin(c, info))
        : (info) => form(c, () => this.#onAllocG(c, info));
    const onDealloc = (c: CallbackCtx): (v: Tracked) => void =>
      c.spec.actions.length === 0
        ? (v) => this.#deallocEnd(v, this.#deallocBegin(c, v))
        : (v) => form(c, () => this.#onDeallocG(c, v));
    return {
      allocMinor: onAlloc(am),
      allocMajor: onAlloc(aj),
      promote: pr.spec.actions.length === 0
        ? (v) => this.#promoteEnd(pr, v, this.#promoteBegin(pr, v))
        : (v) => form(pr, () => this.#onPromoteG(pr, v)),
      deallocMinor: onDealloc(dm),
      deallocMajor: onDealloc(dj),
    };
  }

  // ---- the callbacks: begin, the actions, end ------------------------------------------------

  *#onAllocG(c: CallbackCtx, info: AllocationInfo): Resumable<Tracked | undefined> {
    const start = this.#allocBegin(c, info);
    if (c.spec.actions.length > 0) yield* this.#actionsG(c, start);
    return this.#allocEnd(c, info, start);
  }

  *#onPromoteG(c: CallbackCtx, v: Tracked): Resumable<Tracked | undefined> {
    const start = this.#promoteBegin(c, v);
    if (c.spec.actions.length > 0) yield* this.#actionsG(c, start);
    return this.#promoteEnd(c, v, start);
  }

  *#onDeallocG(c: CallbackCtx, v: Tracked): Resumable<void> {
    const start = this.#deallocBegin(c, v);
    if (c.spec.actions.length > 0) yield* this.#actionsG(c, start);
    this.#deallocEnd(v, start);
  }

  /** The join race's `callbacksDuring`: the ending domain's last collection comes at the start
   * of the joiner's first callback of the batch (RunContext.joinWindow). */
  #joinBatch(): void {
    const jw = this.#run.joinWindow;
    if (jw === undefined || jw.at !== "batch" || jw.during === undefined) return;
    if (this.#run.cur !== jw.joiner) return;
    const during = jw.during;
    jw.during = undefined;
    during();
  }

  /** An allocation callback, before its actions: counts, log head, record. */
  #allocBegin({ p, kind }: CallbackCtx, info: AllocationInfo): CallbackStart {
    const run = this.#run;
    this.#joinBatch();
    const w = run.spawnWindow;
    if (w !== undefined && run.cur === w.child) {
      if (w.seen === w.before && w.parentTurn !== undefined) {
        const turn = w.parentTurn;
        w.parentTurn = undefined;
        turn();
      }
      w.seen++;
    }
    const n = ++p.calls[kind];
    run.counts.callbacks[kind]++;
    run.counts.samples += info.nSamples;
    const serial = ++run.counts.serial;
    const src = SOURCE_NAMES[info.source];
    const head = `${run.where()} ${p.name} ${LOG_NAMES[kind]} #${serial} size=${info.size} ` +
      `n=${info.nSamples} src=${src} stack=[${callerFirst(info.callstack)}]`;
    run.log.fixture(
      `${run.iter} ${
        kind === "allocMinor" ? "minor" : "major"
      } size=${info.size} n=${info.nSamples}`,
      `${run.iter} ${LOG_NAMES[kind]} id=${run.iter}`,
    );
    const report = run.reporter({
      kind: kind as "allocMinor" | "allocMajor",
      domain: run.cur.id,
      loops: run.loopsOf(run.cur).slice(),
      size: info.size,
      nSamples: info.nSamples,
      source: src,
      callstack: info.callstack,
      id: serial,
      outcome: "none",
    });
    return { n, head, report, serial };
  }

  /** An allocation callback, after its actions: what it returns. */
  #allocEnd(
    { p, kind, spec }: CallbackCtx,
    info: AllocationInfo,
    { head, report, serial }: CallbackStart,
  ): Tracked | undefined {
    const run = this.#run;
    if (spec.result === "none") {
      run.log.line(`${head} -> None`);
      report("none");
      return undefined;
    }
    const obj = run.tracer.alloc(run.cur.id, info, kind === "allocMajor");
    if (obj === undefined && (run.tracer.busy || run.tracer.failed)) {
      // memtrace's tracker under its lock, or once it failed (`Is_stopped`): not tracked.
      run.log.line(`${head} -> None (tracer ${run.tracer.failed ? "failed" : "busy"})`);
      report("none");
      return undefined;
    }
    report("some");
    const v: Tracked = { obj, domain: run.cur.id, iter: run.iter, serial, profile: p };
    const jw = run.joinWindow;
    if (
      jw !== undefined && jw.at === "allocEnd" && jw.during !== undefined && run.cur === jw.joiner
    ) {
      // The ending domain's last collection comes while this callback runs (the join race's
      // closureDuring); the callback's `Some` comes after it.
      const during = jw.during;
      jw.during = undefined;
      during();
    }
    run.cur.alloc(1); // the `Some v` the callback returns
    p.tracked++;
    p.live.add(v);
    run.log.line(`${head} -> Some #${serial}${obj === undefined ? "" : ` id=${obj}`}`);
    return v;
  }

  #promoteBegin({ p }: CallbackCtx, v: Tracked): CallbackStart {
    const run = this.#run;
    this.#joinBatch();
    const n = ++p.calls.promote;
    run.counts.callbacks.promote++;
    const head = `${run.where()} ${p.name} promote #${v.serial}`;
    run.log.fixture(undefined, `${run.iter} promote id=${v.iter}`);
    const report = run.reporter({
      kind: "promote",
      domain: run.cur.id,
      loops: run.loopsOf(run.cur).slice(),
      id: v.serial,
      outcome: "none",
    });
    return { n, head, report, serial: v.serial };
  }

  #promoteEnd({ spec }: CallbackCtx, v: Tracked, { head, report }: CallbackStart) {
    const run = this.#run;
    if (v.obj !== undefined) run.tracer.promote(v.domain, v.obj);
    // memtrace's promote once the tracer failed (`Is_stopped`): the block's tracking ends.
    const stopped = spec.result !== "none" && run.tracer.failed;
    if (spec.result === "none" || stopped) {
      v.profile.ended++;
      v.profile.live.delete(v);
      run.log.line(`${head} -> None${stopped ? " (tracer failed)" : ""}`);
      report("none");
      return undefined;
    }
    report("some");
    run.cur.alloc(1); // `Some v`
    run.log.line(`${head} -> Some #${v.serial}`);
    return v;
  }

  #deallocBegin({ p, kind }: CallbackCtx, v: Tracked): CallbackStart {
    const run = this.#run;
    this.#joinBatch();
    const n = ++p.calls[kind];
    run.counts.callbacks[kind]++;
    const head = `${run.where()} ${p.name} ${LOG_NAMES[kind]} #${v.serial}`;
    run.log.fixture(undefined, `${run.iter} ${LOG_NAMES[kind]} id=${v.iter}`);
    // The block's tracking ends here whatever the callback does.
    v.profile.ended++;
    v.profile.live.delete(v);
    // Like the other callbacks: the scenario's actions first, then the tracer's write.
    const report = run.reporter({
      kind: kind as "deallocMinor" | "deallocMajor",
      domain: run.cur.id,
      loops: run.loopsOf(run.cur).slice(),
      id: v.serial,
      outcome: "unit",
    });
    return { n, head, report, serial: v.serial };
  }

  #deallocEnd(v: Tracked, { head, report }: CallbackStart): void {
    const run = this.#run;
    report("unit");
    if (v.obj !== undefined) run.tracer.collect(v.domain, v.obj);
    run.log.line(head);
  }

  // ---- actions -------------------------------------------------------------------------------

  /** Runs the actions of callback `c` due at this call (`act.yieldTo` blocks the callback's
   * thread, in a resumable run); an exception they raise is reported with the callback's record
   * (which receives the outcome) before it propagates. */
  *#actionsG(c: CallbackCtx, { n, head, report }: CallbackStart): Resumable<void> {
    const baton = this.#baton;
    try {
      for (const { when, action } of c.spec.actions) {
        if (!fires(when, n)) continue;
        try {
          if (baton !== undefined && action.kind === "yieldTo") {
            yield* baton.yieldInCallbackG(action.thread, head);
          } else if (baton !== undefined && action.kind === "yieldToNext") {
            yield* baton.yieldToNextInCallbackG(action.threads, head);
          } else this.#doAction(c, action, head);
        } catch (e) {
          throw actionFailure(e, c, action);
        }
      }
    } catch (e) {
      reportRaise(e, report);
      throw e;
    }
  }

  #doAction(c: CallbackCtx, a: CallbackAction, head: string): void {
    const run = this.#run;
    const d = run.cur;
    switch (a.kind) {
      case "raise":
        run.log.line(`${head} -> raise ${a.exn}`);
        throw new OCamlException(a.exn, a.exn);
      case "stop":
        run.log.line(`${head} : Gc.Memprof.stop`);
        d.memprofStop();
        return;
      case "start":
        run.log.line(`${head} : Gc.Memprof.start ${a.profile.name ?? ""}`.trimEnd());
        this.startProfile(d, a.profile, pathJoin(c.within, "act.start"));
        return;
      case "discard":
        run.log.line(`${head} : Gc.Memprof.discard ${c.p.name}`);
        d.memprofDiscard(c.p.profile!);
        return;
      case "alloc": {
        run.log.line(`${head} : alloc ${a.words}`);
        const addr = d.alloc(a.words);
        let keep = this.#keepers.get(a);
        if (keep === undefined && !this.#keepers.has(a)) {
          keep = run.lifetimes.keeper(a.lifetime, a);
          this.#keepers.set(a, keep);
        }
        keep?.(addr, a.words);
        return;
      }
      case "gc":
        run.log.line(`${head} : Gc.${a.what}`);
        return runGc(d, a.what);
      case "switchThread": {
        const t = run.names.threads.get(a.thread);
        if (t === undefined || !t.alive || t.domain !== d) {
          throw new ActionError(`cannot switch to thread "${a.thread}"`);
        }
        run.log.line(`${head} : switch to ${a.thread}`);
        d.switchTo(t);
        return;
      }
      case "exitThread":
        run.log.line(`${head} -> Thread.exit`);
        throw new ThreadExit();
      case "yieldTo":
      case "yieldToNext":
        // Resumable runs run them (#actionsG, with the baton); the plain ones never have them.
        throw new ActionError(`act.${a.kind} in a plain run`);
    }
  }
}

/** What propagates when action `a` of callback `c` threw `e`: an OCaml exception it raised
 * goes on as it is; anything else (a call the runtime refused, an action that cannot run)
 * becomes an {@linkcode ActionError} naming the action, unless it names one already. */
function actionFailure(e: unknown, c: CallbackCtx, a: CallbackAction): unknown {
  if (e instanceof ActionError) {
    return e.within === "" ? new ActionError(e.problem, actionPath(c, a)) : e;
  }
  if (e instanceof ScenarioError) return e;
  if (
    e instanceof OCamlException && !(e instanceof OCamlFailure) &&
    !(e instanceof OCamlInvalidArgument)
  ) return e;
  return new ActionError(e instanceof Error ? e.message : String(e), actionPath(c, a));
}

/** The path of action `a` of callback `c` in the scenario, as the validator names it. */
function actionPath(c: CallbackCtx, a: CallbackAction): string {
  return pathJoin(c.within, `act.${a.kind}`);
}

/** Reports to a callback's record the OCaml exception `e` it raises. */
function reportRaise(e: unknown, report: (outcome: { raise: string }) => void): void {
  if (e instanceof OCamlException) report({ raise: e.ocamlName });
}

/** `within` and `part`, comma-separated (the form of `ScenarioError.within`). */
function pathJoin(within: string, part: string): string {
  return within === "" ? part : `${within}, ${part}`;
}

function fires(t: Trigger, n: number): boolean {
  switch (t.kind) {
    case "always":
      return true;
    case "nth":
      return n === t.n;
    case "every":
      return n >= t.offset && (n - t.offset) % t.period === 0;
  }
}

/** A callstack as the trace shows it: the outermost frame first. */
function callerFirst(frames: readonly string[]): string {
  let out = "";
  for (let k = frames.length - 1; k >= 0; k--) {
    out += k === frames.length - 1 ? frames[k] : " " + frames[k];
  }
  return out;
}

/** Whether action `a` passes the baton to another thread. */
function passesBaton(a: CallbackAction): boolean {
  return a.kind === "yieldTo" || a.kind === "yieldToNext";
}
