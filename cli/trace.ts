/**
 * `memprof-lab trace` (`deno task trace`) — read, dump, copy and analyse memtrace `.ctf` files.
 *
 * A command loads only the modules it uses (`import()` when it runs): the process start is part
 * of what a command costs, and `trace identify` needs a tenth of what `trace report` does.
 * @module
 */
import { printable } from "../lib/util/printable.ts";
import type { Info, Reader, TraceStats } from "../lib/memtrace/mod.ts";
import {
  exitStatusOf,
  StdoutBuffer,
  UsageError,
  writeOutput,
  writeStderr,
  writeStdout,
} from "./_io.ts";
import { commandName, usageLines } from "./_usage.ts";
import { load } from "./_lazy.ts";
import {
  fileArguments,
  type OptionTable,
  parseCommandArgs,
  parseInteger,
  unknownCommandMessage,
  usageError,
} from "./_args.ts";

/** The codec (dump, copy, info). */
const memtrace = () =>
  load<typeof import("../lib/memtrace/mod.ts")>(new URL("../lib/memtrace/mod.ts", import.meta.url));
/** top, diff, export, report, and info's intervals. */
const analysis = () =>
  load<typeof import("./_trace_analysis.ts")>(new URL("./_trace_analysis.ts", import.meta.url));

/** The help of `trace` (it lists the analysis commands, whose module it loads). */
async function mainHelp(): Promise<string> {
  const { ANALYSIS_COMMAND_LINES } = await analysis();
  return `${usageLines("trace", "<command> [options]")}

Commands:
  dump FILE        print the trace info, then one line per event
  copy IN OUT      decode every event and re-encode it (format v3) into OUT
  info FILE        print the trace info and counts of events, samples and sizes
  flamegraph FILE  folded stacks, as memtrace's flamegraph tool prints them
  hotspots FILE    memtrace's hotspots report: the heaviest allocation sites
  identify FILE    memtrace's identify report: trace description and statistics
  subsample IN OUT FACTOR [START_S END_S]
                   memtrace's subsample: keep 1/FACTOR of the samples (same draws)
  strip-names IN OUT
                   memtrace's strip_names: the trace without names or backtraces
${ANALYSIS_COMMAND_LINES}

Run '${commandName("trace <command>")} --help' for a command's options.

Exit status: 0 ok, 1 failure (unreadable or malformed input, a file that cannot be
written), 2 wrong command line (this help on stderr when no command is given), 130 and
143 when SIGINT or SIGTERM stops a command writing a file.`;
}

const HELP: Record<"dump" | "copy" | "info", string> = {
  dump: `${usageLines("trace dump", "FILE [--no-backtraces] [--max-output CHARS]")}

Prints the 10 info lines (sample_rate, word_size, executable_name, host_name,
ocaml_runtime_params, pid, initial_domain, start_time, context, size_bytes), then one
line per event: '<µs since start> <domain> <event>', where <event> is memtrace's
Event.to_string with location codes resolved (the format of the reference dumps); a
code without locations prints as '$<code>'. FILE may be '-' (standard input) or a pipe:
it is read as it comes (size_bytes is then 0, as memtrace's fstat of a pipe says).

A trace is refused with a located error past 2^20 frames in one backtrace, and the dump
stops with one once it exceeds 64 Mi characters plus 4,096 per byte of input read (a
small hostile trace could print gigabytes); see docs/memtrace.md, "Limits and errors".

Options:
  --no-backtraces     skip backtrace decoding (alloc lines then show no frames)
  --max-output CHARS  most characters to print instead (0: no limit)
  -h, --help          show this help`,
  copy: `${usageLines("trace copy", "IN OUT")}

Decodes every event of IN and writes it back through the multiplexed writer, keeping pid
and start time, as memtrace's copy does. A v3 trace comes out byte-identical; v1 and v2
traces are upgraded to v3. OUT is written to OUT.<pid>.tmp and renamed when complete;
the temporary is removed on error, Ctrl-C or SIGTERM (exit status 130, 143). A device or
FIFO (/dev/null) is written in place, never replaced. OUT may not be a directory. IN may
be '-' (standard input). A code used without a location definition, or allocation ids
memtrace's writer would not give, stop the copy with a located error.

Options:
  -h, --help  show this help`,
  info: `${usageLines("trace info", "FILE [--json] [--confidence C]")}

Prints the trace metadata (memtrace's 'name: value' lines, as dump starts), then counts:
events; domains; duration_us; allocations, and allocations by source (minor, major,
external); promotions; collections; samples; sampled_words; allocations by size
(size_le4_words, size_le16_words, size_le256_words, size_gt256_words); location_codes;
then the estimate of the bytes allocated (samples / rate x word size) and its confidence
interval (exact binomial, as 'trace top'): allocated_bytes, allocated_bytes_low,
allocated_bytes_high, confidence (null where the trace's rate is not in (0, 1]).

Options:
  --json            print the same fields as one JSON object, keyed by the text's labels
                    (strings unquoted, context null for None, domains an array)
  --confidence C    confidence of the interval, in (0, 1) (default 0.95)
  -h, --help        show this help`,
};

function parse<const O extends OptionTable>(args: string[], cmd: string, options: O) {
  return parseCommandArgs(`trace ${cmd}`, args, options);
}

/** Opens a trace file, or standard input for `-` (read as it comes; its size shows as 0). */
async function openTrace(file: string): Promise<Reader> {
  const { Reader } = await memtrace();
  if (file === "-") return Reader.fromStream(Deno.stdin, { name: "standard input" });
  return Reader.open(file);
}

/** `--max-output CHARS`: undefined for the default budget, Infinity for 0. */
function maxOutput(value: string | boolean | undefined): number | undefined {
  if (value === undefined || typeof value === "boolean") return undefined;
  const n = parseInteger("trace dump", "--max-output", value);
  return n === 0 ? Infinity : n;
}

async function dump(args: string[]): Promise<void> {
  const { values, positionals } = parse(args, "dump", {
    "no-backtraces": { type: "boolean" },
    "max-output": { type: "string" },
  });
  if (values.help) return writeStdout(HELP.dump + "\n");
  const [file] = fileArguments("trace dump", positionals, 1);
  const maxOutputChars = maxOutput(values["max-output"]);
  const { dumpTraceTo } = await memtrace();
  const reader = await openTrace(file);
  const out = new StdoutBuffer();
  try {
    dumpTraceTo(reader, (text) => out.write(text), {
      parseBacktraces: !values["no-backtraces"],
      maxOutputChars,
    });
  } finally {
    out.flush();
    reader.close();
  }
}

async function copy(args: string[]): Promise<void> {
  const { values, positionals } = parse(args, "copy", {});
  if (values.help) return writeStdout(HELP.copy + "\n");
  const [input, output] = fileArguments("trace copy", positionals, 2);
  const [{ FileSink, TraceCopier }, { openTraceInput, readThrough }] = await Promise.all([
    memtrace(),
    load<typeof import("./_trace_input.ts")>(new URL("./_trace_input.ts", import.meta.url)),
  ]);
  // A pipe is read ahead asynchronously, so that an idle writer cannot keep Ctrl-C waiting.
  const trace = await openTraceInput(input, { stdin: true });
  let n = 0;
  try {
    await writeOutput(output, async (file) => {
      const copier = new TraceCopier(trace.reader, new FileSink(file));
      // A few packets at a time (at most 32 KiB each), letting SIGINT/SIGTERM through to
      // remove the temporary.
      await readThrough(copier, trace);
      n = copier.events;
    });
  } finally {
    trace.reader.close();
  }
  writeStderr(`copied ${n} events from ${printable(input)} to ${printable(output)}\n`);
}

/** `trace info`'s fields after the metadata, by label (the text's labels and the JSON keys). */
export function infoCounts(s: TraceStats): [string, number | number[]][] {
  const a = s.allocs, b = s.sizeBuckets;
  return [
    ["events", s.events],
    ["domains", s.domains],
    ["duration_us", s.durationUs],
    ["allocations", a.minor + a.major + a.external],
    ["allocations_minor", a.minor],
    ["allocations_major", a.major],
    ["allocations_external", a.external],
    ["promotions", s.promotions],
    ["collections", s.collections],
    ["samples", s.samples],
    ["sampled_words", s.words],
    ["size_le4_words", b.le4],
    ["size_le16_words", b.le16],
    ["size_le256_words", b.le256],
    ["size_gt256_words", b.gt256],
    ["location_codes", s.distinctLocationCodes],
  ];
}

/** `trace info --json`: the metadata under the labels of memtrace's info lines, then the
 * counts under {@linkcode infoCounts}'s labels, in the text's order. */
export function infoJson(info: Info, sizeBytes: number, s: TraceStats): Record<string, unknown> {
  // pid is a bigint: a number where it is exact (always, for real pids), else its digits.
  const big = (n: bigint | number) =>
    typeof n === "number" || n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : String(n);
  return {
    sample_rate: info.sampleRate,
    word_size: info.wordSize,
    executable_name: info.executableName,
    host_name: info.hostName,
    ocaml_runtime_params: info.ocamlRuntimeParams,
    pid: big(info.pid),
    initial_domain: info.initialDomain,
    start_time: big(info.startTime),
    context: info.context ?? null,
    size_bytes: sizeBytes,
    ...Object.fromEntries(infoCounts(s)),
  };
}

async function info(args: string[]): Promise<void> {
  const { values, positionals } = parse(args, "info", {
    json: { type: "boolean" },
    confidence: { type: "string" },
  });
  if (values.help) return writeStdout(HELP.info + "\n");
  const [file] = fileArguments("trace info", positionals, 1);
  const [{ infoLines, Reader, traceStats }, { confidenceOption, infoIntervals }] = await Promise
    .all([memtrace(), analysis()]);
  const confidence = confidenceOption(values.confidence, "info");
  const intervals = (s: TraceStats, i: Info) => infoIntervals(s.samples, i, confidence);
  const reader = Reader.open(file);
  try {
    const s = traceStats(reader);
    if (values.json) {
      const json = {
        ...infoJson(reader.info, reader.sizeBytes(), s),
        ...Object.fromEntries(intervals(s, reader.info)),
      };
      writeStdout(JSON.stringify(json, null, 2) + "\n");
      return;
    }
    const out = new StdoutBuffer();
    for (const l of infoLines(reader.info, reader.sizeBytes())) out.line(l);
    for (const [k, v] of [...infoCounts(s), ...intervals(s, reader.info)]) {
      const text = Array.isArray(v) ? v.join(",") || "-" : v === null ? "null" : String(v);
      out.line(`${k.padEnd(20)} ${text}`);
    }
    out.flush();
  } finally {
    reader.close();
  }
}

/** Runs `trace` with `args` (without the program name); returns the exit status: 0 ok,
 * 1 failure, 2 usage (the help on stderr when no command is given). */
export async function run(args: string[]): Promise<number> {
  try {
    await dispatch(args);
    return 0;
  } catch (e) {
    return exitStatusOf(e);
  }
}

/** The commands of `trace`, for suggestions. */
const TRACE_COMMANDS = [
  "dump",
  "copy",
  "info",
  "flamegraph",
  "hotspots",
  "identify",
  "subsample",
  "strip-names",
  "top",
  "diff",
  "export",
  "report",
];

async function dispatch(args: string[]): Promise<void> {
  const [cmd, ...rest] = args;
  switch (cmd) {
    case "dump":
      return dump(rest);
    case "copy":
      return copy(rest);
    case "info":
      return info(rest);
    case "flamegraph":
    case "hotspots":
    case "identify":
    case "subsample":
    case "strip-names":
      return (await load<typeof import("./_trace_tools.ts")>(
        new URL("./_trace_tools.ts", import.meta.url),
      )).TOOL_COMMANDS[cmd](rest);
    case "top":
    case "diff":
    case "export":
    case "report":
      await (await analysis()).runAnalysisCommand(cmd, rest);
      return;
    case undefined:
      throw new UsageError("missing command", await mainHelp());
    case "-h":
    case "--help":
    case "help":
      writeStdout(await mainHelp() + "\n");
      return;
    default:
      throw usageError("trace", unknownCommandMessage(cmd, TRACE_COMMANDS));
  }
}

if (import.meta.main) Deno.exit(await run(Deno.args));
