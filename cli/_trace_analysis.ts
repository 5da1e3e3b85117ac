/**
 * The analysis commands of `memprof-lab trace` (`deno task trace`): `top`, `diff`, `export` and `report`
 * (lib/trace_analysis). cli/trace.ts dispatches to {@linkcode runAnalysisCommand}.
 * @module
 */
import { printable, printableLines } from "../lib/util/printable.ts";
import { Reader } from "../lib/memtrace/mod.ts";
import {
  type AggregateOptions,
  type AnalysisFilter,
  analyzeTrace,
  buildReport,
  diffOf,
  foldedStacksTo,
  formatDiff,
  formatTop,
  type GroupBy,
  pprofOf,
  type ProfileData,
  type Selector,
  speedscopeOf,
  startAnalysis,
  topOf,
  TraceAnalysisError,
} from "../lib/trace_analysis/mod.ts";
import {
  checkConfidence,
  checkRate,
  DEFAULT_CONFIDENCE,
  estimateWithInterval,
  parseNumber,
} from "../lib/trace_analysis/intervals.ts";
import { emptySelectionNote } from "../lib/trace_analysis/empty.ts";
import { startAggregate } from "../lib/trace_analysis/aggregate.ts";
import {
  REPORT_CLASSES,
  REPORT_STACKS,
  summarizeProfile,
  type SummaryOptions,
  summaryPlan,
} from "../lib/trace_analysis/summary.ts";
import {
  parseDomains,
  parseLiveAt,
  parseSeconds,
  parseSize,
  parseSources,
} from "../lib/trace_analysis/filter.ts";
import { StdoutBuffer, writeAll, writeOutput, writeStderr, writeStdout } from "./_io.ts";
import { usageLines } from "./_usage.ts";
import { fileArguments, parseCommandArgs, parseIntegerOption, usageError } from "./_args.ts";
import { openTraceInput, readThrough, type TraceInputFile } from "./_trace_input.ts";

const FILTERS = `Filters (all optional; a filter keeps sampled allocations):
  --domain D[,D…]    domains
  --source S[,S…]    minor, major, external
  --from SEC         allocated at or after SEC seconds since the trace start
  --to SEC           allocated before SEC seconds
  --live-at WHEN     measure the objects live at WHEN instead of allocations:
                     end (the trace end), peak (the live heap's peak, located on a grid
                     of at most 128 intervals) or SEC (an exact time)
  --size MIN..MAX    length in words, header excluded (MIN.., ..MAX or N also)
  --function NAME    stacks with a function whose name contains NAME
  --exclude NAME     drop stacks with a function whose name contains NAME
Filters that select no sample give an empty result, a note saying why (a domain the
trace does not have, a time after its end…) and what the trace holds: in the table and
on stderr ('warning: FILE: no sample selected: …'). The exit status is still 0.`;

/** Help of each analysis command. */
export const ANALYSIS_HELP: Record<string, string> = {
  top: `${
    usageLines(
      "trace top",
      "FILE [--by WHAT] [--limit N] [--confidence C] [--what-if-rate R] [--json] [filters]",
    )
  }

Prints the allocation sites, functions or stacks with the most samples: samples, estimated
bytes allocated (samples / sample rate x word size, the trace's own word size), estimated
bytes of those still live at the trace end, and the share of samples of promoted objects.
A site is the innermost known location of a backtrace (defname@file:line:start-end); for
functions, 'self' counts stacks where the function is innermost, 'total' stacks containing
it (once, however deep it recurses). With --live-at, rows measure the objects live then.

Each estimate has a confidence interval (bytesLow..bytesHigh): memprof samples every word,
header included, with probability the sample rate, so a row's samples are Binomial(words,
rate); the interval holds the word counts under which the samples seen are not in either
tail of probability (1 - C) / 2 — exact at any count, not a normal approximation.

Options:
  --by WHAT          site (default), function or stack
  --limit N          rows shown (default 20; 0 for all)
  --confidence C     confidence of the intervals, in (0, 1) (default ${DEFAULT_CONFIDENCE})
  --what-if-rate R   also show the interval a trace sampled at rate R would give
                     (whatIfBytesLow..whatIfBytesHigh), had its samples come out as expected
  --json             print the result as JSON
  -h, --help     show this help

${FILTERS}`,
  diff: `${
    usageLines(
      "trace diff",
      "A B [--by WHAT] [--sort WHAT] [--limit N] [--all] [--confidence C] [--per-second] [--json] [filters]",
    )
  }

Compares two traces (two runs of one program) site by site (or function, or stack): the
estimated bytes allocated and live at the end (or at --live-at) in each, and the change
B - A, largest absolute change first. Rows are matched by their text, so traces of
different rates or builds compare. For regression checks, --json gives every number.

Each change has a confidence interval (each trace's exact binomial interval at confidence
sqrt(C), so that both hold with probability C) and an exact test that nothing changed: given
a row's samples in A and B, B's share is binomial with a known probability under that
hypothesis, whatever the two rates (and durations, with --per-second). The p-values of
both tests (allocated, live) of every changed row are adjusted by Benjamini-Hochberg; a row
is significant (*) when a q-value is at most 1 - C. Only significant changes are listed
unless --all is given.

Options:
  --by WHAT        site (default), function (stacks containing it) or stack
  --sort WHAT      alloc (default): by |change of allocated bytes|; live: of live bytes
  --limit N        rows shown (default 20; 0 for all)
  --all            list every changed row, significant or not
  --confidence C   confidence of intervals, in (0, 1) (default ${DEFAULT_CONFIDENCE}); the false
                   discovery rate of the significant changes is 1 - C
  --per-second     compare bytes per second of each trace's duration, not totals
  --json           print the result as JSON
  -h, --help     show this help

${FILTERS}
  (--live-at SEC applies to both traces.)`,
  export: `${
    usageLines(
      "trace export",
      "FILE --format pprof|speedscope|folded [-o OUT] [--confidence C] [filters]",
    )
  }

Writes the trace in another profiler's format:
  pprof       gzipped profile.proto heap profile: alloc_objects, alloc_space, inuse_objects,
              inuse_space (estimates scaled by 1 / sample rate; in use = live at the end, or
              at --live-at); for 'go tool pprof', pprof.me, Parca and others
  speedscope  speedscope JSON: allocated bytes and live bytes by function path
  folded      folded stacks 'outer;...;inner BYTES', allocated bytes (live bytes with
              --live-at), for flamegraph.pl and friends
pprof's comments and speedscope's profile names give the totals' confidence intervals
(exact binomial, as 'trace top'); folded stacks have no place for them.
Without -o the output goes to stdout (pprof only when stdout is not a terminal). OUT is
written to a temporary file, renamed when complete and removed on error, Ctrl-C or
SIGTERM (exit status 130, 143); a device or FIFO (/dev/null) is written in place.

Options:
  --format F       pprof, speedscope or folded
  -o, --output OUT
  --confidence C   confidence of the intervals in the metadata (default ${DEFAULT_CONFIDENCE})
  -h, --help     show this help

${FILTERS}`,
  report: `${usageLines("trace report", "FILE [-o report.html] [--title TEXT] [--stacks N]")}

Writes one self-contained HTML file (no network: script, style and data inlined) with the
trace's info, its live heap over time (whole trace and current filter, peak marked), a
flame graph with zoom, callers/callees of a focused function, and a sortable table of
sites, functions or stacks; filters (time range, live at end/peak/T, domain, source, size,
function contains/excludes) update every view. The page embeds aggregates, not events.

A trace with more than N stacks (--stacks, default ${REPORT_STACKS}) or more than
${REPORT_CLASSES} classes (stack, domain, source, size class) gets a summary, which the page
states with the counts of what it left out: the stacks with the most samples whole (at most
N, as many as fit in ${REPORT_CLASSES} classes), the others merged into one frame '(other
stacks)', under which their heaviest sites stay (at most 200, in a quarter more classes).
Totals, the time views and the domain, source and size filters stay exact; the function
filters and the tables by function and stack do not see inside the merged stacks.
A file is read twice (first to choose the stacks), a pipe once.

OUT is written to a temporary file, renamed when complete and removed on error, Ctrl-C or
SIGTERM (exit status 130, 143); a device or FIFO (/dev/null) is written in place.

Options:
  -o, --output OUT   the HTML file (default report.html)
  --title TEXT       the page title (default: the executable name)
  --stacks N         most stacks kept whole (default ${REPORT_STACKS}; 0: no summary at all)
  -h, --help         show this help`,
};

/** The lines cli/trace.ts lists under "Commands". */
export const ANALYSIS_COMMAND_LINES =
  `  top FILE         the sites, functions or stacks with the most samples
  diff A B         per site or function, how allocated and live bytes changed
  export FILE      write a pprof, speedscope or folded-stacks profile
  report FILE      write a self-contained HTML report`;

const FILTER_OPTIONS = {
  domain: { type: "string" },
  source: { type: "string" },
  from: { type: "string" },
  to: { type: "string" },
  "live-at": { type: "string" },
  size: { type: "string" },
  function: { type: "string" },
  exclude: { type: "string" },
} as const;

type Values = Record<string, string | boolean | undefined>;

function parse(
  args: string[],
  cmd: string,
  options: Record<string, { type: "boolean" | "string"; short?: string }>,
) {
  return parseCommandArgs(`trace ${cmd}`, args, options) as {
    values: Values;
    positionals: string[];
  };
}

function str(v: Values, name: string): string | undefined {
  const x = v[name];
  return typeof x === "string" ? x : undefined;
}

/** A filter from the command line's filter options. */
function filterOf(v: Values, cmd: string): AnalysisFilter {
  try {
    const f: AnalysisFilter = {};
    const domain = str(v, "domain"), source = str(v, "source"), size = str(v, "size");
    const from = str(v, "from"), to = str(v, "to"), liveAt = str(v, "live-at");
    if (domain !== undefined) f.domains = parseDomains(domain);
    if (source !== undefined) f.sources = parseSources(source);
    if (from !== undefined) f.fromUs = parseSeconds("from", from);
    if (to !== undefined) f.toUs = parseSeconds("to", to);
    if (liveAt !== undefined) f.liveAt = parseLiveAt(liveAt);
    if (size !== undefined) {
      const { min, max } = parseSize(size);
      f.sizeMin = min;
      f.sizeMax = max;
    }
    f.function = str(v, "function");
    f.exclude = str(v, "exclude");
    return f;
  } catch (e) {
    throw usage(e, cmd);
  }
}

function usage(e: unknown, cmd: string): unknown {
  return e instanceof TraceAnalysisError ? usageError(`trace ${cmd}`, `--${e.message}`) : e;
}

function choice<T extends string>(
  v: Values,
  name: string,
  allowed: readonly T[],
  fallback: T,
  cmd: string,
): T {
  const x = str(v, name);
  if (x === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(x)) {
    throw usageError(`trace ${cmd}`, `--${name} must be ${allowed.join(", ")}; got '${x}'`);
  }
  return x as T;
}

/** `trace info`'s fields after its counts: the estimate of the bytes allocated and its
 * interval at `confidence` ({@linkcode confidenceOption}). */
export function infoIntervals(
  samples: number,
  info: { sampleRate: number; wordSize: number },
  confidence: number,
): [string, number | null][] {
  const e = estimateWithInterval(samples, info.sampleRate, info.wordSize, confidence);
  return [
    ["allocated_bytes", e.bytes],
    ["allocated_bytes_low", e.low],
    ["allocated_bytes_high", e.high],
    ["confidence", confidence],
  ];
}

/** `--confidence C` of command `cmd`: a number in (0, 1), 0.95 without the option (a usage
 * error otherwise). */
export function confidenceOption(text: string | boolean | undefined, cmd: string): number {
  return confidenceOf({ confidence: text }, cmd);
}

/** `--confidence C`: a number in (0, 1), 0.95 without the option. */
function confidenceOf(v: Values, cmd: string): number {
  const x = str(v, "confidence");
  try {
    return x === undefined ? DEFAULT_CONFIDENCE : checkConfidence(parseNumber("confidence", x));
  } catch (e) {
    throw usage(e, cmd);
  }
}

function limitOf(v: Values, cmd: string): number {
  return parseIntegerOption(`trace ${cmd}`, "--limit", str(v, "limit")) ?? 20;
}

/** The filter with the cube kept only when it needs it (the live heap at the peak): `top`,
 * `diff` and the exports measure allocations or the live heap at the end or at a time, which the
 * profile's per-class totals give, so that their memory follows the classes alone. */
function withoutCube(filter: AnalysisFilter): AnalysisFilter {
  return { ...filter, cube: filter.liveAt === "peak" };
}

/** Reads a trace once under a filter. */
function analyze(
  file: string,
  filter: AnalysisFilter,
  cmd: string,
): { data: ProfileData; selector: Selector } {
  const reader = Reader.open(file);
  try {
    return analyzeTrace(reader, withoutCube(filter));
  } catch (e) {
    throw usage(e, cmd);
  } finally {
    reader.close();
  }
}

/** {@linkcode analyze} of an open trace, read a few packets at a time so that signals are
 * handled meanwhile ({@linkcode readThrough}). */
async function analyzeYielding(
  trace: TraceInputFile,
  filter: AnalysisFilter,
  cmd: string,
): Promise<{ data: ProfileData; selector: Selector }> {
  try {
    const pass = startAnalysis(trace.reader, filter);
    await readThrough(trace.reader.iterate(pass.onEvent), trace);
    return pass.finish();
  } catch (e) {
    throw usage(e, cmd);
  }
}

/** Writes what `produce` makes from trace `file` to `output` ({@linkcode writeOutput}: a
 * temporary renamed into place, removed on SIGINT/SIGTERM; a device or FIFO in place). The output
 * is opened once the trace's header was read, and the trace is read while it is open. */
async function writeAnalysis(
  file: string,
  output: string,
  filter: AnalysisFilter,
  cmd: string,
  produce: (
    analysis: { data: ProfileData; selector: Selector },
    write: (bytes: Uint8Array) => void,
  ) => void,
): Promise<{ bytes: number; data: ProfileData }> {
  const trace = await openTraceInput(file);
  try {
    let result: { bytes: number; data: ProfileData } | undefined;
    await writeOutput(output, async (out) => {
      const analysis = await analyzeYielding(trace, filter, cmd);
      let bytes = 0;
      produce(analysis, (b) => {
        bytes += b.length;
        writeAll(out, b);
      });
      result = { bytes, data: analysis.data };
    });
    return result!;
  } finally {
    trace.reader.close();
  }
}

function printLines(lines: string[]): void {
  const out = new StdoutBuffer();
  for (const l of lines) out.line(l);
  out.flush();
}

const BY = ["site", "function", "stack"] as const;

function top(args: string[]): void {
  const { values, positionals } = parse(args, "top", {
    ...FILTER_OPTIONS,
    by: { type: "string" },
    limit: { type: "string" },
    confidence: { type: "string" },
    "what-if-rate": { type: "string" },
    json: { type: "boolean" },
  });
  if (values.help) return writeStdout(ANALYSIS_HELP.top + "\n");
  const [file] = fileArguments("trace top", positionals, 1);
  const by: GroupBy = choice(values, "by", BY, "site", "top");
  const limit = limitOf(values, "top");
  const confidence = confidenceOf(values, "top");
  const whatIf = str(values, "what-if-rate");
  let whatIfRate: number | undefined;
  try {
    if (whatIf !== undefined) whatIfRate = checkRate(parseNumber("what-if-rate", whatIf));
  } catch (e) {
    throw usage(e, "top");
  }
  const filter = filterOf(values, "top");
  const { data, selector } = analyze(file, filter, "top");
  const result = topOf(data, selector, { by, limit, confidence, whatIfRate });
  const note = emptySelectionNote(data, filter);
  if (values.json) printLines([JSON.stringify(result, null, 2)]);
  else printLines(formatTop(result, file, note === undefined ? [] : [note]));
  warnEmpty([[file, note]]);
}

/** On stderr, for each trace whose selection is empty, why ({@linkcode emptySelectionNote}).
 * An empty selection is a valid answer: the exit status stays 0. */
function warnEmpty(notes: [string, string | undefined][]): void {
  for (const [file, note] of notes) {
    if (note !== undefined) writeStderr(`warning: ${printable(file)}: ${printableLines(note)}\n`);
  }
}

function diff(args: string[]): void {
  const { values, positionals } = parse(args, "diff", {
    ...FILTER_OPTIONS,
    by: { type: "string" },
    sort: { type: "string" },
    limit: { type: "string" },
    all: { type: "boolean" },
    confidence: { type: "string" },
    "per-second": { type: "boolean" },
    json: { type: "boolean" },
  });
  if (values.help) return writeStdout(ANALYSIS_HELP.diff + "\n");
  const [fileA, fileB] = fileArguments("trace diff", positionals, 2);
  const by: GroupBy = choice(values, "by", BY, "site", "diff");
  const sort = choice(values, "sort", ["alloc", "live"] as const, "alloc", "diff");
  const limit = limitOf(values, "diff");
  const confidence = confidenceOf(values, "diff");
  const filter = filterOf(values, "diff");
  const a = analyze(fileA, filter, "diff");
  const b = analyze(fileB, filter, "diff");
  const result = diffOf(a.data, b.data, a.selector, b.selector, {
    by,
    sort,
    limit,
    confidence,
    show: values.all ? "all" : "significant",
    per: values["per-second"] ? "second" : "total",
  });
  const noteA = emptySelectionNote(a.data, filter), noteB = emptySelectionNote(b.data, filter);
  const notes = [
    ...(noteA === undefined ? [] : [`A: ${noteA}`]),
    ...(noteB === undefined ? [] : [`B: ${noteB}`]),
  ];
  if (values.json) printLines([JSON.stringify(result, null, 2)]);
  else printLines(formatDiff(result, fileA, fileB, notes));
  warnEmpty([[fileA, noteA], [fileB, noteB]]);
}

async function exportCommand(args: string[]): Promise<void> {
  const { values, positionals } = parse(args, "export", {
    ...FILTER_OPTIONS,
    format: { type: "string" },
    output: { type: "string", short: "o" },
    confidence: { type: "string" },
  });
  if (values.help) return writeStdout(ANALYSIS_HELP.export + "\n");
  const [file] = fileArguments("trace export", positionals, 1);
  if (str(values, "format") === undefined) {
    throw usageError("trace export", "--format is required (pprof, speedscope or folded)");
  }
  const format = choice(
    values,
    "format",
    ["pprof", "speedscope", "folded"] as const,
    "pprof",
    "export",
  );
  const output = str(values, "output");
  if (format === "pprof" && output === undefined && Deno.stdout.isTerminal()) {
    throw usageError("trace export", "pprof output is binary: give -o FILE or redirect stdout");
  }
  const filter = withoutCube({
    ...filterOf(values, "export"),
    lengths: format === "pprof" ? "exact" : undefined,
  });
  const confidence = confidenceOf(values, "export");
  const enc = new TextEncoder();
  let note: string | undefined;
  const produce = (
    { data, selector }: { data: ProfileData; selector: Selector },
    write: (bytes: Uint8Array) => void,
  ) => {
    note = emptySelectionNote(data, filter);
    if (format === "folded") {
      // Line by line: the lines of a trace can add up to far more than one string can hold.
      const out = new StdoutBuffer((text) => write(enc.encode(text)));
      foldedStacksTo(data, selector, (l) => out.line(l));
      out.flush();
    } else {
      write(
        format === "pprof"
          ? pprofOf(data, selector, { confidence })
          : enc.encode(JSON.stringify(speedscopeOf(data, selector, { confidence })) + "\n"),
      );
    }
  };
  if (output === undefined) {
    const trace = await openTraceInput(file);
    try {
      produce(await analyzeYielding(trace, filter, "export"), (b) => writeStdout(b));
    } finally {
      trace.reader.close();
    }
    warnEmpty([[file, note]]);
    return;
  }
  const { bytes } = await writeAnalysis(file, output, filter, "export", produce);
  writeStderr(`wrote ${printable(output)} (${format}, ${bytes} bytes)\n`);
  warnEmpty([[file, note]]);
}

/** Reads an open trace once into a profile ({@linkcode startAggregate}), a few packets at a
 * time so that signals are handled meanwhile. */
async function aggregateYielding(
  trace: TraceInputFile,
  options: AggregateOptions,
): Promise<ProfileData> {
  const pass = startAggregate(trace.reader, options);
  await readThrough(trace.reader.iterate(pass.onEvent), trace);
  return pass.finish();
}

/**
 * The report's profile of trace `file`, whose first reading is open as `first`: a regular file is
 * read twice — first without the cube, to plan the summary (the stacks with the most samples,
 * summary.ts), then with the cube and the plan's merges, so that the cube is only ever built for
 * what the page keeps (memory then follows the stacks kept, not every class of the trace); a pipe
 * is read once, with the whole cube, and summarised after.
 */
async function reportProfile(
  file: string,
  first: TraceInputFile,
  summary: SummaryOptions,
): Promise<ProfileData> {
  if (first.ahead !== undefined) {
    const data = await aggregateYielding(first, {});
    const plan = summaryPlan(data, summary);
    return plan === null ? data : summarizeProfile(data, plan);
  }
  const plan = summaryPlan(await aggregateYielding(first, { cube: false }), summary);
  const second = await openTraceInput(file);
  try {
    const data = await aggregateYielding(second, { mergeStacks: plan?.mergeStacks });
    return plan === null ? data : summarizeProfile(data, plan);
  } finally {
    second.reader.close();
  }
}

async function report(args: string[]): Promise<void> {
  const { values, positionals } = parse(args, "report", {
    output: { type: "string", short: "o" },
    title: { type: "string" },
    stacks: { type: "string" },
  });
  if (values.help) return writeStdout(ANALYSIS_HELP.report + "\n");
  const [file] = fileArguments("trace report", positionals, 1);
  // 0: no summary (every stack whole).
  const stacks =
    parseIntegerOption("trace report", "--stacks", str(values, "stacks"), { min: 0 }) ??
      REPORT_STACKS;
  const output = str(values, "output") ?? "report.html";
  const t0 = performance.now();
  const title = str(values, "title");
  const trace = await openTraceInput(file);
  let bytes = 0, events = 0;
  try {
    // The output is opened once the trace's header was read; the trace is read while it is open.
    await writeOutput(output, async (out) => {
      // --stacks 0: every stack and class.
      const summary = stacks === 0 ? { stacks: Infinity, classes: Infinity } : { stacks };
      const data = await reportProfile(file, trace, summary);
      const html = new TextEncoder().encode(buildReport(data, { title, ...summary }));
      writeAll(out, html);
      bytes = html.length;
      events = data.stats.events;
    });
  } finally {
    trace.reader.close();
  }
  writeStderr(
    `wrote ${printable(output)} (${bytes} bytes, ${events} events, ${
      (performance.now() - t0).toFixed(0)
    } ms)\n`,
  );
}

/** Runs analysis command `cmd` with its arguments; false when `cmd` is not one of them. */
export async function runAnalysisCommand(cmd: string, args: string[]): Promise<boolean> {
  switch (cmd) {
    case "top":
      top(args);
      return true;
    case "diff":
      diff(args);
      return true;
    case "export":
      await exportCommand(args);
      return true;
    case "report":
      await report(args);
      return true;
    default:
      return false;
  }
}
