/**
 * Scenarios: a typed DSL that declares what an OCaml program does (allocations, collections,
 * domains, threads, memprof control and callback behaviours, runtime events), validated before
 * it runs. {@linkcode scenario} builds one (with {@linkcode keep}, {@linkcode cb},
 * {@linkcode act} and {@linkcode sizes}); {@linkcode runScenario} runs it and gives its memtrace
 * trace, runtime_events ring image, callback log and summary.
 *
 * @example Build a scenario and run it
 * ```ts
 * import { act, cb, keep, runScenario, scenario, sizes } from "./mod.ts";
 * import assert from "node:assert/strict";
 *
 * const sc = scenario({ name: "demo", seed: 7 }, (s) => {
 *   const main = s.main;
 *   main.memprof.start({
 *     samplingRate: 0.01,
 *     callstackSize: 4,
 *     tracker: { allocMinor: cb.track().on(3, act.gc("minor")), promote: cb.track() },
 *   });
 *   main.repeat(1_000, () =>
 *     main.alloc(sizes.uniform(1, 8), { lifetime: keep.steps(5), at: "Demo.f@demo.ml:3:2-20" }));
 *   main.memprof.stop();
 * });
 * const result = runScenario(sc);
 * assert.equal(result.summary.allocations, 1_000);
 * assert.ok(result.summary.samples > 0);
 * assert.ok(result.ctf.length > 0);
 * ```
 * @module
 */
export type {
  AllocSource,
  CallbackAction,
  CallbackSpec,
  Frame,
  GcKind,
  Lifetime,
  LogFormat,
  OnDomain,
  ProfileSpec,
  Scenario,
  ScenarioSettings,
  SizeSpec,
  Step,
  TrackerSpec,
  Trigger,
  UserEventSpec,
} from "./spec.ts";
export { ALLOC_SOURCES, GC_KINDS } from "./_schema.ts";
export { ScenarioError } from "./errors.ts";
export {
  act,
  type AllocOptions,
  CallbackBuilder,
  cb,
  type CombinedOptions,
  DomainBuilder,
  keep,
  LoopIndex,
  MemprofControl,
  type ProfileRef,
  scenario,
  ScenarioBuilder,
  sizes,
  type StartArgs,
  ThreadBuilder,
} from "./builder.ts";
export { validateScenario } from "./validate.ts";
export {
  DEFAULT_MAX_STEPS,
  FRAME_RULE,
  isFrame,
  isLabelName,
  isPlainName,
  LABEL_NAME_RULE,
  MAX_CLOCK_NS,
  MAX_NESTING,
  MAX_RING_IMAGE_BYTES,
  PLAIN_NAME_RULE,
} from "./_limits.ts";
export { countLeafSteps, runScenario } from "./engine.ts";
export type {
  CallbackKind,
  JoinOutcome,
  KeepSiteOf,
  RacePoint,
  RaceResolution,
  RunEvent,
  RunOptions,
  RunResult,
  Summary,
  TextOutput,
} from "./result.ts";
// Types the scenario API takes or gives, from the modules that define them.
export type { GcTimeModel, MajorGcInitialState, PoolState } from "../runtime/mod.ts";
export type { TracerStats } from "../tracer/mod.ts";
