/**
 * The bridge between memprof and memtrace: a tracer writing memprof callbacks and external
 * allocations into a trace, with memtrace's external-allocation sampler and OCaml's `Random`.
 * @module
 */
export {
  type ExtAllocHooks,
  type TracedAllocation,
  Tracer,
  type TracerOptions,
  type TracerStats,
} from "./tracer.ts";
export { GeometricSampler, logApproxDouble, MEMTRACE_SAMPLER_SEED } from "./geometric_sampler.ts";
export { OCamlRandomState } from "./ocaml_random.ts";
