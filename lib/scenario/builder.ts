/**
 * The scenario DSL: a typed builder that records what a program does, step by step.
 *
 * ```ts
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
import { Location } from "../memtrace/types.ts";
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

// ---- lifetimes -----------------------------------------------------------------------------

/** Lifetimes of blocks. */
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

/** Size distributions, drawn from the scenario's seeded generator. */
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

/** Actions a callback may take (see {@linkcode CallbackBuilder}). */
export const act: {
  raise(exn?: string): CallbackAction;
  stop(): CallbackAction;
  start(profile: ProfileSpec): CallbackAction;
  discard(): CallbackAction;
  alloc(words: number, lifetime?: Lifetime): CallbackAction;
  gc(what?: GcKind): CallbackAction;
  switchThread(thread: string): CallbackAction;
  exitThread(): CallbackAction;
} = {
  raise: (exn = "Exit") => ({ kind: "raise", exn }),
  stop: () => ({ kind: "stop" }),
  start: (profile) => ({ kind: "start", profile }),
  discard: () => ({ kind: "discard" }),
  alloc: (words, lifetime = keep.drop) => ({ kind: "alloc", words, lifetime }),
  gc: (what = "minor") => ({ kind: "gc", what }),
  switchThread: (thread) => ({ kind: "switchThread", thread }),
  exitThread: () => ({ kind: "exitThread" }),
};

/** The index `i` of a loop being built (`d.repeat(n, (i) => …)`), from 1 to `n`. */
export class LoopIndex {
  #open = true;

  /** @internal Made by {@linkcode DomainBuilder.repeat}. */
  constructor(
    private readonly r: Recorder,
    private readonly domain: string,
    /** Depth of the loop on its domain: 1 for the outermost. */
    readonly depth: number,
  ) {}

  /** `if i mod period = offset then body` (offset from 0 to period - 1; 0 by default): OCaml's
   * "every `period`-th iteration". */
  every(period: number, body: () => void, offset = 0): void {
    const at = this.r.nextAt();
    if (!this.#open) this.r.fail(at, "a loop index used outside its loop");
    if (!(Number.isInteger(period) && period >= 1)) {
      this.r.fail(at, `every needs a whole number ≥ 1, got ${period}`);
    }
    if (!(Number.isInteger(offset) && offset >= 0 && offset < period)) {
      this.r.fail(at, `every's offset must be a whole number in [0, ${period - 1}], got ${offset}`);
    }
    const steps = this.r.nested(at, body);
    this.r.push({
      at,
      kind: "when",
      domain: this.domain,
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
  constructor(
    readonly result: "track" | "none",
    readonly actions: readonly { readonly when: Trigger; readonly action: CallbackAction }[] = [],
  ) {}

  private with(when: Trigger, ...actions: CallbackAction[]): CallbackBuilder {
    return new CallbackBuilder(this.result, [
      ...this.actions,
      ...actions.map((action) => ({ when, action })),
    ]);
  }

  /** On the `n`th call (from 1) of this callback kind in its profile. */
  on(n: number, ...actions: CallbackAction[]): CallbackBuilder {
    return this.with({ kind: "nth", n }, ...actions);
  }

  /** On calls offset, offset+period, offset+2·period, … (offset defaults to period). */
  every(period: number, action: CallbackAction, offset = period): CallbackBuilder {
    return this.with({ kind: "every", period, offset }, action);
  }

  /** On every call. */
  always(...actions: CallbackAction[]): CallbackBuilder {
    return this.with({ kind: "always" }, ...actions);
  }

  /** Shorthand: raise `exn` on the `n`th call. */
  raiseOn(n: number, exn = "Exit"): CallbackBuilder {
    return this.on(n, act.raise(exn));
  }
}

/** Callback behaviours: a callback returns a tracking value (`track`) or `None` (`none`). */
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
  name?: string;
  samplingRate?: number;
  callstackSize?: number;
  /** Callback behaviours (default: every callback tracks). */
  tracker?: ProfileSpec["tracker"];
}

/** A started profile, for `discard`. */
export interface ProfileRef {
  readonly name: string;
}

/** Collects the steps a build function declares (internal to the builders). */
class Recorder {
  steps: Step[] = [];
  private stack: { list: Step[]; prefix: string }[] = [{ list: this.steps, prefix: "" }];
  readonly domains: string[] = ["main"];
  readonly threads: Map<string, string> = new Map([["main", "main"]]);
  readonly profiles: string[] = [];

  constructor(readonly name: string) {}

  /** Position the next step will have. */
  nextAt(): string {
    const top = this.stack[this.stack.length - 1];
    return top.prefix + String(top.list.length + 1);
  }

  push(step: Step): void {
    this.stack[this.stack.length - 1].list.push(step);
  }

  /** Records `body`'s steps into a fresh list, returned. */
  nested(at: string, body: () => void): Step[] {
    const list: Step[] = [];
    this.stack.push({ list, prefix: at + "." });
    try {
      body();
    } finally {
      this.stack.pop();
    }
    return list;
  }

  fail(at: string, problem: string): never {
    throw new ScenarioError(this.name, at, problem);
  }

  frames(at: string, f: Frame | readonly Frame[] | undefined): Frame[] {
    const list = f === undefined ? [] : typeof f === "string" ? [f] : [...f];
    for (const fr of list) {
      if (typeof fr !== "string" || Location.parse(fr) === undefined) {
        this.fail(at, `frame ${JSON.stringify(fr)} is not of the form defname@file:line:start-end`);
      }
    }
    return list;
  }

  uniqueName(at: string, kind: string, name: string, taken: Iterable<string>): string {
    if (!/^[A-Za-z0-9_.-]+$/.test(name)) {
      this.fail(at, `${kind} name ${JSON.stringify(name)} is invalid`);
    }
    for (const t of taken) {
      if (t === name) this.fail(at, `${kind} name ${JSON.stringify(name)} is used twice`);
    }
    return name;
  }
}

/** Memprof control of one domain (`Gc.Memprof` called from it). */
export class MemprofControl {
  constructor(private readonly r: Recorder, private readonly domain: string) {}

  /** `Gc.Memprof.start`. */
  start(args: StartArgs = {}): ProfileRef {
    const at = this.r.nextAt();
    const name = this.r.uniqueName(
      at,
      "profile",
      args.name ?? `p${this.r.profiles.length + 1}`,
      this.r.profiles,
    );
    this.r.profiles.push(name);
    const profile: ProfileSpec = {
      name,
      samplingRate: args.samplingRate ?? NaN, // filled from settings by scenario()
      callstackSize: args.callstackSize ?? NaN,
      tracker: args.tracker ?? {},
    };
    this.r.push({ at, kind: "memprofStart", domain: this.domain, profile });
    return { name };
  }

  /** `Gc.Memprof.stop`. */
  stop(): void {
    this.r.push({ at: this.r.nextAt(), kind: "memprofStop", domain: this.domain });
  }

  /** `Gc.Memprof.discard`. */
  discard(profile: ProfileRef | string): void {
    const name = typeof profile === "string" ? profile : profile.name;
    this.r.push({
      at: this.r.nextAt(),
      kind: "memprofDiscard",
      domain: this.domain,
      profile: name,
    });
  }
}

/** A systhread of a domain. */
export class ThreadBuilder {
  constructor(
    private readonly r: Recorder,
    /** Its domain. */
    readonly domain: string,
    /** Its name. */
    readonly name: string,
  ) {}

  /** This thread takes the domain lock. */
  switchTo(): void {
    this.r.push({
      at: this.r.nextAt(),
      kind: "threadSwitch",
      domain: this.domain,
      thread: this.name,
    });
  }

  /** This thread terminates (`Thread.exit`). */
  exit(): void {
    this.r.push({
      at: this.r.nextAt(),
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

  constructor(private readonly r: Recorder, readonly name: string) {
    this.memprof = new MemprofControl(r, name);
  }

  /** One block of `size` words. */
  alloc(size: SizeSpec, opts: AllocOptions = {}): this {
    const at = this.r.nextAt();
    const source = opts.source ?? "caml";
    this.r.push({
      at,
      kind: "alloc",
      domain: this.name,
      size,
      source,
      lifetime: opts.lifetime ?? keep.drop,
      frames: this.r.frames(at, opts.at),
      ...(opts.customMem !== undefined ? { customMem: opts.customMem } : {}),
    });
    return this;
  }

  /** A combined allocation: several blocks at one poll point, `sizes` in the compiler's layout
   * order (e.g. `(i, i, i) :: l` is `[2, 3]`: the cons cell first, then the tuple). */
  allocCombined(sizes: readonly SizeSpec[], opts: CombinedOptions = {}): this {
    const at = this.r.nextAt();
    const a = opts.at;
    let frames: Frame[][];
    if (a === undefined || typeof a === "string" || a.every((x) => typeof x === "string")) {
      const shared = this.r.frames(at, a as Frame | readonly Frame[] | undefined);
      frames = sizes.map(() => shared);
    } else {
      const per = a as readonly (readonly Frame[])[];
      if (per.length !== sizes.length) {
        this.r.fail(at, `allocCombined has ${sizes.length} sizes but ${per.length} frame lists`);
      }
      frames = per.map((f) => this.r.frames(at, f));
    }
    const l = opts.lifetime ?? keep.drop;
    const lifetimes = Array.isArray(l) ? [...l] : sizes.map(() => l as Lifetime);
    if (lifetimes.length !== sizes.length) {
      this.r.fail(at, `allocCombined has ${sizes.length} sizes but ${lifetimes.length} lifetimes`);
    }
    this.r.push({
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
    const at = this.r.nextAt();
    this.r.push({
      at,
      kind: "unmarshal",
      domain: this.name,
      blocks: [...blocks],
      lifetime: opts.lifetime ?? keep.drop,
      frames: this.r.frames(at, opts.at),
    });
    return this;
  }

  /** Repeats `body` `count` times (it is recorded once). */
  repeat(count: number, body: (i: LoopIndex) => void): this {
    const at = this.r.nextAt();
    const index = new LoopIndex(this.r, this.name, ++this.#loopDepth);
    let steps: Step[];
    try {
      steps = this.r.nested(at, () => body(index));
    } finally {
      index.close();
      this.#loopDepth--;
    }
    this.r.push({ at, kind: "repeat", domain: this.name, count, body: steps });
    return this;
  }

  /** `Domain.join target` on this domain: `target`'s function returns after its last step,
   * and this domain waits for it to terminate. */
  join(target: DomainBuilder): void {
    this.r.push({ at: this.r.nextAt(), kind: "join", domain: this.name, target: target.name });
  }

  /** Runs `body` inside a call of `frame` (it is on the callstack of allocations in `body`). */
  call(frame: Frame, body: () => void): this {
    const at = this.r.nextAt();
    const [f] = this.r.frames(at, frame);
    const steps = this.r.nested(at, body);
    this.r.push({ at, kind: "call", domain: this.name, frame: f, body: steps });
    return this;
  }

  /** `Gc.minor ()`. */
  minorGc(): this {
    return this.gc("minor");
  }
  /** `Gc.major_slice 0`. */
  majorSlice(): this {
    return this.gc("majorSlice");
  }
  /** `Gc.major ()`. */
  majorGc(): this {
    return this.gc("major");
  }
  /** `Gc.full_major ()`. */
  fullMajor(): this {
    return this.gc("fullMajor");
  }
  /** `Gc.compact ()`. */
  compact(): this {
    return this.gc("compact");
  }

  private gc(what: GcKind): this {
    this.r.push({ at: this.r.nextAt(), kind: "gc", domain: this.name, what });
    return this;
  }

  /** A poll point (where pending callbacks run). */
  poll(): this {
    this.r.push({ at: this.r.nextAt(), kind: "poll", domain: this.name });
    return this;
  }

  /** `Domain.spawn`: a new domain, which inherits this domain's profile. */
  spawn(name?: string): DomainBuilder {
    const at = this.r.nextAt();
    const child = this.r.uniqueName(at, "domain", name ?? `d${this.r.domains.length}`, [
      ...this.r.domains,
      ...this.r.threads.keys(),
    ]);
    this.r.domains.push(child);
    this.r.threads.set(child, child);
    this.r.push({ at, kind: "spawn", domain: this.name, child });
    return new DomainBuilder(this.r, child);
  }

  /** The domain terminates; its tracked blocks go to the global orphans. */
  terminate(): void {
    this.r.push({ at: this.r.nextAt(), kind: "terminate", domain: this.name });
  }

  /** `Thread.create`: a new systhread of this domain (not yet running). */
  thread(name: string): ThreadBuilder {
    const at = this.r.nextAt();
    this.r.uniqueName(at, "thread", name, [...this.r.threads.keys(), ...this.r.domains]);
    this.r.threads.set(name, this.name);
    this.r.push({ at, kind: "threadCreate", domain: this.name, thread: name });
    return new ThreadBuilder(this.r, this.name, name);
  }

  /** A blocking section of the running thread; other threads may run inside `body`. */
  blocking(body: () => void = () => {}): this {
    const at = this.r.nextAt();
    const steps = this.r.nested(at, body);
    this.r.push({ at, kind: "blocking", domain: this.name, body: steps });
    return this;
  }

  /** `try body with _ -> ()`: an OCaml exception raised by a callback during `body` skips the
   * rest of `body` and is logged as caught. */
  attempt(body: () => void): this {
    const at = this.r.nextAt();
    const steps = this.r.nested(at, body);
    this.r.push({ at, kind: "attempt", domain: this.name, body: steps });
    return this;
  }

  /** An external allocation traced through the tracer (`Memtrace.External.alloc`). */
  extAlloc(bytes: SizeSpec, lifetime: Lifetime = keep.drop): this {
    this.r.push({ at: this.r.nextAt(), kind: "extAlloc", domain: this.name, bytes, lifetime });
    return this;
  }

  /** A runtime_events user event. */
  userEvent(name: string, event: UserEventSpec): this {
    this.r.push({ at: this.r.nextAt(), kind: "userEvent", domain: this.name, name, event });
    return this;
  }
}

/** The top of the DSL, given to a scenario's build function. */
export class ScenarioBuilder {
  /** The initial domain. */
  readonly main: DomainBuilder;
  /** runtime_events control. */
  readonly events: { start(): void; pause(): void; resume(): void };

  constructor(private readonly r: Recorder) {
    this.main = new DomainBuilder(r, "main");
    this.events = {
      start: () => r.push({ at: r.nextAt(), kind: "eventsStart" }),
      pause: () => r.push({ at: r.nextAt(), kind: "eventsPause" }),
      resume: () => r.push({ at: r.nextAt(), kind: "eventsResume" }),
    };
  }

  /** Drops the blocks kept with `keep.until(name)`. */
  release(name: string): void {
    this.r.push({ at: this.r.nextAt(), kind: "release", name });
  }
}

const DEFAULTS = {
  seed: 1,
  samplingRate: 1e-4,
  callstackSize: 16,
  minorHeapWords: 262_144,
  ringLog2: 16,
  clockTickNs: 1_000,
  maxDomains: 16,
  pid: 4242,
  log: { format: "default" },
} as const;

/** Defines a scenario: records the steps `build` declares, fills defaults, validates. Throws
 * {@linkcode ScenarioError} for an invalid scenario. */
export function scenario(
  settings: ScenarioSettings,
  build: (s: ScenarioBuilder) => void,
): Scenario {
  const name = settings.name;
  if (typeof name !== "string" || !/^[A-Za-z0-9_.-]+$/.test(name)) {
    throw new ScenarioError(
      String(name),
      "settings",
      "name must be letters, digits, '-', '_' or '.'",
    );
  }
  const r = new Recorder(name);
  build(new ScenarioBuilder(r));
  const s = {
    ...DEFAULTS,
    ...Object.fromEntries(Object.entries(settings).filter(([, v]) => v !== undefined)),
    description: settings.description ?? "",
    externalSamplingRate: settings.externalSamplingRate,
  } as Scenario["settings"];
  const steps = fillProfileDefaults(r.steps, s);
  const result: Scenario = {
    settings: s,
    steps,
    domains: r.domains,
    threads: r.threads,
    profiles: r.profiles,
  };
  validateScenario(result);
  return result;
}

/** Profiles started without a rate or stack size take the scenario's. */
function fillProfileDefaults(steps: readonly Step[], s: Scenario["settings"]): Step[] {
  const fix = (p: ProfileSpec): ProfileSpec => ({
    ...p,
    samplingRate: Number.isNaN(p.samplingRate) ? s.samplingRate : p.samplingRate,
    callstackSize: Number.isNaN(p.callstackSize) ? s.callstackSize : p.callstackSize,
  });
  return steps.map((st): Step => {
    switch (st.kind) {
      case "memprofStart":
        return { ...st, profile: fix(st.profile) };
      case "repeat":
      case "call":
      case "blocking":
      case "attempt":
        return { ...st, body: fillProfileDefaults(st.body, s) };
      default:
        return st;
    }
  });
}
