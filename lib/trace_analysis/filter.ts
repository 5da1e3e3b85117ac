/**
 * The filters of the analysis commands, in the user's terms (seconds, source names, words),
 * their parsing from command-line text, and their translation into the aggregation's options
 * and a {@linkcode Selector}.
 * @module
 */
import type { TraceReader } from "./source.ts";
import {
  type AggregateOptions,
  aggregateTrace,
  type AnalysisPass,
  startAggregate,
} from "./aggregate.ts";
import { TraceAnalysisError } from "./errors.ts";
import type { LiveMode, ProfileData, Selector } from "./profile.ts";

/** Allocation sources by name. */
export const SOURCES = { minor: 0, major: 1, external: 2 } as const;
/** A source's name. */
export type SourceName = keyof typeof SOURCES;

/** What to keep and what to measure. Every field is optional: an empty filter keeps every
 * sampled allocation of the trace and measures allocations. */
export interface AnalysisFilter {
  /** Keep allocations of these domains. */
  domains?: number[];
  /** Keep allocations of these sources. */
  sources?: SourceName[];
  /** Keep objects allocated at or after this time (µs since the trace start). */
  fromUs?: number;
  /** Keep objects allocated before this time (µs since the trace start). */
  toUs?: number;
  /** Measure the objects live at the trace end, at the peak, or at a time (µs since the trace
   * start) instead of allocations. */
  liveAt?: "end" | "peak" | number;
  /** Keep objects of at least this many words (header excluded). */
  sizeMin?: number;
  /** Keep objects of at most this many words. */
  sizeMax?: number;
  /** Keep stacks with a function whose name contains this text. */
  function?: string;
  /** Drop stacks with a function whose name contains this text. */
  exclude?: string;
  /** Not a filter: how finely the profile keeps lengths (`AggregateOptions.lengths`; default
   * size classes). `exact` for an output that shows each length (the pprof export). */
  lengths?: "classes" | "exact";
  /** Not a filter: whether the profile keeps its cube (`AggregateOptions.cube`; default true).
   * `false` when only allocations or the live heap at the end or at a time are measured, and
   * no time bucket is selected later: memory then follows the classes alone. Measuring the live
   * heap at the peak needs the cube. */
  cube?: boolean;
}

/** Seconds (a decimal number ≥ 0) as whole microseconds. */
export function parseSeconds(option: string, text: string): number {
  const s = text.trim();
  const v = Number(s);
  if (s === "" || !Number.isFinite(v) || v < 0) {
    throw new TraceAnalysisError(option, `expected seconds since the trace start, got '${text}'`);
  }
  return Math.round(v * 1e6);
}

/** `end`, `peak` or seconds since the trace start. */
export function parseLiveAt(text: string): "end" | "peak" | number {
  if (text === "end" || text === "peak") return text;
  return parseSeconds("live-at", text);
}

/** `MIN..MAX`, `MIN..`, `..MAX` or `N` (words). */
export function parseSize(text: string): { min?: number; max?: number } {
  const m = /^\s*(\d+)?\s*(\.\.)?\s*(\d+)?\s*$/.exec(text);
  if (m === null || (m[1] === undefined && m[3] === undefined) || (!m[2] && m[3] !== undefined)) {
    throw new TraceAnalysisError(
      "size",
      `expected MIN..MAX, MIN.., ..MAX or N words, got '${text}'`,
    );
  }
  const min = m[1] === undefined ? undefined : Number(m[1]);
  const max = m[2] ? (m[3] === undefined ? undefined : Number(m[3])) : min;
  if (min !== undefined && max !== undefined && min > max) {
    throw new TraceAnalysisError("size", `MIN ${min} is above MAX ${max}`);
  }
  return { min, max };
}

/** A comma-separated list of source names. */
export function parseSources(text: string): SourceName[] {
  return text.split(",").map((s) => {
    const name = s.trim();
    if (!(name in SOURCES)) {
      throw new TraceAnalysisError(
        "source",
        `expected minor, major or external (comma-separated), got '${text}'`,
      );
    }
    return name as SourceName;
  });
}

/** A comma-separated list of domain ids. */
export function parseDomains(text: string): number[] {
  return text.split(",").map((s) => {
    const v = Number(s.trim());
    if (s.trim() === "" || !Number.isInteger(v) || v < 0) {
      throw new TraceAnalysisError(
        "domain",
        `expected domain ids (comma-separated), got '${text}'`,
      );
    }
    return v;
  });
}

/** Checks a filter's fields; throws {@linkcode TraceAnalysisError} naming the first bad one. */
export function checkFilter(f: AnalysisFilter): void {
  const time = (name: string, v: number | undefined) => {
    if (v !== undefined && !(Number.isFinite(v) && v >= 0)) {
      throw new TraceAnalysisError(name, `expected a time ≥ 0 µs, got ${v}`);
    }
  };
  time("from", f.fromUs);
  time("to", f.toUs);
  if (typeof f.liveAt === "number") time("live-at", f.liveAt);
  else if (f.liveAt !== undefined && f.liveAt !== "end" && f.liveAt !== "peak") {
    throw new TraceAnalysisError("live-at", `expected end, peak or a time, got ${f.liveAt}`);
  }
  if (f.cube === false && f.liveAt === "peak") {
    throw new TraceAnalysisError(
      "live-at",
      "the live heap at the peak needs the cube (cube: true)",
    );
  }
  if (f.fromUs !== undefined && f.toUs !== undefined && f.fromUs >= f.toUs) {
    throw new TraceAnalysisError("to", `the window [${f.fromUs}, ${f.toUs}) µs is empty`);
  }
  for (const [name, v] of [["size", f.sizeMin], ["size", f.sizeMax]] as const) {
    if (v !== undefined && !(Number.isInteger(v) && v >= 0)) {
      throw new TraceAnalysisError(name, `expected a whole number of words, got ${v}`);
    }
  }
  for (const s of f.sources ?? []) {
    if (!(s in SOURCES)) throw new TraceAnalysisError("source", `unknown source ${s}`);
  }
  for (const d of f.domains ?? []) {
    if (!(Number.isInteger(d) && d >= 0)) throw new TraceAnalysisError("domain", `bad id ${d}`);
  }
}

/** The aggregation options a filter needs: its time window, exact live-at time and size bounds
 * (applied to each object's exact length while reading), how finely to keep lengths and whether
 * to keep the cube. */
export function aggregateOptionsOf(f: AnalysisFilter): AggregateOptions {
  return {
    fromUs: f.fromUs,
    toUs: f.toUs,
    liveAtUs: typeof f.liveAt === "number" ? f.liveAt : undefined,
    sizeMin: f.sizeMin,
    sizeMax: f.sizeMax,
    lengths: f.lengths,
    cube: f.cube ?? true,
  };
}

/** The selector applying a filter's other fields to a profile aggregated with
 * {@linkcode aggregateOptionsOf}. */
export function selectorOf(f: AnalysisFilter): Selector {
  const live: LiveMode = f.liveAt === undefined
    ? "alloc"
    : typeof f.liveAt === "number"
    ? "exact"
    : f.liveAt;
  return {
    domains: f.domains ?? null,
    sources: f.sources ? f.sources.map((s) => SOURCES[s]) : null,
    sizeMin: f.sizeMin ?? null,
    sizeMax: f.sizeMax ?? null,
    fn: f.function || null,
    exclude: f.exclude || null,
    fromBucket: null,
    toBucket: null,
    live,
    liveBucket: null,
  };
}

/** Checks `filter`, reads the trace once and returns the profile with the selector to apply. */
export function analyzeTrace(
  reader: TraceReader,
  filter: AnalysisFilter = {},
): { data: ProfileData; selector: Selector } {
  checkFilter(filter);
  return { data: aggregateTrace(reader, aggregateOptionsOf(filter)), selector: selectorOf(filter) };
}

/** {@linkcode analyzeTrace} as a pass the caller feeds with `reader`'s events (the filter is
 * checked at once). */
export function startAnalysis(
  reader: TraceReader,
  filter: AnalysisFilter = {},
): AnalysisPass<{ data: ProfileData; selector: Selector }> {
  checkFilter(filter);
  const pass = startAggregate(reader, aggregateOptionsOf(filter));
  return {
    onEvent: pass.onEvent,
    finish: () => ({ data: pass.finish(), selector: selectorOf(filter) }),
  };
}
