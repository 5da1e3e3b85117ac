/**
 * Hostile but small memtrace traces for the "every reader bounded" tests (issue 23), written with
 * the project's `Writer`, and a way to run `cli/trace.ts` as a child process measuring its peak
 * resident memory.
 * @module
 */
import {
  type Info,
  Location,
  MemorySink,
  MemtraceAllocationSource,
  Writer,
} from "../../lib/memtrace/mod.ts";

const START = 1_700_000_000_000_000;

/** Trace info for the hostile traces. */
export function hostileInfo(executableName = "hostile"): Info {
  return {
    sampleRate: 1e-4,
    wordSize: 64,
    executableName,
    hostName: "h",
    ocamlRuntimeParams: "",
    pid: 42n,
    initialDomain: 0,
    startTime: START,
    context: undefined,
  };
}

/**
 * A one-allocation trace whose backtrace uses location code 3, but whose location event defines
 * code 9 instead: every lookup of code 3 fails (`invalid location code 00000003`).
 */
export function undefinedCodeTrace(): Uint8Array {
  const sink = new MemorySink();
  const w = Writer.create(sink, hostileInfo());
  const here = [new Location("demo.ml", 3, 2, 20, "Demo.f")];
  w.putAlloc({
    time: START + 5,
    length: 4,
    nsamples: 1,
    source: MemtraceAllocationSource.Minor,
    callstack: [3],
    decode: () => here,
  });
  w.close();
  const b = sink.bytes().slice();
  // The location event comes first (definitions go before the events using them): its 8-byte
  // code is the first 03 00 00 00 00 00 00 00 of the file.
  for (let i = 0; i + 8 <= b.length; i++) {
    if (b[i] === 3 && b.subarray(i + 1, i + 8).every((x) => x === 0)) {
      b[i] = 9;
      return b;
    }
  }
  throw new Error("no location event found");
}

/** A trace of one allocation per entry of `nsamples`, each with that many samples (written as
 * memtrace writes any OCaml int: a vint, so a negative count takes the 32-bit signed form). */
export function samplesTrace(nsamples: readonly number[]): Uint8Array {
  const sink = new MemorySink();
  const w = Writer.create(sink, hostileInfo());
  const here = [new Location("demo.ml", 3, 2, 20, "Demo.f")];
  nsamples.forEach((n, i) => {
    w.putAlloc({
      time: START + 10 * (i + 1),
      length: 100,
      nsamples: n,
      source: MemtraceAllocationSource.Major,
      callstack: [1],
      decode: () => here,
    });
  });
  w.close();
  return sink.bytes().slice();
}

/** Names with what a terminal or a line format must not get raw: an escape sequence, a newline,
 * a carriage return, BEL, a C1 CSI (U+009B), DEL, and a `;`. */
export const HOSTILE_NAMES: readonly string[] = [
  "Evil.\x1b[31mred\x1b[0m",
  "Evil.two\nlines",
  "Evil.semi;colon",
  "Evil.\rback\x07bell\x9b2J\x7f",
];

/** A trace whose function names, file names and executable name hold control characters:
 * stacks of two and three frames over {@linkcode HOSTILE_NAMES}. */
export function controlNamesTrace(): Uint8Array {
  const sink = new MemorySink();
  const w = Writer.create(sink, {
    ...hostileInfo("exe\x1b]0;title\x07"),
    hostName: "host\x1b[2J",
    context: "ctx\nline",
  });
  const locs = (code: number) => [
    new Location(`file\x1b[1m${code}.ml`, code, 1, 2, HOSTILE_NAMES[code % HOSTILE_NAMES.length]),
  ];
  let t = START;
  for (let k = 0; k < 40; k++) {
    const a = k % 4, b = (k >> 2) % 4;
    w.putAlloc({
      time: t += 10,
      length: 4,
      nsamples: 1 + (k % 3),
      source: MemtraceAllocationSource.Minor,
      callstack: k % 2 === 0 ? [a + 5, b + 1] : [a + 1, b + 5, 9],
      decode: locs,
    });
  }
  w.close();
  return sink.bytes().slice();
}

/** Options of {@linkcode bombTrace}. */
export interface BombOptions {
  /** Allocations (each with its own stack). */
  allocations: number;
  /** Frames per stack. */
  depth: number;
  /** Characters of each function name. */
  nameLength: number;
  /** Distinct functions (names). */
  functions: number;
}

/**
 * A valid trace whose stacks and names are large: `allocations` allocations, each with a
 * distinct stack of `depth` frames drawn from `functions` functions of `nameLength`-character
 * names (so a stack's text is about depth × nameLength characters). Deterministic.
 */
export function bombTrace(o: BombOptions): Uint8Array {
  const sink = new MemorySink();
  const w = Writer.create(sink, hostileInfo("bomb"));
  const names: string[] = [];
  for (let f = 0; f < o.functions; f++) {
    const head = `F${f}_`;
    names.push(head + "x".repeat(Math.max(0, o.nameLength - head.length)));
  }
  const locs = (code: number) => {
    const f = code % o.functions;
    return [new Location(`m${f}.ml`, 1 + (code % 1000), 0, 10, names[f])];
  };
  // Code c names function c % functions; stack k is a walk whose frames vary with k, so that no
  // two stacks are equal and they share short prefixes only.
  let x = 12345;
  const next = () => (x = (Math.imul(x, 1103515245) + 12345) >>> 0);
  const callstack = new Array<number>(o.depth);
  for (let k = 0; k < o.allocations; k++) {
    for (let d = 0; d < o.depth; d++) callstack[d] = 1 + (next() % (o.functions * 4));
    w.putAlloc({
      time: START + 10 * (k + 1),
      length: 8,
      nsamples: 1 + (k % 3),
      source: MemtraceAllocationSource.Minor,
      callstack,
      decode: locs,
    });
  }
  w.close();
  return sink.bytes().slice();
}

/** What a child process did, with its peak resident memory. */
export interface Measured {
  code: number;
  stdout: Uint8Array;
  stderr: string;
  /** Peak resident set size in KiB (VmHWM), or NaN when it could not be read. */
  peakKiB: number;
  /** Wall time in ms. */
  ms: number;
}

/** Whether GNU time is installed (it reports a child's exact peak resident memory). */
function hasGnuTime(): boolean {
  try {
    return Deno.statSync("/usr/bin/time").isFile;
  } catch {
    return false;
  }
}

/**
 * Runs `deno run cli/<script> args…` and measures the child's peak resident memory: exactly with
 * `/usr/bin/time -f %M` when installed (GNU time reports the largest peak among its child and
 * the child's children; coreutils' timeout, between them, stops deno after `timeoutMs`, exit
 * status 137), else by sampling deno's VmHWM in /proc while it runs (a high-water mark: the
 * last reading is the peak unless it falls in the last 20 ms).
 */
export async function measureCli(
  script: string,
  args: string[],
  timeoutMs = 120_000,
): Promise<Measured> {
  const t0 = performance.now();
  const deno = [
    Deno.execPath(),
    "run",
    "--allow-read",
    "--allow-write",
    new URL(`../../cli/${script}`, import.meta.url).pathname,
    ...args,
  ];
  const timeFile = hasGnuTime() ? Deno.makeTempFileSync({ suffix: ".time" }) : undefined;
  const seconds = String(Math.ceil(timeoutMs / 1000));
  const [cmd, ...rest] = timeFile === undefined
    ? deno
    : ["/usr/bin/time", "-f", "%M", "-o", timeFile, "timeout", "-s", "KILL", seconds, ...deno];
  const child = new Deno.Command(cmd, {
    args: rest,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
    ...(timeFile === undefined ? { signal: AbortSignal.timeout(timeoutMs) } : {}),
  }).spawn();
  let peakKiB = NaN;
  const sample = () => {
    try {
      const status = Deno.readTextFileSync(`/proc/${child.pid}/status`);
      const m = /^VmHWM:\s+(\d+) kB/m.exec(status);
      if (m !== null) peakKiB = Number(m[1]);
    } catch { /* exited */ }
  };
  const timer = timeFile === undefined ? setInterval(sample, 20) : undefined;
  const out = await child.output();
  clearInterval(timer);
  if (timeFile !== undefined) {
    // Its last line: "Command terminated by signal 9" may come first.
    const lines = Deno.readTextFileSync(timeFile).trim().split("\n");
    Deno.removeSync(timeFile);
    peakKiB = Number(lines[lines.length - 1]);
  }
  return {
    code: out.code,
    stdout: out.stdout,
    stderr: new TextDecoder().decode(out.stderr),
    peakKiB,
    ms: performance.now() - t0,
  };
}

/** {@linkcode measureCli} of cli/trace.ts. */
export function measureTrace(args: string[], timeoutMs = 120_000): Promise<Measured> {
  return measureCli("trace.ts", args, timeoutMs);
}
