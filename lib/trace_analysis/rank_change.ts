/**
 * What subsampling does to a trace's top sites: for the sites with the most samples before,
 * their rank, estimate and confidence interval before and after (`trace subsample` prints it).
 * A subsampled trace estimates the same bytes with fewer samples: its intervals are wider
 * (about √factor times, for large counts) and ranks closer than the intervals can tell apart
 * may swap.
 * @module
 */
import type { GroupBy, ProfileData } from "./profile.ts";
import { emptySelector } from "./profile.ts";
import { alignColumns, formatBytes, formatInterval, topOf, type TopRow } from "./top.ts";
import { bytesInterval, DEFAULT_CONFIDENCE } from "./intervals.ts";
import { printable } from "../util/printable.ts";

/** Options of {@linkcode rankChangeOf}. */
export interface RankChangeOptions {
  /** Rows: the top sites (default), functions or stacks before. */
  by?: GroupBy;
  /** How many (default 10). */
  limit?: number;
  /** Confidence of the intervals (default 0.95). */
  confidence?: number;
}

/** One top site before, and what became of it. */
export interface RankChangeRow {
  /** The site (function, stack). */
  key: string;
  /** Its rank before (1 = most samples). */
  rankBefore: number;
  /** Its rank after, or null when no sample of it is left. */
  rankAfter: number | null;
  /** Samples before. */
  samplesBefore: number;
  /** Samples after. */
  samplesAfter: number;
  /** Estimated bytes before. */
  bytesBefore: number;
  /** Interval before. */
  lowBefore: number | null;
  /** Interval before, upper bound. */
  highBefore: number | null;
  /** Estimated bytes after. */
  bytesAfter: number;
  /** Interval after. */
  lowAfter: number | null;
  /** Interval after, upper bound. */
  highAfter: number | null;
  /** Interval width after ÷ before (null without both). */
  widthRatio: number | null;
}

/** What {@linkcode rankChangeOf} returns. */
export interface RankChangeResult {
  /** Rates before and after. */
  rateBefore: number;
  /** Rate after. */
  rateAfter: number;
  /** Confidence of the intervals. */
  confidence: number;
  /** What rows stand for. */
  by: GroupBy;
  /** The rows, in the order before. */
  rows: RankChangeRow[];
}

/** The top rows of `before` and what they are in `after` (allocated bytes, no filter). */
export function rankChangeOf(
  before: ProfileData,
  after: ProfileData,
  options: RankChangeOptions = {},
): RankChangeResult {
  const by = options.by ?? "site";
  const confidence = options.confidence ?? DEFAULT_CONFIDENCE;
  const limit = options.limit ?? 10;
  const b = topOf(before, emptySelector(), { by, limit, confidence });
  const a = topOf(after, emptySelector(), { by, limit: 0, confidence });
  const rankAfter = new Map<string, [number, TopRow]>();
  a.rows.forEach((r, i) => rankAfter.set(r.key, [i + 1, r]));
  const rows = b.rows.map((r, i): RankChangeRow => {
    const [rank, x] = rankAfter.get(r.key) ?? [null, undefined];
    const width = (lo?: number | null, hi?: number | null) =>
      lo === null || lo === undefined || hi === null || hi === undefined ? null : hi - lo;
    // A row with no sample left: the interval of 0 samples after.
    const none = bytesInterval(after, 0, confidence);
    const lowAfter = x === undefined ? none.low : x.bytesLow ?? null;
    const highAfter = x === undefined ? none.high : x.bytesHigh ?? null;
    const wb = width(r.bytesLow, r.bytesHigh), wa = width(lowAfter, highAfter);
    return {
      key: r.key,
      rankBefore: i + 1,
      rankAfter: rank,
      samplesBefore: r.samples,
      samplesAfter: x?.samples ?? 0,
      bytesBefore: r.bytes,
      lowBefore: r.bytesLow ?? null,
      highBefore: r.bytesHigh ?? null,
      bytesAfter: x?.bytes ?? 0,
      lowAfter,
      highAfter,
      widthRatio: wb === null || wa === null || wb === 0 ? null : wa / wb,
    };
  });
  return {
    rateBefore: before.info.sampleRate,
    rateAfter: after.info.sampleRate,
    confidence,
    by,
    rows,
  };
}

/** The lines `trace subsample` prints (on stderr). */
export function formatRankChange(r: RankChangeResult): string[] {
  const pct = +(r.confidence * 100).toFixed(4);
  const head = [
    `top ${r.rows.length} ${r.by}s before (rate ${r.rateBefore}) and after (rate ${r.rateAfter}), ` +
    `bytes with ${pct}% intervals; width x: how much wider the interval is after`,
  ];
  const cols = ["rank", "after", "bytes", "interval", "bytes after", "interval after", "width x"];
  const body = r.rows.map((x) => [
    String(x.rankBefore),
    x.rankAfter === null ? "-" : String(x.rankAfter),
    formatBytes(x.bytesBefore),
    formatInterval(x.lowBefore, x.highBefore),
    formatBytes(x.bytesAfter),
    formatInterval(x.lowAfter, x.highAfter),
    x.widthRatio === null ? "-" : x.widthRatio.toFixed(1),
    printable(x.key),
  ]);
  return [...head, ...alignColumns([[...cols, r.by], ...body], cols.length)];
}
