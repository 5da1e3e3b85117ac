/**
 * Every refusal of the OCaml export in one place: what in a scenario has no faithful form in an
 * exported program, each with the step it concerns and why. {@linkcode checkExportable} returns
 * them all; the export (ocaml.ts) refuses with the first, and writes code only for a scenario
 * with none. One refusal is left to the writing: a program longer than
 * {@linkcode MAX_PROGRAM_CHARS}, which only the written code measures (kind `programSize`).
 *
 * The steps are checked in the order the program's code is written (the trackers, then each
 * domain's steps from the highest-numbered domain down, then the systhreads' programs), so that
 * the first refusal is the one the export has always reported.
 * @module
 */
import type { Lifetime, Scenario, SizeSpec, Step } from "../scenario/spec.ts";
import { visitStep } from "../scenario/walk.ts";
import { MAX_YOUNG_WOSIZE } from "../runtime/mod.ts";
import {
  allocLinkable,
  type Ctx,
  domainThread,
  drawnSizes,
  type ExportPlan,
  forEachAction,
  keepCapacity,
  MAX_FRAMES_RECORDED,
  MAX_SITE_CAPACITY,
  passesBaton,
  planProgram,
  type RefusalKind,
  smallest,
  type TrackerAction,
} from "./_plan.ts";

export type { RefusalKind } from "./_plan.ts";

/**
 * Programs longer than this many characters are refused: 16 Mi, about 190 times the largest
 * library scenario's program. Each step's code is a few hundred characters to a few kilobytes (a
 * drawn size is a `match` over up to 257 sizes, written where the block is allocated), so a
 * scenario of a few megabytes could ask for hundreds of megabytes of program, beyond what ocamlopt
 * compiles in reasonable time, and held in memory while it is written.
 */
export const MAX_PROGRAM_CHARS = 16 * 1024 * 1024;

/** Slots of each keep site inside a callback unless told otherwise. */
export const DEFAULT_CALLBACK_KEEP_CAPACITY = 4_096;

/** One reason a scenario cannot be exported faithfully. */
export interface ExportRefusal {
  /** What is refused. */
  readonly kind: RefusalKind;
  /** Position of the step (`3`, `3.2`, …), or `settings`. */
  readonly step: string;
  /** Why it has no faithful OCaml form (the text of {@linkcode ExportError}). */
  readonly reason: string;
}

/** Options of {@linkcode checkExportable}. */
export interface ExportableOptions {
  /** Slots of each keep site inside a callback (default
   * {@linkcode DEFAULT_CALLBACK_KEEP_CAPACITY}), which bounds what a site may hold. */
  readonly callbackKeepCapacity?: number;
}

/**
 * Every reason scenario `sc` cannot be exported (none: it can, but for the program's length,
 * see the module doc), in the order the export meets them. `sc` must be valid
 * (`validateScenario`).
 *
 * @example A custom user event is refused, naming its step
 * ```ts
 * import { checkExportable } from "./exportable.ts";
 * import { scenario } from "../scenario/mod.ts";
 * import assert from "node:assert/strict";
 *
 * const sc = scenario({ name: "ev" }, (s) => {
 *   s.main.memprof.start({ samplingRate: 1, callstackSize: 0 });
 *   s.main.userEvent("ev", { type: "custom", bytes: [1, 2] });
 *   s.main.memprof.stop();
 * });
 * const [first] = checkExportable(sc);
 * assert.equal(first.kind, "customUserEvent");
 * assert.equal(first.step, "2");
 * ```
 */
export function checkExportable(
  sc: Scenario,
  options: ExportableOptions = {},
): readonly ExportRefusal[] {
  return analyseExport(sc, options).refusals;
}

/** The plan of `sc`'s program and every refusal (see {@linkcode checkExportable}). */
export function analyseExport(
  sc: Scenario,
  options: ExportableOptions = {},
): { readonly plan: ExportPlan; readonly refusals: readonly ExportRefusal[] } {
  const refusals: ExportRefusal[] = [];
  const refuse = (kind: RefusalKind, step: string, reason: string) => {
    refusals.push({ kind, step, reason });
  };
  const plan = planProgram(sc, refuse);
  new StepChecks(plan, refuse, options.callbackKeepCapacity ?? DEFAULT_CALLBACK_KEEP_CAPACITY)
    .run(sc);
  if (plan.maxFrames > MAX_FRAMES_RECORDED) {
    const slot = plan.profiles.findIndex((p) => p.callstackSize === plan.maxFrames);
    refuse(
      "callstackSize",
      plan.profileAt[slot],
      `a callstack size of ${plan.maxFrames}: the exported program records at most ` +
        `${MAX_FRAMES_RECORDED} frames per callback`,
    );
  }
  return { plan, refusals };
}

/** Where a domain's top-level steps are checked from. */
function topCtx(ord: number, thread: number, at: string): Ctx {
  return { ord, depth: 0, inAttempt: false, inCallback: false, bound: 1, at, thread };
}

/** The refusals of steps and callback actions, met in the order the program is written. */
class StepChecks {
  /** User events by name, with their type, as the program registers them. */
  readonly #userEvents = new Map<string, string>();

  constructor(
    readonly plan: ExportPlan,
    readonly refuse: (kind: RefusalKind, step: string, reason: string) => void,
    readonly callbackKeepCapacity: number,
  ) {}

  run(sc: Scenario): void {
    const plan = this.plan;
    plan.profiles.forEach((p, slot) => {
      const ctx: Ctx = {
        ord: 0,
        depth: 0,
        inAttempt: true,
        inCallback: true,
        bound: Infinity,
        at: plan.profileAt[slot],
        thread: 0,
      };
      forEachAction(p.tracker, (a) => this.#action(a, ctx));
    });
    for (let ord = sc.domains.length - 1; ord >= 0; ord--) {
      for (const seg of plan.segments) {
        if (seg.ord === ord) {
          this.#steps(seg.steps, topCtx(ord, domainThread(plan, sc.domains[ord]), ""));
        }
      }
    }
    plan.threadSteps.forEach((st, k) => {
      this.#steps(st.body, topCtx(sc.domains.length + k, k + 1, st.at));
    });
  }

  #thread(name: string, at: string): void {
    if (!this.plan.threadIndex.has(name)) {
      this.refuse("unknownThread", at, `no thread "${name}" with a program`);
    }
  }

  #action(a: TrackerAction, ctx: Ctx): void {
    switch (a.kind) {
      case "alloc":
        return this.#keep(a.lifetime, ctx, true);
      case "switchThread":
      case "exitThread":
        return this.refuse(
          "olderThreadsInCallback",
          ctx.at,
          "callbacks that switch or exit systhreads of the older form are not exported: the " +
            "scenario DSL runs a domain's steps as one program, so the rest of the program would " +
            "have to continue on another systhread (threads with programs of their own and " +
            "act.yieldTo are; see docs/differential.md)",
        );
      case "yieldTo":
        return this.#thread(a.thread, ctx.at);
      case "yieldToNext":
        for (const t of a.threads) this.#thread(t, ctx.at);
        return;
      default:
        return;
    }
  }

  #steps(steps: readonly Step[], ctx: Ctx): void {
    for (const st of steps) this.#step(st, { ...ctx, at: st.at });
  }

  #step(st: Step, ctx: Ctx): void {
    const olderThreads = () =>
      this.refuse(
        "olderThreads",
        st.at,
        "systhreads of the older form (thread(name) with switchTo, exit, blocking) are not " +
          "exported: a thread switch moves the rest of the domain's straight-line steps onto " +
          "another thread, which has no one-to-one OCaml form; threads with programs of their " +
          "own (thread(name, body)) are (see docs/differential.md)",
      );
    const none = () => {};
    visitStep<void>(st, {
      alloc: (st) => this.#alloc(st, ctx),
      allocCombined: (st) => this.#combined(st, ctx),
      unmarshal: (st) => {
        const constant = st.blocks.map((b) => this.#constant(b, st.at, "unmarshal block"));
        if (constant.every((c) => c)) this.#keep(st.lifetime, ctx, false);
      },
      gc: none,
      poll: none,
      spawn: none,
      terminate: none,
      threadCreate: olderThreads,
      threadSwitch: olderThreads,
      threadExit: olderThreads,
      blocking: olderThreads,
      threadSpawn: (st) => this.#thread(st.thread, st.at),
      yieldTo: (st) => this.#thread(st.thread, st.at),
      threadJoin: (st) => this.#thread(st.thread, st.at),
      threadYield: none,
      memprofStart: none,
      memprofStop: none,
      memprofDiscard: (st) => {
        if (!this.plan.profileSlot.has(st.profile)) {
          this.refuse("unknownProfile", st.at, `profile "${st.profile}" is never started`);
        }
      },
      call: (st) => this.#steps(st.body, ctx),
      repeat: (st) =>
        this.#steps(st.body, { ...ctx, depth: ctx.depth + 1, bound: ctx.bound * st.count }),
      attempt: (st) => this.#steps(st.body, { ...ctx, inAttempt: true }),
      when: (st) => this.#steps(st.body, ctx),
      join: none,
      extAlloc: (st) => this.#extAlloc(st, ctx),
      userEvent: (st) => {
        this.#userEvent(st.name, st.event.type, st.at);
        if (st.event.type === "custom") {
          this.refuse("customUserEvent", st.at, "custom user events are not exported");
        }
      },
      release: none,
      eventsStart: none,
      eventsPause: none,
      eventsResume: none,
    });
  }

  /** An external allocation: the program emulates memtrace's `External` (its sampler, lock
   * and callstack capture, and its failure when a callback raises under its lock), on the
   * main domain (elsewhere memtrace's `ext_alloc` returns at once), unless a callback could
   * let another systhread run while the lock is held. */
  #extAlloc(st: Extract<Step, { kind: "extAlloc" }>, ctx: Ctx): void {
    const plan = this.plan;
    if (plan.threadsLibrary && plan.profiles.some((p) => passesBaton(p.tracker))) {
      this.refuse(
        "externalAlloc",
        st.at,
        "external allocations with callbacks that pass the systhreads' baton: a callback " +
          "passing it under memtrace's lock would let another thread run while the lock is " +
          "held, whose callbacks memtrace makes wait for the lock (Thread.yield in " +
          "lock_async) until the holder, which waits for the baton, releases it",
      );
      return;
    }
    if (this.#sizes(st.bytes, st.at) === undefined) return;
    if (st.lifetime.kind !== "drop") this.#keep(st.lifetime, ctx, false);
  }

  /** A user event registered (at its first step) with a name OCaml can hold, and written with
   * one type. */
  #userEvent(name: string, type: string, at: string): void {
    const known = this.#userEvents.get(name);
    if (known === undefined) {
      this.#userEvents.set(name, type);
      if (!name.isWellFormed()) {
        this.refuse(
          "userEventName",
          at,
          `user event name ${
            JSON.stringify(name)
          } is not well-formed Unicode: a lone surrogate has no UTF-8 form for OCaml`,
        );
      }
    } else if (known !== type) {
      this.refuse("userEventTypes", at, `user event "${name}" is written with two types`);
    }
  }

  #alloc(st: Extract<Step, { kind: "alloc" }>, ctx: Ctx): void {
    const at = st.at;
    switch (st.source) {
      case "caml":
      case "runtime":
      case "array":
      case "major": {
        const sizes = this.#sizes(st.size, at);
        if (sizes === undefined) return;
        if (st.source === "major" && smallest(sizes) <= MAX_YOUNG_WOSIZE) {
          this.refuse(
            "smallMajorAlloc",
            at,
            `a direct major allocation of ${smallest(sizes)} words: no OCaml primitive ` +
              `allocates a block of at most ${MAX_YOUNG_WOSIZE} words with caml_alloc_shr`,
          );
        }
        return this.#keep(st.lifetime, ctx, allocLinkable(st, sizes));
      }
      case "custom": {
        if (!this.#constant(st.size, at, "custom block")) return;
        const n = st.size as number;
        if (n < 6 || n > 21) {
          this.refuse(
            "customBlockSize",
            at,
            `a custom block of ${n} words: exported custom blocks are char Bigarrays, of 5 + ` +
              `(number of dimensions) words, so 6 to 21 words`,
          );
        }
        if (this.#sizes(st.customMem ?? 0, at) === undefined) return;
        return this.#keep(st.lifetime, ctx, false);
      }
      case "unmarshal":
        if (!this.#constant(st.size, at, "unmarshalled block")) return;
        return this.#keep(st.lifetime, ctx, false);
    }
  }

  #combined(st: Extract<Step, { kind: "allocCombined" }>, ctx: Ctx): void {
    const constant = st.sizes.map((s) => this.#constant(s, st.at, "combined allocation"));
    if (!constant.every((c) => c)) return;
    const outer = st.frames[0] ?? [];
    for (const fl of st.frames) {
      const same = fl.length === outer.length &&
        fl.every((f, i) => i === fl.length - 1 ? defName(f) === defName(outer[i]) : f === outer[i]);
      if (!same) {
        this.refuse(
          "combinedFrames",
          st.at,
          `combined-allocation components with different frames (${JSON.stringify(fl)} vs ${
            JSON.stringify(outer)
          }): the components of one combined allocation are ` +
            "allocated by one OCaml function, so they share their frames and only the innermost " +
            "frame's location may differ (an inlined function adds no frame of its own to " +
            "memprof's callstack)",
        );
        return;
      }
    }
    st.sizes.forEach((_, k) => this.#keep(st.lifetimes[k] ?? st.lifetimes[0], ctx, true));
  }

  /** Whether size `s` is a constant, as `what` needs to be exported. */
  #constant(s: SizeSpec, at: string, what: string): boolean {
    if (typeof s === "number") return true;
    this.refuse("variableSize", at, `the ${what} needs a constant size to be exported`);
    return false;
  }

  /** The sizes `s` can take, or undefined (refused: a geometric size without a maximum). */
  #sizes(s: SizeSpec, at: string): number[] | undefined {
    const sizes = drawnSizes(s);
    if (sizes === undefined) {
      this.refuse(
        "unboundedGeometric",
        at,
        "sizes.geometric without a maximum cannot be exported",
      );
    }
    return sizes;
  }

  /** A keep statement of lifetime `l` for a block that `linkable` says can be linked. */
  #keep(l: Lifetime, ctx: Ctx, linkable: boolean): void {
    switch (l.kind) {
      case "drop":
        return;
      case "cycle":
        for (const x of l.lifetimes) this.#keep(x, ctx, linkable);
        return;
      case "list":
        if (!linkable) {
          this.refuse(
            "unlinkable",
            ctx.at,
            "keep.list links each block to the previous one through its first field: only " +
              "blocks of at most 256 words allocated by OCaml code or Array.make can be linked",
          );
          return;
        }
        break;
    }
    const capacity = keepCapacity(l, ctx, this.callbackKeepCapacity);
    if (!(capacity <= MAX_SITE_CAPACITY)) {
      this.refuse(
        "siteCapacity",
        ctx.at,
        `blocks kept here may number ${capacity}: more than the ${MAX_SITE_CAPACITY} slots ` +
          "an exported keep site holds",
      );
    }
  }
}

/** `defname` of a frame `defname@file:line:start-end`. */
export function defName(frame: string): string {
  const at = frame.lastIndexOf("@");
  return at < 0 ? frame : frame.slice(0, at);
}
