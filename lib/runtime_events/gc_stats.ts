/**
 * GC statistics of a ring file, the figures olly's `gc-stats` gives for a
 * running program, computed exactly from the events: wall span covered, GC
 * time per domain, the distribution of GC pauses (exact nearest-rank
 * percentiles), allocated words from the counters, collection counts and lost
 * events.
 *
 * What counts as a pause is a {@linkcode PauseRule}:
 *
 * - `"gc"` (default): on each ring, a pause is the outermost span of any
 *   runtime phase except `explicit_gc_set`, `explicit_gc_stat` and
 *   `domain_condition_wait` (which are not collections: a `Gc.set`, a
 *   `Gc.stat`, a domain blocked on a condition). Phases nested in a pause
 *   belong to it; phases outside the set neither start nor end pauses, so a
 *   stop-the-world handler run while a domain waits on a condition is a pause.
 *   Begins and ends are matched with one stack per ring.
 * - `"olly"`: olly's rule (runtime_events_tools, OCaml 5.3 shim): on each ring
 *   at most one pause is open; a begin of `major`, `stw_leader` or
 *   `interrupt_remote` opens it when none is open; an end of the same phase
 *   closes it. Stop-the-world handlers and explicit `Gc` calls are not pauses.
 *
 * A pause whose end is not in the file (overwritten, or still running at the
 * end of the file) is not measured: it is counted in `incompletePauses`. After
 * lost events on a ring the open pause of that ring is dropped the same way.
 *
 * @module
 */

import { type ConsumerCallbacks, type CursorOptions, RuntimeEventsCursor } from "./consumer.ts";
import { Lifecycle, phaseName, RuntimeCounter, RuntimePhase } from "./enums.ts";
import { type Distribution, distribution, GC_STATS_PERCENTILES } from "./_percentiles.ts";

export { type Distribution, GC_STATS_PERCENTILES, type PercentileValue } from "./_percentiles.ts";

/** Which phases make a GC pause; see the module documentation. */
export type PauseRule = "gc" | "olly";

/** Phases that are never pauses under the `"gc"` rule. */
export const NON_PAUSE_PHASES: readonly number[] = Object.freeze([
  RuntimePhase.EV_EXPLICIT_GC_SET,
  RuntimePhase.EV_EXPLICIT_GC_STAT,
  RuntimePhase.EV_DOMAIN_CONDITION_WAIT,
]);

/** The phases olly's gc-stats measures as pauses. */
export const OLLY_PAUSE_PHASES: readonly number[] = Object.freeze([
  RuntimePhase.EV_MAJOR,
  RuntimePhase.EV_STW_LEADER,
  RuntimePhase.EV_INTERRUPT_REMOTE,
]);

/** How the minor GC counters are read. */
export type CounterUnits = "bytes" | "words";

/** Options of {@linkcode GcStatsCollector} and {@linkcode computeGcStats}. */
export interface GcStatsOptions {
  /** Pause rule (default `"gc"`). */
  pauses?: PauseRule;
  /**
   * Unit of the `minor_allocated` and `minor_promoted` counters. OCaml 5.3
   * writes bytes (default `"bytes"`: each value is divided by 8, rounding
   * down, as olly does); `"words"` takes the values as they are.
   * `major_allocated_words` is always in words.
   */
  counterUnits?: CounterUnits;
  /** Percentiles to report (default {@linkcode GC_STATS_PERCENTILES}). */
  percentiles?: readonly string[];
}

/** Figures of one ring. Times in nanoseconds. */
export interface DomainGcStats {
  /** Ring index. */
  domain: number;
  /** Events read from this ring (lost data excluded). */
  events: number;
  /** Timestamp of the first event read, or null. */
  firstNs: number | null;
  /** Timestamp of the last event read, or null. */
  lastNs: number | null;
  /** `lastNs − firstNs`. */
  spanNs: number;
  /** Sum of this ring's measured pauses. */
  gcNs: number;
  /** `gcNs` as a percentage of `spanNs` (0 when the span is 0). */
  gcPercent: number;
  /** Measured pauses. */
  pauses: number;
  /** Pauses begun whose end is not in the file. */
  incompletePauses: number;
  /** Words allocated in the minor heap (from `minor_allocated`). */
  minorWords: number;
  /** Words promoted (from `minor_promoted`). */
  promotedWords: number;
  /** Words allocated directly in the major heap (from `major_allocated_words`). */
  majorWords: number;
  /** Overwritten ring words reported by the consumer (OCaml's lost_events figure). */
  lostWords: number;
}

/** GC statistics of a ring file (see {@linkcode computeGcStats}). Times in nanoseconds. */
export interface GcStats {
  /** The pause rule used. */
  pauseRule: PauseRule;
  /** Names of the phases that can open a pause under that rule. */
  pausePhases: string[];
  /** How the minor counters were read. */
  counterUnits: CounterUnits;
  /** Events read (lost data excluded). */
  events: number;
  /** Time covered by the events read. */
  span: {
    /** Earliest timestamp on any ring, or null when there are no events. */
    firstNs: number | null;
    /** Latest timestamp on any ring, or null. */
    lastNs: number | null;
    /** `lastNs − firstNs`. */
    wallNs: number;
    /** Timestamp of EV_RING_START, when it is still in the file. */
    ringStartNs: number | null;
    /** Timestamp of EV_RING_STOP, when present. */
    ringStopNs: number | null;
  };
  /** Sum of all measured pauses. */
  gcTimeNs: number;
  /** `gcTimeNs` as a percentage of the sum of the rings' spans. */
  gcPercent: number;
  /** Rings with events, in ring order. */
  domains: DomainGcStats[];
  /** Distribution of the measured pauses, in nanoseconds. */
  latency: Distribution;
  /** Pauses begun whose end is not in the file (all rings). */
  incompletePauses: number;
  /** Allocated words, all rings. */
  allocations: {
    /** Minor heap allocations. */
    minorWords: number;
    /** Promoted to the major heap by minor collections. */
    promotedWords: number;
    /** Allocated directly in the major heap. */
    majorWords: number;
    /** `minor − promoted + major`, olly's "total heap". */
    totalWords: number;
    /** `promoted / minor` in per cent (0 when nothing was allocated). */
    promotedPercent: number;
  };
  /**
   * Collections, counted on ring 0 as olly does (every domain takes part in
   * a minor collection, so each ring logs its own EV_MINOR): minor =
   * `minor` begins, major = `major_gc_stw` begins (the end of a major
   * cycle), forced major = `explicit_gc_major` + `explicit_gc_full_major`,
   * compactions = `explicit_gc_compact` begins.
   */
  collections: { minor: number; major: number; forcedMajor: number; compactions: number };
  /** Overwritten ring words, all rings (OCaml's lost_events figure). */
  lostWords: number;
  /** True when no event was lost: the figures cover the whole run recorded. */
  complete: boolean;
}

interface DomainAcc {
  domain: number;
  events: number;
  first: bigint | null;
  last: bigint | null;
  gcNs: number;
  pauses: number;
  incomplete: number;
  minorWords: number;
  promotedWords: number;
  majorWords: number;
  lostWords: number;
  /** Open phases, innermost last ("gc" rule). */
  stack: number[];
  /** Stack index of the phase that opened the current pause, or -1. */
  pauseAt: number;
  /** Open olly pause phase, or -1. */
  ollyPhase: number;
  /** Start of the open pause. */
  pauseStart: bigint;
}

/**
 * Accumulates GC statistics from consumer callbacks, so the same figures can
 * be computed over a whole file or kept up to date while following a running
 * program. Pass {@linkcode GcStatsCollector.callbacks} to a cursor.
 */
export class GcStatsCollector {
  /** Callbacks to give to a cursor's `readPoll`/`readAll`. */
  readonly callbacks: ConsumerCallbacks;
  /** Durations of the measured pauses (ns), in the order they ended. */
  readonly pauseDurations: number[] = [];
  /** Collections counted so far (see {@linkcode GcStats.collections}). */
  readonly collections = { minor: 0, major: 0, forcedMajor: 0, compactions: 0 };
  #rule: PauseRule;
  #units: CounterUnits;
  #percentiles: readonly string[];
  #isPause: Uint8Array;
  #domains = new Map<number, DomainAcc>();
  #ringStart: bigint | null = null;
  #ringStop: bigint | null = null;

  /** Makes an empty collector. */
  constructor(options: GcStatsOptions = {}) {
    this.#rule = options.pauses ?? "gc";
    if (this.#rule !== "gc" && this.#rule !== "olly") {
      throw new RangeError(`unknown pause rule "${this.#rule}" (gc or olly)`);
    }
    this.#units = options.counterUnits ?? "bytes";
    this.#percentiles = options.percentiles ?? GC_STATS_PERCENTILES;
    // Phase ordinals are 13-bit ids in the header word.
    this.#isPause = new Uint8Array(1 << 13);
    if (this.#rule === "olly") {
      for (const p of OLLY_PAUSE_PHASES) this.#isPause[p] = 1;
    } else {
      this.#isPause.fill(1);
      for (const p of NON_PAUSE_PHASES) this.#isPause[p] = 0;
    }
    const touch = (d: number, ts: bigint): DomainAcc => {
      const acc = this.#domain(d);
      acc.events++;
      if (acc.first === null || ts < acc.first) acc.first = ts;
      if (acc.last === null || ts > acc.last) acc.last = ts;
      return acc;
    };
    this.callbacks = {
      runtimeBegin: (d, ts, phase) => this.#begin(touch(d, ts), ts, phase),
      runtimeEnd: (d, ts, phase) => this.#end(touch(d, ts), ts, phase),
      runtimeCounter: (d, ts, counter, value) => this.#counter(touch(d, ts), counter, value),
      alloc: (d, ts) => void touch(d, ts),
      lifecycle: (d, ts, event) => {
        touch(d, ts);
        if (event === Lifecycle.EV_RING_START && this.#ringStart === null) this.#ringStart = ts;
        if (event === Lifecycle.EV_RING_STOP) this.#ringStop = ts;
      },
      lostEvents: (d, words) => this.#lost(this.#domain(d), words),
      userUnit: (d, ts) => void touch(d, ts),
      userInt: (d, ts) => void touch(d, ts),
      userSpan: (d, ts) => void touch(d, ts),
      userCustom: (d, ts) => void touch(d, ts),
    };
  }

  #domain(d: number): DomainAcc {
    let acc = this.#domains.get(d);
    if (acc === undefined) {
      acc = {
        domain: d,
        events: 0,
        first: null,
        last: null,
        gcNs: 0,
        pauses: 0,
        incomplete: 0,
        minorWords: 0,
        promotedWords: 0,
        majorWords: 0,
        lostWords: 0,
        stack: [],
        pauseAt: -1,
        ollyPhase: -1,
        pauseStart: 0n,
      };
      this.#domains.set(d, acc);
    }
    return acc;
  }

  #record(acc: DomainAcc, ns: number): void {
    acc.gcNs += ns;
    acc.pauses++;
    this.pauseDurations.push(ns);
  }

  #begin(acc: DomainAcc, ts: bigint, phase: number): void {
    if (acc.domain === 0) {
      const c = this.collections;
      if (phase === RuntimePhase.EV_MINOR) c.minor++;
      else if (phase === RuntimePhase.EV_MAJOR_GC_STW) c.major++;
      else if (
        phase === RuntimePhase.EV_EXPLICIT_GC_MAJOR ||
        phase === RuntimePhase.EV_EXPLICIT_GC_FULL_MAJOR
      ) c.forcedMajor++;
      else if (phase === RuntimePhase.EV_EXPLICIT_GC_COMPACT) c.compactions++;
    }
    if (this.#rule === "olly") {
      if (acc.ollyPhase < 0 && this.#isPause[phase]) {
        acc.ollyPhase = phase;
        acc.pauseStart = ts;
      }
      return;
    }
    acc.stack.push(phase);
    if (acc.pauseAt < 0 && this.#isPause[phase]) {
      acc.pauseAt = acc.stack.length - 1;
      acc.pauseStart = ts;
    }
  }

  #end(acc: DomainAcc, ts: bigint, phase: number): void {
    if (this.#rule === "olly") {
      if (acc.ollyPhase >= 0 && acc.ollyPhase === phase) {
        acc.ollyPhase = -1;
        this.#record(acc, Number(ts - acc.pauseStart));
      }
      return;
    }
    const at = acc.stack.lastIndexOf(phase);
    if (at < 0) return; // its begin was lost or precedes the file
    acc.stack.length = at;
    if (acc.pauseAt < 0 || at > acc.pauseAt) return;
    if (at === acc.pauseAt) this.#record(acc, Number(ts - acc.pauseStart));
    else acc.incomplete++; // an enclosing phase ended first: the pause's own end is missing
    acc.pauseAt = -1;
  }

  #counter(acc: DomainAcc, counter: number, value: bigint): void {
    const v = Number(value);
    const bytes = this.#units === "bytes";
    switch (counter) {
      case RuntimeCounter.EV_C_MINOR_ALLOCATED:
        acc.minorWords += bytes ? Math.floor(v / 8) : v;
        break;
      case RuntimeCounter.EV_C_MINOR_PROMOTED:
        acc.promotedWords += bytes ? Math.floor(v / 8) : v;
        break;
      case RuntimeCounter.EV_C_MAJOR_ALLOCATED_WORDS:
        acc.majorWords += v;
        break;
    }
  }

  #lost(acc: DomainAcc, words: number): void {
    acc.lostWords += words;
    // Ends in the lost data cannot be matched: drop what was open ("gc" rule;
    // olly keeps its open pause, and so do we under its rule).
    if (this.#rule === "gc") {
      if (acc.pauseAt >= 0) acc.incomplete++;
      acc.pauseAt = -1;
      acc.stack.length = 0;
    }
  }

  /** Statistics of everything seen so far; pauses still open count as incomplete. */
  snapshot(): GcStats {
    const domains: DomainGcStats[] = [];
    let first: bigint | null = null;
    let last: bigint | null = null;
    let gcTimeNs = 0;
    let spans = 0;
    let incomplete = 0;
    let events = 0;
    let lostWords = 0;
    const alloc = { minorWords: 0, promotedWords: 0, majorWords: 0 };
    for (const d of [...this.#domains.keys()].sort((a, b) => a - b)) {
      const a = this.#domains.get(d)!;
      const open = (this.#rule === "gc" ? a.pauseAt >= 0 : a.ollyPhase >= 0) ? 1 : 0;
      const spanNs = a.first === null ? 0 : Number(a.last! - a.first);
      if (a.first !== null && (first === null || a.first < first)) first = a.first;
      if (a.last !== null && (last === null || a.last > last)) last = a.last;
      gcTimeNs += a.gcNs;
      spans += spanNs;
      incomplete += a.incomplete + open;
      events += a.events;
      lostWords += a.lostWords;
      alloc.minorWords += a.minorWords;
      alloc.promotedWords += a.promotedWords;
      alloc.majorWords += a.majorWords;
      domains.push({
        domain: d,
        events: a.events,
        firstNs: a.first === null ? null : Number(a.first),
        lastNs: a.last === null ? null : Number(a.last),
        spanNs,
        gcNs: a.gcNs,
        gcPercent: spanNs > 0 ? (a.gcNs * 100) / spanNs : 0,
        pauses: a.pauses,
        incompletePauses: a.incomplete + open,
        minorWords: a.minorWords,
        promotedWords: a.promotedWords,
        majorWords: a.majorWords,
        lostWords: a.lostWords,
      });
    }
    return {
      pauseRule: this.#rule,
      pausePhases: pausePhaseNames(this.#rule),
      counterUnits: this.#units,
      events,
      span: {
        firstNs: first === null ? null : Number(first),
        lastNs: last === null ? null : Number(last),
        wallNs: first === null ? 0 : Number(last! - first),
        ringStartNs: this.#ringStart === null ? null : Number(this.#ringStart),
        ringStopNs: this.#ringStop === null ? null : Number(this.#ringStop),
      },
      gcTimeNs,
      gcPercent: spans > 0 ? (gcTimeNs * 100) / spans : 0,
      domains,
      latency: distribution(this.pauseDurations, this.#percentiles),
      incompletePauses: incomplete,
      allocations: {
        ...alloc,
        totalWords: alloc.minorWords - alloc.promotedWords + alloc.majorWords,
        promotedPercent: alloc.minorWords > 0 ? (alloc.promotedWords * 100) / alloc.minorWords : 0,
      },
      collections: { ...this.collections },
      lostWords,
      complete: lostWords === 0,
    };
  }

  /** Totals that grow monotonically, for rolling summaries (see `watch --stats`). */
  totals(): {
    events: number;
    pauses: number;
    gcNs: number;
    minorWords: number;
    promotedWords: number;
    majorWords: number;
    lostWords: number;
  } {
    const t = {
      events: 0,
      pauses: this.pauseDurations.length,
      gcNs: 0,
      minorWords: 0,
      promotedWords: 0,
      majorWords: 0,
      lostWords: 0,
    };
    for (const a of this.#domains.values()) {
      t.events += a.events;
      t.gcNs += a.gcNs;
      t.minorWords += a.minorWords;
      t.promotedWords += a.promotedWords;
      t.majorWords += a.majorWords;
      t.lostWords += a.lostWords;
    }
    return t;
  }
}

/** Names of the phases that can open a pause under `rule`, in phase order. */
export function pausePhaseNames(rule: PauseRule): string[] {
  if (rule === "olly") return [...OLLY_PAUSE_PHASES].sort((a, b) => a - b).map(phaseName);
  const out: string[] = [];
  for (let p = 0; p <= RuntimePhase.EV_COMPACT_RELEASE; p++) {
    if (!NON_PAUSE_PHASES.includes(p)) out.push(phaseName(p));
  }
  return out;
}

/**
 * Reads every ring of `image` from position 0 (as a fresh OCaml cursor does;
 * or, given a cursor, from its positions: e.g. one reading a file on demand,
 * window by window) and computes its GC statistics. Throws
 * `RuntimeEventsFormatError` on a corrupt image.
 */
export function computeGcStats(
  image: Uint8Array | ArrayBuffer | RuntimeEventsCursor,
  options: GcStatsOptions & CursorOptions = {},
): GcStats {
  const collector = new GcStatsCollector(options);
  const cursor = image instanceof RuntimeEventsCursor
    ? image
    : new RuntimeEventsCursor(image, options);
  cursor.readAll(collector.callbacks);
  return collector.snapshot();
}

function ms(ns: number): string {
  return (ns / 1e6).toFixed(3);
}

/** A figure in nanoseconds (a mean can have a fraction: one decimal), with milliseconds after
 * it for a reader. */
function ns(value: number, { withMs = false } = {}): string {
  const text = Number.isInteger(value) ? String(value) : value.toFixed(1);
  return withMs ? `${text} (${ms(value)} ms)` : text;
}

function table(rows: string[][], indent: string): string[] {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  return rows.map((r) =>
    indent + r.map((cell, c) => c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))
      .join("  ").trimEnd()
  );
}

/** The columns of the per-domain table: {@linkcode DomainGcStats}'s keys. */
const DOMAIN_COLUMNS = [
  "domain",
  "events",
  "spanNs",
  "gcNs",
  "gcPercent",
  "pauses",
  "incompletePauses",
  "minorWords",
  "promotedWords",
  "majorWords",
  "lostWords",
] as const satisfies readonly (keyof DomainGcStats)[];

/**
 * Renders statistics as the text `events gc-stats` prints. Every figure is labelled with its
 * key in {@linkcode GcStats} (what `events gc-stats --json` prints), in the same units
 * (nanoseconds, words, per cent rounded to two decimals); long durations also show in ms.
 */
export function formatGcStats(s: GcStats, title?: string): string {
  const out: string[] = [];
  if (title !== undefined) out.push(`GC statistics of ${title}`);
  const sp = s.span;
  const opt = (v: number | null) => (v === null ? "null" : String(v));
  out.push(
    `span: firstNs ${opt(sp.firstNs)}, lastNs ${opt(sp.lastNs)}, wallNs ${
      ns(sp.wallNs, { withMs: true })
    }, ringStartNs ${opt(sp.ringStartNs)}, ringStopNs ${opt(sp.ringStopNs)}`,
  );
  out.push(
    `events ${s.events}; lostWords ${s.lostWords}; complete ${s.complete} ` +
      (s.complete
        ? "(the figures cover the whole recording)"
        : `(words lost on ring(s) ${
          s.domains.filter((d) => d.lostWords > 0).map((d) => d.domain).join(", ")
        }: the figures cover only what was left in the rings)`),
  );
  out.push(
    `gcTimeNs ${ns(s.gcTimeNs, { withMs: true })}; gcPercent ${
      s.gcPercent.toFixed(2)
    } (of the rings' spans)`,
  );
  if (s.domains.length > 0) {
    out.push("domains:");
    const rows: string[][] = [[...DOMAIN_COLUMNS]];
    for (const d of s.domains) {
      rows.push(
        DOMAIN_COLUMNS.map((k) => k === "gcPercent" ? d.gcPercent.toFixed(2) : String(d[k])),
      );
    }
    out.push(...table(rows, "  "));
  }
  out.push(`pauseRule ${s.pauseRule}; pausePhases ${s.pausePhases.join(",")}`);
  const l = s.latency;
  out.push(
    `latency: count ${l.count}, total ${ns(l.total)}, mean ${ns(l.mean)}, stddev ${
      ns(l.stddev)
    }, min ${ns(l.min)}, max ${ns(l.max)}; incompletePauses ${s.incompletePauses}`,
  );
  const prow = [["percentile", "rank", "value"]];
  for (const p of l.percentiles) prow.push([p.percentile, String(p.rank), ns(p.value)]);
  out.push(...table(prow, "  "));
  const a = s.allocations;
  out.push(
    `allocations: minorWords ${a.minorWords}, promotedWords ${a.promotedWords}, ` +
      `promotedPercent ${a.promotedPercent.toFixed(2)}, majorWords ${a.majorWords}, ` +
      `totalWords ${a.totalWords}`,
  );
  out.push(
    `counterUnits ${s.counterUnits}` +
      (s.counterUnits === "bytes" ? " (minor counters read as bytes, / 8)" : ""),
  );
  const c = s.collections;
  out.push(
    `collections: minor ${c.minor}, major ${c.major}, forcedMajor ${c.forcedMajor}, ` +
      `compactions ${c.compactions} (counted on ring 0)`,
  );
  out.push(
    "durations in nanoseconds; percentiles are nearest-rank over the measured pauses: " +
      "the value of rank ceil(p/100 * count)",
  );
  return out.join("\n") + "\n";
}
