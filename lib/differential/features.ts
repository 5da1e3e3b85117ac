/**
 * What a scenario exercises, as a set of feature names (`step:alloc`, `source:array`,
 * `lifetime:ring`, `gc:compact`, `action:raise`, `rate:1e-5`, …), and counts of them over a
 * campaign: `deno task diff --random N --stats` prints how many generated scenarios have each
 * feature, so that a feature the generator never produces shows as 0.
 * @module
 */
import type { Scenario, Step } from "../scenario/mod.ts";
import { forEachStep } from "../scenario/walk.ts";
import type {
  CallbackAction,
  Lifetime,
  ProfileSpec,
  SizeSpec,
  TrackerSpec,
  Trigger,
} from "../scenario/mod.ts";

/** Every feature an exported scenario can have, in the order `--stats` prints them. The
 * coverage test requires each in at least 1 % of generated scenarios. */
export const EXPORTABLE_FEATURES: readonly string[] = [
  "step:alloc",
  "step:allocCombined",
  "step:unmarshal",
  "step:extAlloc",
  "step:gc",
  "step:poll",
  "step:repeat",
  "step:when",
  "step:call",
  "step:attempt",
  "step:release",
  "step:memprofStart",
  "step:memprofStop",
  "step:memprofDiscard",
  "step:spawn",
  "step:terminate",
  "step:join",
  "step:threadSpawn",
  "step:yieldTo",
  "step:threadJoin",
  "step:threadYield",
  "step:eventsStart",
  "step:eventsPause",
  "step:eventsResume",
  "step:userEvent",
  "source:caml",
  "source:runtime",
  "source:array",
  "source:major",
  "source:custom",
  "source:unmarshal",
  "size:small",
  "size:medium",
  "size:large",
  "size:uniform",
  "size:choice",
  "size:geometric",
  "lifetime:drop",
  "lifetime:steps",
  "lifetime:steps-until",
  "lifetime:until",
  "lifetime:forever",
  "lifetime:list",
  "lifetime:ring",
  "lifetime:cycle",
  "gc:minor",
  "gc:majorSlice",
  "gc:major",
  "gc:fullMajor",
  "gc:compact",
  "loop:nested",
  "callstack:0",
  "callstack:deep",
  "rate:1",
  "rate:1e-1",
  "rate:1e-2",
  "rate:1e-3",
  "rate:1e-4",
  "rate:1e-5",
  "minorHeap:small",
  "minorHeap:default",
  "callback:allocMinor",
  "callback:allocMajor",
  "callback:promote",
  "callback:deallocMinor",
  "callback:deallocMajor",
  "result:none",
  "trigger:nth",
  "trigger:every",
  "trigger:always",
  "action:raise",
  "action:stop",
  "action:start",
  "action:discard",
  "action:alloc",
  "action:gc",
  "action:yieldToNext",
  "userEvent:unit",
  "userEvent:int",
  "threads:withDomains",
  "external:raising",
  "external:domains",
  "external:threads",
  "spawn:sampling",
  "worker:keeps",
  "worker:threads",
];

/** The features of `sc`. */
export function scenarioFeatures(sc: Scenario): Set<string> {
  const f = new Set<string>();
  f.add(sc.settings.minorHeapWords < 262_144 ? "minorHeap:small" : "minorHeap:default");
  // Which domains' profiles run (started and not stopped yet), step by step in order.
  const sampling = new Set<string>();
  const workers = new Set<string>();
  forEachStep<number>(sc.steps, 0, (st: Step, loops) => {
    f.add(`step:${st.kind}`);
    if (st.kind === "memprofStart") sampling.add(st.domain);
    if (st.kind === "memprofStop") sampling.delete(st.domain);
    if (st.kind === "spawn" && sampling.has(st.domain)) f.add("spawn:sampling");
    if (st.kind === "spawn") workers.add(st.child);
    // A spawned domain creates a systhread with a program of its own.
    if (st.kind === "threadSpawn" && st.domain !== "main") f.add("worker:threads");
    // A spawned domain keeps blocks: their promotions at shared collections are race points.
    if (
      "domain" in st && workers.has(st.domain) && "lifetime" in st &&
      st.lifetime !== undefined && (st.lifetime as Lifetime).kind !== "drop"
    ) f.add("worker:keeps");
    switch (st.kind) {
      case "alloc":
        f.add(`source:${st.source}`);
        sizeFeatures(st.size, f);
        lifetimeFeatures(st.lifetime, f);
        break;
      case "allocCombined":
        st.sizes.forEach((s) => sizeFeatures(s, f));
        st.lifetimes.forEach((l) => lifetimeFeatures(l, f));
        break;
      case "unmarshal":
        st.blocks.forEach((s) => sizeFeatures(s, f));
        lifetimeFeatures(st.lifetime, f);
        break;
      case "extAlloc":
        lifetimeFeatures(st.lifetime, f);
        break;
      case "gc":
        f.add(`gc:${st.what}`);
        break;
      case "memprofStart":
        profileFeatures(st.profile, f);
        break;
      case "userEvent":
        f.add(`userEvent:${st.event.type}`);
        break;
      case "repeat":
        if (loops > 0) f.add("loop:nested");
        return loops + 1;
    }
    return loops;
  });
  if (f.has("step:threadSpawn") && f.has("step:spawn")) f.add("threads:withDomains");
  // External allocations with a callback that may raise under memtrace's lock.
  if (f.has("step:extAlloc") && f.has("action:raise")) f.add("external:raising");
  // External allocations where domains or systhreads with programs run too.
  if (f.has("step:extAlloc") && f.has("step:spawn")) f.add("external:domains");
  if (f.has("step:extAlloc") && f.has("step:threadSpawn")) f.add("external:threads");
  return f;
}

function sizeFeatures(s: SizeSpec, f: Set<string>): void {
  if (typeof s === "number") f.add(s <= 8 ? "size:small" : s <= 256 ? "size:medium" : "size:large");
  else if ("uniform" in s) f.add("size:uniform");
  else if ("choice" in s) f.add("size:choice");
  else f.add("size:geometric");
}

function lifetimeFeatures(l: Lifetime, f: Set<string>): void {
  f.add(
    l.kind === "steps" && l.until !== undefined ? "lifetime:steps-until" : `lifetime:${l.kind}`,
  );
  if (l.kind === "cycle") l.lifetimes.forEach((x) => lifetimeFeatures(x, f));
}

function profileFeatures(p: ProfileSpec, f: Set<string>): void {
  f.add(`rate:${rateClass(p.samplingRate)}`);
  f.add(
    p.callstackSize === 0
      ? "callstack:0"
      : p.callstackSize > 16
      ? "callstack:deep"
      : "callstack:some",
  );
  trackerFeatures(p.tracker, f);
}

/** The decade a rate falls in: `1`, `1e-1` (0.1 ≤ λ < 1), … `1e-5` (λ < 1e-4). */
function rateClass(r: number): string {
  if (r >= 1) return "1";
  for (let k = 1; k <= 4; k++) if (r >= 10 ** -k) return `1e-${k}`;
  return "1e-5";
}

function trackerFeatures(t: TrackerSpec, f: Set<string>): void {
  for (const [kind, spec] of Object.entries(t)) {
    if (spec === undefined) continue;
    f.add(`callback:${kind}`);
    if (spec.result === "none") f.add("result:none");
    for (const { when, action } of spec.actions) {
      f.add(`trigger:${(when as Trigger).kind}`);
      actionFeatures(action, f);
    }
  }
}

function actionFeatures(a: CallbackAction, f: Set<string>): void {
  f.add(`action:${a.kind}`);
  if (a.kind === "alloc") lifetimeFeatures(a.lifetime, f);
  if (a.kind === "gc") f.add(`gc:${a.what}`);
  if (a.kind === "start") profileFeatures(a.profile, f);
}

/** Counts of features over many scenarios. */
export class FeatureCounts {
  /** Scenarios counted. */
  scenarios = 0;
  readonly #counts = new Map<string, number>();

  /** Counts the features of one scenario. */
  add(features: Iterable<string>): void {
    this.scenarios++;
    for (const x of features) this.#counts.set(x, (this.#counts.get(x) ?? 0) + 1);
  }

  /** Scenarios that had `feature`. */
  count(feature: string): number {
    return this.#counts.get(feature) ?? 0;
  }

  /** Every feature seen or expected, with its count and share, expected ones first. */
  rows(): { feature: string; count: number; share: number }[] {
    const names = [
      ...EXPORTABLE_FEATURES,
      ...[...this.#counts.keys()].filter((k) => !EXPORTABLE_FEATURES.includes(k)).sort(),
    ];
    return names.map((feature) => ({
      feature,
      count: this.count(feature),
      share: this.scenarios === 0 ? 0 : this.count(feature) / this.scenarios,
    }));
  }
}
