/**
 * Text renderings of a trace: the dump (info header, then one line per event, exactly as the
 * reference dumps made with memtrace's reader) and summary statistics.
 * @module
 */
import { formatG, ocamlHexFloat, ocamlQuote } from "../util/ocaml_printf.ts";
import type { Reader } from "./reader.ts";
import { AllocationSource, type Info, type LocationCode } from "./types.ts";

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

/** Streams the dump of a trace, one line (without newline) per call of `emit`; returns the
 * number of events. */
export function dumpTrace(reader: Reader, emit: (line: string) => void): number {
  for (const l of infoLines(reader.info, reader.sizeBytes())) emit(l);
  const lookup = (c: LocationCode) => reader.lookupLocationCode(c);
  let events = 0;
  reader.iter((dt, ev) => {
    events++;
    emit(`${dt} ${ev.domain} ${ev.toString(lookup)}`);
  });
  return events;
}

/** The dump as one string (newline-terminated lines). */
export function dumpTraceToString(reader: Reader): string {
  const parts: string[] = [];
  dumpTrace(reader, (l) => parts.push(l));
  return parts.join("\n") + "\n";
}

/** Counts over a trace, as `trace info` prints them. */
export interface TraceStats {
  events: number;
  allocs: { minor: number; major: number; external: number };
  promotions: number;
  collections: number;
  /** Sum of `nsamples` over all allocations. */
  samples: number;
  /** Sum of lengths (words) of sampled allocations. */
  words: number;
  /** Allocations by length in words: ≤4, ≤16, ≤256, >256. */
  sizeBuckets: { le4: number; le16: number; le256: number; gt256: number };
  domains: number[];
  /** Time of the last event, µs since the trace start. */
  durationUs: number;
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
      if (ev.source === AllocationSource.Minor) s.allocs.minor++;
      else if (ev.source === AllocationSource.Major) s.allocs.major++;
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
