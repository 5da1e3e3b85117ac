/**
 * Comparing the simulation's runtime_events ring with the one the real program writes
 * (`deno task diff --rings`, docs/differential.md, "Rings").
 *
 * Each ring is read into canonical lines, one per event, without timestamps:
 *
 * ```
 * begin minor
 * counter minor_promoted 192
 * counter major_work_counter +4096
 * lifecycle ring_pause
 * user "service.request" span begin
 * ```
 *
 * Counters whose value depends on the process's whole history (`major_work_counter`,
 * `major_alloc_counter`, `major_slice_target`: global totals since the program started, its
 * initialisation included, which the simulation does not run) are compared as the change since
 * their first value on the ring (`+N`); every other counter as its value. Timestamps and
 * durations are left aside (they feed the timing calibration, {@linkcode phaseDurations}).
 *
 * The real program runs with `OCAML_RUNTIME_EVENTS_START` (its ring starts at initialisation)
 * and is exported with `ringMarks`: its ring 0 holds the program's initialisation, the run, a
 * `ring_pause`/`ring_resume` mark where the run ended, then the printing of its log. The run
 * is what lies between the end of the harness's `Gc.minor ()` (the first `explicit_gc_minor`
 * after its `Gc.full_major ()`) and the mark; other rings keep the events timed within it. The
 * simulation, run with `ringFromStart`, records the run only (its first event, `ring_start`,
 * stands for the real ring's start at initialisation and is left out).
 *
 * @module
 */

import {
  type ConsumerCallbacks,
  counterName,
  Lifecycle,
  lifecycleName,
  phaseName,
  RuntimeCounter,
  RuntimeEventsCursor,
  RuntimePhase,
} from "../runtime_events/mod.ts";
import { ocamlQuote } from "../util/ocaml_printf.ts";
import type { LinesApart } from "./compare.ts";

/** One event of a ring, canonical. */
export interface RingEvent {
  /** The canonical line (see the module documentation). */
  readonly line: string;
  /** Timestamp (ns). */
  readonly ts: bigint;
  /** For phase begins and ends, the phase; else -1. */
  readonly phase: number;
  /** Whether the event begins (1), ends (−1) a phase, or neither (0). */
  readonly nesting: 1 | -1 | 0;
  /** For lifecycle events, the event; else -1. */
  readonly lifecycle: number;
}

/** A ring image read into events, per ring index. */
export interface RingRecord {
  /** Events of each ring with events, by ring index. */
  readonly rings: ReadonlyMap<number, readonly RingEvent[]>;
  /** Ring words lost (overwritten before the reading). */
  readonly lostWords: number;
}

/** Counters compared as their change since their first value on the ring. */
export const HISTORY_COUNTERS: readonly number[] = Object.freeze([
  RuntimeCounter.EV_C_MAJOR_WORK_COUNTER,
  RuntimeCounter.EV_C_MAJOR_ALLOC_COUNTER,
  RuntimeCounter.EV_C_MAJOR_SLICE_TARGET,
]);

/**
 * Counters left out of the comparison: the heap's statistics that a major cycle's end reports
 * (`caml_collect_heap_stats_sample`: pool and large words, live words and blocks in pools,
 * fragmentation), which the simulation's heap model does not track block by block, so it does
 * not write them. A deliberate difference (docs/differential.md, "Rings").
 */
export const UNMODELLED_COUNTERS: readonly number[] = Object.freeze([
  RuntimeCounter.EV_C_MAJOR_HEAP_POOL_WORDS,
  RuntimeCounter.EV_C_MAJOR_HEAP_POOL_LIVE_WORDS,
  RuntimeCounter.EV_C_MAJOR_HEAP_LARGE_WORDS,
  RuntimeCounter.EV_C_MAJOR_HEAP_POOL_FRAG_WORDS,
  RuntimeCounter.EV_C_MAJOR_HEAP_POOL_LIVE_BLOCKS,
  RuntimeCounter.EV_C_MAJOR_HEAP_LARGE_BLOCKS,
]);

/** Reads every ring of `image` (from position 0, as a fresh cursor does) into events, but the
 * {@linkcode UNMODELLED_COUNTERS}; {@linkcode canonicalLines} gives their lines. */
export function readRings(image: Uint8Array | ArrayBuffer): RingRecord {
  const rings = new Map<number, RingEvent[]>();
  let lostWords = 0;
  const push = (d: number, e: RingEvent) => {
    let r = rings.get(d);
    if (r === undefined) rings.set(d, r = []);
    r.push(e);
  };
  const ev = (line: string, ts: bigint, extra: Partial<RingEvent> = {}): RingEvent => ({
    line,
    ts,
    phase: -1,
    nesting: 0,
    lifecycle: -1,
    ...extra,
  });
  const callbacks: ConsumerCallbacks = {
    runtimeBegin: (d, ts, p) => push(d, ev(`begin ${phaseName(p)}`, ts, { phase: p, nesting: 1 })),
    runtimeEnd: (d, ts, p) => push(d, ev(`end ${phaseName(p)}`, ts, { phase: p, nesting: -1 })),
    runtimeCounter: (d, ts, c, v) => {
      if (!UNMODELLED_COUNTERS.includes(c)) push(d, ev(`counter ${counterName(c)} ${v}`, ts));
    },
    alloc: (d, ts, buckets) => push(d, ev(`alloc [${buckets.join(";")}]`, ts)),
    lifecycle: (d, ts, e, data) =>
      push(
        d,
        ev(
          // The pid and the domain ids of spawn lifecycle events are the process's own.
          `lifecycle ${lifecycleName(e)}${
            data === null || e === Lifecycle.EV_RING_START || e === Lifecycle.EV_DOMAIN_SPAWN
              ? ""
              : ` ${data}`
          }`,
          ts,
          { lifecycle: e },
        ),
      ),
    lostEvents: (_d, words) => {
      lostWords += words;
    },
    userUnit: (d, ts, e) => push(d, ev(`user ${ocamlQuote(e.nameBytes)} unit`, ts)),
    userInt: (d, ts, e, v) => push(d, ev(`user ${ocamlQuote(e.nameBytes)} int ${v}`, ts)),
    userSpan: (d, ts, e, s) => push(d, ev(`user ${ocamlQuote(e.nameBytes)} span ${s}`, ts)),
    userCustom: (d, ts, e, payload) =>
      push(d, ev(`user ${ocamlQuote(e.nameBytes)} custom ${[...payload].join(",")}`, ts)),
  };
  new RuntimeEventsCursor(image).readAll(callbacks);
  return { rings, lostWords };
}

const HISTORY_NAMES = new Set(HISTORY_COUNTERS.map((c) => counterName(c)));

/** The events' lines with history counters as changes since their first value. */
export function canonicalLines(events: readonly RingEvent[]): string[] {
  const first = new Map<string, bigint>();
  return events.map((e) => {
    const m = /^counter (\S+) (\d+)$/.exec(e.line);
    if (m === null || !HISTORY_NAMES.has(m[1])) return e.line;
    const v = BigInt(m[2]);
    const f = first.get(m[1]);
    if (f === undefined) first.set(m[1], v);
    return `counter ${m[1]} +${f === undefined ? 0n : v - f}`;
  });
}

/** The run's part of each ring (see the module documentation). */
export type RingWindow = ReadonlyMap<number, readonly RingEvent[]>;

/** A real ring that does not have the marks of an exported program run for `--rings`. */
export class RingWindowError extends Error {
  /** Error class name. */
  override name = "RingWindowError";
}

/** The run's events in the real program's ring `rec` (see the module documentation). */
export function realRunWindow(rec: RingRecord): RingWindow {
  const r0 = rec.rings.get(0) ?? [];
  const full = r0.findIndex((e) =>
    e.nesting === -1 && e.phase === RuntimePhase.EV_EXPLICIT_GC_FULL_MAJOR
  );
  if (full < 0) throw new RingWindowError("ring 0 has no end of the harness's Gc.full_major");
  const minor = r0.findIndex((e, i) =>
    i > full && e.nesting === -1 && e.phase === RuntimePhase.EV_EXPLICIT_GC_MINOR
  );
  if (minor < 0) throw new RingWindowError("ring 0 has no end of the harness's Gc.minor");
  let resume = -1;
  for (let i = r0.length - 1; i > minor; i--) {
    if (r0[i].lifecycle === Lifecycle.EV_RING_RESUME) {
      resume = i;
      break;
    }
  }
  if (resume < 0) throw new RingWindowError("ring 0 has no ring_resume mark after the run");
  // The mark is pause + resume; when the run ended paused, only the resume is written.
  const end = r0[resume - 1]?.lifecycle === Lifecycle.EV_RING_PAUSE ? resume - 1 : resume;
  const from = r0[minor].ts, to = r0[end].ts;
  const out = new Map<number, RingEvent[]>([[0, r0.slice(minor + 1, end)]]);
  for (const [d, events] of rec.rings) {
    if (d === 0) continue;
    const kept = events.filter((e) => e.ts > from && e.ts < to);
    if (kept.length > 0) out.set(d, kept);
  }
  return out;
}

/** The run's events in the simulation's ring `rec`, run with `ringFromStart`: everything but
 * ring 0's first `ring_start`. */
export function simulatedRunWindow(rec: RingRecord): RingWindow {
  const out = new Map<number, readonly RingEvent[]>();
  for (const [d, events] of rec.rings) {
    const kept = d === 0 && events[0]?.lifecycle === Lifecycle.EV_RING_START
      ? events.slice(1)
      : events;
    if (kept.length > 0) out.set(d, kept);
  }
  return out;
}

/** Where the rings first part. */
export type RingDifference =
  | {
    readonly kind: "event";
    /** The ring (domain index); `index` numbers the events of that ring. */
    readonly ring: number;
  } & LinesApart
  | {
    readonly kind: "nesting";
    readonly side: "simulation" | "real";
    readonly ring: number;
    readonly index: number;
    readonly problem: string;
  }
  | { readonly kind: "lost"; readonly side: "simulation" | "real"; readonly words: number };

/** The result of {@linkcode compareRings}. */
export interface RingComparison {
  /** Events compared on each ring (up to and including the first difference). */
  readonly compared: number;
  /** Rings compared. */
  readonly rings: number;
  /** The first difference, or undefined when the rings agree. */
  readonly difference?: RingDifference;
}

/** The first place where the phases of `events` do not nest (an end that is not the innermost
 * open phase's, or a phase left open), or undefined. */
export function nestingProblem(
  events: readonly RingEvent[],
): { index: number; problem: string } | undefined {
  const open: number[] = [];
  for (let i = 0; i < events.length; i++) {
    const e = events[i];
    if (e.nesting === 1) open.push(e.phase);
    else if (e.nesting === -1) {
      const top = open.pop();
      if (top !== e.phase) {
        return {
          index: i + 1,
          problem: `end ${phaseName(e.phase)} while ${
            top === undefined ? "no phase" : phaseName(top)
          } is open`,
        };
      }
    }
  }
  if (open.length > 0) {
    return {
      index: events.length,
      problem: `${open.map(phaseName).join(", ")} still open at the end`,
    };
  }
  return undefined;
}

/** Compares two runs' windows ring by ring, in ring order: the lost words, the events line by
 * line, then the phases' nesting. */
export function compareRings(
  sim: { readonly window: RingWindow; readonly lostWords: number },
  real: { readonly window: RingWindow; readonly lostWords: number },
  options: { readonly context?: number } = {},
): RingComparison {
  const context = options.context ?? 3;
  if (sim.lostWords > 0) {
    return {
      compared: 0,
      rings: 0,
      difference: { kind: "lost", side: "simulation", words: sim.lostWords },
    };
  }
  if (real.lostWords > 0) {
    return {
      compared: 0,
      rings: 0,
      difference: { kind: "lost", side: "real", words: real.lostWords },
    };
  }
  const ids = [...new Set([...sim.window.keys(), ...real.window.keys()])].sort((a, b) => a - b);
  let compared = 0;
  for (const d of ids) {
    const a = canonicalLines(sim.window.get(d) ?? []);
    const b = canonicalLines(real.window.get(d) ?? []);
    const n = Math.max(a.length, b.length);
    for (let i = 0; i < n; i++) {
      compared++;
      if (a[i] === b[i]) continue;
      const from = Math.max(0, i - context);
      return {
        compared,
        rings: ids.length,
        difference: {
          kind: "event",
          ring: d,
          index: i + 1,
          sim: a.slice(from, i + context + 1),
          real: b.slice(from, i + context + 1),
          firstLine: from + 1,
        },
      };
    }
  }
  // The events agree. Phases need not nest in the real ring either (a `Gc.full_major` whose
  // callback raises never ends its phase): the two sides must nest alike, which agreeing
  // events do unless a window cuts a phase.
  for (const d of ids) {
    const ps = nestingProblem(sim.window.get(d) ?? []);
    const pr = nestingProblem(real.window.get(d) ?? []);
    if (ps?.problem === pr?.problem && ps?.index === pr?.index) continue;
    const [side, p] = ps !== undefined ? ["simulation" as const, ps] : ["real" as const, pr!];
    return { compared, rings: ids.length, difference: { kind: "nesting", side, ring: d, ...p } };
  }
  return { compared, rings: ids.length };
}

/** One line saying where the rings part, or `agree`. */
export function ringDifferenceSummary(c: RingComparison): string {
  const d = c.difference;
  if (d === undefined) return `rings agree (${c.compared} events on ${c.rings} ring(s))`;
  switch (d.kind) {
    case "event":
      return `rings differ at ring ${d.ring} event ${d.index}`;
    case "nesting":
      return `the ${d.side} ring ${d.ring} does not nest at event ${d.index}: ${d.problem}`;
    case "lost":
      return `the ${d.side} ring lost ${d.words} words (a larger ring is needed)`;
  }
}

/** Where the rings part, in the form `known_ring_differences.json` names it. */
export function ringDifferenceAt(d: RingDifference): string {
  switch (d.kind) {
    case "event":
      return `ring ${d.ring} event ${d.index}`;
    case "nesting":
      return `nesting ${d.side} ring ${d.ring}`;
    case "lost":
      return `lost ${d.side}`;
  }
}

/** The context lines of an event difference, marked, for printing. */
export function ringDifferenceContext(d: RingDifference): string[] {
  if (d.kind !== "event") return [];
  const out: string[] = [];
  const width = String(d.firstLine + Math.max(d.sim.length, d.real.length)).length;
  const num = (k: number) => String(d.firstLine + k).padStart(width);
  const side = (title: string, lines: readonly string[]) => {
    out.push(`  ${title} (ring ${d.ring}):`);
    lines.forEach((l, k) =>
      out.push(`  ${d.firstLine + k === d.index ? ">" : " "} ${num(k)} ${l}`)
    );
    if (d.firstLine + lines.length <= d.index) {
      out.push(`  > ${num(d.index - d.firstLine)} (no more events)`);
    }
  };
  side("simulation", d.sim);
  side("real OCaml 5.3", d.real);
  return out;
}

/** The durations (ns) of each phase in a window, by phase name: every begin matched with its
 * end on the same ring. */
export function phaseDurations(window: RingWindow): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const events of window.values()) {
    const open: RingEvent[] = [];
    for (const e of events) {
      if (e.nesting === 1) open.push(e);
      else if (e.nesting === -1) {
        const b = open.pop();
        if (b === undefined || b.phase !== e.phase) {
          open.length = 0;
          continue;
        }
        const name = phaseName(e.phase);
        let list = out.get(name);
        if (list === undefined) out.set(name, list = []);
        list.push(Number(e.ts - b.ts));
      }
    }
  }
  return out;
}
