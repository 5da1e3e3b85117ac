/**
 * Whole-scenario throughput: simulated allocations per second with memprof sampling at 1e-4 and
 * the tracer writing every sample into a memtrace trace. Each iteration runs a scenario of
 * 1,000,000 allocations, so allocations/s = iter/s × 1,000,000.
 *
 * Goals (issue 14): at least 100 M allocations/s for the loop of short-lived small blocks, at
 * least 30 M/s for the mixed workload. Before the table, one line per workload gives our figure
 * (median of 5 passes after 3 warm-up passes) next to the real OCaml 5.3 runtime running the same program
 * under a `Gc.Memprof` tracker at the same rate (bench/_anchors.ts's `short_lived` and `mixed`),
 * with the ratio ours ÷ OCaml's.
 *
 * Run: deno bench --allow-read --allow-write --allow-run --allow-env bench/scenario_bench.ts
 * @module
 */
import { runScenario } from "../lib/scenario/mod.ts";
import {
  benchMixed,
  benchShortLived,
  WORKLOAD_ALLOCATIONS,
  WORKLOAD_RATE,
} from "./_scenario_workloads.ts";
import { ocamlAllocationsPerSecond } from "./_anchors.ts";
import { medianSeconds, printSideBySide } from "./_side_by_side.ts";

const N = WORKLOAD_ALLOCATIONS;
const RATE = WORKLOAD_RATE;
const shortLived = benchShortLived;
const mixed = benchMixed;

const WORKLOADS = [
  {
    workload: "short_lived",
    sc: shortLived,
    label: "short-lived 2-word blocks, rate 1e-4, tracer on",
    note: "goal ≥ 100 M/s",
  },
  {
    workload: "mixed",
    sc: mixed,
    label: "mixed sizes, a quarter kept, comballocs, rate 1e-4",
    note: "goal ≥ 30 M/s",
  },
] as const;

function report(): void {
  console.log("\nscenario engine against OCaml 5.3 (median of 5 passes; this machine, now):");
  for (const { workload, sc, label, note } of WORKLOADS) {
    // Three warm-up passes: the engine's loops are compiled by the JIT over the first runs.
    const seconds = medianSeconds(() => runScenario(sc), { warmup: 3 });
    const anchor = ocamlAllocationsPerSecond(workload, RATE);
    printSideBySide({
      group: "scenario",
      label,
      ours: { value: N / seconds / 1e6, unit: "M allocations/s" },
      anchor: typeof anchor === "string" ? anchor : anchor / 1e6,
      anchorName: "OCaml 5.3",
      note,
    });
  }
  console.log();
}

report();

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
