/**
 * memtrace's tools — `trace flamegraph`, `trace hotspots`, `trace identify` — against native
 * memtrace's own `flamegraph`, `hotspots` and `identify` (bench/_native.ts), whole commands
 * (process start included), on the same trace file, in the same run.
 *
 * The trace is `bench/_big_trace.ts`'s, 10^7 events by default (`MEMPROF_LAB_BENCH_TOOL_EVENTS`
 * for another count), stacks 3 to 30 frames deep before recursion (about 18 frames an
 * allocation; native memtrace's flamegraph takes minutes on the deep-stack trace of the scale
 * bench), written once to the bench cache (see `bigTrace`). Ours runs as `deno task trace` runs
 * it: `deno run --config deno.json --allow-read --allow-write cli/trace.ts TOOL FILE`, without
 * the task runner's own process. Standard output goes to /dev/null, except in the first round,
 * where both outputs go to temporary files that must be identical (`same`, else `DIFFERENT`).
 *
 * Each line: the median of the rounds' wall times (`MEMPROF_LAB_BENCH_ROUNDS`, default 3; a
 * round runs native, then ours), as events per second, ours next to native's with the ratio
 * (above 1.00 is faster), and both peak RSS. The goal is ≥ 1.0 (issue 29).
 * @module
 */
import { bigTrace } from "./_big_trace.ts";
import { median, nativeBinDir, type ProcessCost, runMeasured } from "./_native.ts";
import { printSideBySide } from "./_side_by_side.ts";

function envNumber(name: string, fallback: number): number {
  try {
    const v = Deno.env.get(name);
    return v === undefined ? fallback : Number(v);
  } catch {
    return fallback;
  }
}

const EVENTS = envNumber("MEMPROF_LAB_BENCH_TOOL_EVENTS", 1e7);
const ROUNDS = envNumber("MEMPROF_LAB_BENCH_ROUNDS", 3);
const TOOLS = ["identify", "hotspots", "flamegraph"] as const;
const here = (p: string) => new URL(p, import.meta.url).pathname;

function ours(tool: string, file: string): [string, string[]] {
  return [Deno.execPath(), [
    "run",
    "--config",
    here("../deno.json"),
    "--allow-read",
    "--allow-write",
    here("../cli/trace.ts"),
    tool,
    file,
  ]];
}

function sameBytes(a: string, b: string): boolean {
  const x = Deno.readFileSync(a), y = Deno.readFileSync(b);
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}

const mib = (c: ProcessCost[]) => {
  const rss = c.map((k) => k.peakRss).filter((r): r is number => r !== undefined);
  return rss.length === 0 ? "?" : `${(median(rss) / 2 ** 20).toFixed(0)} MiB`;
};

function run(): void {
  let trace: { path: string; bytes: number };
  try {
    trace = bigTrace(EVENTS, { depth: [3, 30] });
  } catch (e) {
    console.log(`tools: no trace (${(e as Error).message}): run with -A`);
    return;
  }
  const native = nativeBinDir();
  const label = (tool: string) =>
    `${tool}, ${EVENTS.toLocaleString("en-US")} events (${(trace.bytes / 1e6).toFixed(0)} MB)`;
  const tmp = Deno.makeTempDirSync({ prefix: "memprof-lab-tools-bench-" });
  try {
    for (const tool of TOOLS) {
      const mine: ProcessCost[] = [], theirs: ProcessCost[] = [];
      let check = "";
      for (let round = 0; round < ROUNDS; round++) {
        const outs = round === 0 ? [`${tmp}/native.out`, `${tmp}/ours.out`] : [];
        if (typeof native === "string") {
          theirs.push(runMeasured(`${native}/${tool}`, [trace.path], { stdoutFile: outs[0] }));
        }
        const [cmd, args] = ours(tool, trace.path);
        mine.push(runMeasured(cmd, args, { stdoutFile: outs[1] ?? outs[0] }));
        if (round === 0 && typeof native === "string") {
          check = sameBytes(outs[0], outs[1]) ? "same output" : "DIFFERENT output";
        }
      }
      const speed = (c: ProcessCost[]) => EVENTS / median(c.map((k) => k.seconds)) / 1e6;
      printSideBySide({
        group: "tools",
        label: label(tool),
        ours: { value: speed(mine), unit: "M events/s" },
        anchor: typeof native === "string" ? speed(theirs) : native.why,
        anchorName: "native memtrace (same run)",
        note: `whole command, median of ${ROUNDS}: ours ${
          median(mine.map((c) => c.seconds)).toFixed(2)
        } s ${mib(mine)}` +
          (typeof native === "string"
            ? `, native ${
              median(theirs.map((c) => c.seconds)).toFixed(2)
            } s ${mib(theirs)}; ${check}; goal ≥ 1.00`
            : ""),
      });
    }
  } finally {
    Deno.removeSync(tmp, { recursive: true });
  }
}

run();
