/**
 * `trace top`: the allocation sites, functions or stacks of a trace with the most samples, as a
 * table or JSON. A site is the innermost known location of a backtrace (`defname@file:line:
 * start-end`); a function is a location's `defname`; a stack is the whole backtrace.
 * @module
 */
import {
  bytesPerSample,
  groupBy,
  groupFigures,
  selectionTotals,
  selectSamples,
  sortGroups,
  stackLabel,
} from "./select.ts";
import type { GroupBy, ProfileData, Selector } from "./profile.ts";
import { printable } from "../util/printable.ts";
import {
  bytesInterval,
  checkConfidence,
  checkRate,
  DEFAULT_CONFIDENCE,
  INTERVAL_METHOD,
} from "./intervals.ts";

/** Options of {@linkcode topOf}. */
export interface TopOptions {
  /** What rows stand for (default `site`). */
  by?: GroupBy;
  /** Most rows returned (default 20; 0 for all). */
  limit?: number;
  /** Confidence of the intervals, in (0, 1) (default 0.95). */
  confidence?: number;
  /** Also give the intervals a trace sampled at this rate would show (in (0, 1]). */
  whatIfRate?: number;
}

/** The confidence interval of a row's estimates (nulls when the trace's rate allows none). */
export interface TopIntervals {
  /** Lower bound of `bytes` at the result's confidence. */
  bytesLow?: number | null;
  /** Upper bound of `bytes`. */
  bytesHigh?: number | null;
  /** Lower bound of `liveEndBytes`. */
  liveEndBytesLow?: number | null;
  /** Upper bound of `liveEndBytes`. */
  liveEndBytesHigh?: number | null;
  /** With a what-if rate: the bounds of `bytes` a trace at that rate would show. */
  whatIfBytesLow?: number | null;
  /** With a what-if rate: the upper bound. */
  whatIfBytesHigh?: number | null;
}

/** One row of {@linkcode TopResult}. Bytes are estimates (samples ÷ rate × word size), with
 * their confidence intervals. */
export interface TopRow extends TopIntervals {
  /** The site, function name, or the stack's frames joined by `;` (outermost first). */
  key: string;
  /** Samples of the selection in this row (for functions: stacks containing it). */
  samples: number;
  /** Their estimated bytes (allocated, or live at the chosen time). */
  bytes: number;
  /** Estimated bytes of those objects still live at the trace end. */
  liveEndBytes: number;
  /** Samples of promoted objects (by the end, or by the live-at time). */
  promotedSamples: number;
  /** promotedSamples ÷ samples (0 without samples). */
  promotedShare: number;
  /** For functions: samples and bytes where the function is the innermost frame. */
  selfSamples?: number;
  /** For functions: estimated bytes where the function is the innermost frame. */
  selfBytes?: number;
  /** For functions: lower bound of `selfBytes`. */
  selfBytesLow?: number | null;
  /** For functions: upper bound of `selfBytes`. */
  selfBytesHigh?: number | null;
  /** For stacks: the frames shown, outermost first: the innermost ones within
   * `STACK_TEXT_CHARS` characters (the whole stack unless `framesOmitted`). */
  frames?: string[];
  /** For stacks: outer frames left out of `frames` and `key` (which then starts
   * `(N outer frames);`). */
  framesOmitted?: number;
}

/** What {@linkcode topOf} returns (and `trace top --json` prints). */
export interface TopResult {
  /** The trace: its executable, rate, word size in bits, events, samples, duration, peak. */
  trace: {
    executableName: string;
    sampleRate: number;
    wordSize: number;
    bytesPerSample: number;
    events: number;
    samples: number;
    durationUs: number;
    peak: { timeUs: number; bytes: number } | null;
  };
  /** What rows stand for. */
  by: GroupBy;
  /** `allocated`: allocations; `live`: objects live at `liveAt`. */
  measure: "allocated" | "live";
  /** For `live`: the moment measured (null when measuring allocations). */
  liveAt: { kind: "end" | "peak" | "time" | "bucket"; timeUs: number | null } | null;
  /** The selection's sums over all its classes (not over rows). */
  totals: {
    samples: number;
    bytes: number;
    liveEndBytes: number;
    promotedSamples: number;
    promotedShare: number;
  } & TopIntervals;
  /** Confidence of the intervals. */
  confidence?: number;
  /** How the intervals are computed. */
  intervalMethod?: string;
  /** The rate of the what-if intervals, or null. */
  whatIfRate?: number | null;
  /** Number of rows before the limit. */
  rowCount: number;
  /** The rows, largest first. */
  rows: TopRow[];
}

/** The top rows of a profile under a selector. */
export function topOf(data: ProfileData, selector: Selector, options: TopOptions = {}): TopResult {
  const by = options.by ?? "site";
  const limit = options.limit ?? 20;
  const confidence = checkConfidence(options.confidence ?? DEFAULT_CONFIDENCE);
  const whatIf = options.whatIfRate === undefined ? undefined : checkRate(options.whatIfRate);
  const intervals = (samples: number, liveEnd: number): TopIntervals => {
    const b = bytesInterval(data, samples, confidence);
    const l = bytesInterval(data, liveEnd, confidence);
    const r: TopIntervals = {
      bytesLow: b.low,
      bytesHigh: b.high,
      liveEndBytesLow: l.low,
      liveEndBytesHigh: l.high,
    };
    if (whatIf !== undefined) {
      const w = bytesInterval(data, samples, confidence, whatIf);
      r.whatIfBytesLow = w.low;
      r.whatIfBytesHigh = w.high;
    }
    return r;
  };
  const bps = bytesPerSample(data);
  const sel = selectSamples(data, selector);
  const groups = sortGroups(groupBy(data, sel, by), by);
  const t = selectionTotals(sel);
  const rows = (limit > 0 ? groups.slice(0, limit) : groups).map((g): TopRow => {
    const row: TopRow = { ...groupFigures(g, bps), ...intervals(g.samples, g.liveEnd) };
    if (by === "function") {
      row.selfSamples = g.self;
      row.selfBytes = g.self * bps;
      const self = bytesInterval(data, g.self, confidence);
      row.selfBytesLow = self.low;
      row.selfBytesHigh = self.high;
    }
    if (by === "stack") {
      const label = g.node === undefined || g.node < 0 ? undefined : stackLabel(data, g.node);
      row.frames = label?.frames ?? [];
      row.framesOmitted = label?.omitted ?? 0;
    }
    return row;
  });
  const live = selector.live;
  return {
    trace: {
      executableName: data.info.executableName,
      sampleRate: data.info.sampleRate,
      wordSize: data.info.wordSize,
      bytesPerSample: bps,
      events: data.stats.events,
      samples: data.stats.samples,
      durationUs: data.stats.durationUs,
      peak: data.peak === null
        ? null
        : { timeUs: data.peak.timeUs, bytes: data.peak.samples * bps },
    },
    by,
    measure: live === "alloc" ? "allocated" : "live",
    liveAt: live === "alloc"
      ? null
      : live === "end"
      ? { kind: "end", timeUs: data.stats.durationUs }
      : live === "peak"
      ? { kind: "peak", timeUs: data.peak?.timeUs ?? null }
      : live === "exact"
      ? { kind: "time", timeUs: data.liveAt?.timeUs ?? null }
      : {
        kind: "bucket",
        timeUs: selector.liveBucket === null
          ? null
          : (selector.liveBucket + 1) * data.grid.widthUs - 1,
      },
    totals: {
      samples: t.samples,
      bytes: t.samples * bps,
      liveEndBytes: t.liveEnd * bps,
      promotedSamples: t.promoted,
      promotedShare: t.samples > 0 ? t.promoted / t.samples : 0,
      ...intervals(t.samples, t.liveEnd),
    },
    confidence,
    intervalMethod: INTERVAL_METHOD,
    whatIfRate: whatIf ?? null,
    rowCount: groups.length,
    rows,
  };
}

/** Bytes with a binary unit: `512 B`, `1.5 KiB`, `12.0 MiB`. */
export function formatBytes(b: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let v = Math.abs(b), u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  const text = u === 0 ? String(Math.round(v)) : v.toFixed(1);
  return `${b < 0 ? "-" : ""}${text} ${units[u]}`;
}

/** A share as a percentage with one decimal. */
export function formatShare(x: number): string {
  return `${(x * 100).toFixed(1)}%`;
}

/** Seconds with microsecond precision, trailing zeros dropped. */
export function formatSeconds(us: number): string {
  return `${(us / 1e6).toFixed(6).replace(/\.?0+$/, "")} s`;
}

/** An interval as `low..high` in binary units (`-` when the trace's rate allows none). */
export function formatInterval(low: number | null, high: number | null): string {
  return low === null || high === null ? "-" : `${formatBytes(low)}..${formatBytes(high)}`;
}

/** `95% interval 69.3 MiB..78.7 MiB` for `samples` samples of `data` (for the exports'
 * metadata; `no interval` where the trace's rate allows none). */
export function intervalText(data: ProfileData, samples: number, confidence: number): string {
  const iv = bytesInterval(data, samples, confidence);
  return iv.low === null
    ? "no interval (sample rate not in (0, 1])"
    : `${+(confidence * 100).toFixed(4)}% interval ${formatInterval(iv.low, iv.high)}`;
}

/** The line saying what the intervals are. */
export function intervalNote(confidence: number): string {
  return `low..high: ${+(confidence * 100).toFixed(
    4,
  )}% confidence interval, exact binomial (each word sampled with probability rate)`;
}

/** Shortens `s` to `width` characters, keeping its end (the innermost frames). */
function keepEnd(s: string, width: number): string {
  return s.length <= width ? s : "…" + s.slice(s.length - width + 1);
}

/** The table `trace top` prints; each of `notes` is a line after its header (`# note`). */
export function formatTop(r: TopResult, name = "trace", notes: readonly string[] = []): string[] {
  const whatIf = r.whatIfRate !== null && r.whatIfRate !== undefined;
  const what = r.by === "site" ? "sites" : r.by === "function" ? "functions" : "stacks";
  const measure = r.measure === "allocated"
    ? "allocations"
    : `objects live at ${
      r.liveAt?.kind === "end"
        ? "the end"
        : r.liveAt?.kind === "peak"
        ? `the peak (${r.liveAt.timeUs === null ? "none" : formatSeconds(r.liveAt.timeUs)})`
        : r.liveAt?.timeUs === null || r.liveAt === null
        ? "-"
        : formatSeconds(r.liveAt.timeUs)
    }`;
  const head = [
    `# ${name}: ${printable(r.trace.executableName)}, ${r.trace.events} events, ${
      formatSeconds(r.trace.durationUs)
    }, sample rate ${r.trace.sampleRate}, ${r.trace.wordSize / 8}-byte words`,
    `# ${measure} by ${r.by}: ${r.rowCount} ${what}${
      r.rows.length < r.rowCount ? `, top ${r.rows.length} shown` : ""
    }; bytes are estimates (samples / rate x word size)`,
    ...notes.map((n) => `# ${n}`),
    `# ${intervalNote(r.confidence ?? DEFAULT_CONFIDENCE)}${
      whatIf ? `; whatIf: the interval a trace at rate ${r.whatIfRate} would give` : ""
    }`,
  ];
  // The columns are named as the JSON rows' keys (`trace top --json`).
  const cols = [
    "samples",
    ...(r.by === "function" ? ["selfBytes"] : []),
    "bytes",
    "bytesLow..bytesHigh",
    ...(whatIf ? ["whatIfBytesLow..whatIfBytesHigh"] : []),
    "liveEndBytes",
    "promotedShare",
  ];
  const cells = (row: TopRow | TopResult["totals"], self?: number) => [
    String(row.samples),
    ...(r.by === "function" ? [self === undefined ? "" : formatBytes(self)] : []),
    formatBytes(row.bytes),
    formatInterval(row.bytesLow ?? null, row.bytesHigh ?? null),
    ...(whatIf ? [formatInterval(row.whatIfBytesLow ?? null, row.whatIfBytesHigh ?? null)] : []),
    formatBytes(row.liveEndBytes),
    formatShare(row.promotedShare),
  ];
  const body = r.rows.map((
    row,
  ) => [...cells(row, row.selfBytes), keepEnd(printable(row.key), 120)]);
  const total = [...cells(r.totals), "(total)"];
  return [...head, ...alignColumns([[...cols, r.by], ...body, total], cols.length)];
}

/** Table lines: each row's first `n` cells right-aligned in columns two spaces apart, then its
 * last cell (the key) as it is. */
export function alignColumns(rows: readonly string[][], n: number): string[] {
  // Folded, not spread: with --limit 0 the rows can be more than a call's arguments may be.
  const widths: number[] = [];
  for (let c = 0; c < n; c++) widths.push(rows.reduce((w, row) => Math.max(w, row[c].length), 0));
  return rows.map((row) =>
    row.slice(0, n).map((cell, c) => cell.padStart(widths[c])).join("  ") + "  " + row[n]
  );
}
