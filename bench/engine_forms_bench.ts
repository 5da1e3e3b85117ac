/**
 * The scenario engine's two forms on the same scenarios: the plain one (what `runScenario` uses
 * for a scenario without thread programs: the compiled steps run to their end at once) and the
 * resumable one (what thread programs need: the same compiled steps, whose rest where a thread
 * blocks is a generator that the baton resumes; `runScenarioResumable` runs any scenario that
 * way, with the same outputs). Issue 26's goal: the resumable form within 1.5× of the plain one
 * on the library.
 *
 * Before the table, one line per scenario named in the issue (`lifecycle`, `service`), one for
 * the slowest ratio, one for the whole library (every library scenario without thread programs;
 * the sum of their figures) and one per workload of bench/scenario_bench.ts: the resumable
 * figure next to the plain one as the anchor, ratio resumable ÷ plain (at most 1.50 meets the
 * goal). Passes of the two forms are interleaved in one process; a figure is the median of 5
 * passes after 2 warm-up passes, in milliseconds of this process's CPU time (user + system,
 * `process.cpuUsage`): on the shared machine wall time mostly measures the other processes.
 *
 * Run: deno bench --allow-read --allow-write --allow-run --allow-env bench/engine_forms_bench.ts
 * (or `deno run` for the lines alone).
 * @module
 */
import process from "node:process";
import { runScenario } from "../lib/scenario/mod.ts";
import { runScenarioResumable, usesThreadPrograms } from "../lib/scenario/engine.ts";
import type { Scenario } from "../lib/scenario/mod.ts";
import { scenarios } from "../scenarios/index.ts";
import { printSideBySide } from "./_side_by_side.ts";
import { benchMixed, benchShortLived } from "./_scenario_workloads.ts";

/** The library scenarios both forms can run (those with thread programs run resumably only). */
const LIBRARY: readonly Scenario[] = scenarios.filter((sc) => !usesThreadPrograms(sc));

const ROUNDS = 5;
const WARMUP = 2;

/** Milliseconds of CPU time (user + system) `f` takes. */
function cpuMs(f: () => void): number {
  const t0 = process.cpuUsage();
  f();
  const t = process.cpuUsage(t0);
  return (t.user + t.system) / 1000;
}

/** Medians (ms of CPU time) of `ROUNDS` interleaved passes of the two forms on `sc`. */
function forms(sc: Scenario): { plain: number; res: number } {
  for (let k = 0; k < WARMUP; k++) {
    runScenario(sc);
    runScenarioResumable(sc);
  }
  const p: number[] = [], r: number[] = [];
  for (let k = 0; k < ROUNDS; k++) {
    p.push(cpuMs(() => runScenario(sc)));
    r.push(cpuMs(() => runScenarioResumable(sc)));
  }
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[xs.length >> 1];
  return { plain: median(p), res: median(r) };
}

function line(label: string, t: { plain: number; res: number }): void {
  printSideBySide({
    group: "engine forms",
    label: `${label}, resumable form`,
    ours: { value: t.res, unit: "ms CPU" },
    anchor: t.plain,
    anchorName: "plain form",
    note: "goal ≤ 1.50",
  });
}

function report(): void {
  console.log(
    `\nscenario engine, resumable ÷ plain (medians of ${ROUNDS} interleaved passes, CPU time; this machine, now):`,
  );
  const per = LIBRARY.map((sc) => ({ name: sc.settings.name, t: forms(sc) }));
  for (const name of ["lifecycle", "service"]) {
    const s = per.find((x) => x.name === name);
    if (s !== undefined) line(`scenario ${name}`, s.t);
  }
  const worst = per.reduce((a, b) => (b.t.res / b.t.plain > a.t.res / a.t.plain ? b : a));
  line(`slowest ratio: scenario ${worst.name}`, worst.t);
  const sum = per.reduce((a, b) => ({ plain: a.plain + b.t.plain, res: a.res + b.t.res }), {
    plain: 0,
    res: 0,
  });
  line(`the library (${LIBRARY.length} scenarios without thread programs)`, sum);
  line("bench_short_lived (scenario_bench.ts)", forms(benchShortLived));
  line("bench_mixed (scenario_bench.ts)", forms(benchMixed));
  console.log();
}

report();

Deno.bench(`library, plain form [${LIBRARY.length} scenarios/iter]`, {
  group: "engine forms",
  baseline: true,
}, () => {
  for (const sc of LIBRARY) runScenario(sc);
});

Deno.bench(`library, resumable form [${LIBRARY.length} scenarios/iter]`, {
  group: "engine forms",
}, () => {
  for (const sc of LIBRARY) runScenarioResumable(sc);
});
