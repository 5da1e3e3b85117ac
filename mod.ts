/**
 * memprof-lab: OCaml's memory-profiling machinery, re-implemented in TypeScript with outputs
 * byte-compatible with the real ones.
 *
 * The main entry points are exported by name: {@linkcode Reader} and {@linkcode Writer} (memtrace
 * `.ctf` traces), {@linkcode runScenario} and the scenario DSL's {@linkcode keep},
 * {@linkcode cb}, {@linkcode act} and {@linkcode sizes}. The scenario builder itself is
 * `scenario.scenario` here (the name `scenario` is the namespace), or `scenario` from the
 * `./scenario` entry point.
 *
 * Each part is also a namespace, and its own entry point (`@memprof-lab/memprof-lab/<name>`):
 * - {@linkcode memtrace} (`./memtrace`) — Jane Street's memtrace trace format: `Reader`,
 *   `Writer`, `MultiplexedWriter`, dumps.
 * - {@linkcode runtimeEvents} (`./runtime-events`) — OCaml 5.3's runtime_events:
 *   `RuntimeEventsProducer` (exact `<pid>.events` images) and `RuntimeEventsCursor` (reads ours
 *   and real OCaml files).
 * - {@linkcode memprof} (`./memprof`) — the port of OCaml 5.3's memprof.c, with its bit-exact
 *   `MemprofRng`.
 * - {@linkcode runtime} (`./runtime`) — the simulated OCaml 5 runtime memprof runs in
 *   (`Runtime`, `Domain`).
 * - {@linkcode tracer} — memtrace's memprof tracer for every domain, and OCaml's `Random`.
 * - {@linkcode scenario} (`./scenario`) — the scenario DSL and the engine that runs scenarios.
 *
 * memtrace's own tools and the trace analyses are the `./memtrace-tools` and `./trace-analysis`
 * entry points.
 *
 * @example Run a scenario and read its trace back
 * ```ts
 * import { keep, Reader, runScenario, scenario } from "./mod.ts";
 * import assert from "node:assert/strict";
 *
 * const sc = scenario.scenario({ name: "demo" }, (s) => {
 *   s.main.memprof.start({ samplingRate: 1e-3 });
 *   s.main.repeat(100_000, () =>
 *     s.main.alloc(4, { lifetime: keep.steps(3), at: "Demo.f@demo.ml:3:2-20" }));
 *   s.main.memprof.stop();
 * });
 * const result = runScenario(sc);
 * let allocs = 0;
 * Reader.fromBytes(result.ctf).iter((_dt, ev) => {
 *   if (ev.kind === "alloc") allocs++;
 * });
 * assert.equal(allocs, result.summary.tracer.allocs);
 * ```
 * @module
 */
export { Reader, Writer } from "./lib/memtrace/mod.ts";
export { act, cb, keep, runScenario, sizes } from "./lib/scenario/mod.ts";
export * as memtrace from "./lib/memtrace/mod.ts";
export * as runtimeEvents from "./lib/runtime_events/mod.ts";
export * as memprof from "./lib/memprof/mod.ts";
export * as runtime from "./lib/runtime/mod.ts";
export * as tracer from "./lib/tracer/mod.ts";
export * as scenario from "./lib/scenario/mod.ts";
// Types the entry points above take or give, for their documentation.
export type {
  AllocEvent,
  CollectEvent,
  DomainId,
  Event,
  EventIteration,
  EventView,
  Info,
  IterOptions,
  Location,
  LocationCode,
  LocationLookup,
  MemtraceAllocationSource,
  ObjId,
  PromoteEvent,
  ReadAllOptions,
  Timedelta,
  Timestamp,
} from "./lib/memtrace/mod.ts";
export type {
  AllocOptions,
  AllocSource,
  CallbackAction,
  CallbackBuilder,
  CallbackKind,
  CallbackSpec,
  CombinedOptions,
  DomainBuilder,
  Frame,
  GcKind,
  GcTimeModel,
  Lifetime,
  LogFormat,
  LoopIndex,
  MajorGcInitialState,
  MemprofControl,
  OnDomain,
  PoolState,
  ProfileRef,
  ProfileSpec,
  RunEvent,
  RunOptions,
  RunResult,
  Scenario,
  ScenarioSettings,
  SizeSpec,
  StartArgs,
  Step,
  Summary,
  TextOutput,
  ThreadBuilder,
  TracerStats,
  TrackerSpec,
  Trigger,
  UserEventSpec,
} from "./lib/scenario/mod.ts";
