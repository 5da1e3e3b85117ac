/**
 * `memprof-lab events` (`deno task events`) — dump, summarise, export or watch runtime_events ring
 * files (`<pid>.events`) written by OCaml 5 programs or by memprof-lab.
 *
 * @module
 */
import { printable, printableLines } from "../lib/util/printable.ts";
import { basename, isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import {
  alignTrace,
  type ChromeTrace,
  computeGcStats,
  computeStats,
  type CounterUnits,
  type CursorOptions,
  type CustomEventDecoder,
  DecoderRegistry,
  eventsFilePath,
  exportChromeTrace,
  formatGcStats,
  formatStats,
  GcStatsCollector,
  type PauseRule,
  RuntimeEventsCursor,
  type TraceAlignment,
  traceInstants,
  watchRing,
  writeChromeTraceJson,
} from "../lib/runtime_events/mod.ts";
import { canCheckProcesses } from "../lib/runtime_events/watch.ts";
import { dumpCallbacks } from "../lib/runtime_events/dump.ts";
import { STREAM_IMAGE_LIMIT } from "../lib/runtime_events/consumer.ts";
import { Reader } from "../lib/memtrace/mod.ts";
import {
  exitStatusOf,
  readFileBounded,
  refuseNonRegular,
  StdoutBuffer,
  UsageError,
  writeAll,
  writeOutput,
  writeStderr,
  writeStdout,
} from "./_io.ts";
import { commandName, helpHint, usageLines } from "./_usage.ts";
import {
  parseBigInteger,
  parseCommandArgs,
  parseInteger,
  parseIntegerOption,
  unknownCommandMessage,
  usageError,
} from "./_args.ts";

const HELP: Record<string, string> = {
  main: `${usageLines("events", "<command> ... [options]")}

Reads runtime_events ring files (<pid>.events) from OCaml 5.3 or memprof-lab.

Commands:
  dump FILE                    print every event, one per line, as OCaml's consumer sees them
  stats FILE                   per-ring event counts, lost events and phase durations
  export FILE --format chrome  Chrome trace-event JSON for Perfetto UI, speedscope, chrome://tracing
  gc-stats FILE                GC time, pause latency distribution, allocations, collections
  watch DIR PID                follow a running program's ring (also: watch --path FILE)

Run '${commandName("events <command>")} --help' for a command's options.

Exit status: 0 ok, 1 unreadable or corrupt input, 2 wrong command line (this help on
stderr when no command is given), 130 when watch is interrupted, 130 and 143 when
SIGINT or SIGTERM stops export -o.`,
  dump: `${usageLines("events dump", "FILE [--decoders MODULE]")}

Prints every event in read_poll order (ring 0 first, each ring from its head):
  <ring> <ts> begin|end <phase>          <ring> <ts> counter <name> <value>
  <ring> <ts> alloc [b0;...;b19]         <ring> <ts> lifecycle <name> None|Some <n>
  <ring> lost_events <ring words>        <ring> <ts> user "<name>" unit|int <v>|span begin|end
  <ring> <ts> user "<name>" custom <hex payload, or the decoder's text>
Timestamps are the raw nanoseconds stored in the file.

Options:
  --decoders MODULE  load custom event decoders from a module (see below)
  -h, --help         show this help

A decoders module exports (default or as 'decoders') an object mapping event names
to { decode(payload: Uint8Array): T; format?(value: T): string }, or a function
taking a DecoderRegistry to register into.`,
  stats: `${usageLines("events stats", "FILE [--json] [--decoders MODULE]")}

For each ring: events by kind; lost data as OCaml reports it (ring words) and an
estimate in events (words / mean message size); for each runtime phase, matched
begin/end pairs with count, total, p50, p99 and max duration in nanoseconds, and
begins or ends that could not be matched (after the ring wrapped). Then the same
phase table over all rings.

Options:
  --json             print the statistics as JSON
  --decoders MODULE  load custom event decoders (as for dump)
  -h, --help         show this help`,
  export: `${usageLines("events export", "FILE --format chrome [-o OUT.json] [options]")}

Writes Chrome trace-event JSON (open it in https://ui.perfetto.dev, speedscope or
chrome://tracing): one process, one track per domain ("domain N"); runtime phases
as complete events (X), span user events as B/E, runtime counters and int user
events as counters (C, "<name> (domain N)"), lifecycle, unit and custom user
events as instants (i). Timestamps are the ring's nanoseconds (unsigned 64-bit)
as microseconds with three decimals; a time smaller than the previous one of
its ring is clamped to it. Begins and ends that cannot be matched (lost to a
ring wrap, or still open at the end) are closed or turned into instants so
that the nesting stays valid; see docs/runtime_events.md.

Options:
  --format chrome        output format (the only one)
  -o, --output OUT       write to OUT (via a temporary file and a rename, removed on
                         Ctrl-C or SIGTERM: exit status 130, 143; a device or FIFO is
                         written in place); default stdout
  --with-trace CTF       merge a memtrace trace's allocations, promotions and collections
                         as instants on their domain's track
  --trace-anchor-ns N    ring timestamp of the trace's time 0 (default: the ring's
                         EV_RING_START; 0 for memprof-lab's own scenario runs)
  --pid N                process id to write (default: the one in EV_RING_START)
  --decoders MODULE      custom event decoders (as for dump)
  -h, --help             show this help`,
  "gc-stats": `${usageLines("events gc-stats", "FILE [--json] [--pauses gc|olly] [options]")}

GC statistics of the events left in a ring file: wall span covered, GC time per
domain and in total, the distribution of GC pauses (mean, stddev, min, max and
exact nearest-rank percentiles 25 ... 99.9999, 100), allocated words (minor,
promoted, major, from the counters), collections (minor, major, forced major,
compactions, counted on ring 0) and lost events.

Options:
  --json                   print the statistics as JSON (durations in ns)
  --pauses gc|olly         what a pause is (default gc):
                           gc   — the outermost span, on a ring, of any runtime phase
                                  except explicit_gc_set, explicit_gc_stat and
                                  domain_condition_wait
                           olly — olly's rule: spans of major, stw_leader and
                                  interrupt_remote, at most one open per ring
  --counter-units bytes|words
                           unit of minor_allocated / minor_promoted (default bytes,
                           as OCaml 5.3 writes them)
  --decoders MODULE        custom event decoders (as for dump)
  -h, --help               show this help`,
  watch: `${usageLines("events watch", "DIR PID [options]", "--path FILE [options]")}

Follows the ring file of a running program (started with
OCAML_RUNTIME_EVENTS_START=1, and OCAML_RUNTIME_EVENTS_DIR=DIR if not in the
current directory), reading only what is new at each poll, as OCaml's consumer
does. Prints each event as 'dump' does, or with --stats a summary every second.
Lost events (data overwritten before it could be read) are printed as
'<ring> lost_events <words>'. Waits for the file if it does not exist yet. Stops
when the file is removed, when the process is gone, after EV_RING_STOP, or on
Ctrl-C (exit status 130).

Options:
  --path FILE          the ring file, instead of DIR PID (no process to check)
  --stats              a rolling summary every second instead of the events, and
                       the gc-stats report at the end
  --interval MS        time between polls (default 100)
  --pauses gc|olly     pause rule for --stats (see gc-stats --help)
  --decoders MODULE    custom event decoders (as for dump)
  -h, --help           show this help`,
};

/** What the command needs from the outside world (replaceable in tests). */
export interface EventsCliIO {
  /** Reads a whole file. */
  readFile(path: string): Uint8Array;
  /** Imports a decoders module given as on the command line. */
  importModule(spec: string): Promise<Record<string, unknown>>;
  /** Writes text to standard output. */
  stdout(text: string): void;
  /** Writes text to standard error. */
  stderr(text: string): void;
  /**
   * Writes output file `path` through `fill` (called with a function taking
   * text chunks); default: cli/_io.ts's `writeOutput` (a temporary file
   * renamed into place and removed on SIGINT/SIGTERM, a device or FIFO
   * written in place).
   */
  writeFile?(
    path: string,
    fill: (write: (chunk: string) => void) => Promise<void> | void,
  ): Promise<void>;
  /** Calls `handler` on Ctrl-C until the returned function is called. */
  onInterrupt?(handler: () => void): () => void;
  /**
   * Opens a ring file for `dump`, `stats`, `gc-stats` and `export`, to be
   * read on demand: only its headers and the used parts of its rings.
   * Default: `readFile`, whole.
   */
  openCursor?(path: string, options: CursorOptions): RuntimeEventsCursor;
}

function writeTextOutput(
  path: string,
  fill: (write: (chunk: string) => void) => Promise<void> | void,
): Promise<void> {
  return writeOutput(path, (file) => fill((chunk) => writeAll(file, chunk)));
}

/** The real process: files, dynamic import relative to the working directory, stdio. */
export const denoIO: EventsCliIO = {
  // A pipe or device is read as far as the ring decoder reads one (STREAM_IMAGE_LIMIT).
  readFile: (path) => readFileBounded(path, STREAM_IMAGE_LIMIT),
  openCursor: (path, options) => RuntimeEventsCursor.openSync(path, options),
  importModule: (spec) => {
    const url = /^[a-z][a-z0-9+.-]+:/i.test(spec) && !isAbsolute(spec)
      ? spec
      : pathToFileURL(resolve(spec)).href;
    return import(url);
  },
  stdout: writeStdout,
  stderr: writeStderr,
  writeFile: writeTextOutput,
  onInterrupt: (handler) => {
    Deno.addSignalListener("SIGINT", handler);
    return () => Deno.removeSignalListener("SIGINT", handler);
  },
};

async function loadDecoders(io: EventsCliIO, spec: string | undefined): Promise<DecoderRegistry> {
  const registry = new DecoderRegistry();
  if (spec === undefined) return registry;
  let mod: Record<string, unknown>;
  try {
    mod = await io.importModule(spec);
  } catch (e) {
    throw new Error(
      `cannot load decoders module ${spec}: ${e instanceof Error ? e.message : String(e)}`,
    );
  }
  const exported = mod.default ?? mod.decoders;
  if (typeof exported === "function") {
    (exported as (r: DecoderRegistry) => void)(registry);
  } else if (exported instanceof DecoderRegistry) {
    for (const name of exported.names()) registry.register(name, exported.get(name)!);
  } else if (exported !== null && typeof exported === "object") {
    for (const [name, dec] of Object.entries(exported)) {
      if (dec === null || typeof (dec as CustomEventDecoder).decode !== "function") {
        throw new Error(`decoders module ${spec}: entry "${name}" has no decode function`);
      }
      registry.register(name, dec as CustomEventDecoder);
    }
  } else {
    throw new Error(
      `decoders module ${spec} must export (default or 'decoders') an object of decoders or a function`,
    );
  }
  return registry;
}

function readImage(io: EventsCliIO, path: string): Uint8Array {
  try {
    return io.readFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) throw new Error(`no such file: ${path}`);
    if (e instanceof Deno.errors.IsADirectory) throw new Error(`${path} is a directory`);
    throw e;
  }
}

/** Thrown by a command that ends because of Ctrl-C: exit status 130. */
class Interrupted extends Error {}

type Values = Record<string, string | boolean | undefined>;

const OPTIONS: Record<string, Record<string, { type: "string" | "boolean"; short?: string }>> = {
  dump: {},
  stats: { json: { type: "boolean" } },
  export: {
    format: { type: "string" },
    output: { type: "string", short: "o" },
    "with-trace": { type: "string" },
    "trace-anchor-ns": { type: "string" },
    pid: { type: "string" },
  },
  "gc-stats": {
    json: { type: "boolean" },
    pauses: { type: "string" },
    "counter-units": { type: "string" },
  },
  watch: {
    path: { type: "string" },
    stats: { type: "boolean" },
    interval: { type: "string" },
    pauses: { type: "string" },
  },
};

function intOption(
  command: string,
  values: Values,
  name: string,
  min: number,
): number | undefined {
  const v = values[name];
  return parseIntegerOption(`events ${command}`, `--${name}`, v === undefined ? v : String(v), {
    min,
  });
}

function pauseRule(values: Values): PauseRule {
  const v = values.pauses ?? "gc";
  if (v !== "gc" && v !== "olly") throw new UsageError(`--pauses must be gc or olly, got '${v}'`);
  return v;
}

function oneFile(command: string, positionals: string[]): string {
  if (positionals.length !== 1) {
    throw new UsageError(
      positionals.length === 0 ? `${command}: missing FILE` : `${command}: expected one FILE`,
    );
  }
  return positionals[0];
}

async function main(argv: string[], io: EventsCliIO): Promise<void> {
  const [command, ...rest] = argv;
  if (command === undefined || command === "-h" || command === "--help" || command === "help") {
    if (command === undefined) throw new UsageError("missing command", HELP.main);
    io.stdout(HELP.main + "\n");
    return;
  }
  if (!Object.hasOwn(OPTIONS, command)) {
    throw usageError("events", unknownCommandMessage(command, Object.keys(OPTIONS)));
  }
  const parsed = parseCommandArgs(`events ${command}`, rest, {
    decoders: { type: "string" },
    ...OPTIONS[command],
  });
  const { positionals } = parsed;
  const values = parsed.values as Values;
  if (values.help) {
    io.stdout(HELP[command] + "\n");
    return;
  }
  switch (command) {
    case "dump":
    case "stats":
      return await dumpOrStats(command, oneFile(command, positionals), values, io);
    case "export":
      return await exportCommand(oneFile(command, positionals), values, io);
    case "gc-stats":
      return await gcStatsCommand(oneFile(command, positionals), values, io);
    case "watch":
      return await watchCommand(positionals, values, io);
  }
}

/** The cursor of every command reading a ring file: the file read on demand (its headers and
 * the used parts of its rings, window by window) where `io` can, else whole. */
function openRing(io: EventsCliIO, path: string, decoders: DecoderRegistry): RuntimeEventsCursor {
  if (io.openCursor === undefined) {
    return new RuntimeEventsCursor(readImage(io, path), { decoders }, path);
  }
  try {
    return io.openCursor(path, { decoders });
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) throw new Error(`no such file: ${path}`);
    if (e instanceof Deno.errors.IsADirectory) throw new Error(`${path} is a directory`);
    throw e;
  }
}

async function dumpOrStats(
  command: string,
  file: string,
  values: Values,
  io: EventsCliIO,
): Promise<void> {
  const decoders = await loadDecoders(io, values.decoders as string | undefined);
  const cursor = openRing(io, file, decoders);
  const out = new StdoutBuffer(io.stdout);
  if (command === "dump") {
    try {
      cursor.readAll(dumpCallbacks((l) => out.line(l), { decoders }));
    } finally {
      // Print what was read before any error, so the user sees where it stopped.
      out.flush();
    }
  } else {
    const stats = computeStats(cursor);
    if (values.json) out.line(JSON.stringify(stats, null, 2));
    else out.line(formatStats(stats).trimEnd());
    out.flush();
  }
}

/** The memtrace trace `events export --with-trace` places beside the ring. */
export interface ExportedTrace {
  /** The trace, open. */
  readonly reader: Reader;
  /** Its file, as the command line names it. */
  readonly path: string;
  /** Where its time 0 falls on the ring's clock (`--trace-anchor-ns`); by default, where
   * `alignTrace` places it. */
  readonly anchorNs?: bigint;
}

/**
 * `events export --format chrome`'s trace of ring `image`, read from `file` (a `<pid>.events`
 * name gives the pid of a ring that wrapped and lost EV_RING_START), with the events of
 * `options.trace`, when given, as instants on the ring's clock. Its warnings (time 0 guessed or
 * unknown, a trace of another process) go to `warn`, one line each. The fuzzer runs the command
 * through it too (tests/runtime_events/fuzz_commands.ts).
 */
export function chromeTraceOf(
  image: RuntimeEventsCursor,
  file: string,
  options: { decoders: DecoderRegistry; pid?: number; trace?: ExportedTrace },
  warn: (line: string) => void,
): ChromeTrace {
  const { decoders, pid, trace: withTrace } = options;
  const aligned: { value?: TraceAlignment } = {};
  const trace = exportChromeTrace(image, {
    decoders,
    ...(pid !== undefined ? { pid } : {}),
    // A ring that wrapped has lost EV_RING_START and its pid: OCaml names the file <pid>.events.
    ...(/^(\d+)\.events$/.test(basename(file))
      ? { defaultPid: Number(basename(file).slice(0, -7)) }
      : {}),
    otherData: {
      ringFile: file,
      ...(withTrace !== undefined ? { memtraceFile: withTrace.path } : {}),
    },
    ...(withTrace !== undefined
      ? {
        extraInstants: (anchors) => {
          const a = alignTrace(
            anchors,
            withTrace.anchorNs,
          );
          aligned.value = a;
          return traceInstants(withTrace.reader, a.anchorNs);
        },
      }
      : {}),
  });
  const s = trace.summary;
  const a = aligned.value;
  if (withTrace !== undefined && a !== undefined) {
    trace.otherData.memtraceAnchorNs = a.anchorNs.toString();
    trace.otherData.memtraceAnchor = a.basis;
    if (a.basis === "first_event") {
      warn(
        `warning: ${
          printable(file)
        } has no EV_RING_START (the ring wrapped): the trace's time 0 is ` +
          `placed at the first event left (${a.anchorNs} ns), a guess; give ` +
          `--trace-anchor-ns to align it`,
      );
    } else if (a.basis === "none") {
      warn(`warning: ${printable(file)} has no events: the trace's time 0 is placed at 0 ns`);
    }
    if (withTrace.reader.info.pid !== BigInt(s.pid)) {
      warn(
        `warning: ${
          printable(withTrace.path)
        } is the trace of process ${withTrace.reader.info.pid}, ` +
          `${printable(file)} of process ${s.pid}`,
      );
    }
  }
  return trace;
}

async function exportCommand(file: string, values: Values, io: EventsCliIO): Promise<void> {
  const format = values.format;
  if (format === undefined) throw new UsageError("export: missing --format chrome");
  if (format !== "chrome") {
    throw new UsageError(`export: unknown format '${format}' (the only one is chrome)`);
  }
  const anchorText = values["trace-anchor-ns"] as string | undefined;
  const anchorNs = anchorText === undefined
    ? undefined
    : parseBigInteger("events export", "--trace-anchor-ns", anchorText);
  const tracePath = values["with-trace"] as string | undefined;
  if (anchorText !== undefined && tracePath === undefined) {
    throw new UsageError("--trace-anchor-ns needs --with-trace");
  }
  const pid = intOption("export", values, "pid", 0);
  const decoders = await loadDecoders(io, values.decoders as string | undefined);
  /** Reads the inputs and writes the JSON through `write`; returns the summary line's end. */
  const convert = (write: (chunk: string) => void): string => {
    // Read as dump and stats read: only the headers and the used part of each ring.
    const image = openRing(io, file, decoders);
    let reader: Reader | null = null;
    if (tracePath !== undefined) {
      reader = Reader.fromBytes(readImage(io, tracePath), {
        name: tracePath,
        onWarning: (m) => io.stderr(`warning: ${printable(tracePath)}: ${printableLines(m)}\n`),
      });
    }
    const trace = chromeTraceOf(image, file, {
      decoders,
      pid,
      ...(reader !== null ? { trace: { reader, path: tracePath!, anchorNs } } : {}),
    }, (line) => io.stderr(line + "\n"));
    const s = trace.summary;
    writeChromeTraceJson(trace, write);
    return `${s.domains.length} domain track(s), ${s.phases} phases, ${s.spans} spans, ` +
      `${s.counters} counter samples, ${s.instants} instants` +
      (reader !== null ? `, ${s.extraInstants} memtrace events` : "") +
      (s.truncated ? `; ${s.truncated} closed without their end` : "") +
      (s.unmatchedEnds ? `; ${s.unmatchedEnds} ends without begin` : "") +
      (s.lostWords ? `; ${s.lostWords} ring words lost` : "") +
      (s.clampedTimes ? `; ${s.clampedTimes} times going back clamped` : "");
  };
  const output = values.output as string | undefined;
  if (output === undefined) {
    convert((chunk) => io.stdout(chunk));
    return;
  }
  // The output is open (a temporary, removed on SIGINT/SIGTERM) while the inputs are read.
  let summary = "";
  await (io.writeFile ?? writeTextOutput)(output, (write) => {
    summary = convert(write);
  });
  io.stderr(`wrote ${printable(output)}: ${summary}\n`);
}

function counterUnits(values: Values): CounterUnits {
  const v = values["counter-units"] ?? "bytes";
  if (v !== "bytes" && v !== "words") {
    throw new UsageError(`--counter-units must be bytes or words, got '${v}'`);
  }
  return v;
}

async function gcStatsCommand(file: string, values: Values, io: EventsCliIO): Promise<void> {
  const pauses = pauseRule(values);
  const units = counterUnits(values);
  const decoders = await loadDecoders(io, values.decoders as string | undefined);
  const stats = computeGcStats(openRing(io, file, decoders), {
    decoders,
    pauses,
    counterUnits: units,
  });
  io.stdout(values.json ? JSON.stringify(stats, null, 2) + "\n" : formatGcStats(stats, file));
}

function ms(ns: number): string {
  return (ns / 1e6).toFixed(3);
}

async function watchCommand(positionals: string[], values: Values, io: EventsCliIO): Promise<void> {
  const pathOpt = values.path as string | undefined;
  let path: string;
  let pid: number | undefined;
  if (pathOpt !== undefined) {
    if (positionals.length !== 0) throw new UsageError("watch: give either DIR PID or --path FILE");
    path = pathOpt;
  } else {
    if (positionals.length !== 2) {
      throw new UsageError("watch: expected DIR PID (or --path FILE)");
    }
    pid = parseInteger("events watch", "PID", positionals[1]);
    path = eventsFilePath(positionals[0], pid);
  }
  const intervalMs = intOption("watch", values, "interval", 1) ?? 100;
  const pauses = pauseRule(values);
  const decoders = await loadDecoders(io, values.decoders as string | undefined);
  const out = new StdoutBuffer(io.stdout);
  const controller = new AbortController();
  const stopListening = io.onInterrupt?.(() => controller.abort()) ?? (() => {});
  const statsMode = values.stats === true;
  const collector = new GcStatsCollector({ pauses });
  const started = performance.now();
  let lastPrint = started;
  let prev = collector.totals();
  let prevCollections = { ...collector.collections };
  const rolling = () => {
    const now = performance.now();
    if (now - lastPrint < 1000) return;
    lastPrint = now;
    const t = collector.totals();
    const c = collector.collections;
    const newPauses = collector.pauseDurations.slice(prev.pauses);
    const max = newPauses.reduce((m, x) => (x > m ? x : m), 0);
    out.line(
      `[${((now - started) / 1000).toFixed(1)}s] events +${t.events - prev.events} (${t.events})` +
        ` | minor +${c.minor - prevCollections.minor} major +${c.major - prevCollections.major}` +
        ` | pauses +${newPauses.length}: ${ms(t.gcNs - prev.gcNs)} ms, max ${ms(max)} ms` +
        ` | words: minor +${t.minorWords - prev.minorWords} promoted +${
          t.promotedWords - prev.promotedWords
        } major +${t.majorWords - prev.majorWords}` +
        ` | lost +${t.lostWords - prev.lostWords} words`,
    );
    out.flush();
    prev = t;
    prevCollections = { ...c };
  };
  const callbacks = statsMode
    ? collector.callbacks
    : dumpCallbacks((l) => out.line(l), { decoders });
  // A ring is followed as it is rewritten in place: a pipe or device (/dev/zero) is refused.
  refuseNonRegular(path, "watch");
  io.stderr(`watching ${printable(path)}` + (pid !== undefined ? ` (process ${pid})` : "") + "\n");
  if (pid !== undefined && !canCheckProcesses()) {
    io.stderr(
      `warning: cannot tell whether process ${pid} is running (needs --allow-run=kill); ` +
        "the watch ends when the file is removed, after EV_RING_STOP, or on Ctrl-C\n",
    );
  }
  let result;
  try {
    result = await watchRing({
      path,
      pid,
      intervalMs,
      signal: controller.signal,
      decoders,
      callbacks,
      onWaiting: (m) => io.stderr(m + "\n"),
      onPoll: () => {
        if (statsMode) rolling();
        else out.flush();
      },
    });
  } finally {
    out.flush();
    stopListening();
  }
  if (statsMode) io.stdout(formatGcStats(collector.snapshot(), path));
  const what: Record<string, string> = {
    removed: `${printable(path)} was removed (the program ended)`,
    replaced: `${printable(path)} was replaced by another file`,
    exited: `process ${pid} has exited`,
    ring_stopped: "the ring was stopped (EV_RING_STOP)",
    interrupted: "interrupted",
  };
  io.stderr(
    `watch: ${what[result.reason]}; ${result.events} events read` +
      (result.lostWords > 0
        ? `, ${result.lostWords} ring words lost (overwritten before they could be read)`
        : ", none lost") +
      "\n",
  );
  if (result.reason === "interrupted") throw new Interrupted();
}

/**
 * Runs `events` with `argv` (without the program name) and returns the exit
 * status: 0 on success, 1 for unreadable or corrupt input, 2 for usage errors,
 * 130 when `watch` is interrupted.
 */
export async function run(argv: string[], io: EventsCliIO = denoIO): Promise<number> {
  try {
    await main(argv, io);
    return 0;
  } catch (e) {
    if (e instanceof Interrupted) return 130;
    return exitStatusOf(e, io.stderr, helpHint("events"));
  }
}

if (import.meta.main) {
  Deno.exit(await run(Deno.args));
}
