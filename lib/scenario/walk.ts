/**
 * The step tree, walked one way: every step kind with its family, the steps a step holds (its
 * `body`), a pre-order walk carrying a context down the tree, a search, a visitor over the step
 * kinds, and the walk over the profiles callbacks start (`act.start`). The builder's checks, the
 * validator, the engine and the OCaml export walk scenarios with these.
 * @module
 */
import type { CallbackAction, ProfileSpec, Scenario, Step, TrackerSpec } from "./spec.ts";
import { OPTION_KEYS } from "./_schema.ts";

/** The kinds of step. */
export type StepKind = Step["kind"];

/** The step of kind `K`. */
export type StepOf<K extends StepKind> = Extract<Step, { kind: K }>;

/** A step that holds steps of its own (`repeat`, `call`, `attempt`, `when`, `blocking`, a
 * thread's program). */
export type StepWithBody = Extract<Step, { body: readonly Step[] }>;

/** What a step does: allocations, collections and releases, memprof control, domains,
 * systhreads (both forms), runtime_events, or control flow around a body. */
export type StepFamily = "alloc" | "gc" | "memprof" | "domain" | "thread" | "events" | "control";

/** Every step kind, with its family (the engine compiles each family in a file of its own). */
export const STEP_FAMILIES: { readonly [K in StepKind]: StepFamily } = {
  alloc: "alloc",
  allocCombined: "alloc",
  unmarshal: "alloc",
  extAlloc: "alloc",
  gc: "gc",
  poll: "gc",
  release: "gc",
  memprofStart: "memprof",
  memprofStop: "memprof",
  memprofDiscard: "memprof",
  spawn: "domain",
  terminate: "domain",
  join: "domain",
  threadCreate: "thread",
  threadSwitch: "thread",
  threadExit: "thread",
  threadSpawn: "thread",
  yieldTo: "thread",
  threadJoin: "thread",
  threadYield: "thread",
  eventsStart: "events",
  eventsPause: "events",
  eventsResume: "events",
  userEvent: "events",
  call: "control",
  attempt: "control",
  repeat: "control",
  when: "control",
  blocking: "control",
};

/** The step kinds that hold a body: a step of one of them must have one, an array of steps. */
export const BODY_KINDS: ReadonlySet<StepKind> = new Set<StepKind>([
  "call",
  "attempt",
  "repeat",
  "when",
  "blocking",
  "threadSpawn",
]);

/** Whether `kind` names a step kind (the object may come from anywhere). */
export function isStepKind(kind: unknown): kind is StepKind {
  return typeof kind === "string" && Object.hasOwn(STEP_FAMILIES, kind);
}

/** Whether step `st` holds steps of its own. */
export function hasBody(st: Step): st is StepWithBody {
  return "body" in st;
}

/**
 * Visits every step under `steps`, each before the steps it holds, in order. `visit` gets the
 * step and the context of the list holding it, and returns the context of the step's body, or
 * undefined to leave the body out. Recursion goes as deep as the steps nest (the builder and
 * the validator refuse more than `MAX_NESTING` levels before walking deeper).
 */
export function forEachStep<C>(
  steps: readonly Step[],
  context: C,
  visit: (st: Step, context: C) => C | undefined,
): void {
  for (const st of steps) {
    const inner = visit(st, context);
    if (inner !== undefined && hasBody(st)) forEachStep(st.body, inner, visit);
  }
}

/** The first step under `steps` (each step before the steps it holds) for which `test` holds. */
export function findStep(
  steps: readonly Step[],
  test: (st: Step) => boolean,
): Step | undefined {
  for (const st of steps) {
    if (test(st)) return st;
    if (hasBody(st)) {
      const found = findStep(st.body, test);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

/** The sampling rate a run's trace records: `override` if given (`RunOptions.samplingRate`),
 * else the rate of the first profile the scenario starts, else the settings' default. */
export function traceSamplingRate(sc: Scenario, override?: number): number {
  if (override !== undefined) return override;
  const first = findStep(sc.steps, (st) => st.kind === "memprofStart");
  return first?.kind === "memprofStart" ? first.profile.samplingRate : sc.settings.samplingRate;
}

/** The rate of memtrace's external-allocation sampler in a run of `sc`: the scenario's
 * `externalSamplingRate`, else the trace's rate ({@linkcode traceSamplingRate}), as
 * `Memtrace.start ~sampling_rate` gives both. */
export function externalSamplingRate(sc: Scenario, override?: number): number {
  return sc.settings.externalSamplingRate ?? traceSamplingRate(sc, override);
}

/** A function per step kind, each taking the steps of its kind. */
export type StepVisitor<R> = { readonly [K in StepKind]: (st: StepOf<K>) => R };

/** What `visitor` gives for step `st` (the function of its kind). */
export function visitStep<R>(st: Step, visitor: StepVisitor<R>): R {
  return (visitor[st.kind] as (st: Step) => R)(st);
}

/**
 * Leaf steps a scenario executes (each advances the virtual clock once): a `repeat` body counts
 * `count` times, a step inside `every` on every iteration, and a `blocking` section and a
 * thread's program count one step plus their bodies. The engine's progress counts with it, and
 * the validator bounds the virtual clock with it.
 */
export function countLeafSteps(steps: readonly Step[]): number {
  let n = 0;
  forEachStep(steps, 1, (st, times) => {
    if (st.kind === "repeat") return times * st.count;
    if (st.kind !== "call" && st.kind !== "attempt" && st.kind !== "when") n += times;
    return times;
  });
  return n;
}

/** Whether an action of `tracker`, or of the trackers of the profiles its actions start
 * (`act.start`), passes `test`. */
export function someAction(
  tracker: TrackerSpec,
  test: (action: CallbackAction) => boolean,
): boolean {
  for (const spec of Object.values(tracker)) {
    for (const { action } of spec?.actions ?? []) {
      if (test(action)) return true;
      if (action.kind === "start" && someAction(action.profile.tracker, test)) return true;
    }
  }
  return false;
}

/** A tracker's callback kinds, in the order the DSL and the exported program's trackers list
 * them (the schema's, which the type checker proves are TrackerSpec's keys). */
export const TRACKER_KINDS: typeof OPTION_KEYS.tracker = OPTION_KEYS.tracker;

/**
 * The exported program's slot of each named profile (`prof.(slot)` holds its value once it is
 * started): profiles numbered by their first `memprofStart` in step order, each followed at once
 * by the profiles its callbacks start (`act.start`), as lib/export/ocaml.ts numbers them.
 * Unnamed profiles have none (the export refuses them in callbacks).
 */
export function profileSlots(sc: Scenario): ReadonlyMap<string, number> {
  const slots = new Map<string, number>();
  const add = (p: ProfileSpec) => {
    if (p.name === undefined || slots.has(p.name)) return;
    slots.set(p.name, slots.size);
    for (const k of TRACKER_KINDS) {
      for (const { action } of p.tracker[k]?.actions ?? []) {
        if (action.kind === "start") add(action.profile);
      }
    }
  };
  forEachStep(sc.steps, true, (st) => {
    if (st.kind === "memprofStart") add(st.profile);
    return true;
  });
  return slots;
}

/** Whether `sc` has systhreads with programs of their own (`d.thread(name, body)`), or steps or
 * callback actions that pass the baton between them: the engine then runs it in its resumable
 * form, and the export writes it with the threads library. */
export function usesThreadPrograms(sc: Scenario): boolean {
  const passesBaton = (a: CallbackAction) => a.kind === "yieldTo" || a.kind === "yieldToNext";
  return findStep(
    sc.steps,
    (st) =>
      st.kind === "threadSpawn" || st.kind === "yieldTo" || st.kind === "threadJoin" ||
      st.kind === "threadYield" ||
      (st.kind === "memprofStart" && someAction(st.profile.tracker, passesBaton)),
  ) !== undefined;
}

/** Where a domain resumes ({@linkcode segmentStarts}). */
export interface SegmentStart {
  /** The domain running the segment. */
  readonly domain: string;
  /** Domains that ended (`terminate`) since the previous segment began: the exported program
   * joins them (`Domain.join`) when this segment begins, before its domain resumes. */
  readonly joins: readonly string[];
  /** The domain of the segment before (undefined for the first segment). */
  readonly previous: string | undefined;
}

/**
 * Where each domain resumes: in a scenario with several domains, the top-level steps run in
 * segments, each on one domain (the exported program passes a baton between them), and a
 * segment begins where a step's domain differs from the segment's, or after a domain's
 * `terminate`. Steps of no domain (`release`, runtime_events control) run on the current
 * segment's domain, or on the main domain after a termination. Returns each step that begins a
 * segment with its domain's name and the domains it joins first, and the domains that ended
 * after the last segment began (the main domain joins them at the run's end); empty for a
 * scenario with one domain.
 */
export function segmentStarts(
  sc: Scenario,
): {
  readonly starts: ReadonlyMap<Step, SegmentStart>;
  readonly trailingJoins: readonly string[];
  /** The domain of the last segment (undefined for a scenario with one domain). */
  readonly last: string | undefined;
} {
  const starts = new Map<Step, SegmentStart>();
  if (sc.domains.length <= 1) return { starts, trailingJoins: [], last: undefined };
  let cur: { domain: string; terminates: boolean } | undefined;
  let pending: string[] = [];
  for (const st of sc.steps) {
    const domain = "domain" in st
      ? st.domain
      : cur !== undefined && !cur.terminates
      ? cur.domain
      : "main";
    if (cur === undefined || cur.domain !== domain || cur.terminates) {
      starts.set(st, { domain, joins: pending, previous: cur?.domain });
      cur = { domain, terminates: false };
      pending = [];
    }
    if (st.kind === "terminate") {
      cur.terminates = true;
      pending.push(st.domain);
    }
  }
  return { starts, trailingJoins: pending, last: cur?.domain };
}
