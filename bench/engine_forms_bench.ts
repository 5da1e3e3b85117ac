/**
 * The scenario engine's two forms on the same scenarios: the plain one (compiled closures, what
 * `runScenario` uses for a scenario without thread programs) and the resumable one (generators,
 * what thread programs need; `runScenarioResumable` runs any scenario that way, with the same
 * outputs). Issue 26's goal: the resumable form within 1.5× of the plain one on the library.
 *
 * Before the table, one line per scenario named in the issue (`lifecycle`, `service`), one for
 * the slowest ratio and one for the whole library (every library scenario without thread
 * programs, one pass of each = one library pass): our resumable figure next to the plain one as
 * the anchor, measured in the same process, passes of the two forms interleaved; each figure is
 * the median of 5 passes after 2 warm-up passes, the ratio resumable ÷ plain (below 1.50 meets
 * the goal).
 *
 * Run: deno bench --allow-read --allow-write --allow-run --allow-env bench/engine_forms_bench.ts
 * @module
 */
import { runScenario } from "../lib/scenario/mod.ts";
import { runScenarioResumable, usesThreadPrograms } from "../lib/scenario/engine.ts";
import type { Scenario } from "../lib/scenario/mod.ts";
import { scenarios } from "../scenarios/index.ts";
import { printSideBySide } from "./_side_by_side.ts";

/** The library scenarios both forms can run (those with thread programs run resumably only). */
const LIBRARY: readonly Scenario[] = scenarios.filter((sc) => !usesThreadPrograms(sc));

const ROUNDS = 5;
const WARMUP = 2;

/** Medians (seconds) of `ROUNDS` interleaved passes of `plain` and `resumable`. */
function interleaved(plain: () => void, resumable: () => void): { plain: number; res: number } {
  for (let k = 0; k < WARMUP; k++) {
    plain();
    resumable();
  }
  const p: number[] = [], r: number[] = [];
  for (let k = 0; k < ROUNDS; k++) {
    let t0 = performance.now();
    plain();
    p.push(performance.now() - t0);
    t0 = performance.now();
    resumable();
    r.push(performance.now() - t0);
  }
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[xs.length >> 1] / 1000;
  return { plain: median(p), res: median(r) };
}

function line(label: string, t: { plain: number; res: number }): void {
  printSideBySide({
    group: "engine forms",
    label: `${label}, resumable form`,
    ours: { value: t.res * 1000, unit: "ms" },
    anchor: t.plain * 1000,
    anchorName: "plain form",
    note: "goal ≤ 1.50",
  });
}

function report(): void {
  console.log(
    `\nscenario engine, resumable ÷ plain (medians of ${ROUNDS} interleaved passes; this machine, now):`,
  );
  const per = LIBRARY.map((sc) => ({
    name: sc.settings.name,
    t: interleaved(() => runScenario(sc), () => runScenarioResumable(sc)),
  }));
  for (const name of ["lifecycle", "service"]) {
    const s = per.find((x) => x.name === name);
    if (s !== undefined) line(`scenario ${name}`, s.t);
  }
  const worst = per.reduce((a, b) => (b.t.res / b.t.plain > a.t.res / a.t.plain ? b : a));
  line(`slowest ratio: scenario ${worst.name}`, worst.t);
  line(
    `the library (${LIBRARY.length} scenarios without thread programs), one pass`,
    interleaved(
      () => LIBRARY.forEach((sc) => runScenario(sc)),
      () => LIBRARY.forEach((sc) => runScenarioResumable(sc)),
    ),
  );
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
