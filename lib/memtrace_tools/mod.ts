/**
 * Jane Street memtrace's own command-line tools (its `bin/` folder at commit a88470c), output for
 * output: `flamegraph`, `hotspots`, `identify`, `subsample` and `strip_names`. Text outputs are
 * the same strings memtrace prints; written traces are byte-identical to the ones it writes.
 * Where memtrace's tool crashes on some input, these stop with a {@linkcode TraceToolError} or
 * give the correct result (see each function and docs/trace-tools.md).
 *
 * ```ts
 * import { Reader } from "../memtrace/mod.ts";
 * import { flamegraph } from "./mod.ts";
 * const r = Reader.open("trace.ctf");
 * try {
 *   console.log(flamegraph(r));
 * } finally {
 *   r.close();
 * }
 * ```
 * @module
 */
export { TraceToolError } from "./errors.ts";
export { flamegraph } from "./flamegraph.ts";
export { hotspots } from "./hotspots.ts";
export { identify, type IdentifyOptions } from "./identify.ts";
export {
  MAX_SUBSAMPLE_FACTOR,
  OCAML_DEFAULT_RANDOM_SEED,
  subsample,
  type SubsampleOptions,
  type SubsampleStats,
} from "./subsample.ts";
export { stripNames } from "./strip_names.ts";
export type { TraceInput } from "./input.ts";
// The types the tools take or give, from the modules that define them.
export type {
  AllocationSource,
  AllocEvent,
  CollectEvent,
  DomainId,
  Event,
  Info,
  IterOptions,
  Location,
  LocationCode,
  LocationLookup,
  ObjId,
  PromoteEvent,
  Timedelta,
  Timestamp,
  TraceSink,
} from "../memtrace/mod.ts";
export type { OCamlRandomState } from "../tracer/mod.ts";
