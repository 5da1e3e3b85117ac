/**
 * The trace analysis commands end to end on a 500,000-event trace (issue 14: each under 1 s).
 *
 * The trace is built when the module loads, deterministically, and never written to disk: the
 * seeded synthetic stream of tests/trace_analysis/_synthetic.ts (seed 1) through the project's
 * `MultiplexedWriter` — 500,000 events (allocations, promotions, collections) from 4 domains
 * taking turns in bursts, stacks 3 to 14 frames deep drawn from ~1,500 stacks over 60 functions
 * (181 codes, 206 distinct locations: every seventh code an inlined pair), a few stacks
 * dominating; minor, major and external allocations; objects dying young, promoted, or kept.
 * A synthetic stream rather than a scenario because it gives that many events in a second or
 * two with multi-domain, realistic stack shapes, where a scenario needs many more simulated
 * allocations per sampled one.
 *
 * Each bench runs what its `deno task trace` command runs (cli/_trace_analysis.ts,
 * cli/_trace_tools.ts), decode included, with the output built in memory instead of written:
 *
 * - `top`: `analyzeTrace` without the cube + `topOf` (by site, 20 rows) + `formatTop`;
 * - `flamegraph`: memtrace's flamegraph tool port (`lib/memtrace_tools`);
 * - `export --format folded`: `analyzeTrace` without the cube + `foldedStacks`, encoded;
 * - `report`: two passes, as for a file — `aggregateTrace` without the cube and `summaryPlan`
 *   (no summary here: 1,500 stacks), then `aggregateTrace` with the cube — + `buildReport`,
 *   encoded.
 *
 * Before the table, one line per command: the median of 5 timed passes (after 1 warm-up) next
 * to the goal of 1 s.
 * @module
 */
import { Reader } from "../lib/memtrace/mod.ts";
import { flamegraph } from "../lib/memtrace_tools/mod.ts";
import {
  aggregateTrace,
  analyzeTrace,
  buildReport,
  foldedStacks,
  formatTop,
  topOf,
} from "../lib/trace_analysis/mod.ts";
import { summarizeProfile, summaryPlan } from "../lib/trace_analysis/summary.ts";
import { syntheticTrace } from "../tests/trace_analysis/_synthetic.ts";
import { medianSeconds, printSideBySide } from "./_side_by_side.ts";

const EVENTS = 500_000;
const TRACE = syntheticTrace({ events: EVENTS, domains: 4, seed: 1 });
const encoder = new TextEncoder();

let sink = 0;

/** `trace top FILE`. */
function top(): void {
  const { data, selector } = analyzeTrace(Reader.fromBytes(TRACE), { cube: false });
  const lines = formatTop(topOf(data, selector, { by: "site", limit: 20 }), "trace.ctf");
  sink += encoder.encode(lines.join("\n") + "\n").length;
}

/** `trace flamegraph FILE` (memtrace's tool). */
function flame(): void {
  sink += encoder.encode(flamegraph(Reader.fromBytes(TRACE))).length;
}

/** `trace export FILE --format folded`. */
function folded(): void {
  const { data, selector } = analyzeTrace(Reader.fromBytes(TRACE), { cube: false });
  sink += encoder.encode(foldedStacks(data, selector).map((l) => l + "\n").join("")).length;
}

/** `trace report FILE` (the HTML kept in memory). */
function report(): void {
  const plan = summaryPlan(aggregateTrace(Reader.fromBytes(TRACE), { cube: false }));
  const data = aggregateTrace(Reader.fromBytes(TRACE), { mergeStacks: plan?.mergeStacks });
  sink += encoder.encode(buildReport(plan === null ? data : summarizeProfile(data, plan))).length;
}

const COMMANDS: [string, () => void][] = [
  ["top", top],
  ["flamegraph", flame],
  ["export folded", folded],
  ["report", report],
];

for (const [name, pass] of COMMANDS) {
  printSideBySide({
    group: "analysis",
    label: `${name}, 500,000 events`,
    ours: { value: medianSeconds(pass), unit: "s" },
    anchor: 1,
    anchorName: "goal",
    note: "goal ≤ 1.00",
  });
}

for (const [name, pass] of COMMANDS) {
  Deno.bench(`${name} [${EVENTS} events/iter]`, { group: "analysis", n: 5, warmup: 1 }, pass);
}

globalThis.addEventListener("unload", () => {
  if (sink === 0.5) console.log(sink); // keeps the outputs observable
});
