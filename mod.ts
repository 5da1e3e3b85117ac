/**
 * memprof-lab: OCaml's memory-profiling machinery, re-implemented in TypeScript with outputs
 * byte-compatible with the real ones.
 *
 * Each part is a namespace:
 * - {@linkcode memtrace} — Jane Street's memtrace trace format: `Reader`, `Writer`,
 *   `MultiplexedWriter`, dumps.
 *
 * ```ts
 * import { memtrace } from "./mod.ts";
 * const r = memtrace.Reader.open("trace.ctf");
 * memtrace.dumpTrace(r, (line) => console.log(line));
 * ```
 * @module
 */
export * as memtrace from "./lib/memtrace/mod.ts";
