/**
 * The scenario DSL: a typed builder that records what a program does, step by step.
 *
 * ```ts ignore
 * export default scenario({ name: "ref-loop", seed: 1 }, (s) => {
 *   const main = s.main;
 *   main.minorGc();
 *   const p = main.memprof.start({ samplingRate: 0.01, callstackSize: 0, tracker: {} });
 *   main.repeat(20_000, () => main.alloc(1, { at: "main@exact.ml:24:2-30" }));
 *   main.memprof.stop();
 *   main.memprof.discard(p);
 * });
 * ```
 *
 * Builder calls only record steps; nothing runs until the engine runs the scenario. A `repeat`
 * body is recorded once and executed `count` times.
 * @module
 */
import { ScenarioError } from "./errors.ts";
import { DEFAULT_MINOR_HEAP_WORDS, DEFAULT_PID } from "../runtime/mod.ts";
import { DEFAULT_LOG_WSIZE } from "../runtime_events/layout.ts";
import type {
  AllocSource,
  CallbackAction,
  CallbackSpec,
  Frame,
  GcKind,
  Lifetime,
  ProfileSpec,
  Scenario,
  ScenarioSettings,
  SizeSpec,
  Step,
  Trigger,
  UserEventSpec,
} from "./spec.ts";
import { validateScenario } from "./validate.ts";
import { describe, isObject, OPTION_KEYS, optionsProblem, unknownKey } from "./_options.ts";
import {
  FRAME_RULE,
  isFrame,
  isLabelName,
  isPlainName,
  LABEL_NAME_RULE,
  MAX_NESTING,
  NESTING_PROBLEM,
  PLAIN_NAME_RULE,
} from "./_limits.ts";

// ---- lifetimes -----------------------------------------------------------------------------

/**
 * Lifetimes of blocks.
 *
 * @example Blocks kept for a few steps, until a release, or for ever
 * ```ts
 * import { keep, runScenario, scenario } from "./mod.ts";
 * import assert from "node:assert/strict";
 *
 * const sc = scenario({ name: "lifetimes" }, (s) => {
 *   s.main.alloc(2, { lifetime: keep.steps(3) });
 *   s.main.alloc(2, { lifetime: keep.until("cache") });
 *   s.main.alloc(2, { lifetime: keep.forever });
 *   s.release("cache");
 * });
 * assert.equal(runScenario(sc).summary.allocations, 3);
 * ```
 */
export const keep: {
  /** Unreachable at once (the default). */
  readonly drop: Lifetime;
  /** Reachable for ever (a global). */
  readonly forever: Lifetime;
  /** Reachable while the next `n` steps run (like a slot overwritten `n` steps later), or
   * until `release(orUntil)` if that comes first. */
  steps(n: number, orUntil?: string): Lifetime;
  /** Reachable until `release(name)`. */
  until(name: string): Lifetime;
  /** Successive executions of the step take these lifetimes in turn: `cycle(drop, drop,
   * steps(9))` keeps every third block. */
  cycle(...lifetimes: Lifetime[]): Lifetime;
  /** Linked from the block kept before it, like the cells of a list (`acc := x :: !acc`),
   * until `release(name)`. */
  list(name: string): Lifetime;
  /** Stored in slot `k mod slots` of a global array, replacing the block stored there
   * (`keep.(k mod slots) <- x`); `release(name)` empties the array. */
  ring(slots: number, name?: string): Lifetime;
} = {
  drop: { kind: "drop" },
  forever: { kind: "forever" },
  steps: (n, orUntil) =>
    orUntil === undefined
      ? { kind: "steps", steps: n }
      : { kind: "steps", steps: n, until: orUntil },
  until: (name) => ({ kind: "until", name }),
  cycle: (...lifetimes) => ({ kind: "cycle", lifetimes }),
  list: (name) => ({ kind: "list", name }),
  ring: (slots, name) =>
    name === undefined ? { kind: "ring", slots } : { kind: "ring", slots, name },
};

// ---- sizes ---------------------------------------------------------------------------------

/**
 * Size distributions, drawn from the scenario's seeded generator.
 *
 * @example Sizes drawn from the scenario's seed
 * ```ts
 * import { runScenario, scenario, sizes } from "./mod.ts";
 * import assert from "node:assert/strict";
 *
 * const sc = scenario({ name: "sizes", seed: 3 }, (s) => {
 *   s.main.repeat(100, () => s.main.alloc(sizes.uniform(1, 8)));
 * });
 * const words = runScenario(sc).summary.wordsAllocated; // headers included
 * assert.ok(words >= 100 * 2 && words <= 100 * 9);
 * assert.equal(runScenario(sc).summary.wordsAllocated, words); // same seed, same sizes
 * ```
 */
export const sizes: {
  /** Uniform over [min, max]. */
  uniform(min: number, max: number): SizeSpec;
  /** One of the values, equally likely. */
  choice(...values: number[]): SizeSpec;
  /** Geometric with the given mean (≥ 1), capped at `max` if given. */
  geometric(mean: number, max?: number): SizeSpec;
} = {
  uniform: (min, max) => ({ uniform: [min, max] }),
  choice: (...values) => ({ choice: values }),
  geometric: (mean, max) => ({ geometric: max === undefined ? { mean } : { mean, max } }),
};

// ---- callbacks -----------------------------------------------------------------------------

/**
 * Actions a callback may take (see {@linkcode CallbackBuilder}).
 *
 * @example A callback that triggers a minor collection on its second call
 * ```ts
 * import { act, cb, runScenario, scenario } from "./mod.ts";
 * import assert from "node:assert/strict";
 *
 * const sc = scenario({ name: "act" }, (s) => {
 *   s.main.memprof.start({
 *     samplingRate: 1,
 *     tracker: { allocMinor: cb.track().on(2, act.gc("minor")) },
 *   });
 *   s.main.repeat(3, () => s.main.alloc(1));
 *   s.main.memprof.stop();
 * });
 * assert.equal(runScenario(sc).summary.minorCollections, 1);
 * ```
 */
export const act: {
  raise(exn?: string): CallbackAction;
  stop(): CallbackAction;
  start(profile: ProfileSpec): CallbackAction;
  discard(): CallbackAction;
  alloc(words: number, lifetime?: Lifetime): CallbackAction;
  gc(what?: GcKind): CallbackAction;
  switchThread(thread: string): CallbackAction;
  exitThread(): CallbackAction;
  /** The thread running the callback blocks inside it (waits for its turn, as a callback
   * blocking on a mutex or a pipe does) and `thread` runs until the baton comes back. For
   * systhreads with their own programs ({@linkcode DomainBuilder.thread} with a body). */
  yieldTo(thread: string | ThreadBuilder | DomainBuilder): CallbackAction;
  /** {@linkcode act.yieldTo} the thread after the one running the callback in `threads` (after
   * the last, the first): `act.yieldToNext([s.main, other])` has each of the two threads pass
   * the baton to the other from inside its own callbacks. */
  yieldToNext(threads: readonly (string | ThreadBuilder | DomainBuilder)[]): CallbackAction;
} = {
  raise: (exn = "Exit") => ({ kind: "raise", exn }),
  stop: () => ({ kind: "stop" }),
  start: (profile) => ({ kind: "start", profile }),
  discard: () => ({ kind: "discard" }),
  alloc: (words, lifetime = keep.drop) => ({ kind: "alloc", words, lifetime }),
  gc: (what = "minor") => ({ kind: "gc", what }),
  switchThread: (thread) => ({ kind: "switchThread", thread }),
  exitThread: () => ({ kind: "exitThread" }),
  yieldTo: (thread) => ({ kind: "yieldTo", thread: threadName(thread) }),
  yieldToNext: (threads) => ({
    kind: "yieldToNext",
    // Anything but an array is left for the validation to refuse.
    threads: Array.isArray(threads) ? threads.map(threadName) : threads as unknown as string[],
  }),
};

/** The name of a thread given as a name, a thread or a domain (its main thread). */
function threadName(t: string | ThreadBuilder | DomainBuilder): string {
  return t instanceof ThreadBuilder || t instanceof DomainBuilder ? t.name : t;
}

/** The index `i` of a loop being built (`d.repeat(n, (i) => …)`), from 1 to `n`. */
export class LoopIndex {
  #open = true;
  readonly #r: Recorder;
  readonly #domain: string;

  /** @internal Made by {@linkcode DomainBuilder.repeat}. */
  constructor(
    r: Recorder,
    domain: string,
    /** Depth of the loop on its domain: 1 for the outermost. */
    readonly depth: number,
  ) {
    this.#r = r;
    this.#domain = domain;
  }

  /** `if i mod period = offset then body` (offset from 0 to period - 1; 0 by default): OCaml's
   * "every `period`-th iteration". */
  every(period: number, body: () => void, offset = 0): void {
    const at = this.#r.nextAt();
    if (!this.#open) this.#r.fail(at, "a loop index used outside its loop");
    for (const [v, what] of [[period, "every"], [offset, "every's offset"]] as const) {
      if (typeof v !== "number") this.#r.fail(at, `${what} must be a number, got ${describe(v)}`);
    }
    if (!(Number.isInteger(period) && period >= 1)) {
      this.#r.fail(at, `every needs a whole number ≥ 1, got ${period}`);
    }
    if (!(Number.isInteger(offset) && offset >= 0 && offset < period)) {
      this.#r.fail(
        at,
        `every's offset must be a whole number in [0, ${period - 1}], got ${offset}`,
      );
    }
    const steps = this.#r.nested(at, body, "every");
    this.#r.push({
      at,
      kind: "when",
      domain: this.#domain,
      loop: this.depth,
      every: period,
      offset,
      body: steps,
    });
  }

  /** @internal The loop's body has been built. */
  close(): void {
    this.#open = false;
  }
}

/** A callback behaviour, built fluently: `cb.track().on(2, act.raise())`. Immutable. */
export class CallbackBuilder implements CallbackSpec {
  /** A behaviour returning `result` (`track`: Some, `none`: None) with `actions` (use `cb`). */
  constructor(
    readonly result: "track" | "none",
    readonly actions: readonly { readonly when: Trigger; readonly action: CallbackAction }[] = [],
  ) {}

  /** A copy with `actions` added under `when`. */
  #with(when: Trigger, ...actions: CallbackAction[]): CallbackBuilder {
    return new CallbackBuilder(this.result, [
      ...this.actions,
      ...actions.map((action) => ({ when, action })),
    ]);
  }

  /** On the `n`th call (from 1) of this callback kind in its profile. */
  on(n: number, ...actions: CallbackAction[]): CallbackBuilder {
    return this.#with({ kind: "nth", n }, ...actions);
  }

  /** On calls offset, offset+period, offset+2·period, … (offset defaults to period). */
  every(period: number, action: CallbackAction, offset = period): CallbackBuilder {
    return this.#with({ kind: "every", period, offset }, action);
  }

  /** On every call. */
  always(...actions: CallbackAction[]): CallbackBuilder {
    return this.#with({ kind: "always" }, ...actions);
  }

  /** Shorthand: raise `exn` on the `n`th call. */
  raiseOn(n: number, exn = "Exit"): CallbackBuilder {
    return this.on(n, act.raise(exn));
  }
}

/**
 * Callback behaviours: a callback returns a tracking value (`track`) or `None` (`none`).
 *
 * @example Track minor samples, ignore major ones
 * ```ts
 * import { cb, runScenario, scenario } from "./mod.ts";
 * import assert from "node:assert/strict";
 *
 * const sc = scenario({ name: "cb" }, (s) => {
 *   s.main.memprof.start({ samplingRate: 1, tracker: { allocMinor: cb.track(), allocMajor: cb.none() } });
 *   s.main.repeat(5, () => s.main.alloc(1));
 *   s.main.memprof.stop();
 * });
 * assert.equal(runScenario(sc).summary.callbacks.allocMinor, 5);
 * ```
 */
export const cb: { track(): CallbackBuilder; none(): CallbackBuilder } = {
  track: () => new CallbackBuilder("track"),
  none: () => new CallbackBuilder("none"),
};

// ---- the builders --------------------------------------------------------------------------

/** Options of {@linkcode DomainBuilder.alloc}. */
export interface AllocOptions {
  /** How long the block stays reachable (default {@linkcode keep.drop}). */
  lifetime?: Lifetime;
  /** Where it comes from (default "caml"). */
  source?: AllocSource;
  /** Frames of the allocation site, caller first, appended to the enclosing `call`s. */
  at?: Frame | readonly Frame[];
  /** For `source: "custom"`: out-of-heap words reported to memprof. */
  customMem?: SizeSpec;
}

/** Options of {@linkcode DomainBuilder.allocCombined}. */
export interface CombinedOptions {
  /** One lifetime for every component, or one per component. */
  lifetime?: Lifetime | readonly Lifetime[];
  /** One frame list for all components, or one per component. */
  at?: Frame | readonly Frame[] | readonly (readonly Frame[])[];
}

/** Arguments of `memprof.start`; omitted fields take the scenario's defaults. */
export interface StartArgs {
  /** The profile's name, for `discard` and the log. */
  name?: string;
  /** lambda in [0, 1]. */
  samplingRate?: number;
  /** Maximum callstack length. */
  callstackSize?: number;
  /** Callback behaviours (default: every callback tracks). */
  tracker?: ProfileSpec["tracker"];
}

/** A started profile, for `discard`. */
export interface ProfileRef {
  /** The profile's name. */
  readonly name: string;
}

/** Collects the steps a build function declares (internal to the builders). */
class Recorder {
  steps: Step[] = [];
  #stack: { list: Step[]; prefix: string }[] = [{ list: this.steps, prefix: "" }];
  readonly domains: string[] = ["main"];
  readonly threads: Map<string, string> = new Map([["main", "main"]]);
  readonly profiles: string[] = [];

  constructor(
    readonly name: string,
    /** Defaults of `memprof.start`: the scenario's settings. */
    readonly profileDefaults: { readonly samplingRate: number; readonly callstackSize: number },
  ) {}

  /** Position the next step will have. */
  nextAt(): string {
    const top = this.#stack[this.#stack.length - 1];
    return top.prefix + String(top.list.length + 1);
  }

  push(step: Step): void {
    this.#stack[this.#stack.length - 1].list.push(step);
  }

  /** Records `body`'s steps into a fresh list, returned. Refuses bodies nested deeper than
   * {@linkcode MAX_NESTING}, before going deeper (so that recursion cannot overflow). */
  nested(at: string, body: () => void, what: string): Step[] {
    if (typeof body !== "function") {
      this.fail(at, `${what} needs a function as its body, got ${describe(body)}`);
    }
    if (this.#stack.length > MAX_NESTING) {
      this.fail(at, NESTING_PROBLEM);
    }
    const list: Step[] = [];
    this.#stack.push({ list, prefix: at + "." });
    try {
      body();
    } finally {
      this.#stack.pop();
    }
    return list;
  }

  fail(at: string, problem: string): never {
    throw new ScenarioError(this.name, at, problem);
  }

  /** Refuses options of `what` with keys other than `known`. */
  options(at: string, opts: unknown, known: readonly string[], what: string): void {
    const problem = optionsProblem(opts, known, what);
    if (problem !== undefined) this.fail(at, problem);
  }

  frames(at: string, f: Frame | readonly Frame[] | undefined): Frame[] {
    const list = f === undefined ? [] : typeof f === "string" ? [f] : [...f];
    for (const fr of list) {
      if (!isFrame(fr)) this.fail(at, `frame ${JSON.stringify(fr)} is not ${FRAME_RULE}`);
    }
    return list;
  }

  uniqueName(at: string, kind: string, name: string, taken: Iterable<string>): string {
    if (!isLabelName(name)) {
      this.fail(
        at,
        `${kind} name ${JSON.stringify(name)} is invalid: names are ${LABEL_NAME_RULE}`,
      );
    }
    for (const t of taken) {
      if (t === name) this.fail(at, `${kind} name ${JSON.stringify(name)} is used twice`);
    }
    return name;
  }
}

/** Memprof control of one domain (`Gc.Memprof` called from it). */
export class MemprofControl {
  readonly #r: Recorder;
  readonly #domain: string;

  /** @internal Made by {@linkcode DomainBuilder}. */
  constructor(r: Recorder, domain: string) {
    this.#r = r;
    this.#domain = domain;
  }

  /** `Gc.Memprof.start`. */
  start(args: StartArgs = {}): ProfileRef {
    const at = this.#r.nextAt();
    this.#r.options(at, args, OPTION_KEYS.profile, "memprof.start");
    const name = this.#r.uniqueName(
      at,
      "profile",
      args.name ?? `p${this.#r.profiles.length + 1}`,
      this.#r.profiles,
    );
    this.#r.profiles.push(name);
    // Omitted values take the scenario's; given ones (NaN included) are checked as given.
    const profile: ProfileSpec = {
      name,
      samplingRate: args.samplingRate === undefined
        ? this.#r.profileDefaults.samplingRate
        : args.samplingRate,
      callstackSize: args.callstackSize === undefined
        ? this.#r.profileDefaults.callstackSize
        : args.callstackSize,
      tracker: args.tracker ?? {},
    };
    this.#r.push({ at, kind: "memprofStart", domain: this.#domain, profile });
    return { name };
  }

  /** `Gc.Memprof.stop`. */
  stop(): void {
    this.#r.push({ at: this.#r.nextAt(), kind: "memprofStop", domain: this.#domain });
  }

  /** `Gc.Memprof.discard`. */
  discard(profile: ProfileRef | string): void {
    const name = typeof profile === "string"
      ? profile
      : isObject(profile) && typeof profile.name === "string"
      ? profile.name
      : this.#r.fail(
        this.#r.nextAt(),
        `memprof.discard needs what memprof.start returned (or a profile name), got ${
          describe(profile)
        }`,
      );
    this.#r.push({
      at: this.#r.nextAt(),
      kind: "memprofDiscard",
      domain: this.#domain,
      profile: name,
    });
  }
}

/** A systhread of a domain. */
export class ThreadBuilder {
  readonly #r: Recorder;

  /** @internal Made by {@linkcode DomainBuilder.thread}. */
  constructor(
    r: Recorder,
    /** Its domain. */
    readonly domain: string,
    /** Its name. */
    readonly name: string,
    /** It runs a program of its own (made with a body), rather than taking over the domain's
     * steps at `switchTo`. */
    readonly hasProgram: boolean = false,
  ) {
    this.#r = r;
  }

  /** This thread takes the domain lock. */
  switchTo(): void {
    this.#r.push({
      at: this.#r.nextAt(),
      kind: "threadSwitch",
      domain: this.domain,
      thread: this.name,
    });
  }

  /** This thread terminates (`Thread.exit`). */
  exit(): void {
    this.#r.push({
      at: this.#r.nextAt(),
      kind: "threadExit",
      domain: this.domain,
      thread: this.name,
    });
  }
}

/** What one domain does. Steps run in the order they are recorded, across all domains. */
export class DomainBuilder {
  /** `Gc.Memprof` on this domain. */
  readonly memprof: MemprofControl;

  /** Loops being built on this domain (for loop indices). */
  #loopDepth = 0;

  readonly #r: Recorder;

  /** @internal Made by {@linkcode ScenarioBuilder}. */
  constructor(r: Recorder, readonly name: string) {
    this.#r = r;
    this.memprof = new MemprofControl(r, name);
  }

  /** One block of `size` words. */
  alloc(size: SizeSpec, opts: AllocOptions = {}): this {
    const at = this.#r.nextAt();
    this.#r.options(at, opts, OPTION_KEYS.alloc, "alloc");
    const source = opts.source ?? "caml";
    this.#r.push({
      at,
      kind: "alloc",
      domain: this.name,
      size,
      source,
      lifetime: opts.lifetime ?? keep.drop,
      frames: this.#r.frames(at, opts.at),
      ...(opts.customMem !== undefined ? { customMem: opts.customMem } : {}),
    });
    return this;
  }

  /** A combined allocation: several blocks at one poll point, `sizes` in the compiler's layout
   * order (e.g. `(i, i, i) :: l` is `[2, 3]`: the cons cell first, then the tuple). */
  allocCombined(sizes: readonly SizeSpec[], opts: CombinedOptions = {}): this {
    const at = this.#r.nextAt();
    this.#r.options(at, opts, OPTION_KEYS.allocCombined, "allocCombined");
    if (!Array.isArray(sizes)) {
      this.#r.fail(at, `allocCombined needs an array of sizes, got ${describe(sizes)}`);
    }
    const a = opts.at;
    let frames: Frame[][];
    if (a === undefined || typeof a === "string" || a.every((x) => typeof x === "string")) {
      const shared = this.#r.frames(at, a as Frame | readonly Frame[] | undefined);
      frames = sizes.map(() => shared);
    } else {
      const per = a as readonly (readonly Frame[])[];
      if (per.length !== sizes.length) {
        this.#r.fail(at, `allocCombined has ${sizes.length} sizes but ${per.length} frame lists`);
      }
      frames = per.map((f) => this.#r.frames(at, f));
    }
    const l = opts.lifetime ?? keep.drop;
    const lifetimes = Array.isArray(l) ? [...l] : sizes.map(() => l as Lifetime);
    if (lifetimes.length !== sizes.length) {
      this.#r.fail(at, `allocCombined has ${sizes.length} sizes but ${lifetimes.length} lifetimes`);
    }
    this.#r.push({
      at,
      kind: "allocCombined",
      domain: this.name,
      sizes: [...sizes],
      lifetimes,
      frames,
    });
    return this;
  }

  /** `Marshal.from_string`: a value of several blocks (sizes in the order they are read, root
   * first), each sampled on its own with source Marshal; callbacks run before it returns. The
   * lifetime applies to the whole value. */
  unmarshal(
    blocks: readonly SizeSpec[],
    opts: { lifetime?: Lifetime; at?: Frame | readonly Frame[] } = {},
  ): this {
    const at = this.#r.nextAt();
    this.#r.options(at, opts, OPTION_KEYS.unmarshal, "unmarshal");
    if (!Array.isArray(blocks)) {
      this.#r.fail(at, `unmarshal needs an array of block sizes, got ${describe(blocks)}`);
    }
    this.#r.push({
      at,
      kind: "unmarshal",
      domain: this.name,
      blocks: [...blocks],
      lifetime: opts.lifetime ?? keep.drop,
      frames: this.#r.frames(at, opts.at),
    });
    return this;
  }

  /** Repeats `body` `count` times (it is recorded once). */
  repeat(count: number, body: (i: LoopIndex) => void): this {
    const at = this.#r.nextAt();
    const index = new LoopIndex(this.#r, this.name, ++this.#loopDepth);
    let steps: Step[];
    try {
      steps = this.#r.nested(at, typeof body === "function" ? () => body(index) : body, "repeat");
    } finally {
      index.close();
      this.#loopDepth--;
    }
    this.#r.push({ at, kind: "repeat", domain: this.name, count, body: steps });
    return this;
  }

  /** `Domain.join target` on this domain: `target`'s function returns after its last step,
   * and this domain waits for it to terminate. */
  join(target: DomainBuilder | ThreadBuilder): void {
    if (target instanceof ThreadBuilder) {
      // `Thread.join`, by the thread running this program.
      this.#r.push({
        at: this.#r.nextAt(),
        kind: "threadJoin",
        domain: this.name,
        thread: target.name,
      });
      return;
    }
    if (!(target instanceof DomainBuilder)) {
      this.#r.fail(
        this.#r.nextAt(),
        `join needs a domain (from spawn) or a thread (from thread), got ${describe(target)}`,
      );
    }
    this.#r.push({ at: this.#r.nextAt(), kind: "join", domain: this.name, target: target.name });
  }

  /** Runs `body` inside a call of `frame` (it is on the callstack of allocations in `body`). */
  call(frame: Frame, body: () => void): this {
    const at = this.#r.nextAt();
    if (typeof frame !== "string") {
      this.#r.fail(at, `call needs one frame (a string), got ${describe(frame)}`);
    }
    const [f] = this.#r.frames(at, frame);
    const steps = this.#r.nested(at, body, "call");
    this.#r.push({ at, kind: "call", domain: this.name, frame: f, body: steps });
    return this;
  }

  /** `Gc.minor ()`. */
  minorGc(): this {
    return this.#gc("minor");
  }
  /** `Gc.major_slice 0`. */
  majorSlice(): this {
    return this.#gc("majorSlice");
  }
  /** `Gc.major ()`. */
  majorGc(): this {
    return this.#gc("major");
  }
  /** `Gc.full_major ()`. */
  fullMajor(): this {
    return this.#gc("fullMajor");
  }
  /** `Gc.compact ()`. */
  compact(): this {
    return this.#gc("compact");
  }

  /** Records a collection of kind `what`. */
  #gc(what: GcKind): this {
    this.#r.push({ at: this.#r.nextAt(), kind: "gc", domain: this.name, what });
    return this;
  }

  /** A poll point (where pending callbacks run). */
  poll(): this {
    this.#r.push({ at: this.#r.nextAt(), kind: "poll", domain: this.name });
    return this;
  }

  /** `Domain.spawn`: a new domain, which inherits this domain's profile. */
  spawn(name?: string): DomainBuilder {
    const at = this.#r.nextAt();
    const child = this.#r.uniqueName(at, "domain", name ?? `d${this.#r.domains.length}`, [
      ...this.#r.domains,
      ...this.#r.threads.keys(),
    ]);
    this.#r.domains.push(child);
    this.#r.threads.set(child, child);
    this.#r.push({ at, kind: "spawn", domain: this.name, child });
    return new DomainBuilder(this.#r, child);
  }

  /** The domain terminates; its tracked blocks go to the global orphans. */
  terminate(): void {
    this.#r.push({ at: this.#r.nextAt(), kind: "terminate", domain: this.name });
  }

  /**
   * `Thread.create`: a new systhread of this domain (not yet running).
   *
   * With `body`, the thread runs a program of its own, which `body` records on the builder it
   * gets (`d.thread("io", (t) => { t.alloc(3); t.yieldTo(s.main); … })`): the thread first runs
   * when another passes it the baton (`yieldTo`, `join`, `act.yieldTo`), runs until it blocks
   * in turn, and resumes where it blocked — inside a callback too. When its program ends, the
   * baton goes to the thread joining it, or else back to the thread that last passed it.
   *
   * Without `body` (the older form), the domain's own steps run on the thread once
   * `switchTo` makes it current.
   */
  thread(name: string, body?: (t: DomainBuilder) => void): ThreadBuilder {
    const at = this.#r.nextAt();
    this.#r.uniqueName(at, "thread", name, [...this.#r.threads.keys(), ...this.#r.domains]);
    this.#r.threads.set(name, this.name);
    if (body === undefined) {
      this.#r.push({ at, kind: "threadCreate", domain: this.name, thread: name });
      return new ThreadBuilder(this.#r, this.name, name);
    }
    const program = new DomainBuilder(this.#r, this.name);
    const steps = this.#r.nested(
      at,
      typeof body === "function" ? () => body(program) : body,
      "thread",
    );
    this.#r.push({ at, kind: "threadSpawn", domain: this.name, thread: name, body: steps });
    return new ThreadBuilder(this.#r, this.name, name, true);
  }

  /** The thread running this program blocks, waiting for its turn (a blocking section), and
   * `thread` runs — from its start, or where it blocked — until the baton comes back. */
  yieldTo(thread: ThreadBuilder | DomainBuilder | string): this {
    this.#r.push({
      at: this.#r.nextAt(),
      kind: "yieldTo",
      domain: this.name,
      thread: threadName(thread),
    });
    return this;
  }

  /** `Thread.yield ()`: pending actions run; no other thread takes the lock, since all wait
   * for their turn. */
  yield(): this {
    this.#r.push({ at: this.#r.nextAt(), kind: "threadYield", domain: this.name });
    return this;
  }

  /** A blocking section of the running thread; other threads may run inside `body`. */
  blocking(body: () => void = () => {}): this {
    const at = this.#r.nextAt();
    const steps = this.#r.nested(at, body, "blocking");
    this.#r.push({ at, kind: "blocking", domain: this.name, body: steps });
    return this;
  }

  /** `try body with _ -> ()`: an OCaml exception raised by a callback during `body` skips the
   * rest of `body` and is logged as caught. */
  attempt(body: () => void): this {
    const at = this.#r.nextAt();
    const steps = this.#r.nested(at, body, "attempt");
    this.#r.push({ at, kind: "attempt", domain: this.name, body: steps });
    return this;
  }

  /**
   * An external allocation traced through the tracer (`Memtrace.External.alloc`), sampled by
   * its own geometric sampler as memtrace samples it: on the main domain only (on another
   * domain memtrace's `ext_alloc` returns at once). A sampled one takes the tracer's lock; a
   * callback raising under it marks the tracer failed, as memtrace's `mark_failed`: the
   * exception is caught and logged, and the tracer stops (no block tracked, no more samples).
   */
  extAlloc(bytes: SizeSpec, lifetime: Lifetime = keep.drop): this {
    this.#r.push({ at: this.#r.nextAt(), kind: "extAlloc", domain: this.name, bytes, lifetime });
    return this;
  }

  /** A runtime_events user event. */
  userEvent(name: string, event: UserEventSpec): this {
    this.#r.push({ at: this.#r.nextAt(), kind: "userEvent", domain: this.name, name, event });
    return this;
  }
}

/** The top of the DSL, given to a scenario's build function. */
export class ScenarioBuilder {
  /** The initial domain. */
  readonly main: DomainBuilder;
  /** runtime_events control. */
  readonly events: { start(): void; pause(): void; resume(): void };

  readonly #r: Recorder;

  /** @internal Made by {@linkcode scenario}. */
  constructor(r: Recorder) {
    this.#r = r;
    this.main = new DomainBuilder(r, "main");
    this.events = {
      start: () => r.push({ at: r.nextAt(), kind: "eventsStart" }),
      pause: () => r.push({ at: r.nextAt(), kind: "eventsPause" }),
      resume: () => r.push({ at: r.nextAt(), kind: "eventsResume" }),
    };
  }

  /** Drops the blocks kept with `keep.until(name)`. */
  release(name: string): void {
    const at = this.#r.nextAt();
    if (!isLabelName(name)) {
      this.#r.fail(
        at,
        `release name ${JSON.stringify(name)} is invalid: names are ${LABEL_NAME_RULE}`,
      );
    }
    this.#r.push({ at, kind: "release", name });
  }
}

/** The settings a scenario leaves out (the runtime's own defaults where it has them). */
const DEFAULTS = {
  seed: 1,
  samplingRate: 1e-4,
  callstackSize: 16,
  minorHeapWords: DEFAULT_MINOR_HEAP_WORDS,
  ringLog2: DEFAULT_LOG_WSIZE,
  clockTickNs: 1_000,
  maxDomains: 16,
  pid: DEFAULT_PID,
  log: { format: "default" },
} as const;

/**
 * Defines a scenario: records the steps `build` declares, fills defaults, validates. Throws
 * {@linkcode ScenarioError} for an invalid scenario.
 *
 * @example Define a scenario (nothing runs until `runScenario`)
 * ```ts
 * import { scenario, ScenarioError } from "./mod.ts";
 * import assert from "node:assert/strict";
 *
 * const sc = scenario({ name: "demo", seed: 1 }, (s) => {
 *   s.main.memprof.start({ samplingRate: 1e-3, callstackSize: 16 });
 *   s.main.repeat(10, () => s.main.alloc(2, { at: "Demo.f@demo.ml:3:2-20" }));
 *   s.main.memprof.stop();
 * });
 * assert.equal(sc.settings.name, "demo");
 * assert.throws(() => scenario({ name: "bad" }, (s) => s.main.alloc(-1)), ScenarioError);
 * ```
 */
export function scenario(
  settings: ScenarioSettings,
  build: (s: ScenarioBuilder) => void,
): Scenario {
  if (!isObject(settings)) {
    throw new ScenarioError(
      "?",
      "settings",
      `settings must be an object, got ${describe(settings)}`,
    );
  }
  const name = settings.name;
  if (!isPlainName(name)) {
    throw new ScenarioError(
      String(name),
      "settings",
      `name must be ${PLAIN_NAME_RULE}, got ${describe(name)}`,
    );
  }
  const unknown = unknownKey(settings, OPTION_KEYS.settings, "settings", { prefix: false });
  if (unknown !== undefined) throw new ScenarioError(name, "settings", unknown);
  if (typeof build !== "function") {
    throw new ScenarioError(
      name,
      "settings",
      `scenario() needs a build function, got ${describe(build)}`,
    );
  }
  const s = {
    ...DEFAULTS,
    ...Object.fromEntries(Object.entries(settings).filter(([, v]) => v !== undefined)),
    description: settings.description ?? "",
    externalSamplingRate: settings.externalSamplingRate,
  } as Scenario["settings"];
  const r = new Recorder(name, s);
  build(new ScenarioBuilder(r));
  const result: Scenario = {
    settings: s,
    steps: r.steps,
    domains: r.domains,
    threads: r.threads,
    profiles: r.profiles,
  };
  validateScenario(result);
  return result;
}
