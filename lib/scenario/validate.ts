/**
 * Checks a scenario before it runs, so that a mistake is reported with the scenario's name, the
 * step and the problem instead of surfacing half-way through a run.
 *
 * Parameter checks are complete: every number must be finite (whole where a count is meant),
 * every options object may hold only the keys the DSL knows (a mistyped one is refused with a
 * suggestion), names must be plain, steps may nest at most {@linkcode MAX_NESTING} deep, and
 * the settings must fit what the writers accept (ring size, the last timestamp of the run).
 * Problems inside a callback's actions name them: `step 3, callback allocMinor, act.start: …`.
 *
 * State checks (memprof started/stopped, domains alive, threads) follow the steps in order,
 * running each `repeat` body twice when it repeats and changes that state; when callbacks
 * themselves start, stop or discard profiles, the memprof state checks are left to run time
 * (the engine reports those failures with the step too), and so are all state checks of a
 * scenario too large to follow (over a million steps followed).
 * @module
 */
import { DEFAULT_GC_TIME } from "../runtime/gc_time.ts";
import { ScenarioError } from "./errors.ts";
import type {
  CallbackAction,
  CallbackSpec,
  Lifetime,
  ProfileSpec,
  Scenario,
  SizeSpec,
  Step,
  Trigger,
  UserEventSpec,
} from "./spec.ts";

import { maxSize } from "./polling.ts";
import {
  BODY_KINDS,
  countLeafSteps,
  findStep,
  forEachStep,
  hasBody,
  isStepKind,
  STEP_FAMILIES,
  type StepFamily,
} from "./walk.ts";
import { MAX_YOUNG_WOSIZE } from "../runtime/mod.ts";
import { discard, isSampling, OCamlFailure, Profile, ProfileStatus } from "../memprof/mod.ts";
import { MEMPROF_FAILURES } from "../memprof/profile.ts";
import { MAX_DOMAINS_MAX } from "../runtime_events/mod.ts";
import {
  computeLayout,
  CUSTOM_EVENT_NAME_LENGTH,
  MAX_CUSTOM_EVENTS,
  MIN_LOG_WSIZE,
} from "../runtime_events/layout.ts";
import { describe, isObject, isRecord, unknownKey } from "./_options.ts";
import {
  ACTION_KEYS,
  ALLOC_SOURCES,
  EVENT_KEYS,
  GC_KINDS,
  LIFETIME_KEYS,
  OPTION_KEYS,
  TRIGGER_KEYS,
} from "./_schema.ts";
import {
  formatCount,
  FRAME_RULE,
  isFrame,
  isLabelName,
  isPlainName,
  LABEL_NAME_RULE,
  MAX_CLOCK_NS,
  MAX_NESTING,
  MAX_RING_IMAGE_BYTES,
  NESTING_PROBLEM,
  PLAIN_NAME_RULE,
} from "./_limits.ts";

/** Throws {@linkcode ScenarioError} for the first problem found. */
export function validateScenario(sc: Scenario): void {
  new Validator(sc).run();
}

/** Largest custom user event payload the ring's writer accepts. */
const MAX_CUSTOM_PAYLOAD = 1023;
/** Steps the state checks follow at most before leaving them to run time. */
const FOLLOW_BUDGET = 1_000_000;
/** Thrown to stop following when the budget is spent. */
const OVER_BUDGET = Symbol("over budget");
const MAX_WORDS = 1 << 30;

const encoder = new TextEncoder();

class Validator {
  readonly #name: string;
  readonly #untilNames = new Set<string>();
  readonly #releaseNames = new Set<string>();
  readonly #eventNames = new Set<string>();
  #profileActions = false;
  #eventsStarted = false;
  // State followed along the steps.
  readonly #alive = new Set<string>(["main"]);
  readonly #threadAlive = new Map<string, boolean>();
  /** Each domain's profile: memprof's own profiles, whose status memprof's own checks read. */
  readonly #running = new Map<string, Profile | null>();
  /** The profiles by name, as started last. */
  readonly #profilesByName = new Map<string, Profile>();
  #spawned = 1;
  #followed = 0;
  readonly #statefulBodies = new WeakMap<readonly Step[], boolean>();
  readonly #memprofBodies = new WeakMap<readonly Step[], boolean>();

  readonly #sc: Scenario;

  constructor(sc: Scenario) {
    this.#sc = sc;
    this.#name = isObject(sc?.settings) ? String(sc.settings.name) : "?";
  }

  #fail(at: string, problem: string, within = ""): never {
    throw new ScenarioError(this.#name, at, problem, within);
  }

  /** Fails unless `v` is a number: every numeric field is checked for its type first, so that
   * a number written as a string (`samplingRate: "0.01"`, which a plain-JavaScript or unchecked
   * module can pass) is said to be a string, not a number out of range. */
  #number(at: string, v: unknown, what: string, within = ""): void {
    if (typeof v !== "number") {
      this.#fail(at, `${what} must be a number, got ${describe(v)}`, within);
    }
  }

  run(): void {
    this.#shape();
    this.#settings();
    this.#declaredNames();
    this.#scan();
    this.#loopRefs();
    for (const n of this.#untilNames) {
      if (!this.#releaseNames.has(n)) {
        this.#fail("settings", `blocks are kept until "${n}" but nothing releases "${n}"`);
      }
    }
    this.#limits();
    this.#threadPrograms();
    this.#threadAlive.set("main", true);
    this.#running.set("main", null);
    try {
      this.#follow(this.#sc.steps);
    } catch (e) {
      if (e !== OVER_BUDGET) throw e;
      // Too large to follow: the engine checks the state of every step as it runs it.
    }
  }

  /** The scenario object itself (a module may export anything). */
  #shape(): void {
    const sc = this.#sc as unknown as Record<string, unknown>;
    if (!isObject(sc) || !isObject(sc.settings)) {
      this.#fail("settings", `not a scenario: ${describe(sc)}`);
    }
    if (!Array.isArray(sc.steps) || !Array.isArray(sc.domains) || !Array.isArray(sc.profiles)) {
      this.#fail("settings", "not a scenario: steps, domains and profiles must be arrays");
    }
    if (!(sc.threads instanceof Map)) {
      this.#fail("settings", "not a scenario: threads must be a Map");
    }
  }

  #settings(): void {
    const s = this.#sc.settings;
    const known = unknownKey(s, OPTION_KEYS.settings, "settings", { prefix: false });
    if (known !== undefined) this.#fail("settings", known);
    if (!isPlainName(s.name)) {
      this.#fail("settings", `name must be ${PLAIN_NAME_RULE}, got ${describe(s.name)}`);
    }
    if (typeof s.description !== "string") {
      this.#fail("settings", `description must be a string, got ${describe(s.description)}`);
    }
    const int = (v: number, what: string, min: number, max = Number.MAX_SAFE_INTEGER) => {
      this.#number("settings", v, what);
      if (!Number.isInteger(v) || v < min || v > max) {
        this.#fail("settings", `${what} must be an integer in [${min}, ${max}], got ${v}`);
      }
    };
    int(s.seed, "seed", 0, 2 ** 32 - 1);
    this.#rate("settings", s.samplingRate);
    if (s.externalSamplingRate !== undefined) {
      this.#rate("settings", s.externalSamplingRate, "externalSamplingRate: ");
    }
    int(s.callstackSize, "callstackSize", 0, 1 << 20);
    int(s.minorHeapWords, "minorHeapWords", 4096, 1 << 28);
    if (s.minorHeapWords % 2 !== 0) this.#fail("settings", "minorHeapWords must be even");
    int(s.ringLog2, "ringLog2", MIN_LOG_WSIZE, 24);
    int(s.clockTickNs, "clockTickNs", 1, 1e12);
    int(s.maxDomains, "maxDomains", 1, MAX_DOMAINS_MAX);
    int(s.pid, "pid", 1, 2 ** 31 - 1);
    this.#log(s.log);
    this.#gcTime(s.gcTime);
  }

  /** The names of the domains, threads and profiles the scenario declares. */
  #declaredNames(): void {
    const check = (kind: string, name: unknown) => {
      if (!isLabelName(name)) {
        this.#fail(
          "settings",
          `${kind} name ${JSON.stringify(name)} is invalid: names are ${LABEL_NAME_RULE}`,
        );
      }
    };
    for (const d of this.#sc.domains) check("domain", d);
    for (const [t, d] of this.#sc.threads) {
      check("thread", t);
      check("domain", d);
    }
    for (const p of this.#sc.profiles) check("profile", p);
  }

  /** Checks the frames `frames` of a step (an array of them). */
  #frames(at: string, frames: unknown): void {
    if (!Array.isArray(frames)) {
      this.#fail(at, `frames must be an array of frames, got ${describe(frames)}`);
    }
    for (const f of frames) {
      if (!isFrame(f)) this.#fail(at, `frame ${JSON.stringify(f)} is not ${FRAME_RULE}`);
    }
  }

  /** Checks a name a step gives to a domain, a thread or a group of kept blocks. */
  #stepName(at: string, kind: string, name: unknown): void {
    if (!isLabelName(name)) {
      this.#fail(
        at,
        `${kind} name ${JSON.stringify(name)} is invalid: names are ${LABEL_NAME_RULE}`,
      );
    }
  }

  #gcTime(t: unknown): void {
    if (t === undefined) return;
    if (!isRecord(t)) this.#fail("settings", `gcTime must be an object, got ${describe(t)}`);
    const known = Object.keys(DEFAULT_GC_TIME);
    for (const [k, v] of Object.entries(t)) {
      if (!known.includes(k)) {
        this.#fail("settings", `gcTime has no key \`${k}\` (known: ${known.join(", ")})`);
      }
      this.#number("settings", v, `gcTime.${k}`);
      if (typeof v !== "number" || !Number.isFinite(v) || v < 0) {
        this.#fail("settings", `gcTime.${k} must be a finite number of nanoseconds >= 0, got ${v}`);
      }
    }
  }

  #log(log: unknown): void {
    if (!isRecord(log)) this.#fail("settings", `log must be an object, got ${describe(log)}`);
    const keys: Record<string, readonly string[]> = {
      default: ["format"],
      memprof_exact: ["format", "program"],
      memprof_lifecycle: ["format", "program", "keep"],
    };
    const format = log.format;
    if (typeof format !== "string" || !(format in keys)) {
      this.#fail(
        "settings",
        `unknown log format ${JSON.stringify(format)} (default, memprof_exact, memprof_lifecycle)`,
      );
    }
    const bad = unknownKey(log, keys[format], `log ${format}`);
    if (bad !== undefined) this.#fail("settings", bad);
    if (format !== "default" && typeof log.program !== "string") {
      this.#fail("settings", `log ${format} needs a program name (a string)`);
    }
    if (format === "memprof_lifecycle") {
      this.#number("settings", log.keep, "log memprof_lifecycle: keep");
    }
    if (format === "memprof_lifecycle" && !isCount(log.keep, 0)) {
      this.#fail(
        "settings",
        `log memprof_lifecycle: keep must be a whole number ≥ 0, got ${log.keep}`,
      );
    }
  }

  /** What the writers accept, given the steps the run executes. */
  #limits(): void {
    const s = this.#sc.settings;
    const steps = countLeafSteps(this.#sc.steps);
    const lastNs = steps * s.clockTickNs;
    if (!(lastNs <= MAX_CLOCK_NS)) {
      this.#fail(
        "settings",
        `the virtual clock would reach about ${formatCount(lastNs)} ns (${
          formatCount(steps)
        } steps × clockTickNs ${s.clockTickNs}), beyond 2^53 ns, the latest time trace and ring ` +
          `timestamps hold exactly: lower clockTickNs or the number of steps`,
      );
    }
    if (this.#eventsStarted) {
      const bytes = computeLayout(s.maxDomains, s.ringLog2).totalSize;
      if (bytes > MAX_RING_IMAGE_BYTES) {
        this.#fail(
          "settings",
          `the runtime_events ring image would take ${formatCount(bytes)} bytes ` +
            `(maxDomains ${s.maxDomains} × 2^${s.ringLog2} words), more than ${
              formatCount(MAX_RING_IMAGE_BYTES)
            }: lower ringLog2 or maxDomains`,
        );
      }
    }
  }

  #rate(at: string, r: unknown, what = "", within = ""): void {
    this.#number(at, r, `${what}sampling rate`, within);
    if (typeof r !== "number" || !(r >= 0 && r <= 1)) {
      this.#fail(at, `${what}sampling rate must be within [0, 1], got ${r}`, within);
    }
  }

  /** Checks the collection `what` of a `gc` step or action: one of {@linkcode GC_KINDS};
   * `within`: where in the step. */
  #gcKind(at: string, what: unknown, within = ""): void {
    if (!(GC_KINDS as readonly unknown[]).includes(what)) {
      this.#fail(at, `unknown collection ${JSON.stringify(what)} (${GC_KINDS.join(", ")})`, within);
    }
  }

  /** Checks size `s` of `what`: whole numbers of words in [`min`, `max`] (default 1 to
   * {@linkcode MAX_WORDS}); `within`: where in the step. */
  #size(
    at: string,
    s: SizeSpec,
    what: string,
    { min = 1, max = MAX_WORDS, within = "" }: {
      readonly min?: number;
      readonly max?: number;
      readonly within?: string;
    } = {},
  ): void {
    const ok = (n: unknown) => Number.isInteger(n) && (n as number) >= min && (n as number) <= max;
    const bad = (detail: string): never => this.#fail(at, `${what}: ${detail}`, within);
    if (typeof s === "number") {
      if (!ok(s)) bad(`size must be an integer in [${min}, ${max}], got ${s}`);
      return;
    }
    if (!isObject(s)) {
      bad(`a size is a number or sizes.uniform/choice/geometric(…), got ${describe(s)}`);
    }
    const keys = Object.keys(s);
    if (keys.length !== 1 || !["uniform", "choice", "geometric"].includes(keys[0])) {
      bad(`a size is a number or sizes.uniform/choice/geometric(…), got ${describe(s)}`);
    }
    if ("uniform" in s) {
      const u = s.uniform as unknown;
      const [a, b] = Array.isArray(u) && u.length === 2 ? u : [NaN, NaN];
      for (const x of [a, b]) {
        if (typeof x !== "number") bad(`uniform's bounds must be numbers, got ${describe(x)}`);
      }
      if (!ok(a) || !ok(b) || a > b) {
        bad(`uniform(${a}, ${b}) needs integers ${min} ≤ min ≤ max ≤ ${max}`);
      }
    } else if ("choice" in s) {
      const c = s.choice as unknown;
      if (!Array.isArray(c) || c.length === 0 || c.length > 1 << 20 || !c.every(ok)) {
        const wrong = Array.isArray(c) ? c.find((x) => !ok(x)) : c;
        bad(
          `choice needs one or more integers in [${min}, ${max}]` +
            (wrong === undefined ? "" : `, got ${describe(wrong)}`),
        );
      }
    } else {
      const g = s.geometric as unknown;
      if (!isRecord(g)) bad(`sizes.geometric needs { mean, max? }, got ${describe(g)}`);
      const k = unknownKey(g as object, ["mean", "max"], "sizes.geometric");
      if (k !== undefined) bad(k);
      const { mean, max: cap } = g as { mean: unknown; max?: unknown };
      this.#number(at, mean, `${what}: geometric mean`, within);
      if (cap !== undefined) this.#number(at, cap, `${what}: geometric max`, within);
      if (typeof mean !== "number" || !(mean >= 1 && mean <= max)) {
        bad(`geometric mean must be a number in [1, ${max}], got ${mean}`);
      }
      if (cap !== undefined && !ok(cap)) {
        bad(`geometric max must be an integer in [${min}, ${max}], got ${cap}`);
      }
    }
  }

  /** Every `when` refers to a loop enclosing it on its domain. */
  #loopRefs(): void {
    const none: ReadonlyMap<string, number> = new Map();
    forEachStep(this.#sc.steps, none, (st, depths) => {
      if (st.kind === "when" && !(st.loop >= 1 && st.loop <= loopDepth(depths, st.domain))) {
        this.#fail(st.at, `loop ${st.loop} does not enclose this step on domain "${st.domain}"`);
      }
      if (st.kind !== "repeat") return depths;
      const inner = new Map(depths);
      inner.set(st.domain, loopDepth(depths, st.domain) + 1);
      return inner;
    });
  }

  /** Checks lifetime `l` (`nested`: inside a `keep.cycle`; `within`: where in the step). */
  #lifetime(
    at: string,
    l: Lifetime,
    { within = "", nested = false }: { readonly within?: string; readonly nested?: boolean } = {},
  ): void {
    if (!isObject(l) || typeof l.kind !== "string" || !Object.hasOwn(LIFETIME_KEYS, l.kind)) {
      this.#fail(
        at,
        `a lifetime is keep.drop, keep.forever or keep.steps/until/list/ring/cycle(…), got ${
          describe(l)
        }`,
        within,
      );
    }
    const bad = unknownKey(l, LIFETIME_KEYS[l.kind], `keep.${l.kind}`);
    if (bad !== undefined) this.#fail(at, bad, within);
    const name = (n: unknown, what: string) => {
      if (!isLabelName(n)) {
        this.#fail(at, `${what} needs a name of ${LABEL_NAME_RULE}, got ${describe(n)}`, within);
      }
    };
    switch (l.kind) {
      case "steps":
        this.#number(at, l.steps, "keep.steps", within);
        if (!isCount(l.steps, 1)) {
          this.#fail(at, `keep.steps needs a whole number ≥ 1, got ${l.steps}`, within);
        }
        if (l.until !== undefined) {
          name(l.until, "keep.steps");
          this.#untilNames.add(l.until);
        }
        break;
      case "until":
      case "list":
        name(l.name, `keep.${l.kind}`);
        this.#untilNames.add(l.name);
        break;
      case "ring":
        this.#number(at, l.slots, "keep.ring's slots", within);
        if (!isCount(l.slots, 1) || l.slots > MAX_WORDS) {
          this.#fail(
            at,
            `keep.ring needs a whole number of slots in [1, ${MAX_WORDS}], got ${l.slots}`,
            within,
          );
        }
        if (l.name !== undefined) name(l.name, "keep.ring");
        break;
      case "cycle":
        if (nested) this.#fail(at, "keep.cycle cannot nest", within);
        if (!Array.isArray(l.lifetimes) || l.lifetimes.length === 0) {
          this.#fail(at, "keep.cycle needs at least one lifetime", within);
        }
        for (const x of l.lifetimes) {
          if (isObject(x) && x.kind === "cycle") this.#fail(at, "keep.cycle cannot nest", within);
          this.#lifetime(at, x, { within, nested: true });
        }
        break;
    }
  }

  #profile(at: string, p: ProfileSpec, within: string): void {
    if (!isObject(p)) {
      this.#fail(
        at,
        `a profile is { ${OPTION_KEYS.profile.join(", ")} }, got ${describe(p)}`,
        within,
      );
    }
    const bad = unknownKey(p, OPTION_KEYS.profile, "profile");
    if (bad !== undefined) this.#fail(at, bad, within);
    if (p.name !== undefined && !isLabelName(p.name)) {
      this.#fail(
        at,
        `profile name ${JSON.stringify(p.name)} is invalid: names are ${LABEL_NAME_RULE}`,
        within,
      );
    }
    this.#rate(at, p.samplingRate, "", within);
    this.#number(at, p.callstackSize, "callstack size", within);
    if (!isCount(p.callstackSize, 0) || p.callstackSize > 1 << 20) {
      this.#fail(
        at,
        `callstack size must be a whole number ≥ 0 (at most ${1 << 20}), got ${p.callstackSize}`,
        within,
      );
    }
    if (!isObject(p.tracker)) {
      this.#fail(at, `tracker must be an object, got ${describe(p.tracker)}`, within);
    }
    const badKind = unknownKey(p.tracker, OPTION_KEYS.tracker, "tracker");
    if (badKind !== undefined) this.#fail(at, badKind, within);
    for (const [kind, spec] of Object.entries(p.tracker)) {
      if (spec === undefined) continue;
      this.#callback(at, spec, join(within, `callback ${kind}`));
    }
  }

  #callback(at: string, spec: CallbackSpec, within: string): void {
    if (!isObject(spec)) {
      this.#fail(at, `a callback is cb.track() or cb.none(), got ${describe(spec)}`, within);
    }
    const bad = unknownKey(spec, OPTION_KEYS.callback, "callback", { prefix: false });
    if (bad !== undefined) this.#fail(at, bad, within);
    if (spec.result !== "track" && spec.result !== "none") {
      this.#fail(at, `result must be "track" or "none", got ${describe(spec.result)}`, within);
    }
    if (!Array.isArray(spec.actions)) {
      this.#fail(at, `actions must be an array, got ${describe(spec.actions)}`, within);
    }
    for (const entry of spec.actions) {
      if (!isObject(entry)) this.#fail(at, `an action entry is { when, action }`, within);
      const k = unknownKey(entry, OPTION_KEYS.actionEntry, "action entry");
      if (k !== undefined) this.#fail(at, k, within);
      this.#trigger(at, entry.when, within);
      this.#action(at, entry.action, within);
    }
  }

  #trigger(at: string, when: Trigger, within: string): void {
    if (
      !isObject(when) || typeof when.kind !== "string" || !Object.hasOwn(TRIGGER_KEYS, when.kind)
    ) {
      this.#fail(
        at,
        `a trigger is on(n), every(period, …) or always(…), got ${describe(when)}`,
        within,
      );
    }
    const bad = unknownKey(when, TRIGGER_KEYS[when.kind], `trigger ${when.kind}`);
    if (bad !== undefined) this.#fail(at, bad, within);
    if (when.kind === "nth") this.#number(at, when.n, "on: call number", within);
    if (when.kind === "every") {
      this.#number(at, when.period, "every(): period", within);
      this.#number(at, when.offset, "every(): offset", within);
    }
    if (when.kind === "nth" && !isCount(when.n, 1)) {
      this.#fail(at, `on: call number must be a whole number ≥ 1, got ${when.n}`, within);
    }
    if (when.kind === "every" && !(isCount(when.period, 1) && isCount(when.offset, 1))) {
      this.#fail(
        at,
        `every() needs a period and offset ≥ 1 (whole numbers), got ${when.period} and ${when.offset}`,
        within,
      );
    }
  }

  #action(at: string, a: CallbackAction, outer: string): void {
    if (typeof a === "function") {
      const f = (a as { name?: string }).name ?? "";
      this.#fail(at, `an action is act.…(…), got a function: call it (act.${f}())`, outer);
    }
    if (!isObject(a) || typeof a.kind !== "string" || !Object.hasOwn(ACTION_KEYS, a.kind)) {
      this.#fail(at, `unknown action: ${describe(a)}`, outer);
    }
    const within = join(outer, `act.${a.kind}`);
    const bad = unknownKey(a, ACTION_KEYS[a.kind], `act.${a.kind}`, { prefix: false });
    if (bad !== undefined) this.#fail(at, bad, within);
    switch (a.kind) {
      case "start":
        this.#profileActions = true;
        this.#profile(at, a.profile, within);
        break;
      case "stop":
      case "discard":
        this.#profileActions = true;
        break;
      case "alloc":
        this.#size(at, a.words, "alloc", { max: MAX_YOUNG_WOSIZE, within });
        this.#lifetime(at, a.lifetime, { within });
        break;
      case "switchThread":
      case "yieldTo":
        if (typeof a.thread !== "string" || !this.#sc.threads.has(a.thread)) {
          this.#fail(at, `no thread named "${a.thread}"`, within);
        }
        break;
      case "raise":
        if (typeof a.exn !== "string" || !/^[A-Z][A-Za-z0-9_']*$/.test(a.exn)) {
          this.#fail(at, `"${a.exn}" is not an OCaml exception name`, within);
        }
        break;
      case "gc":
        this.#gcKind(at, a.what, within);
        break;
      case "exitThread":
        break;
    }
    if (a.kind === "yieldTo" && !this.#canRun(a.thread)) {
      this.#fail(
        at,
        `"${a.thread}" is not a thread with a program nor a domain's main thread`,
        within,
      );
    }
    if (a.kind === "yieldToNext") {
      if (!Array.isArray(a.threads) || a.threads.length < 2) {
        this.#fail(at, "yieldToNext needs a list of at least two threads", within);
      }
      for (const t of a.threads) {
        if (typeof t !== "string" || !this.#canRun(t)) {
          this.#fail(
            at,
            `${describe(t)} is not a thread with a program nor a domain's main thread`,
            within,
          );
        }
      }
      if (new Set(a.threads).size !== a.threads.length) {
        this.#fail(at, "yieldToNext names a thread twice", within);
      }
    }
    if ((a.kind === "switchThread" || a.kind === "exitThread") && this.#programDomains().size > 0) {
      this.#fail(at, OLD_AND_NEW_THREADS, within);
    }
  }

  /** The systhreads with programs of their own (made at the top level), each with the domain
   * that creates it. */
  #programDomains(): ReadonlyMap<string, string> {
    if (this.#programNames === undefined) {
      const names = new Map<string, string>();
      for (const st of this.#sc.steps) {
        // Called while the steps are being checked: a later one may not be a step yet.
        if (isObject(st) && st.kind === "threadSpawn") names.set(st.thread, st.domain);
      }
      this.#programNames = names;
    }
    return this.#programNames;
  }
  #programNames: ReadonlyMap<string, string> | undefined;

  /** Whether the baton can be passed to thread `name` from a callback: one with a program, or
   * a domain's main thread (named after the domain). Whether it is the same domain's as the
   * thread running the callback is known at run time. */
  #canRun(name: string): boolean {
    return this.#programDomains().has(name) || this.#sc.domains.includes(name);
  }

  /**
   * Systhreads with programs of their own (`d.thread(name, body)`): created by a domain at the
   * top level of its steps, their programs hold steps of that domain only, and do not spawn,
   * end or join domains; `yieldTo`, `join` and `act.yieldTo` name a thread with a program of
   * the same domain (or, but for `join`, the domain's main thread, named as the domain) other
   * than the one running; and the older form (threads taking over the domain's steps at
   * `switchTo`, `blocking` sections holding other threads' steps) is not mixed with them. The
   * walk's context is the thread whose program holds the step (null: the top level) and the
   * bodies around it there.
   */
  #threadPrograms(): void {
    const programs = this.#programDomains();
    const top: ProgramContext = { program: null, depth: 0 };
    forEachStep(this.#sc.steps, top, (st, { program, depth }): ProgramContext => {
      const at = st.at;
      const home = program === null ? undefined : programs.get(program);
      if (home !== undefined && "domain" in st && st.domain !== home) {
        this.#fail(
          at,
          `a step of domain "${st.domain}" in the program of thread "${program}", a thread of ` +
            `domain "${home}"`,
        );
      }
      switch (st.kind) {
        case "threadSpawn":
          if (program !== null || depth > 0) {
            this.#fail(
              at,
              "threads with programs are created by their domain at the top level of its steps",
            );
          }
          return { program: st.thread, depth: 0 };
        case "spawn":
        case "terminate":
        case "join":
          if (program !== null) {
            this.#fail(
              at,
              `${st.kind} in the program of thread "${program}": domains are spawned, ended ` +
                "and joined by their main threads",
            );
          }
          break;
        case "threadCreate":
        case "threadSwitch":
        case "threadExit":
        case "blocking":
          if (programs.size > 0) this.#fail(at, OLD_AND_NEW_THREADS);
          break;
        case "yieldTo":
        case "threadJoin":
        case "threadYield": {
          if (st.kind === "threadYield") break;
          // The thread running the step: a program's, or the domain's main thread (named as the
          // domain).
          const self = program ?? st.domain;
          const yielding = st.kind === "yieldTo";
          // The target's domain: a program's, or a domain's own (its main thread, for yieldTo).
          const target = programs.get(st.thread) ??
            (yielding && this.#sc.domains.includes(st.thread) ? st.thread : undefined);
          if (target === undefined) {
            this.#fail(
              at,
              `"${st.thread}" is not a thread with a program${
                yielding ? " nor a domain's main thread" : ""
              }`,
            );
          }
          if (target !== st.domain) {
            this.#fail(
              at,
              `"${st.thread}" is a thread of domain "${target}": the baton passes between the ` +
                `threads of one domain ("${st.domain}" here)`,
            );
          }
          if (st.thread === self) {
            this.#fail(at, `thread "${self}" cannot ${yielding ? "yield to" : "join"} itself`);
          }
          break;
        }
        case "memprofStart":
        case "memprofStop":
        case "memprofDiscard":
          // When other threads run is known at run time only: so is memprof's state.
          if (program !== null) this.#profileActions = true;
          break;
      }
      return { program, depth: depth + 1 };
    });
  }

  #userEvent(at: string, name: string, ev: UserEventSpec): void {
    const bytes = typeof name === "string" ? encoder.encode(name) : undefined;
    if (
      bytes === undefined || bytes.length === 0 || bytes.length > CUSTOM_EVENT_NAME_LENGTH - 1 ||
      bytes.includes(0) || !name.isWellFormed()
    ) {
      this.#fail(
        at,
        `user event names must have 1 to ${
          CUSTOM_EVENT_NAME_LENGTH - 1
        } bytes (UTF-8) and no NUL, and be well-formed Unicode (no lone surrogate), got ${
          describe(name)
        }`,
      );
    }
    if (!isObject(ev) || typeof ev.type !== "string" || !Object.hasOwn(EVENT_KEYS, ev.type)) {
      this.#fail(
        at,
        `a user event is { type: "unit" | "int" | "span" | "custom", … }, got ${describe(ev)}`,
      );
    }
    const bad = unknownKey(ev, EVENT_KEYS[ev.type], `userEvent ${ev.type}`);
    if (bad !== undefined) this.#fail(at, bad);
    if (ev.type === "int") this.#number(at, ev.value, "an int user event's value");
    if (ev.type === "int" && !Number.isSafeInteger(ev.value)) {
      this.#fail(at, `an int user event needs a safe integer value, got ${ev.value}`);
    }
    if (ev.type === "span" && ev.phase !== "begin" && ev.phase !== "end") {
      this.#fail(at, `a span user event's phase is "begin" or "end", got ${describe(ev.phase)}`);
    }
    if (ev.type === "custom") {
      if (
        !Array.isArray(ev.bytes) || ev.bytes.length > MAX_CUSTOM_PAYLOAD ||
        !ev.bytes.every((b) => Number.isInteger(b) && b >= 0 && b <= 255)
      ) {
        const wrong = Array.isArray(ev.bytes)
          ? ev.bytes.find((b) => !(Number.isInteger(b) && b >= 0 && b <= 255))
          : ev.bytes;
        this.#fail(
          at,
          `custom user event bytes must be at most ${MAX_CUSTOM_PAYLOAD} integers in [0, 255]` +
            (wrong === undefined ? "" : `, got ${describe(wrong)}`),
        );
      }
    }
    if (!this.#eventNames.has(name)) {
      if (this.#eventNames.size >= MAX_CUSTOM_EVENTS) {
        this.#fail(at, `more than ${MAX_CUSTOM_EVENTS} user event names`);
      }
      this.#eventNames.add(name);
    }
  }

  /** Parameter checks of every step (first pass), each before the steps it holds. */
  #scan(): void {
    if (!Array.isArray(this.#sc.steps)) this.#fail("settings", "a body must be an array of steps");
    forEachStep(this.#sc.steps, { depth: 0, parent: "" }, (st, { depth, parent }) => {
      if (!isObject(st) || typeof st.at !== "string" || !isStepKind(st.kind)) {
        this.#fail(
          parent === "" ? "settings" : parent,
          `not a step: ${describe(st)}`,
          parent === "" ? "steps" : "body",
        );
      }
      this.#step(st);
      // A kind that holds a body must have one (a step made by hand, or altered, may not).
      if (!hasBody(st) && !BODY_KINDS.has(st.kind)) return undefined;
      if (depth + 1 > MAX_NESTING) this.#fail(st.at, NESTING_PROBLEM);
      if (!Array.isArray((st as { body?: unknown }).body)) {
        this.#fail(st.at, "a body must be an array of steps");
      }
      return { depth: depth + 1, parent: st.at };
    });
  }

  /** Parameter checks of one step. */
  #step(st: Step): void {
    const at = st.at;
    {
      switch (st.kind) {
        case "alloc":
          if (!(ALLOC_SOURCES as readonly string[]).includes(st.source)) {
            this.#fail(
              at,
              `unknown source ${JSON.stringify(st.source)} (${ALLOC_SOURCES.join(", ")})`,
            );
          }
          this.#size(at, st.size, "alloc");
          if (st.source === "custom") {
            if (st.customMem === undefined) this.#fail(at, "a custom block needs customMem");
            this.#size(at, st.customMem, "customMem", { min: 0 });
          } else if (st.customMem !== undefined) {
            this.#fail(at, 'customMem is only for source "custom"');
          }
          this.#lifetime(at, st.lifetime);
          this.#frames(at, st.frames);
          break;
        case "allocCombined": {
          if (!Array.isArray(st.sizes) || st.sizes.length === 0) {
            this.#fail(at, "allocCombined needs at least one size");
          }
          let whsize = 0;
          for (const s of st.sizes) {
            this.#size(at, s, "allocCombined", { max: MAX_YOUNG_WOSIZE });
            whsize += maxSize(s) + 1;
          }
          if (whsize - 1 > MAX_YOUNG_WOSIZE) {
            this.#fail(
              at,
              `a combined allocation fits in ${
                MAX_YOUNG_WOSIZE + 1
              } words with headers; this one may take ${whsize}`,
            );
          }
          // One lifetime and one frame list per component, as the builder makes them.
          if (!Array.isArray(st.lifetimes)) {
            this.#fail(
              at,
              `lifetimes must be one lifetime per component, got ${describe(st.lifetimes)}`,
            );
          }
          if (st.lifetimes.length !== st.sizes.length) {
            this.#fail(
              at,
              `allocCombined has ${st.sizes.length} sizes but ${st.lifetimes.length} lifetimes`,
            );
          }
          for (const l of st.lifetimes) this.#lifetime(at, l);
          if (!Array.isArray(st.frames)) {
            this.#fail(
              at,
              `frames must be one array of frames per component, got ${describe(st.frames)}`,
            );
          }
          if (st.frames.length !== st.sizes.length) {
            this.#fail(
              at,
              `allocCombined has ${st.sizes.length} sizes but ${st.frames.length} frame lists`,
            );
          }
          for (const fl of st.frames) this.#frames(at, fl);
          break;
        }
        case "unmarshal":
          if (!Array.isArray(st.blocks) || st.blocks.length === 0) {
            this.#fail(at, "unmarshal needs at least one block");
          }
          for (const b of st.blocks) this.#size(at, b, "unmarshal");
          if (isObject(st.lifetime) && st.lifetime.kind === "cycle") {
            this.#fail(at, "an unmarshalled value has one lifetime; keep.cycle does not apply");
          }
          this.#lifetime(at, st.lifetime);
          this.#frames(at, st.frames);
          break;
        case "extAlloc":
          this.#size(at, st.bytes, "extAlloc bytes");
          this.#lifetime(at, st.lifetime);
          if (
            st.lifetime.kind === "cycle" || st.lifetime.kind === "list" ||
            st.lifetime.kind === "ring"
          ) this.#fail(at, `keep.${st.lifetime.kind} is for heap blocks only`);
          break;
        case "gc":
          this.#gcKind(at, st.what);
          break;
        case "memprofStart":
          this.#profile(at, st.profile, "");
          break;
        case "repeat":
          this.#number(at, st.count, "repeat count");
          if (!isCount(st.count, 0)) {
            this.#fail(at, `repeat count must be a whole number ≥ 0, got ${st.count}`);
          }
          break;
        case "when":
          this.#number(at, st.every, "every");
          this.#number(at, st.offset, "every's offset");
          if (!isCount(st.every, 1)) {
            this.#fail(at, `every needs a whole number ≥ 1, got ${st.every}`);
          }
          if (!(isCount(st.offset, 0) && st.offset < st.every)) {
            this.#fail(at, `every's offset must be in [0, ${st.every - 1}], got ${st.offset}`);
          }
          break;
        case "join":
          if (st.target === st.domain) this.#fail(at, "a domain cannot join itself");
          if (st.target === "main") this.#fail(at, "the main domain cannot be joined");
          break;
        case "release":
          this.#stepName(at, "release", st.name);
          this.#releaseNames.add(st.name);
          break;
        case "call":
          this.#frames(at, [st.frame]);
          break;
        case "spawn":
          this.#stepName(at, "domain", st.child);
          break;
        case "threadCreate":
        case "threadSpawn":
          this.#stepName(at, "thread", st.thread);
          break;
        case "userEvent":
          this.#userEvent(at, st.name, st.event);
          break;
        case "eventsStart":
          this.#eventsStarted = true;
          break;
        default:
          break;
      }
    }
  }

  /** State checks, following the steps in order (second pass). */
  #follow(steps: readonly Step[]): void {
    for (const st of steps) {
      if (++this.#followed > FOLLOW_BUDGET) throw OVER_BUDGET;
      const at = st.at;
      if ("domain" in st && !this.#alive.has(st.domain)) {
        this.#fail(at, `domain "${st.domain}" is not running here`);
      }
      switch (st.kind) {
        case "spawn":
          if (++this.#spawned > this.#sc.settings.maxDomains) {
            this.#fail(at, `more than maxDomains (${this.#sc.settings.maxDomains}) domains`);
          }
          this.#alive.add(st.child);
          this.#threadAlive.set(st.child, true);
          this.#running.set(st.child, this.#running.get(st.domain) ?? null);
          break;
        case "terminate":
          if (st.domain === "main") this.#fail(at, "the main domain cannot terminate");
          this.#alive.delete(st.domain);
          break;
        case "join":
          if (!this.#alive.has(st.target)) this.#fail(at, `domain "${st.target}" is not running`);
          this.#alive.delete(st.target);
          break;
        case "threadCreate":
          this.#threadAlive.set(st.thread, true);
          break;
        case "threadSwitch":
        case "threadExit": {
          const owner = this.#sc.threads.get(st.thread);
          if (owner !== st.domain) {
            this.#fail(at, `thread "${st.thread}" does not belong to domain "${st.domain}"`);
          }
          if (this.#threadAlive.get(st.thread) !== true) {
            this.#fail(at, `thread "${st.thread}" is not running here`);
          }
          if (st.kind === "threadExit") {
            if (st.thread === st.domain) this.#fail(at, "a domain's main thread cannot exit");
            this.#threadAlive.set(st.thread, false);
          }
          break;
        }
        case "memprofStart": {
          // memprof.c's checks on memprof's own profile objects (lib/memprof/profile.ts).
          if (!this.#profileActions && isSampling(this.#running.get(st.domain) ?? null)) {
            this.#fail(at, MEMPROF_FAILURES.alreadyStarted);
          }
          const profile = new Profile({
            samplingRate: st.profile.samplingRate,
            oneLog1mLambda: 0,
            callstackSize: st.profile.callstackSize,
            tracker: {},
          });
          this.#running.set(st.domain, profile);
          this.#profilesByName.set(st.profile.name!, profile);
          break;
        }
        case "memprofStop":
          if (!this.#profileActions) {
            const cur = this.#running.get(st.domain) ?? null;
            if (cur === null || !isSampling(cur)) this.#fail(at, MEMPROF_FAILURES.noProfileRunning);
            cur.status = ProfileStatus.STOPPED;
          }
          break;
        case "memprofDiscard":
          if (!this.#sc.profiles.includes(st.profile)) {
            this.#fail(at, `no profile named "${st.profile}"`);
          }
          if (!this.#profileActions) {
            const profile = this.#profilesByName.get(st.profile);
            if (profile === undefined) {
              this.#fail(at, `profile "${st.profile}" is discarded before it starts`);
            }
            try {
              discard(profile); // memprof's own Gc.Memprof.discard
            } catch (e) {
              if (!(e instanceof OCamlFailure)) throw e;
              this.#fail(at, e.message);
            }
          }
          break;
        case "repeat": {
          // A second iteration can only fail where the first changed some state.
          const times = this.#stateful(st.body) ? 2 : 1;
          for (let k = 0; k < Math.min(st.count, times); k++) this.#follow(st.body);
          break;
        }
        case "call":
        case "blocking":
          this.#follow(st.body);
          break;
        case "attempt":
          this.#follow(st.body);
          // A raise may cut the body anywhere: memprof's state after it is known at run time only.
          if (this.#hasMemprofStep(st.body)) this.#profileActions = true;
          break;
        case "when":
          // Runs on some iterations only: memprof's state after it is known at run time only.
          this.#follow(st.body);
          if (this.#hasMemprofStep(st.body)) this.#profileActions = true;
          break;
        default:
          break;
      }
    }
  }

  /** Whether `steps` hold a step whose state checks depend on what ran before. */
  #stateful(steps: readonly Step[]): boolean {
    return someStepKept(this.#statefulBodies, steps, (st) => STATEFUL.has(STEP_FAMILIES[st.kind]));
  }

  /** Whether `steps` hold a `memprof.start`, `stop` or `discard` step. */
  #hasMemprofStep(steps: readonly Step[]): boolean {
    return someStepKept(this.#memprofBodies, steps, (st) => STEP_FAMILIES[st.kind] === "memprof");
  }
}

/** Why the two forms of systhreads do not mix. */
const OLD_AND_NEW_THREADS = "threads with programs of their own (thread(name, body)) do not " +
  "mix with threads taking over the domain's steps (thread(name) with switchTo, exit, " +
  "blocking, act.switchThread, act.exitThread)";

/** Families of the steps whose state checks depend on what ran before. */
const STATEFUL: ReadonlySet<StepFamily> = new Set(["domain", "thread", "memprof"]);

/** Whether `v` is a whole number ≥ `min` (finite, safe). */
function isCount(v: unknown, min: number): v is number {
  return Number.isSafeInteger(v) && (v as number) >= min;
}

/** Where a step is in the threads' programs: the thread whose program holds it (null: the top
 * level) and the bodies around it there. */
interface ProgramContext {
  readonly program: string | null;
  readonly depth: number;
}

/** Whether a step under `steps` passes `test`, computed once per list of steps (`kept`). */
function someStepKept(
  kept: WeakMap<readonly Step[], boolean>,
  steps: readonly Step[],
  test: (st: Step) => boolean,
): boolean {
  let v = kept.get(steps);
  if (v === undefined) {
    v = findStep(steps, test) !== undefined;
    kept.set(steps, v);
  }
  return v;
}

function join(within: string, part: string): string {
  return within === "" ? part : `${within}, ${part}`;
}

function loopDepth(depths: ReadonlyMap<string, number>, domain: string): number {
  return depths.get(domain) ?? 0;
}
