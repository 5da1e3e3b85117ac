/**
 * Every `events` command's path on a fuzzed ring, in-process: the library calls cli/events.ts
 * makes for `dump`, `stats` (text and `--json`), `gc-stats` (text and `--json`, both pause rules
 * and counter units) and `export --format chrome` (with and without `--with-trace`, with and
 * without `--trace-anchor-ns` and `--pid`), in the same order and with the same options, the
 * output written to a sink in memory. Shared by the CI campaign (fuzz_campaign_test.ts) and the
 * long one (`deno task fuzz`).
 *
 * Each command opens the ring as `RuntimeEventsCursor.openSync` opens a regular file: a cursor
 * over a {@linkcode BytesRingSource} (read on demand, window by window), named `<pid>.events`.
 * Decoders are the CLI's default (none), or, for some cases, those of a `--decoders` module
 * (tests/runtime_events/fixture_decoders.ts). Each command must end cleanly or with
 * `RuntimeEventsFormatError` at a real offset (and, with `--with-trace`, memtrace's
 * `MemtraceFormatError` for the trace); anything else is an escape ({@linkcode RingFuzzFailure}).
 * Outputs are bounded per input byte ({@linkcode RING_OUTPUT_BOUNDS}), and the Chrome export must
 * pass the structural check of chrome_validate.ts.
 * @module
 */
import {
  computeGcStats,
  computeStats,
  DecoderRegistry,
  formatGcStats,
  formatStats,
  RuntimeEventsCursor,
  RuntimeEventsFormatError,
  writeChromeTraceJson,
} from "../../lib/runtime_events/mod.ts";
import { dumpCallbacks } from "../../lib/runtime_events/dump.ts";
import { MemtraceFormatError, Reader } from "../../lib/memtrace/mod.ts";
import { StdoutBuffer } from "../../cli/_io.ts";
import { chromeTraceOf } from "../../cli/events.ts";
import { refCustomDecoder } from "./fixture_decoders.ts";
import { BytesRingSource, RingFuzzFailure } from "./fuzz_harness.ts";
import { Rng } from "../prng.ts";
import { validateChromeTrace } from "./chrome_validate.ts";

/** The ring file's name (OCaml's `<pid>.events`: export takes its default pid from it). */
export const RING_FILE = "4242.events";
/** The trace file's name for `export --with-trace`. */
export const TRACE_FILE = "fuzz.ctf";

/** Most output of a command per input byte (ring file, plus the trace for `--with-trace`), plus
 * a base: `[base, perByte]`. */
export const RING_OUTPUT_BOUNDS: Record<string, [number, number]> = {
  dump: [1 << 12, 32],
  stats: [1 << 16, 8],
  "gc-stats": [1 << 16, 8],
  "export chrome": [1 << 16, 64],
};

/** The commands {@linkcode exerciseRingCommands} runs, by the names the reports use. */
export const RING_COMMANDS: readonly string[] = [
  "dump",
  "stats",
  "stats --json",
  "gc-stats",
  "gc-stats --json",
  "export chrome",
  "export chrome --with-trace",
];

/** How one command ended on a case. */
export interface RingCommandResult {
  /** Null when it ended cleanly, else the error's reason (`trace: <check>` for the trace's). */
  error: string | null;
  /** Characters of output. */
  output: number;
  /** Time taken, ms. */
  ms: number;
}

/** Options of {@linkcode exerciseRingCommands}. */
export interface RingCommandsOptions {
  /** Seed of the case's choices (options, decoders). */
  seed: number;
  /** The memtrace trace for `export --with-trace` (a clean or a fuzzed one). */
  trace: Uint8Array;
  /** Commands to run (default: all). */
  only?: readonly string[];
}

const fixtureDecoders = new DecoderRegistry().register("ref.custom", refCustomDecoder);

/**
 * Runs every `events` command's path on ring `bytes`; returns how each ended. Throws
 * {@linkcode RingFuzzFailure} on an escape, a broken bound or an invalid Chrome trace.
 */
export function exerciseRingCommands(
  bytes: Uint8Array,
  where: string,
  options: RingCommandsOptions,
): Record<string, RingCommandResult> {
  const rng = new Rng(options.seed >>> 0);
  const out: Record<string, RingCommandResult> = {};
  const wanted = options.only === undefined ? undefined : new Set(options.only);
  const size = bytes.length;
  const fail = (what: string, cause?: unknown): never => {
    throw new RingFuzzFailure(`${where}: ${what}`, { cause });
  };
  // `--decoders MODULE` for a quarter of the cases, else the CLI's empty registry.
  const decoders = rng.chance(0.25) ? fixtureDecoders : new DecoderRegistry();
  /** `openRing(io, file, decoders)`: `RuntimeEventsCursor.openSync` of a regular file. */
  const openRing = () =>
    new RuntimeEventsCursor(new BytesRingSource(bytes), { decoders }, RING_FILE);

  const run = (cmd: string, bound: string, inputBytes: number, f: () => number) => {
    if (wanted !== undefined && !wanted.has(cmd)) return;
    const t = performance.now();
    let error: string | null = null;
    let output = 0;
    try {
      output = f();
    } catch (e) {
      error = typedCheck(e, cmd);
    }
    const [base, perByte] = RING_OUTPUT_BOUNDS[bound];
    const limit = base + perByte * inputBytes;
    if (output > limit) fail(`${cmd}: ${output} characters of output, bound ${limit}`);
    out[cmd] = { error, output, ms: performance.now() - t };
  };
  const typedCheck = (e: unknown, cmd: string): string => {
    if (e instanceof RingFuzzFailure) throw e;
    if (e instanceof RuntimeEventsFormatError) {
      if (!(Number.isSafeInteger(e.offset) && e.offset >= 0 && e.offset <= size)) {
        fail(`${cmd}: offset ${e.offset} is not in the file (${size} bytes): ${e.message}`);
      }
      if (/\d(e[+-]?\d|\.\d)/.test(e.message)) fail(`${cmd}: a rounded number in: ${e.message}`);
      return e.reason;
    }
    if (cmd.includes("--with-trace") && e instanceof MemtraceFormatError) {
      const n = options.trace.length;
      if (!(Number.isSafeInteger(e.offset) && e.offset >= 0 && e.offset <= n)) {
        fail(`${cmd}: trace offset ${e.offset} outside [0, ${n}] (${e.message})`);
      }
      if (e.file !== TRACE_FILE) fail(`${cmd}: the trace's error names ${e.file}`);
      return `trace: ${e.check}`;
    }
    const what = e instanceof Error ? `${e.name}: ${e.message}\n${e.stack}` : String(e);
    return fail(`${cmd}: escape: ${what}`, e);
  };

  // ---- dumpOrStats ----------------------------------------------------------------------------
  run("dump", "dump", size, () => {
    const cursor = openRing();
    let chars = 0;
    const o = new StdoutBuffer((t) => void (chars += t.length));
    try {
      cursor.readAll(dumpCallbacks((l) => o.line(l), { decoders }));
    } finally {
      o.flush();
    }
    return chars;
  });
  for (const json of [false, true]) {
    run(json ? "stats --json" : "stats", "stats", size, () => {
      const stats = computeStats(openRing());
      return (json ? JSON.stringify(stats, null, 2) : formatStats(stats).trimEnd()).length + 1;
    });
  }

  // ---- gcStatsCommand -------------------------------------------------------------------------
  for (const json of [false, true]) {
    run(json ? "gc-stats --json" : "gc-stats", "gc-stats", size, () => {
      const stats = computeGcStats(openRing(), {
        decoders,
        pauses: rng.pick(["gc", "olly"] as const),
        counterUnits: rng.pick(["bytes", "words"] as const),
      });
      return json
        ? JSON.stringify(stats, null, 2).length + 1
        : formatGcStats(stats, RING_FILE).length;
    });
  }

  // ---- exportCommand --------------------------------------------------------------------------
  const exportRun = (cmd: string, withTrace: boolean) => {
    const pid = rng.chance(0.2) ? rng.pick([0, 1, 2 ** 31, Number.MAX_SAFE_INTEGER]) : undefined;
    const anchorText = withTrace && rng.chance(0.3)
      ? String(rng.pick([0n, -1n, 1n << 63n, -(1n << 70n), 123456789n]))
      : undefined;
    const traceBytes = withTrace ? options.trace : undefined;
    const input = size + (traceBytes?.length ?? 0);
    run(cmd, "export chrome", input, () => {
      let text = "";
      let chars = 0;
      const keep = input < 1 << 22;
      const write = (chunk: string) => {
        chars += chunk.length;
        if (keep) text += chunk;
      };
      const warnings: string[] = [];
      // convert(write), as cli/events.ts has it (the same chromeTraceOf).
      const image = openRing();
      let reader: Reader | null = null;
      if (traceBytes !== undefined) {
        reader = Reader.fromBytes(traceBytes, {
          name: TRACE_FILE,
          onWarning: (m) => warnings.push(`warning: ${TRACE_FILE}: ${m}\n`),
        });
      }
      const trace = chromeTraceOf(image, RING_FILE, {
        decoders,
        pid,
        ...(reader !== null
          ? {
            trace: {
              reader,
              path: TRACE_FILE,
              anchorNs: anchorText === undefined ? undefined : BigInt(anchorText),
            },
          }
          : {}),
      }, (line) => warnings.push(line));
      writeChromeTraceJson(trace, write);
      if (keep) {
        let v;
        try {
          v = validateChromeTrace(text);
        } catch (e) {
          return fail(`${cmd}: the JSON does not parse: ${e}`, e);
        }
        if (v.errors.length > 0) fail(`${cmd}: invalid Chrome trace: ${v.errors.join("; ")}`);
      }
      return chars;
    });
  };
  exportRun("export chrome", false);
  exportRun("export chrome --with-trace", true);
  return out;
}
