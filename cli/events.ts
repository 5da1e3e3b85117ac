/**
 * `deno task events` — dump or summarise runtime_events ring files
 * (`<pid>.events`) written by OCaml 5 programs or by memprof-lab.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import {
  computeStats,
  type CustomEventDecoder,
  DecoderRegistry,
  dumpCallbacks,
  formatStats,
  RuntimeEventsCursor,
} from "../lib/runtime_events/mod.ts";
import { UsageError } from "./_io.ts";

const HELP: Record<string, string> = {
  main: `Usage: deno task events <command> FILE [options]

Reads a runtime_events ring file (<pid>.events) from OCaml 5.3 or memprof-lab.

Commands:
  dump FILE    print every event, one per line, as OCaml's consumer sees them
  stats FILE   per-ring event counts, lost events and phase durations

Run 'deno task events <command> --help' for a command's options.`,
  dump: `Usage: deno task events dump FILE [--decoders MODULE]

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
  stats: `Usage: deno task events stats FILE [--json] [--decoders MODULE]

For each ring: events by kind; lost data as OCaml reports it (ring words) and an
estimate in events (words / mean message size); for each runtime phase, matched
begin/end pairs with count, total, p50, p99 and max duration in nanoseconds, and
begins or ends that could not be matched (after the ring wrapped). Then the same
phase table over all rings.

Options:
  --json             print the statistics as JSON
  --decoders MODULE  load custom event decoders (as for dump)
  -h, --help         show this help`,
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
}

const encoder = new TextEncoder();

function writeAll(w: { writeSync(b: Uint8Array): number }, text: string): void {
  const bytes = encoder.encode(text);
  let off = 0;
  while (off < bytes.length) off += w.writeSync(bytes.subarray(off));
}

/** The real process: files, dynamic import relative to the working directory, stdio. */
export const denoIO: EventsCliIO = {
  readFile: (path) => Deno.readFileSync(path),
  importModule: (spec) => {
    const url = /^[a-z][a-z0-9+.-]+:/i.test(spec) && !isAbsolute(spec)
      ? spec
      : pathToFileURL(resolve(spec)).href;
    return import(url);
  },
  stdout: (text) => writeAll(Deno.stdout, text),
  stderr: (text) => writeAll(Deno.stderr, text),
};

/** Collects output lines and hands them to `io.stdout` in large chunks. */
class Out {
  #parts: string[] = [];
  #size = 0;
  constructor(readonly io: EventsCliIO) {}
  line(s: string): void {
    this.#parts.push(s, "\n");
    this.#size += s.length + 1;
    if (this.#size > 1 << 16) this.flush();
  }
  flush(): void {
    if (this.#parts.length === 0) return;
    const text = this.#parts.join("");
    this.#parts = [];
    this.#size = 0;
    this.io.stdout(text);
  }
}

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

async function main(argv: string[], io: EventsCliIO): Promise<void> {
  const [command, ...rest] = argv;
  if (command === undefined || command === "-h" || command === "--help" || command === "help") {
    if (command === undefined) throw new UsageError("missing command");
    io.stdout(HELP.main + "\n");
    return;
  }
  if (!(command in HELP) || command === "main") {
    throw new UsageError(`unknown command '${command}'`);
  }
  let parsed;
  try {
    parsed = parseArgs({
      args: rest,
      allowPositionals: true,
      options: {
        help: { type: "boolean", short: "h" },
        decoders: { type: "string" },
        ...(command === "stats" ? { json: { type: "boolean" } } : {}),
      },
    });
  } catch (e) {
    throw new UsageError(`${e instanceof Error ? e.message : String(e)}`);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.stdout(HELP[command] + "\n");
    return;
  }
  if (positionals.length !== 1) {
    throw new UsageError(
      positionals.length === 0 ? `${command}: missing FILE` : `${command}: expected one FILE`,
    );
  }
  const file = positionals[0];
  const decoders = await loadDecoders(io, values.decoders as string | undefined);
  const image = readImage(io, file);
  const out = new Out(io);
  if (command === "dump") {
    const cursor = new RuntimeEventsCursor(image, { decoders }, file);
    try {
      cursor.readAll(dumpCallbacks((l) => out.line(l), { decoders }));
    } finally {
      // Print what was read before any error, so the user sees where it stopped.
      out.flush();
    }
  } else {
    const stats = computeStats(image, { decoders });
    if ((values as { json?: boolean }).json) out.line(JSON.stringify(stats, null, 2));
    else out.line(formatStats(stats).trimEnd());
    out.flush();
  }
}

/**
 * Runs `events` with `argv` (without the program name) and returns the exit
 * status: 0 on success, 1 for unreadable or corrupt input, 2 for usage errors.
 */
export async function run(argv: string[], io: EventsCliIO = denoIO): Promise<number> {
  try {
    await main(argv, io);
    return 0;
  } catch (e) {
    if (e instanceof Deno.errors.BrokenPipe) return 0;
    if (e instanceof UsageError) {
      io.stderr(`error: ${e.message}\nRun 'deno task events --help' for usage.\n`);
      return 2;
    }
    io.stderr(`error: ${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  }
}

if (import.meta.main) {
  Deno.exit(await run(Deno.args));
}
