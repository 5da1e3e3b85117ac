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
 * `MEMPROF_LAB_BENCH_TOOLS` (comma-separated) runs only some of the tools.
 *
 * Then the same on a stack bomb (tests/memtrace_tools/_stack_bomb.ts: 1,000 allocations with
 * 60-frame stacks over 4,000-character names, nearly each its own stack; 385 KB): flamegraph's
 * output is about 150 MB there, each row spelling out its stack, for memtrace's tool as for
 * ours.
 * @module
 */
import { bigTrace } from "./_big_trace.ts";
import { median, nativeBinDir, ourTraceCommand, type ProcessCost, runMeasured } from "./_native.ts";
import { printSideBySide } from "./_side_by_side.ts";
import { stackBombTrace } from "../tests/memtrace_tools/_stack_bomb.ts";

function envText(name: string, fallback: string): string {
  try {
    return Deno.env.get(name) ?? fallback;
  } catch {
    return fallback;
  }
}

function envNumber(name: string, fallback: number): number {
  return Number(envText(name, String(fallback)));
}

const EVENTS = envNumber("MEMPROF_LAB_BENCH_TOOL_EVENTS", 1e7);
const ROUNDS = envNumber("MEMPROF_LAB_BENCH_ROUNDS", 3);
/** The tools to run (`MEMPROF_LAB_BENCH_TOOLS`, comma-separated; default all three). */
const TOOLS = envText("MEMPROF_LAB_BENCH_TOOLS", "identify,hotspots,flamegraph").split(",");

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
  const tmp = Deno.makeTempDirSync({ prefix: "memprof-lab-tools-bench-" });
  try {
    compare(
      trace.path,
      EVENTS,
      (tool) =>
        `${tool}, ${EVENTS.toLocaleString("en-US")} events (${(trace.bytes / 1e6).toFixed(0)} MB)`,
      tmp,
      EVENTS >= 1e7 ? "goal ≥ 1.00" : "the goal is for 10^7 events and more",
    );
    const bomb = stackBombTrace();
    const bombPath = `${tmp}/stack_bomb.ctf`;
    Deno.writeFileSync(bombPath, bomb.bytes);
    let events = 0;
    for (let a = 0; a < bomb.stacks.length; a++) events += a % 2 === 0 ? 2 : 1;
    compare(
      bombPath,
      events,
      (tool) => `${tool}, stack bomb (${events} events, 60-frame stacks, 4,000-character names)`,
      tmp,
      "no ratio goal (the process start weighs most): seconds and bounded memory",
    );
  } finally {
    Deno.removeSync(tmp, { recursive: true });
  }
}

/** The side-by-side lines of the three tools on the trace file `path`. */
function compare(
  path: string,
  events: number,
  label: (tool: string) => string,
  tmp: string,
  goal: string,
) {
  const native = nativeBinDir();
  {
    for (const tool of TOOLS) {
      const mine: ProcessCost[] = [], theirs: ProcessCost[] = [];
      let check = "";
      for (let round = 0; round < ROUNDS; round++) {
        const outs = round === 0 ? [`${tmp}/native.out`, `${tmp}/ours.out`] : [];
        if (typeof native === "string") {
          theirs.push(runMeasured(`${native}/${tool}`, [path], { stdoutFile: outs[0] }));
        }
        const [cmd, ...args] = ourTraceCommand([tool, path]);
        mine.push(runMeasured(cmd, args, { stdoutFile: outs[1] ?? outs[0] }));
        if (round === 0 && typeof native === "string") {
          check = sameBytes(outs[0], outs[1]) ? "same output" : "DIFFERENT output";
        }
      }
      const speed = (c: ProcessCost[]) => events / median(c.map((k) => k.seconds)) / 1e6;
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
            } s ${mib(theirs)}; ${check}; ${goal}`
            : ""),
      });
    }
  }
}

run();
