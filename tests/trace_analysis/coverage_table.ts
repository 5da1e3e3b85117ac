// The coverage table of docs/trace-tools.md ("Error bars"): `deno task coverage` runs every
// cell (rate × block size × quantity) on MEMPROF_LAB_COVERAGE_TRIALS trials (default 1,000:
// 100 runs of 10 groups) and the diff's false positives on MEMPROF_LAB_COVERAGE_PAIRS pairs of
// runs (default 1,000), and prints the table as Markdown. The CI test (coverage_test.ts) runs
// a few of the same trials.
import { binomialBounds, BLOCKS, coverage, falsePositives, RATES } from "./_ground_truth.ts";

const GROUPS = 10;
const trials = Number(Deno.env.get("MEMPROF_LAB_COVERAGE_TRIALS") ?? 1000);
const pairs = Number(Deno.env.get("MEMPROF_LAB_COVERAGE_PAIRS") ?? 1000);
const runs = Math.ceil(trials / GROUPS);
// MEMPROF_LAB_COVERAGE_PARTS: "coverage", "fpr" (or one of its cells, "fpr-small",
// "fpr-large"), comma-separated; default "coverage,fpr".
const parts = (Deno.env.get("MEMPROF_LAB_COVERAGE_PARTS") ?? "coverage,fpr").split(",");
const pct = (x: number) => `${(100 * x).toFixed(1)} %`;

if (parts.includes("coverage")) {
  console.log(
    `| rate | block | quantity | intervals | covered | observed | exact-theory | 99.9 % bounds |`,
  );
  console.log(`|---|---|---|---|---|---|---|---|`);
}
for (const rate of parts.includes("coverage") ? RATES : []) {
  for (const [name, words] of Object.entries(BLOCKS)) {
    const t0 = performance.now();
    for (const c of coverage({ rate, words }, runs, GROUPS)) {
      const [lo, hi] = binomialBounds(c.trials, c.expected);
      console.log(
        `| ${rate} | ${name} (${words} words) | ${c.quantity} | ${c.trials} | ${c.covered} | ${
          pct(c.covered / c.trials)
        } | ${pct(c.expected)} | ${pct(lo / c.trials)}–${pct(hi / c.trials)} |`,
      );
    }
    console.error(`${rate} ${name}: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }
}
if (parts.some((p) => p.startsWith("fpr"))) {
  console.log();
  console.log(`| rate | block | diffs | with a significant change | tests | raw p ≤ 0.05 |`);
  console.log(`|---|---|---|---|---|---|`);
}
const FPR_CELLS = [[1e-3, BLOCKS.small, "small"], [1e-4, BLOCKS.large, "large"]] as const;
const fprCells = FPR_CELLS.filter(([, , name]) =>
  parts.includes("fpr") || parts.includes(`fpr-${name}`)
);
for (const [rate, words, name] of fprCells) {
  const t0 = performance.now();
  const f = falsePositives({ rate, words }, pairs, GROUPS);
  console.log(
    `| ${rate} | ${name} (${words} words) | ${f.diffs} | ${f.diffsWithAny} (${
      pct(f.diffsWithAny / f.diffs)
    }) | ${f.tests} | ${f.rawRejections} (${pct(f.rawRejections / f.tests)}) |`,
  );
  console.error(`fp ${rate} ${name}: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}
