/**
 * `deno task trace` — read, dump and copy memtrace `.ctf` files.
 * @module
 */
import { parseArgs } from "node:util";
import {
  copyTrace,
  dumpTrace,
  FileSink,
  infoLines,
  Reader,
  traceStats,
} from "../lib/memtrace/mod.ts";
import { runMain, StdoutBuffer, UsageError, writeFileAtomic } from "./_io.ts";

const HELP: Record<string, string> = {
  main: `Usage: deno task trace <command> [options]

Commands:
  dump FILE        print the trace info, then one line per event
  copy IN OUT      decode every event and re-encode it (format v3) into OUT
  info FILE        print the trace info and counts of events, samples and sizes

Run 'deno task trace <command> --help' for a command's options.`,
  dump: `Usage: deno task trace dump FILE [--no-backtraces]

Prints the 10 info lines (sample_rate, word_size, executable_name, host_name,
ocaml_runtime_params, pid, initial_domain, start_time, context, size_bytes), then one
line per event: '<µs since start> <domain> <event>', where <event> is memtrace's
Event.to_string with location codes resolved (the format of the reference dumps).

Options:
  --no-backtraces  skip backtrace decoding (alloc lines then show no frames)
  -h, --help       show this help`,
  copy: `Usage: deno task trace copy IN OUT

Decodes every event of IN and writes it back through the multiplexed writer, keeping pid
and start time, as memtrace's copy does. A v3 trace comes out byte-identical; v1 and v2
traces are upgraded to v3. OUT is written to a temporary file and renamed when complete.

Options:
  -h, --help  show this help`,
  info: `Usage: deno task trace info FILE [--json]

Prints the trace metadata, then counts: events; minor, major and external allocations;
promotions; collections; samples; allocations by size (<=4, <=16, <=256, >256 words).

Options:
  --json      print the same as one JSON object
  -h, --help  show this help`,
};

function parse<O extends Record<string, { type: "boolean" }>>(
  args: string[],
  cmd: string,
  options: O,
) {
  try {
    return parseArgs({
      args,
      allowPositionals: true,
      strict: true,
      options: { help: { type: "boolean" as const, short: "h" }, ...options },
    });
  } catch (e) {
    throw new UsageError((e as Error).message, HELP[cmd]);
  }
}

function needFiles(positionals: string[], n: number, cmd: string): string[] {
  if (positionals.length !== n) {
    throw new UsageError(
      `'trace ${cmd}' takes ${n === 1 ? "one file" : `${n} files`}, got ${positionals.length}`,
      HELP[cmd],
    );
  }
  return positionals;
}

function dump(args: string[]): void {
  const { values, positionals } = parse(args, "dump", { "no-backtraces": { type: "boolean" } });
  if (values.help) return console.log(HELP.dump);
  const [file] = needFiles(positionals, 1, "dump");
  const reader = Reader.open(file);
  const out = new StdoutBuffer();
  try {
    if (values["no-backtraces"]) {
      for (const l of infoLines(reader.info, reader.sizeBytes())) out.line(l);
      const lookup = (c: number) => reader.lookupLocationCode(c);
      reader.iter((dt, ev) => out.line(`${dt} ${ev.domain} ${ev.toString(lookup)}`), {
        parseBacktraces: false,
      });
    } else {
      dumpTrace(reader, (l) => out.line(l));
    }
  } finally {
    out.flush();
    reader.close();
  }
}

function copy(args: string[]): void {
  const { values, positionals } = parse(args, "copy", {});
  if (values.help) return console.log(HELP.copy);
  const [input, output] = needFiles(positionals, 2, "copy");
  const reader = Reader.open(input);
  let n = 0;
  try {
    writeFileAtomic(output, (file) => {
      n = copyTrace(reader, new FileSink(file));
    });
  } finally {
    reader.close();
  }
  console.error(`copied ${n} events from ${input} to ${output}`);
}

function info(args: string[]): void {
  const { values, positionals } = parse(args, "info", { json: { type: "boolean" } });
  if (values.help) return console.log(HELP.info);
  const [file] = needFiles(positionals, 1, "info");
  const reader = Reader.open(file);
  try {
    const s = traceStats(reader);
    if (values.json) {
      const i = reader.info;
      console.log(JSON.stringify(
        { info: { ...i, pid: Number(i.pid), sizeBytes: reader.sizeBytes() }, ...s },
        null,
        2,
      ));
      return;
    }
    for (const l of infoLines(reader.info, reader.sizeBytes())) console.log(l);
    const a = s.allocs, b = s.sizeBuckets;
    const rows: [string, number | string][] = [
      ["events", s.events],
      ["domains", s.domains.join(",") || "-"],
      ["duration_us", s.durationUs],
      ["allocations", a.minor + a.major + a.external],
      ["  minor", a.minor],
      ["  major", a.major],
      ["  external", a.external],
      ["promotions", s.promotions],
      ["collections", s.collections],
      ["samples", s.samples],
      ["sampled_words", s.words],
      ["size <=4 words", b.le4],
      ["size <=16 words", b.le16],
      ["size <=256 words", b.le256],
      ["size >256 words", b.gt256],
      ["location_codes", s.distinctLocationCodes],
    ];
    for (const [k, v] of rows) console.log(`${k.padEnd(18)} ${v}`);
  } finally {
    reader.close();
  }
}

runMain(() => {
  const [cmd, ...rest] = Deno.args;
  switch (cmd) {
    case "dump":
      return dump(rest);
    case "copy":
      return copy(rest);
    case "info":
      return info(rest);
    case undefined:
    case "-h":
    case "--help":
    case "help":
      console.log(HELP.main);
      return;
    default:
      throw new UsageError(`unknown command '${cmd}'`, HELP.main);
  }
});
