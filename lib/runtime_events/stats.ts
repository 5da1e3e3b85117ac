/**
 * Per-domain statistics of a ring file: event counts and runtime phase
 * durations (count, total, p50, p99, max), the figures olly's gc-stats gives.
 *
 * @module
 */

import { type CursorOptions, RuntimeEventsCursor } from "./consumer.ts";
import { phaseName } from "./enums.ts";

/** Durations of one runtime phase, in nanoseconds. */
export interface PhaseStats {
  /** Phase ordinal. */
  phase: number;
  /** Phase name as OCaml prints it. */
  name: string;
  /** Matched begin/end pairs. */
  count: number;
  /** Sum of the durations. */
  totalNs: number;
  /** Median duration (nearest rank). */
  p50Ns: number;
  /** 99th percentile duration (nearest rank). */
  p99Ns: number;
  /** Longest duration. */
  maxNs: number;
  /** `end`s without a `begin` (their begin was overwritten, or lost). */
  unmatchedEnds: number;
  /** `begin`s never closed (still open, or their end was lost). */
  unmatchedBegins: number;
}

/** What was read from one ring. */
export interface DomainStats {
  /** Ring index. */
  domain: number;
  /** Events delivered (every message except padding). */
  events: number;
  /** Phase begin events. */
  begins: number;
  /** Phase end events. */
  ends: number;
  /** Counter events. */
  counters: number;
  /** Alloc bucket events. */
  allocs: number;
  /** Lifecycle events. */
  lifecycles: number;
  /** User events of any type. */
  userEvents: number;
  /** Words of the messages read (padding excluded). */
  words: number;
  /** Overwritten ring words, summed over lost_events reports: OCaml's figure. */
  lostWords: number;
  /**
   * Estimate of the number of overwritten events: `lostWords` divided by the
   * mean message size read from this ring (an estimate: the lost messages
   * themselves cannot be read).
   */
  lostEventsEstimate: number;
  /** Durations by phase, in phase order. */
  phases: PhaseStats[];
}

/** Statistics of a whole file. */
export interface EventsStats {
  /** Rings that held events, in ring order. */
  domains: DomainStats[];
  /** Phase durations over all domains. */
  allPhases: PhaseStats[];
}

interface PhaseAcc {
  durations: number[];
  unmatchedEnds: number;
  unmatchedBegins: number;
  open: bigint[];
}

interface DomainAcc {
  stats: DomainStats;
  phases: Map<number, PhaseAcc>;
}

function percentile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)];
}

function summarize(phase: number, acc: PhaseAcc): PhaseStats {
  const sorted = Float64Array.from(acc.durations).sort();
  let total = 0;
  for (const d of sorted) total += d;
  return {
    phase,
    name: phaseName(phase),
    count: sorted.length,
    totalNs: total,
    p50Ns: percentile(sorted, 0.5),
    p99Ns: percentile(sorted, 0.99),
    maxNs: sorted.length ? sorted[sorted.length - 1] : 0,
    unmatchedEnds: acc.unmatchedEnds,
    unmatchedBegins: acc.unmatchedBegins + acc.open.length,
  };
}

/**
 * Reads every ring of `image` from position 0 (or, given a cursor, from its
 * positions: e.g. one reading a file on demand) and computes statistics.
 */
export function computeStats(
  image: Uint8Array | ArrayBuffer | RuntimeEventsCursor,
  options: CursorOptions = {},
): EventsStats {
  const cursor = image instanceof RuntimeEventsCursor
    ? image
    : new RuntimeEventsCursor(image, options);
  const byDomain = new Map<number, DomainAcc>();
  const get = (domain: number): DomainAcc => {
    let acc = byDomain.get(domain);
    if (acc === undefined) {
      acc = {
        stats: {
          domain,
          events: 0,
          begins: 0,
          ends: 0,
          counters: 0,
          allocs: 0,
          lifecycles: 0,
          userEvents: 0,
          words: 0,
          lostWords: 0,
          lostEventsEstimate: 0,
          phases: [],
        },
        phases: new Map(),
      };
      byDomain.set(domain, acc);
    }
    return acc;
  };
  const phaseAcc = (acc: DomainAcc, phase: number): PhaseAcc => {
    let p = acc.phases.get(phase);
    if (p === undefined) {
      p = { durations: [], unmatchedEnds: 0, unmatchedBegins: 0, open: [] };
      acc.phases.set(phase, p);
    }
    return p;
  };
  const user = (d: number) => {
    get(d).stats.userEvents++;
  };
  cursor.readAll({
    message: (d, _pos, words, isUser, type) => {
      if (isUser || type !== 0) get(d).stats.words += words;
    },
    runtimeBegin: (d, ts, phase) => {
      const acc = get(d);
      acc.stats.begins++;
      phaseAcc(acc, phase).open.push(ts);
    },
    runtimeEnd: (d, ts, phase) => {
      const acc = get(d);
      acc.stats.ends++;
      const p = phaseAcc(acc, phase);
      const start = p.open.pop();
      if (start === undefined) p.unmatchedEnds++;
      else p.durations.push(Number(ts - start));
    },
    runtimeCounter: (d) => {
      get(d).stats.counters++;
    },
    alloc: (d) => {
      get(d).stats.allocs++;
    },
    lifecycle: (d) => {
      get(d).stats.lifecycles++;
    },
    lostEvents: (d, words) => {
      const acc = get(d);
      acc.stats.lostWords += words;
      // Spans cannot be matched across a gap.
      for (const p of acc.phases.values()) {
        p.unmatchedBegins += p.open.length;
        p.open.length = 0;
      }
    },
    userUnit: user,
    userInt: user,
    userSpan: user,
    userCustom: user,
  });
  const domains: DomainStats[] = [];
  const all = new Map<number, PhaseAcc>();
  for (const domain of [...byDomain.keys()].sort((a, b) => a - b)) {
    const acc = byDomain.get(domain)!;
    const s = acc.stats;
    s.events = s.begins + s.ends + s.counters + s.allocs + s.lifecycles + s.userEvents;
    const mean = s.events > 0 ? s.words / s.events : 2;
    s.lostEventsEstimate = Math.round(s.lostWords / mean);
    for (const phase of [...acc.phases.keys()].sort((a, b) => a - b)) {
      const p = acc.phases.get(phase)!;
      s.phases.push(summarize(phase, p));
      let a = all.get(phase);
      if (a === undefined) {
        a = { durations: [], unmatchedEnds: 0, unmatchedBegins: 0, open: [] };
        all.set(phase, a);
      }
      // One by one: spreading a large array into push's arguments overflows the stack.
      for (const d of p.durations) a.durations.push(d);
      a.unmatchedEnds += p.unmatchedEnds;
      a.unmatchedBegins += p.unmatchedBegins + p.open.length;
    }
    domains.push(s);
  }
  const allPhases = [...all.keys()].sort((a, b) => a - b).map((k) => summarize(k, all.get(k)!));
  return { domains, allPhases };
}

/** The columns of a phase table: {@linkcode PhaseStats}'s keys, as `--json` names them. */
const PHASE_COLUMNS = [
  "name",
  "count",
  "totalNs",
  "p50Ns",
  "p99Ns",
  "maxNs",
  "unmatchedBegins",
  "unmatchedEnds",
] as const satisfies readonly (keyof PhaseStats)[];

function phaseTable(phases: PhaseStats[], indent: string): string[] {
  const rows: string[][] = [[...PHASE_COLUMNS]];
  for (const p of phases) rows.push(PHASE_COLUMNS.map((k) => String(p[k])));
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  return rows.map((r) =>
    indent +
    r.map((cell, c) => c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c])).join("  ")
      .trimEnd()
  );
}

/**
 * Renders statistics as the text `events stats` prints. Every figure is labelled with its key
 * in {@linkcode EventsStats} (what `events stats --json` prints): `domain N: events …`, the
 * phase tables' columns, `allPhases:`.
 */
export function formatStats(stats: EventsStats): string {
  const out: string[] = [];
  for (const s of stats.domains) {
    out.push(
      `domain ${s.domain}: events ${s.events} (begins ${s.begins}, ends ${s.ends}, ` +
        `counters ${s.counters}, allocs ${s.allocs}, lifecycles ${s.lifecycles}, ` +
        `userEvents ${s.userEvents}; words ${s.words})`,
    );
    out.push(
      `  lostWords ${s.lostWords} (ring words: OCaml's lost_events figure); ` +
        `lostEventsEstimate ${s.lostEventsEstimate} (events: words / mean message size)`,
    );
    if (s.phases.length) out.push(...phaseTable(s.phases, "  "));
  }
  if (stats.domains.length > 1 && stats.allPhases.length) {
    out.push("allPhases:");
    out.push(...phaseTable(stats.allPhases, "  "));
  }
  out.push(
    "domain is the ring index; durations in nanoseconds; unmatchedBegins: begins without " +
      "their end, unmatchedEnds: ends without their begin",
  );
  return out.join("\n") + "\n";
}
