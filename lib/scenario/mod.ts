/**
 * Scenarios: a typed DSL that declares what an OCaml program does (allocations, collections,
 * domains, threads, memprof control and callback behaviours, runtime events), validated before
 * it runs.
 * @module
 */
export * from "./spec.ts";
export * from "./errors.ts";
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
  isPlainName,
  MAX_CLOCK_NS,
  MAX_NESTING,
  MAX_RING_IMAGE_BYTES,
  PLAIN_NAME_RULE,
} from "./_limits.ts";
export { countLeafSteps, runScenario } from "./engine.ts";
export type {
  CallbackKind,
  RunEvent,
  RunOptions,
  RunResult,
  Summary,
  TextOutput,
} from "./result.ts";
export { CallbackLog, type LogHeaderFacts } from "./callback_log.ts";
export {
  compareGolden,
  firstDifference,
  type Golden,
  GOLDEN_FILES,
  goldenIndexSource,
  goldenOf,
} from "./golden.ts";
