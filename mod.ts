/**
 * memprof-lab: OCaml's memory-profiling machinery, re-implemented in TypeScript with outputs
 * byte-compatible with the real ones.
 *
 * Each part is a namespace:
 * - {@linkcode memtrace} — Jane Street's memtrace trace format: `Reader`, `Writer`,
 *   `MultiplexedWriter`, dumps.
 * - {@linkcode runtimeEvents} — OCaml 5.3's runtime_events: `RuntimeEventsProducer` (exact
 *   `<pid>.events` images) and `RuntimeEventsCursor` (reads ours and real OCaml files).
 *
 * ```ts
 * import { memtrace } from "./mod.ts";
 * const r = memtrace.Reader.open("trace.ctf");
 * memtrace.dumpTrace(r, (line) => console.log(line));
 * ```
 * @module
 */
export * as memtrace from "./lib/memtrace/mod.ts";
export * as runtimeEvents from "./lib/runtime_events/mod.ts";
