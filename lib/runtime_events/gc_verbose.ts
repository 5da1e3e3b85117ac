/**
 * The statistics OCaml 5.3 prints at exit with `OCAMLRUNPARAM=v=0x400` (runtime/sys.c,
 * `caml_do_exit`), read from that text and computed from a ring, so that a ring can be checked
 * against the runtime's own figures.
 *
 * What the runtime prints, and where each figure comes from:
 *
 * - `minor_words`: the words of every minor collection (`stat_minor_words`, added in
 *   minor_gc.c from `minor_allocated_bytes`, the counter `minor_allocated`) plus what is in the
 *   current minor heap at exit;
 * - `promoted_words`: the counter `minor_promoted` of every collection;
 * - `major_words`: `stat_major_words`, to which each major slice adds the domain's
 *   `allocated_words` (direct major allocations and promotions), the slice's counter
 *   `major_allocated_words`, plus the words allocated since the last slice;
 * - `allocated_words` = minor + major − promoted;
 * - `minor_collections`: minor collections (every domain logs its part: counted on ring 0);
 * - `major_collections`: major cycles completed (`major_gc_stw`, the cycle's last phase);
 * - `forced_major_collections`: `Gc.full_major` and `Gc.compact` calls that ended (gc_ctrl.c
 *   counts those, not `Gc.major`, and a `Gc.full_major` whose callbacks raise returns before
 *   counting itself and before the end of its phase: the ends are counted);
 * - `heap_words`, `top_heap_words`: the heap's size at exit, which no event reports.
 *
 * So a ring gives the runtime's figures exactly when it was started at initialisation
 * (`OCAML_RUNTIME_EVENTS_START`), lost nothing, and the program ended with an empty minor heap
 * and no allocation after its last major slice (a `Gc.minor ()`, which runs a slice, as its last
 * act). An opportunistic major slice (run while a domain waits) writes no counters unless
 * `v=0x40` is set (major_gc.c, `log_events`): the library's multi-domain programs wait in
 * `Condition.wait`, which runs none.
 *
 * @module
 */

import { type ConsumerCallbacks, RuntimeEventsCursor } from "./consumer.ts";
import { Lifecycle, RuntimeCounter, RuntimePhase } from "./enums.ts";

/** The figures of `OCAMLRUNPARAM=v=0x400`, named as OCaml prints them. */
export interface GcVerboseStats {
  /** `minor_words + major_words − promoted_words`. */
  allocated_words: number;
  /** Words allocated in the minor heaps. */
  minor_words: number;
  /** Words promoted by minor collections. */
  promoted_words: number;
  /** Words allocated in the major heap, promotions included. */
  major_words: number;
  /** Minor collections. */
  minor_collections: number;
  /** Major cycles completed. */
  major_collections: number;
  /** `Gc.full_major` and `Gc.compact` calls. */
  forced_major_collections: number;
}

/** The figures a ring gives, in the order OCaml prints them. */
export const GC_VERBOSE_FIELDS: readonly (keyof GcVerboseStats)[] = Object.freeze([
  "allocated_words",
  "minor_words",
  "promoted_words",
  "major_words",
  "minor_collections",
  "major_collections",
  "forced_major_collections",
]);

/** A text that is not `v=0x400` output. */
export class GcVerboseFormatError extends Error {
  /** Error class name. */
  override name = "GcVerboseFormatError";
}

/**
 * Reads the `v=0x400` lines of `text` (a program's standard error; other lines are ignored).
 * Every field of {@linkcode GcVerboseStats} must be there once; `heap_words` and
 * `top_heap_words` are read into `heap` when present. Throws {@linkcode GcVerboseFormatError}
 * naming the line or the missing field.
 */
export function parseGcVerbose(
  text: string,
): GcVerboseStats & { heap?: { heap_words: number; top_heap_words: number } } {
  const found = new Map<string, number>();
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const m = /^([a-z_]+): (-?[0-9]+)$/.exec(lines[i]);
    if (m === null) continue;
    const known = (GC_VERBOSE_FIELDS as readonly string[]).includes(m[1]) ||
      m[1] === "heap_words" || m[1] === "top_heap_words";
    if (!known) continue;
    if (found.has(m[1])) {
      throw new GcVerboseFormatError(`line ${i + 1}: ${m[1]} given twice`);
    }
    found.set(m[1], Number(m[2]));
  }
  const out: Record<string, number> = {};
  for (const f of GC_VERBOSE_FIELDS) {
    const v = found.get(f);
    if (v === undefined) {
      throw new GcVerboseFormatError(`no "${f}: N" line (is OCAMLRUNPARAM v=0x400 set?)`);
    }
    out[f] = v;
  }
  const stats = out as unknown as GcVerboseStats;
  const hw = found.get("heap_words"), thw = found.get("top_heap_words");
  return hw === undefined || thw === undefined
    ? stats
    : { ...stats, heap: { heap_words: hw, top_heap_words: thw } };
}

/** What {@linkcode gcVerboseOfRing} found beside the figures. */
export interface RingGcVerbose {
  /** The figures. */
  stats: GcVerboseStats;
  /** Ring words lost (overwritten before being read): the figures are then partial. */
  lostWords: number;
  /** Whether the ring's first event on ring 0 is EV_RING_START (a ring started later than
   * initialisation, or overwritten, misses the beginning). */
  startsAtRingStart: boolean;
}

/** The `v=0x400` figures computed from every event of `image` (see the module documentation
 * for when they equal the runtime's). */
export function gcVerboseOfRing(image: Uint8Array | ArrayBuffer): RingGcVerbose {
  const acc = { minorBytes: 0, promotedBytes: 0, major: 0, minor: 0, cycles: 0, forced: 0 };
  let lostWords = 0;
  let first: boolean | undefined;
  const callbacks: ConsumerCallbacks = {
    runtimeBegin: (d, _ts, phase) => {
      if (d === 0 && first === undefined) first = false;
      if (d !== 0) return;
      if (phase === RuntimePhase.EV_MINOR) acc.minor++;
      else if (phase === RuntimePhase.EV_MAJOR_GC_STW) acc.cycles++;
    },
    runtimeEnd: (d, _ts, phase) => {
      if (d === 0 && first === undefined) first = false;
      // Counted where OCaml counts them, just before the phase's end: a `Gc.full_major` whose
      // callbacks raise returns before both (gc_ctrl.c, `gc_full_major_res`).
      if (
        d === 0 && (phase === RuntimePhase.EV_EXPLICIT_GC_FULL_MAJOR ||
          phase === RuntimePhase.EV_EXPLICIT_GC_COMPACT)
      ) acc.forced++;
    },
    runtimeCounter: (d, _ts, counter, value) => {
      if (d === 0 && first === undefined) first = false;
      const v = Number(value);
      if (counter === RuntimeCounter.EV_C_MINOR_ALLOCATED) acc.minorBytes += v;
      else if (counter === RuntimeCounter.EV_C_MINOR_PROMOTED) acc.promotedBytes += v;
      else if (counter === RuntimeCounter.EV_C_MAJOR_ALLOCATED_WORDS) acc.major += v;
    },
    lifecycle: (d, _ts, event) => {
      if (d === 0 && first === undefined) first = event === Lifecycle.EV_RING_START;
    },
    lostEvents: (_d, words) => {
      lostWords += words;
    },
  };
  new RuntimeEventsCursor(image).readAll(callbacks);
  // OCaml adds whole words (Wsize_bsize) per collection; the bytes are whole words.
  const minor = Math.floor(acc.minorBytes / 8), promoted = Math.floor(acc.promotedBytes / 8);
  return {
    stats: {
      allocated_words: minor + acc.major - promoted,
      minor_words: minor,
      promoted_words: promoted,
      major_words: acc.major,
      minor_collections: acc.minor,
      major_collections: acc.cycles,
      forced_major_collections: acc.forced,
    },
    lostWords,
    startsAtRingStart: first === true,
  };
}

/** The fields where `a` and `b` differ, as `name: a ≠ b` texts (empty when equal). */
export function gcVerboseDifferences(a: GcVerboseStats, b: GcVerboseStats): string[] {
  return GC_VERBOSE_FIELDS.filter((f) => a[f] !== b[f]).map((f) => `${f}: ${a[f]} ≠ ${b[f]}`);
}
