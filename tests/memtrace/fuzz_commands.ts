/**
 * Every `trace` command's path on a fuzzed trace, in-process: the library calls cli/trace.ts,
 * cli/_trace_tools.ts and cli/_trace_analysis.ts make, in the same order and with the same
 * options, the output written to a sink in memory instead of stdout or a file. Shared by the CI
 * campaign (fuzz_campaign_test.ts) and the long one (`deno task fuzz`).
 *
 * Each command opens the trace afresh, as the CLI does (`Reader.open`: a file read through the
 * 32 KiB window, the default limits), here through {@linkcode FileLikeSource}, a source over the
 * bytes that is read as a file is. Each must end cleanly or with the typed errors the command can
 * raise for a trace: `MemtraceFormatError` (`MemtraceLimitError` included), well formed (its
 * offset inside the file), and for memtrace's tools `TraceToolError`; anything else is an escape
 * ({@linkcode FuzzFailure}). A `TraceAnalysisError` is an escape too: the options are valid, and
 * the CLI reports that error as a wrong command line. Outputs are bounded per input byte
 * ({@linkcode OUTPUT_BOUNDS}), and what a command writes as a trace (copy, subsample,
 * strip-names) must read back with as many events as it says it wrote.
 * @module
 */
import { gunzipSync } from "node:zlib";
import { Profile } from "pprof-format";
import {
  type ByteSource,
  infoLines,
  MemorySink,
  MemtraceFormatError,
  MemtraceLimitError,
  Reader,
  TraceCopier,
  traceStats,
} from "../../lib/memtrace/mod.ts";
import {
  flamegraphTo,
  hotspots,
  identify,
  MAX_SUBSAMPLE_FACTOR,
  startStripNames,
  startSubsample,
  TraceToolError,
} from "../../lib/memtrace_tools/mod.ts";
import {
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
} from "../../lib/trace_analysis/mod.ts";
import { StdoutBuffer } from "../../cli/_io.ts";
import { infoCounts, infoJson } from "../../cli/trace.ts";
import { FuzzFailure } from "./fuzz_harness.ts";
import { Rng } from "../prng.ts";

/** The name the fuzzed trace goes by (the CLI's file argument). */
export const FUZZ_FILE = "fuzz.ctf";

/** Packets a command reads between two looks at the event loop (cli/_trace_input.ts). */
const STEP = 64;

/**
 * A {@linkcode ByteSource} over bytes in memory read as a regular file is (lib/memtrace's
 * `FileSource`): copied into the reader's window on demand, not decoded in place as
 * `Reader.fromBytes` does.
 */
export class FileLikeSource implements ByteSource {
  constructor(private readonly bytes: Uint8Array) {}
  size(): number {
    return this.bytes.length;
  }
  read(pos: number, dst: Uint8Array, off: number, len: number): number {
    const n = Math.max(0, Math.min(len, this.bytes.length - pos));
    dst.set(this.bytes.subarray(pos, pos + n), off);
    return n;
  }
  close(): void {}
}

/**
 * Most output of a command per input byte, plus a base: `[base, perByte]`. Measured over the
 * campaigns with room to spare (see docs/memtrace.md, "Fuzzing"); the report's base is its
 * page (script and style, about 100 KB).
 */
export const OUTPUT_BOUNDS: Record<string, [number, number]> = {
  info: [1 << 12, 4],
  "info --json": [1 << 12, 4],
  copy: [1 << 16, 2048],
  subsample: [1 << 16, 2048],
  "subsample window": [1 << 16, 2048],
  "strip-names": [1 << 16, 64],
  flamegraph: [1 << 16, 4096],
  hotspots: [1 << 16, 4096],
  identify: [1 << 12, 4],
  top: [1 << 16, 4096],
  diff: [1 << 16, 4096],
  "export pprof": [1 << 16, 4096],
  "export speedscope": [1 << 16, 4096],
  "export folded": [1 << 16, 4096],
  report: [1 << 20, 4096],
};

/** How one command ended on a case. */
export interface CommandResult {
  /** Null when it ended cleanly, else the typed error's check (`tool: …` for TraceToolError). */
  error: string | null;
  /** Bytes (or characters) of output. */
  output: number;
  /** Time taken, ms. */
  ms: number;
}

/** What every command did on a case, by command name. */
export type CommandsOutcome = Record<string, CommandResult>;

const WARNINGS =
  /^(skipping truncated packet|skipping bad packet \(wrong pid: -?\d+, but tracing -?\d+\))$/;

const enc = new TextEncoder();

/** Options of {@linkcode exerciseCommands}. */
export interface CommandsOptions {
  /** The trace `diff` compares the case with (A; the case is B). */
  base: Uint8Array;
  /** Seed of the case's choices (subsample factor and window, filters, limits, titles). */
  seed: number;
  /** Commands to run (default: all). */
  only?: readonly string[];
}

/** The commands {@linkcode exerciseCommands} runs, by the names the reports use. */
export const TRACE_COMMANDS: readonly string[] = [
  "info",
  "info --json",
  "copy",
  "subsample",
  "subsample window",
  "strip-names",
  "flamegraph",
  "hotspots",
  "identify",
  "top --by site",
  "top --by function",
  "top --by stack",
  "top --json",
  "top --live-at end",
  "top --live-at peak",
  "top --live-at SEC",
  "top (filters)",
  "diff --by site",
  "diff --by function",
  "diff --by stack",
  "diff --sort live --json",
  "diff (B vs A)",
  "export pprof",
  "export speedscope",
  "export folded",
  "report",
];

/** The bound key of a command name. */
function boundOf(cmd: string): [number, number] {
  const key = cmd.startsWith("top") ? "top" : cmd.startsWith("diff") ? "diff" : cmd;
  const b = OUTPUT_BOUNDS[key];
  if (b === undefined) throw new Error(`no output bound for ${cmd}`);
  return b;
}

/** Hostile texts for filters and titles. */
const HOSTILE = [
  "",
  "f",
  "M0",
  "\u0000",
  "</script><script>alert(1)</script>",
  "\u2028\u2029\ud800",
  "x".repeat(5000),
  "%s%n",
  ";",
];

/**
 * Runs every `trace` command's path on `bytes`; returns how each ended. Throws
 * {@linkcode FuzzFailure} on an escape, a broken bound or an output that does not read back.
 */
export function exerciseCommands(
  bytes: Uint8Array,
  where: string,
  options: CommandsOptions,
): CommandsOutcome {
  const size = bytes.length;
  const rng = new Rng(options.seed >>> 0);
  const out: CommandsOutcome = {};
  const wanted = options.only === undefined ? undefined : new Set(options.only);
  const fail = (what: string, cause?: unknown): never => {
    throw new FuzzFailure(`${where}: ${what}`, { cause });
  };
  const onWarning = (m: string) => {
    if (!WARNINGS.test(m)) fail(`warning ${m}`);
  };
  /** `Reader.open(file)`, on `b`. */
  const open = (b: Uint8Array = bytes): Reader =>
    Reader.fromSource(new FileLikeSource(b), { name: FUZZ_FILE, onWarning });

  /** Runs command `cmd`: `f` returns its output size. */
  const run = (cmd: string, tool: boolean, f: () => number) => {
    if (wanted !== undefined && !wanted.has(cmd)) return;
    const t = performance.now();
    let error: string | null = null;
    let output = 0;
    try {
      output = f();
    } catch (e) {
      error = typedCheck(e, cmd, tool);
    }
    const [base, perByte] = boundOf(cmd);
    // diff reads two traces: its bound counts both.
    const bound = base + perByte * (cmd.startsWith("diff") ? size + options.base.length : size);
    if (output > bound) fail(`${cmd}: ${output} bytes of output, bound ${bound}`);
    out[cmd] = { error, output, ms: performance.now() - t };
  };
  const typedCheck = (e: unknown, cmd: string, tool: boolean): string => {
    if (e instanceof FuzzFailure) throw e;
    if (e instanceof MemtraceFormatError) {
      const limit = e instanceof MemtraceLimitError;
      const prefix = limit ? "trace exceeds a limit: " : "malformed trace: ";
      if (!e.message.startsWith(prefix)) fail(`${cmd}: message ${e.message}`);
      if (!(Number.isSafeInteger(e.offset) && e.offset >= 0 && e.offset <= size)) {
        fail(`${cmd}: offset ${e.offset} outside [0, ${size}] (${e.message})`);
      }
      if (e.file !== FUZZ_FILE) fail(`${cmd}: error names file ${e.file} (${e.message})`);
      return (limit ? "limit: " : "") + e.check;
    }
    if (tool && e instanceof TraceToolError) {
      if (e.offset !== undefined && !(Number.isSafeInteger(e.offset) && e.offset <= size)) {
        fail(`${cmd}: offset ${e.offset} outside [0, ${size}] (${e.message})`);
      }
      return `tool: ${e.problem}`;
    }
    const what = e instanceof Error ? `${e.name}: ${e.message}\n${e.stack}` : String(e);
    return fail(`${cmd}: escape: ${what}`, e);
  };
  /** The reader's events through `it`, STEP packets at a time (cli/_trace_input.ts). */
  const through = (it: { advance(maxPackets: number): boolean }) => {
    while (it.advance(STEP)) { /* the CLI yields to its event loop here */ }
  };
  /** `r` closed after `f`, as the CLI's `withReader`/`finally` do. */
  const withReader = <T>(f: (r: Reader) => T, b?: Uint8Array): T => {
    const r = open(b);
    try {
      return f(r);
    } finally {
      r.close();
    }
  };
  /** Checks that a trace a command wrote reads back, with `events` events. */
  const readsBack = (cmd: string, written: Uint8Array, events: number) => {
    let back = 0;
    try {
      Reader.fromBytes(written.slice(), { onWarning, maxBacktraceFrames: 1 << 22 }).iter(
        () => back++,
      );
    } catch (e) {
      fail(`${cmd}: what it wrote does not read back: ${e}`, e);
    }
    if (back !== events) fail(`${cmd}: wrote ${events} events, read back ${back}`);
  };

  // ---- cli/trace.ts -------------------------------------------------------------------------
  run("info", false, () =>
    withReader((r) => {
      const s = traceStats(r);
      let chars = 0;
      for (const l of infoLines(r.info, r.sizeBytes())) chars += l.length + 1;
      for (const [k, v] of infoCounts(s)) {
        const text = Array.isArray(v) ? v.join(",") || "-" : String(v);
        chars += `${k.padEnd(20)} ${text}`.length + 1;
      }
      return chars;
    }));
  run("info --json", false, () =>
    withReader((r) => {
      const s = traceStats(r);
      return JSON.stringify(infoJson(r.info, r.sizeBytes(), s), null, 2).length + 1;
    }));
  run("copy", false, () =>
    withReader((r) => {
      const sink = new MemorySink();
      const c = new TraceCopier(r, sink);
      through(c);
      if (sink.size <= boundOf("copy")[0] + boundOf("copy")[1] * size) {
        readsBack("copy", sink.bytes(), c.events);
      }
      return sink.size;
    }));

  // ---- cli/_trace_tools.ts ------------------------------------------------------------------
  const factor = rng.pick([1, 2, 3, 10, 1000, MAX_SUBSAMPLE_FACTOR]);
  const start = rng.pick([0, 0, 1, -3, 2 ** 40]);
  const window = { start, end: start + rng.pick([0, 1, 5, 2 ** 30]) };
  const subsampleRun = (cmd: string, w: { start: number; end: number } | undefined) =>
    run(cmd, true, () =>
      withReader((r) => {
        const sink = new MemorySink();
        const pass = startSubsample(r, sink, { factor: w === undefined ? factor : 2, window: w });
        through(r.iterate(pass.onEvent));
        const stats = pass.finish();
        readsBack(cmd, sink.bytes(), stats.events);
        return sink.size;
      }));
  subsampleRun("subsample", undefined);
  subsampleRun("subsample window", window);
  run("strip-names", true, () =>
    withReader((r) => {
      const sink = new MemorySink();
      const pass = startStripNames(r, sink);
      through(r.iterate(pass.onEvent));
      const n = pass.finish();
      readsBack("strip-names", sink.bytes(), n);
      return sink.size;
    }));
  run("flamegraph", true, () => {
    let chars = 0;
    const o = new StdoutBuffer((t) => void (chars += t.length));
    withReader((r) => flamegraphTo(r, (line) => o.write(line)));
    o.flush();
    return chars;
  });
  run("hotspots", true, () => withReader((r) => hotspots(r)).length);
  run("identify", true, () => withReader((r) => identify(r, { name: FUZZ_FILE })).length);

  // ---- cli/_trace_analysis.ts ---------------------------------------------------------------
  /** `analyze(file, filter, cmd)`. */
  const analyze = (filter: AnalysisFilter, b?: Uint8Array) =>
    withReader((r) => analyzeTrace(r, filter), b);
  const lines = (ls: string[]) => ls.reduce((n, l) => n + l.length + 1, 0);
  const topRun = (cmd: string, filter: AnalysisFilter, by: GroupBy, json: boolean) =>
    run(cmd, false, () => {
      const { data, selector } = analyze(filter);
      const result = topOf(data, selector, { by, limit: rng.pick([20, 20, 0, 1]) });
      return json
        ? JSON.stringify(result, null, 2).length + 1
        : lines(formatTop(result, FUZZ_FILE));
    });
  topRun("top --by site", {}, "site", false);
  topRun("top --by function", {}, "function", false);
  topRun("top --by stack", {}, "stack", false);
  topRun("top --json", {}, rng.pick(["site", "function", "stack"] as const), true);
  topRun("top --live-at end", { liveAt: "end" }, rng.pick(["site", "stack"] as const), false);
  topRun("top --live-at peak", { liveAt: "peak" }, rng.pick(["site", "function"] as const), true);
  const sec = rng.pick([0, 1, 1e-6 * rng.int(5000), 3600 * 24 * 365 * 100]);
  topRun("top --live-at SEC", { liveAt: Math.round(sec * 1e6) }, "site", rng.chance(0.5));
  topRun(
    "top (filters)",
    randomFilter(rng),
    rng.pick(["site", "function", "stack"] as const),
    rng.chance(0.5),
  );

  const diffRun = (
    cmd: string,
    by: GroupBy,
    sort: "alloc" | "live",
    json: boolean,
    swap = false,
    filter: AnalysisFilter = {},
  ) =>
    run(cmd, false, () => {
      const a = analyze(filter, swap ? bytes : options.base);
      const b = analyze(filter, swap ? options.base : bytes);
      const result = diffOf(a.data, b.data, a.selector, b.selector, {
        by,
        sort,
        limit: rng.pick([20, 0]),
      });
      return json
        ? JSON.stringify(result, null, 2).length + 1
        : lines(formatDiff(result, swap ? FUZZ_FILE : "a.ctf", swap ? "a.ctf" : FUZZ_FILE));
    });
  diffRun("diff --by site", "site", "alloc", false);
  diffRun("diff --by function", "function", "alloc", false);
  diffRun("diff --by stack", "stack", "alloc", false);
  diffRun(
    "diff --sort live --json",
    rng.pick(["site", "function", "stack"] as const),
    "live",
    true,
    false,
    {
      liveAt: rng.pick(["end", "peak", 1000] as const),
    },
  );
  diffRun(
    "diff (B vs A)",
    rng.pick(["site", "function", "stack"] as const),
    "alloc",
    rng.chance(0.5),
    true,
  );

  /** `analyzeYielding(trace, filter, cmd)`: a pass fed STEP packets at a time. */
  const analyzeYielding = (filter: AnalysisFilter) =>
    withReader((r) => {
      const pass = startAnalysis(r, filter);
      through(r.iterate(pass.onEvent));
      return pass.finish();
    });
  const exportFilter: AnalysisFilter = rng.chance(0.25) ? { liveAt: "end" } : {};
  const produce = (
    format: "pprof" | "speedscope" | "folded",
    { data, selector }: { data: ProfileData; selector: Selector },
  ): number => {
    if (format === "folded") {
      let n = 0;
      const o = new StdoutBuffer((text) => void (n += enc.encode(text).length));
      let bad: string | undefined;
      foldedStacksTo(data, selector, (l) => {
        if (bad === undefined && !/ \d+$/.test(l)) bad = l;
        o.line(l);
      });
      o.flush();
      if (bad !== undefined) fail(`export folded: line ${JSON.stringify(bad.slice(0, 200))}`);
      return n;
    }
    if (format === "pprof") {
      const gz = pprofOf(data, selector);
      try {
        Profile.decode(new Uint8Array(gunzipSync(gz)));
      } catch (e) {
        fail(`export pprof: the profile does not decode: ${e}`, e);
      }
      return gz.length;
    }
    const text = JSON.stringify(speedscopeOf(data, selector)) + "\n";
    return enc.encode(text).length;
  };
  for (const format of ["pprof", "speedscope", "folded"] as const) {
    // As the CLI does: pprof labels every sample with its exact length.
    const filter: AnalysisFilter = format === "pprof"
      ? { ...exportFilter, lengths: "exact" }
      : exportFilter;
    run(`export ${format}`, false, () => produce(format, analyzeYielding(filter)));
  }
  const title = rng.chance(0.8) ? undefined : rng.pick(HOSTILE);
  run("report", false, () => {
    const { data } = analyzeYielding({});
    return enc.encode(buildReport(data, { title })).length;
  });
  return out;
}

/** A filter of every kind the command line takes, valid, drawn from `rng`. */
function randomFilter(rng: Rng): AnalysisFilter {
  const f: AnalysisFilter = {};
  if (rng.chance(0.3)) f.domains = [rng.pick([0, 1, 3, 65535])];
  if (rng.chance(0.3)) f.sources = [rng.pick(["minor", "major", "external"] as const)];
  if (rng.chance(0.3)) f.fromUs = rng.pick([0, 1, 1000, 1e12]);
  if (rng.chance(0.3)) f.toUs = (f.fromUs ?? 0) + rng.pick([1, 500, 1e9]);
  if (rng.chance(0.3)) f.liveAt = rng.pick(["end", "peak", 0, 2000] as const);
  if (rng.chance(0.3)) {
    f.sizeMin = rng.pick([0, 1, 17]);
    f.sizeMax = f.sizeMin + rng.pick([0, 3, 70000]);
  }
  if (rng.chance(0.3)) f.function = rng.pick(HOSTILE);
  if (rng.chance(0.3)) f.exclude = rng.pick(HOSTILE);
  return f;
}
