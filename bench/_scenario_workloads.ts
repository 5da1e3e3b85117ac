/**
 * The two workloads of bench/scenario_bench.ts (issue 14's goals), shared with
 * bench/engine_forms_bench.ts: 1,000,000 allocations each, memprof sampling at 1e-4.
 * @module
 */
import { keep, type Scenario, scenario, sizes } from "../lib/scenario/mod.ts";

/** Allocations per run of either workload. */
export const WORKLOAD_ALLOCATIONS = 1_000_000;
/** Their sampling rate. */
export const WORKLOAD_RATE = 1e-4;

const N = WORKLOAD_ALLOCATIONS;
const RATE = WORKLOAD_RATE;

/** A loop of short-lived 2-word blocks. */
export const benchShortLived: Scenario = scenario({ name: "bench_short_lived" }, (s) => {
  s.main.memprof.start({ samplingRate: RATE, callstackSize: 16 });
  s.main.call(
    "Bench.main@bench.ml:1:0-10",
    () => s.main.repeat(N, () => s.main.alloc(2, { at: "Bench.loop@bench.ml:5:4-20" })),
  );
  s.main.memprof.stop();
});

/** 500,000 × (a block of 1–16 words, every fourth kept for 1,000 steps; a combined 2+3-word
 * allocation). */
export const benchMixed: Scenario = scenario({ name: "bench_mixed", seed: 9 }, (s) => {
  s.main.memprof.start({ samplingRate: RATE, callstackSize: 16 });
  s.main.repeat(N / 2, () => {
    s.main.alloc(sizes.uniform(1, 16), {
      lifetime: keep.cycle(keep.drop, keep.drop, keep.drop, keep.steps(1000)),
      at: "Bench.work@bench.ml:9:4-20",
    });
    s.main.allocCombined([2, 3], { at: "Bench.pair@bench.ml:12:4-20" });
  });
  s.main.memprof.stop();
});
