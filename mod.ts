/**
 * memprof-lab: OCaml's memory-profiling machinery, re-implemented in TypeScript with outputs
 * byte-compatible with the real ones.
 *
 * Each part is a namespace:
 * - {@linkcode memtrace} — Jane Street's memtrace trace format: `Reader`, `Writer`,
 *   `MultiplexedWriter`, dumps.
 * - {@linkcode runtimeEvents} — OCaml 5.3's runtime_events: `RuntimeEventsProducer` (exact
 *   `<pid>.events` images) and `RuntimeEventsCursor` (reads ours and real OCaml files).
 * - {@linkcode memprof} — the port of OCaml 5.3's memprof.c, with its bit-exact `MemprofRng`.
 * - {@linkcode runtime} — the simulated OCaml 5 runtime memprof runs in (`Runtime`, `Domain`).
 * - {@linkcode tracer} — memtrace's memprof tracer for every domain, and OCaml's `Random`.
 * - {@linkcode scenario} — the scenario DSL and the engine that runs scenarios.
 *
 * ```ts
 * import { scenario } from "./mod.ts";
 * const sc = scenario.scenario({ name: "demo" }, (s) => {
 *   s.main.memprof.start({ samplingRate: 1e-3 });
 *   s.main.repeat(100_000, () => s.main.alloc(4, { at: "Demo.f@demo.ml:3:2-20" }));
 *   s.main.memprof.stop();
 * });
 * const result = scenario.runScenario(sc);
 * console.log(result.summary, result.traceDump);
 * ```
 * @module
 */
export * as memtrace from "./lib/memtrace/mod.ts";
export * as runtimeEvents from "./lib/runtime_events/mod.ts";
export * as memprof from "./lib/memprof/mod.ts";
export * as runtime from "./lib/runtime/mod.ts";
export * as tracer from "./lib/tracer/mod.ts";
export * as scenario from "./lib/scenario/mod.ts";
