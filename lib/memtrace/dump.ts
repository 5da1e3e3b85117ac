/**
 * Text renderings of a trace: the dump (info header, then one line per event, exactly as the
 * reference dumps made with memtrace's reader) and summary statistics. Dumps stream, and stop
 * with {@linkcode MemtraceLimitError} when a small hostile trace would print without end.
 * @module
 */
import { formatG, ocamlHexFloat, ocamlQuote } from "../util/ocaml_printf.ts";
import type { Reader } from "./reader.ts";
import { MemtraceLimitError } from "./errors.ts";
import { printable } from "../util/printable.ts";
import { formatObjId, formatSpace4, type Info, MemtraceAllocationSource } from "./types.ts";

/** The 10 header lines of a dump. */
export function infoLines(info: Info, sizeBytes: number): string[] {
  return [
    `sample_rate: ${formatG(info.sampleRate, 17)} (${ocamlHexFloat(info.sampleRate)})`,
    `word_size: ${info.wordSize}`,
    `executable_name: ${ocamlQuote(info.executableName)}`,
    `host_name: ${ocamlQuote(info.hostName)}`,
    `ocaml_runtime_params: ${ocamlQuote(info.ocamlRuntimeParams)}`,
    `pid: ${info.pid}`,
    `initial_domain: ${info.initialDomain}`,
    `start_time: ${info.startTime}`,
    `context: ${info.context === undefined ? "None" : `Some ${ocamlQuote(info.context)}`}`,
    `size_bytes: ${sizeBytes}`,
  ];
}

/** Default budget of a dump: 64 Mi characters, plus {@linkcode DUMP_CHARS_PER_INPUT_BYTE} per
 * byte of input read so far. */
export const DUMP_BASE_CHARS = 64 * 1024 * 1024;
/** Characters of dump allowed per byte of input, beyond {@linkcode DUMP_BASE_CHARS}. The real
 * traces of the fixtures dump to at most 1,600 characters per byte (deep recursion: ~10,000-frame
 * backtraces sharing their prefixes). */
export const DUMP_CHARS_PER_INPUT_BYTE = 4096;

/** Options of the dump functions. */
export interface DumpOptions {
  /** Decode backtraces (default true); without, alloc lines show no frames. */
  parseBacktraces?: boolean;
  /** Most characters of text the dump may produce; past it, {@linkcode MemtraceLimitError}.
   * Default: {@linkcode DUMP_BASE_CHARS} + {@linkcode DUMP_CHARS_PER_INPUT_BYTE} × (byte offset
   * of the event being printed). `Infinity` for no limit. */
  maxOutputChars?: number;
}

/** Where dump text goes, piece by piece; `endLine` ends the current line. */
interface TextOut {
  put(s: string): void;
  endLine(): void;
}

const SOURCE_NAMES = ["alloc", "alloc_major", "alloc_ext"];

/** Writes the dump to `out`, checking the output budget before each piece. */
function dumpTo(reader: Reader, out: TextOut, options: DumpOptions): number {
  const fixed = options.maxOutputChars;
  let total = 0;
  let limit = fixed ?? DUMP_BASE_CHARS;
  const put = (s: string) => {
    if (total + s.length + 1 > limit) {
      throw new MemtraceLimitError(
        `dump output of more than ${limit} characters`,
        limit,
        reader.eventOffset(),
        reader.fileName,
      );
    }
    total += s.length;
    out.put(s);
  };
  // Every line starts with a piece, and each piece leaves room for the newline after it.
  const endLine = () => {
    total++;
    out.endLine();
  };
  for (const l of infoLines(reader.info, reader.sizeBytes())) {
    put(l);
    endLine();
  }
  let events = 0;
  const texts = new Map<number, string>();
  reader.iter((dt, ev) => {
    events++;
    if (fixed === undefined) {
      limit = DUMP_BASE_CHARS + DUMP_CHARS_PER_INPUT_BYTE * reader.eventOffset();
    }
    if (ev.kind !== "alloc") {
      put(`${dt} ${ev.domain} ${ev.toString()}`);
      endLine();
      return;
    }
    // memtrace's Event.to_string, piece by piece: a line can be long.
    put(
      `${dt} ${ev.domain} ${formatObjId(ev.objId)} ${
        SOURCE_NAMES[ev.source]
      } ${ev.nsamples} len=${ev.length} dom=${ev.domain} ${formatSpace4(ev.commonPrefix)}: `,
    );
    const bt = ev.backtraceBuffer;
    for (let i = 0; i < ev.backtraceLength; i++) {
      const code = bt[i];
      let text = texts.get(code);
      if (text === undefined) {
        // A code without locations prints as `$code`, as memtrace's printer prints one whose
        // list is empty (looking it up would raise in memtrace's dump). It may be defined later.
        const locs = reader.locationsOf(code);
        if (locs === undefined || locs.length === 0) text = "$" + code;
        else {
          text = "";
          for (let j = 0; j < locs.length; j++) text += (j > 0 ? " " : "") + locs[j].toString();
          // A name's control characters would reach the terminal raw.
          text = printable(text);
          // Definitions never change: keep the text of short ones.
          if (text.length <= 4096) {
            if (texts.size >= 1 << 16) texts.clear();
            texts.set(code, text);
          }
        }
      }
      put(i > 0 ? " " + text : text);
    }
    endLine();
  }, { parseBacktraces: options.parseBacktraces ?? true });
  return events;
}

/** Streams the dump of a trace, one line (without newline) per call of `emit`; returns the
 * number of events. Within the output budget of {@linkcode DumpOptions}. */
export function dumpTrace(
  reader: Reader,
  emit: (line: string) => void,
  options: DumpOptions = {},
): number {
  let parts: string[] = [];
  return dumpTo(reader, {
    put: (s) => parts.push(s),
    endLine: () => {
      emit(parts.length === 1 ? parts[0] : parts.join(""));
      parts = [];
    },
  }, options);
}

/** Streams the dump of a trace as text chunks of about 64 KiB (newlines included), so that
 * memory stays small however long a line is; returns the number of events. On an error, the
 * text before it is written, then the error thrown. */
export function dumpTraceTo(
  reader: Reader,
  write: (text: string) => void,
  options: DumpOptions = {},
): number {
  // Concatenated as it comes (V8 keeps the pieces as a rope until the text is read), which is
  // cheaper than gathering them in an array to join.
  let text = "";
  const flush = () => {
    if (text.length === 0) return;
    const chunk = text;
    text = "";
    write(chunk);
  };
  try {
    return dumpTo(reader, {
      put: (s) => {
        text += s;
        if (text.length >= 1 << 16) flush();
      },
      endLine: () => {
        text += "\n";
        if (text.length >= 1 << 16) flush();
      },
    }, options);
  } finally {
    // What was printed before an error too, so that one sees where it stopped.
    flush();
  }
}

/** The dump as one string (newline-terminated lines). */
export function dumpTraceToString(reader: Reader, options: DumpOptions = {}): string {
  const parts: string[] = [];
  dumpTrace(reader, (l) => parts.push(l), options);
  return parts.join("\n") + "\n";
}

/** Counts over a trace, as `trace info` prints them. */
export interface TraceStats {
  /** Events of every kind. */
  events: number;
  /** Allocations by source. */
  allocs: { minor: number; major: number; external: number };
  /** Promotion events. */
  promotions: number;
  /** Collection events. */
  collections: number;
  /** Sum of `nsamples` over all allocations. */
  samples: number;
  /** Sum of lengths (words) of sampled allocations. */
  words: number;
  /** Allocations by length in words: ≤4, ≤16, ≤256, >256. */
  sizeBuckets: { le4: number; le16: number; le256: number; gt256: number };
  /** Domains with events, in increasing order. */
  domains: number[];
  /** Time of the last event, µs since the trace start. */
  durationUs: number;
  /** Distinct location codes in the backtraces. */
  distinctLocationCodes: number;
}

/** Reads every event once and counts. Backtraces are not decoded except to count codes. */
export function traceStats(reader: Reader): TraceStats {
  const s: TraceStats = {
    events: 0,
    allocs: { minor: 0, major: 0, external: 0 },
    promotions: 0,
    collections: 0,
    samples: 0,
    words: 0,
    sizeBuckets: { le4: 0, le16: 0, le256: 0, gt256: 0 },
    domains: [],
    durationUs: 0,
    distinctLocationCodes: 0,
  };
  const domains = new Set<number>();
  const codes = new Set<number>();
  reader.iter((dt, ev) => {
    s.events++;
    s.durationUs = dt;
    domains.add(ev.domain);
    if (ev.kind === "alloc") {
      if (ev.source === MemtraceAllocationSource.Minor) s.allocs.minor++;
      else if (ev.source === MemtraceAllocationSource.Major) s.allocs.major++;
      else s.allocs.external++;
      s.samples += ev.nsamples;
      s.words += ev.length;
      const l = ev.length;
      if (l <= 4) s.sizeBuckets.le4++;
      else if (l <= 16) s.sizeBuckets.le16++;
      else if (l <= 256) s.sizeBuckets.le256++;
      else s.sizeBuckets.gt256++;
      for (let i = ev.commonPrefix; i < ev.backtraceLength; i++) codes.add(ev.backtraceBuffer[i]);
    } else if (ev.kind === "promote") s.promotions++;
    else s.collections++;
  });
  s.domains = [...domains].sort((a, b) => a - b);
  s.distinctLocationCodes = codes.size;
  return s;
}
