/**
 * Events of a memtrace trace (`.ctf`) as instants for a ring file's Chrome
 * export: allocations, promotions and collections on their domain's track.
 *
 * The two files have no common clock: a ring file's timestamps are
 * `CLOCK_MONOTONIC` nanoseconds (since boot), a memtrace event's time is
 * microseconds since the trace's `start_time` (wall-clock µs since the epoch).
 * They are aligned by one anchor, the ring timestamp that trace time 0
 * corresponds to:
 *
 * - by default the ring's EV_RING_START: a program started with
 *   `OCAML_RUNTIME_EVENTS_START=1` starts its rings while the runtime starts,
 *   and memtrace (`Memtrace.trace_if_requested`) at the top of the program, so
 *   both files start within the program's start-up (typically well under a
 *   millisecond apart; that difference is a constant shift of every memtrace
 *   event);
 * - if EV_RING_START has been overwritten (the ring wrapped), the earliest
 *   timestamp left in the file, which is later than the real start: the
 *   alignment is then only a guess, and is reported as such;
 * - or an anchor given explicitly (`--trace-anchor-ns`). memprof-lab's own
 *   scenario runs use one virtual clock for both files, ring time 0 being
 *   trace time 0, so `--trace-anchor-ns 0` aligns them exactly.
 *
 * Then a trace event at `t` µs lands at `anchor + t·1000` ns. memtrace's
 * domain ids are `Domain.self` ids while rings are indexed by domain slot; the
 * two agree until a program reuses the slot of a terminated domain.
 *
 * This module does not import `lib/memtrace`: any object with the shape of
 * its `Reader` (`info.startTime`, `iter`) will do.
 *
 * @module
 */

import type { ExtraInstant, RingAnchors } from "./chrome_export.ts";

/** A memtrace event as `lib/memtrace`'s reader delivers it (the fields used here). */
export type TraceEventLike =
  | {
    readonly kind: "alloc";
    readonly objId: number;
    readonly length: number;
    readonly domain: number;
    readonly nsamples: number;
    readonly source: number;
  }
  | { readonly kind: "promote" | "collect"; readonly objId: number; readonly domain: number };

/** What the merge needs from a trace reader (`lib/memtrace`'s `Reader` fits). */
export interface TraceEventsSource {
  /** Trace metadata. */
  readonly info: { readonly pid: bigint };
  /** Calls `f` with each event and its time in µs since the trace start. */
  iter(
    f: (time: number, ev: TraceEventLike) => void,
    options?: { parseBacktraces?: boolean },
  ): void;
}

/** How trace time 0 was placed on the ring's clock. */
export type AnchorBasis = "given" | "ring_start" | "first_event" | "none";

/** The ring timestamp of trace time 0, and where it comes from. */
export interface TraceAlignment {
  /** Ring nanoseconds corresponding to trace time 0. */
  anchorNs: bigint;
  /** `given`, `ring_start`, `first_event`, or `none` (empty ring: anchor 0). */
  basis: AnchorBasis;
}

/** Chooses the anchor: `given` if set, else EV_RING_START, else the first event. */
export function alignTrace(anchors: RingAnchors, given?: bigint): TraceAlignment {
  if (given !== undefined) return { anchorNs: given, basis: "given" };
  if (anchors.ringStartNs !== null) return { anchorNs: anchors.ringStartNs, basis: "ring_start" };
  if (anchors.firstNs !== null) return { anchorNs: anchors.firstNs, basis: "first_event" };
  return { anchorNs: 0n, basis: "none" };
}

const SOURCE_NAMES = ["alloc", "alloc_major", "alloc_ext"];

/**
 * The trace's events as instants (category `memtrace`), in trace order:
 * `alloc` / `alloc_major` / `alloc_ext` (memtrace's names for minor, major and
 * external allocations) with args `{id, words, samples}`, `promote` and
 * `collect` with `{id}`.
 */
export function traceInstants(source: TraceEventsSource, anchorNs: bigint): ExtraInstant[] {
  const out: ExtraInstant[] = [];
  source.iter((time, ev) => {
    const tsNs = anchorNs + BigInt(time) * 1000n;
    if (ev.kind === "alloc") {
      out.push({
        domain: ev.domain,
        tsNs,
        name: SOURCE_NAMES[ev.source] ?? `alloc_source_${ev.source}`,
        cat: "memtrace",
        args: { id: ev.objId, words: ev.length, samples: ev.nsamples },
      });
    } else {
      out.push({ domain: ev.domain, tsNs, name: ev.kind, cat: "memtrace", args: { id: ev.objId } });
    }
  }, { parseBacktraces: false });
  return out;
}
