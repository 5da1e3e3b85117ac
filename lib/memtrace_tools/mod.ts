/**
 * Jane Street memtrace's own command-line tools (its `bin/` folder at commit a88470c), output for
 * output: `flamegraph`, `hotspots`, `identify`, `subsample` and `strip_names`. Text outputs are
 * the same strings memtrace prints; written traces are byte-identical to the ones it writes.
 * Where memtrace's tool crashes on some input, these stop with a {@linkcode TraceToolError} or
 * give the correct result (see each function and docs/trace-tools.md).
 *
 * @example Fold a trace's samples into flame-graph lines
 * ```ts
 * import { Reader } from "../memtrace/mod.ts";
 * import { runScenario, scenario } from "../scenario/mod.ts";
 * import { flamegraph } from "./mod.ts";
 * import assert from "node:assert/strict";
 *
 * const sc = scenario({ name: "demo" }, (s) => {
 *   s.main.memprof.start({ samplingRate: 0.01 });
 *   s.main.call("Demo.main@demo.ml:9:2-20", () =>
 *     s.main.repeat(1_000, () => s.main.alloc(4, { at: "Demo.f@demo.ml:3:2-20" })));
 *   s.main.memprof.stop();
 * });
 * const r = Reader.fromBytes(runScenario(sc).ctf); // or Reader.open("trace.ctf")
 * try {
 *   assert.match(flamegraph(r), /^Demo\.main;Demo\.f \d+\n$/);
 * } finally {
 *   r.close();
 * }
 * ```
 * @module
 */
export { TraceToolError } from "./errors.ts";
export { flamegraph, flamegraphTo } from "./flamegraph.ts";
export { hotspots } from "./hotspots.ts";
export { identify, type IdentifyOptions } from "./identify.ts";
export {
  EXACT_DRAW_SAMPLES,
  MAX_SUBSAMPLE_FACTOR,
  OCAML_DEFAULT_RANDOM_SEED,
  startSubsample,
  subsample,
  type SubsampleOptions,
  type SubsampleStats,
} from "./subsample.ts";
export { startStripNames, stripNames } from "./strip_names.ts";
export type { ToolPass, TraceInput } from "./input.ts";
// The types the tools take or give, from the modules that define them.
export type {
  AllocEvent,
  CollectEvent,
  DomainId,
  Event,
  Info,
  IterOptions,
  Location,
  LocationCode,
  LocationLookup,
  MemtraceAllocationSource,
  ObjId,
  PromoteEvent,
  Timedelta,
  Timestamp,
  TraceSink,
} from "../memtrace/mod.ts";
export type { OCamlRandomState } from "../tracer/mod.ts";
