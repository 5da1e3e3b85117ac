/**
 * Whole-scenario throughput: simulated allocations per second with memprof sampling at 1e-4 and
 * the tracer writing every sample into a memtrace trace. Each iteration runs a scenario of
 * 1,000,000 allocations, so allocations/s = iter/s × 1,000,000.
 * Targets: at least 10 M allocations/s for a loop of short-lived small blocks; 50 M is the aim.
 */
import { keep, runScenario, scenario, sizes } from "../lib/scenario/mod.ts";

const N = 1_000_000;

const shortLived = scenario({ name: "bench_short_lived" }, (s) => {
  s.main.memprof.start({ samplingRate: 1e-4, callstackSize: 16 });
  s.main.call(
    "Bench.main@bench.ml:1:0-10",
    () => s.main.repeat(N, () => s.main.alloc(2, { at: "Bench.loop@bench.ml:5:4-20" })),
  );
  s.main.memprof.stop();
});

const mixed = scenario({ name: "bench_mixed", seed: 9 }, (s) => {
  s.main.memprof.start({ samplingRate: 1e-4, callstackSize: 16 });
  s.main.repeat(N / 2, () => {
    s.main.alloc(sizes.uniform(1, 16), {
      lifetime: keep.cycle(keep.drop, keep.drop, keep.drop, keep.steps(1000)),
      at: "Bench.work@bench.ml:9:4-20",
    });
    s.main.allocCombined([2, 3], { at: "Bench.pair@bench.ml:12:4-20" });
  });
  s.main.memprof.stop();
});

Deno.bench(`short-lived 2-word blocks, rate 1e-4, tracer on [${N} allocations/iter]`, {
  group: "scenario",
  baseline: true,
}, () => {
  runScenario(shortLived);
});

Deno.bench(`mixed sizes, a quarter kept, comballocs, rate 1e-4 [${N} allocations/iter]`, {
  group: "scenario",
}, () => {
  runScenario(mixed);
});
