/**
 * memtrace's own tools as `memprof-lab trace` commands: `flamegraph`, `hotspots`, `identify`,
 * `subsample` and `strip-names`, printing and writing exactly what memtrace's `bin/` tools do
 * (lib/memtrace_tools). Wired into cli/trace.ts.
 *
 * Each command loads its tool's module when it runs (`import()`), so that `trace identify` does
 * not load subsample's OCaml random generator or the analysis library (cli/trace.ts says why).
 * @module
 */
import { printable } from "../lib/util/printable.ts";
import type { Event, FileSink } from "../lib/memtrace/mod.ts";
import { Reader } from "../lib/memtrace/reader.ts";
import type { ToolPass } from "../lib/memtrace_tools/mod.ts";
import type { RankChangeResult } from "../lib/trace_analysis/rank_change.ts";
import { StdoutBuffer, writeOutput, writeStderr, writeStdout } from "./_io.ts";
import { parseCommandArgs, parseInteger, usageError } from "./_args.ts";
import { usageLines } from "./_usage.ts";
import { load } from "./_lazy.ts";

/** How OUT is written, as the help texts say it. */
const OUT_TEXT = `OUT is written to a temporary file, renamed when complete and removed on error,
Ctrl-C or SIGTERM (exit status 130, 143); a device or FIFO (/dev/null) is written in place.`;

/** The commands' help texts, by command name (subsample's: {@linkcode subsampleHelp}). */
export const TOOL_HELP: Record<string, string> = {
  flamegraph: `${usageLines("trace flamegraph", "FILE")}

Prints the folded stacks of FILE's allocations, as memtrace's flamegraph tool does:
'f1;f2;…;fn <samples>' per call path (function names only, each name once per path,
paths of one name left out), for flamegraph.pl and similar tools.

Options:
  -h, --help  show this help`,
  hotspots: `${usageLines("trace hotspots", "FILE")}

Prints memtrace's hotspots report: the allocation sites above 0.5% of the samples,
heaviest first, with up to three positions each and the callers behind them (sizes
assume 8-byte words, as memtrace's tool does). FILE needs backtraces: a stripped trace
is refused.

Options:
  -h, --help  show this help`,
  identify: `${usageLines("trace identify", "FILE")}

Prints memtrace's identify report: the trace's program, start date (UTC), host, pid,
sample rate, GC parameters and context, then allocation and collection rates, the share
promoted, sizes and runtime. FILE is printed as given.

Options:
  -h, --help  show this help`,
  "strip-names": `${usageLines("trace strip-names", "IN OUT")}

Writes to OUT the trace IN without what names the program, byte-identical to memtrace's
strip_names tool: executable and host '<anonymous>', pid 0, start time 0, no context,
no backtraces; times, ids, sizes, samples, sources and domains are kept.

${OUT_TEXT}

Options:
  -h, --help  show this help`,
};

/** subsample's help text, which gives two of its module's constants. */
export function subsampleHelp(
  { MAX_SUBSAMPLE_FACTOR, EXACT_DRAW_SAMPLES }: {
    MAX_SUBSAMPLE_FACTOR: number;
    EXACT_DRAW_SAMPLES: number;
  },
): string {
  return `${usageLines("trace subsample", "IN OUT FACTOR [START_S END_S]")}

Writes to OUT the trace IN as if sampled FACTOR times less often, byte-identical to
memtrace's subsample tool: each sample is kept when OCaml 5's default Random.int FACTOR
is 0 (the same draws as a fresh OCaml process), allocations with no sample left are
dropped, kept ones renumbered; promotions and collections follow their objects; the
sample rate is divided by FACTOR. On stderr, after what it kept, it says how the top 10
sites' estimates, confidence intervals (95%, exact binomial, as 'trace top') and ranks
change: the intervals widen about sqrt(FACTOR) times, and close ranks may swap. With START_S END_S, only allocations whose time in
whole seconds since the trace start is in [START_S, END_S) are kept.

FACTOR is an integer from 1 to ${MAX_SUBSAMPLE_FACTOR}; START_S and END_S are integers
(negative ones allowed), START_S <= END_S.

${OUT_TEXT}

An allocation of more than ${EXACT_DRAW_SAMPLES} samples keeps a binomial number of them (one
draw, not one per sample; output then not memtrace's). A trace 'copy' refuses is
refused with copy's error.

Options:
  -h, --help  show this help`;
}

/** The arguments of `cmd` (negative integers among them: START_S may be one), `counts` of them,
 * or undefined after printing the help for `--help` (`help`, default `TOOL_HELP[cmd]`). */
function positionals(
  args: string[],
  cmd: string,
  counts: number[],
  help = TOOL_HELP[cmd],
): string[] | undefined {
  const { values, positionals } = parseCommandArgs(`trace ${cmd}`, args, {}, {
    negativeIntegers: "positional",
  });
  if (values.help) {
    writeStdout(help + "\n");
    return undefined;
  }
  if (!counts.includes(positionals.length)) {
    throw usageError(
      `trace ${cmd}`,
      `'trace ${cmd}' takes ${counts.join(" or ")} argument${counts.at(-1) === 1 ? "" : "s"}, ` +
        `got ${positionals.length}`,
    );
  }
  return positionals;
}

/** Writes a tool's whole output (newline-terminated lines) to stdout. */
function print(text: string): void {
  if (text === "") return;
  const out = new StdoutBuffer();
  out.line(text.endsWith("\n") ? text.slice(0, -1) : text);
  out.flush();
}

function withReader<T>(file: string, f: (r: Reader) => T): T {
  const reader = Reader.open(file);
  try {
    return f(reader);
  } finally {
    reader.close();
  }
}

/** Writes `output` with a tool's pass over trace `input`, read a few packets at a time so that
 * SIGINT and SIGTERM remove the temporary and end the command ({@linkcode writeOutput}). */
async function writeThroughPass<T>(
  input: string,
  output: string,
  start: (reader: Reader, sink: FileSink) => ToolPass<T>,
): Promise<T> {
  const [{ openTraceInput, readThrough }, { FileSink }] = await Promise.all([
    load<typeof import("./_trace_input.ts")>(new URL("./_trace_input.ts", import.meta.url)),
    load<typeof import("../lib/memtrace/sink.ts")>(
      new URL("../lib/memtrace/sink.ts", import.meta.url),
    ),
  ]);
  const trace = await openTraceInput(input);
  try {
    let result: T | undefined;
    await writeOutput(output, async (file) => {
      const pass = start(trace.reader, new FileSink(file));
      await readThrough(trace.reader.iterate(pass.onEvent), trace);
      result = pass.finish();
    });
    return result!;
  } finally {
    trace.reader.close();
  }
}

function integer(text: string, what: string, min: number, max: number): number {
  return parseInteger("trace subsample", what, text, { min, max });
}

async function flamegraphCmd(args: string[]): Promise<void> {
  const p = positionals(args, "flamegraph", [1]);
  if (p === undefined) return;
  const { flamegraphTo } = await load<typeof import("../lib/memtrace_tools/flamegraph.ts")>(
    new URL("../lib/memtrace_tools/flamegraph.ts", import.meta.url),
  );
  // Line by line: the lines of a trace can add up to more than one string can hold.
  const out = new StdoutBuffer();
  withReader(p[0], (r) => flamegraphTo(r, (line) => out.write(line)));
  out.flush();
}

async function hotspotsCmd(args: string[]): Promise<void> {
  const p = positionals(args, "hotspots", [1]);
  if (p === undefined) return;
  const { hotspots } = await load<typeof import("../lib/memtrace_tools/hotspots.ts")>(
    new URL("../lib/memtrace_tools/hotspots.ts", import.meta.url),
  );
  print(withReader(p[0], (r) => hotspots(r)));
}

async function identifyCmd(args: string[]): Promise<void> {
  const p = positionals(args, "identify", [1]);
  if (p === undefined) return;
  const { identify } = await load<typeof import("../lib/memtrace_tools/identify.ts")>(
    new URL("../lib/memtrace_tools/identify.ts", import.meta.url),
  );
  print(withReader(p[0], (r) => identify(r, { name: p[0] })));
}

async function subsampleCmd(args: string[]): Promise<void> {
  const subsample = await load<typeof import("../lib/memtrace_tools/subsample.ts")>(
    new URL("../lib/memtrace_tools/subsample.ts", import.meta.url),
  );
  const { MAX_SUBSAMPLE_FACTOR, startSubsample } = subsample;
  const p = positionals(args, "subsample", [3, 5], subsampleHelp(subsample));
  if (p === undefined) return;
  const [input, output, factorText, startText, endText] = p;
  const factor = integer(factorText, "FACTOR", 1, MAX_SUBSAMPLE_FACTOR);
  let window: { start: number; end: number } | undefined;
  if (startText !== undefined) {
    const lim = Number.MAX_SAFE_INTEGER;
    window = {
      start: integer(startText, "START_S", -lim, lim),
      end: integer(endText, "END_S", -lim, lim),
    };
    if (window.start > window.end) {
      throw usageError(
        "trace subsample",
        `the window starts after it ends (START_S ${window.start} > END_S ${window.end})`,
      );
    }
  }
  // The input's and the output's top sites, aggregated as the events go by (lib/trace_analysis;
  // finished with the pass, while the input is open).
  const [{ startAggregate }, { formatRankChange, rankChangeOf }] = await Promise.all([
    load<typeof import("../lib/trace_analysis/aggregate.ts")>(
      new URL("../lib/trace_analysis/aggregate.ts", import.meta.url),
    ),
    load<typeof import("../lib/trace_analysis/rank_change.ts")>(
      new URL("../lib/trace_analysis/rank_change.ts", import.meta.url),
    ),
  ]);
  let change: RankChangeResult | undefined;
  const stats = await writeThroughPass(input, output, (r, sink) => {
    const before = startAggregate(r), after = startAggregate(r);
    // The output's backtraces share prefixes with the previous kept allocation, not with the
    // input's previous one: the output aggregate reads each backtrace whole.
    const whole = {
      kind: "alloc" as const,
      objId: 0,
      domain: 0,
      length: 0,
      nsamples: 0,
      source: 0,
      backtraceBuffer: new Float64Array(0) as Float64Array,
      backtraceLength: 0,
      commonPrefix: 0,
    };
    const onOutputEvent = (now: number, ev: Event) => {
      if (ev.kind !== "alloc") return after.onEvent(now, ev);
      whole.objId = ev.objId;
      whole.domain = ev.domain;
      whole.length = ev.length;
      whole.nsamples = ev.nsamples;
      whole.source = ev.source;
      whole.backtraceBuffer = ev.backtraceBuffer;
      whole.backtraceLength = ev.backtraceLength;
      after.onEvent(now, whole);
    };
    const pass = startSubsample(r, sink, { factor, window, onOutputEvent });
    return {
      onEvent: (now, ev) => {
        pass.onEvent(now, ev);
        before.onEvent(now, ev);
      },
      finish: () => {
        const result = pass.finish();
        const a = after.finish();
        a.info.sampleRate /= factor;
        change = rankChangeOf(before.finish(), a);
        return result;
      },
    };
  });
  writeStderr(
    `kept ${stats.keptAllocations} of ${stats.allocations} allocations (${stats.keptSamples} ` +
      `of ${stats.samples} samples), wrote ${stats.events} events to ${printable(output)}\n`,
  );
  if (change !== undefined && change.rows.length > 0) {
    writeStderr(formatRankChange(change).join("\n") + "\n");
  }
}

async function stripNamesCmd(args: string[]): Promise<void> {
  const p = positionals(args, "strip-names", [2]);
  if (p === undefined) return;
  const [input, output] = p;
  const { startStripNames } = await load<typeof import("../lib/memtrace_tools/strip_names.ts")>(
    new URL("../lib/memtrace_tools/strip_names.ts", import.meta.url),
  );
  const n = await writeThroughPass(input, output, startStripNames);
  writeStderr(`wrote ${n} events without names to ${printable(output)}\n`);
}

/** The commands, by name: each takes the arguments after its name. */
export const TOOL_COMMANDS: Record<string, (args: string[]) => void | Promise<void>> = {
  flamegraph: flamegraphCmd,
  hotspots: hotspotsCmd,
  identify: identifyCmd,
  subsample: subsampleCmd,
  "strip-names": stripNamesCmd,
};
