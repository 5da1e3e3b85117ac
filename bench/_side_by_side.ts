/**
 * The one way benches measure a figure outside `Deno.bench`'s table and print it next to its
 * anchor: `group: label: ours X unit, ANCHOR Y unit, ratio R (note)`.
 *
 * The ratio is always ours ÷ anchor in the figure's own unit, as the goals are written: for a
 * throughput above 1.0 is faster than the anchor (goal "decode ≥ 1.2×"), for a time per unit below
 * 1.0 is faster (goal "draw ≤ 1.0×"); `note` says which way the goal goes. Figures are medians of
 * `rounds` passes after `warmup` passes (or `warmupSeconds`), measured in the same process as the table.
 *
 * @module
 */

/** A figure and how to print it. */
export interface Figure {
  /** The value, in `unit`. */
  value: number;
  /** The unit printed after the value, e.g. `M events/s` or `ns` (throughputs are better high,
   * times low: the line's `note` says which way the goal goes). */
  unit: string;
}

/** One line of a group: our figure, the anchor's (when there is one) and what the anchor is. */
export interface SideBySide {
  /** The bench group, as in the table (`decode`, `copy`, `scenario`, …). */
  group: string;
  /** What was measured. */
  label: string;
  /** Our figure. */
  ours: Figure;
  /** The anchor's value in the same unit, or a sentence saying why there is none. */
  anchor: number | string;
  /** The anchor's name, e.g. `native memtrace (bench/README.md)` or `OCaml 5.3`. */
  anchorName: string;
  /** An optional note printed in parentheses at the end (a goal, a bit-exactness check). */
  note?: string;
}

/** Options of {@linkcode medianSeconds}. */
export interface MedianOptions {
  /** Timed passes (default 5). */
  rounds?: number;
  /** Untimed passes first (default 1). */
  warmup?: number;
  /** Keep warming up (untimed passes) until this many seconds have gone by (default 0): V8 keeps
   * re-optimising a hot path for a while, so a short pass needs more passes than a long one. */
  warmupSeconds?: number;
}

/**
 * Runs `pass` `warmup` times untimed (and on until `warmupSeconds` have gone by), then `rounds`
 * times timed; returns the median in seconds.
 */
export function medianSeconds(pass: () => void, options: MedianOptions = {}): number {
  const rounds = options.rounds ?? 5;
  const warmupEnd = performance.now() + (options.warmupSeconds ?? 0) * 1000;
  for (let k = 0; k < (options.warmup ?? 1) || performance.now() < warmupEnd; k++) pass();
  const times: number[] = [];
  for (let k = 0; k < rounds; k++) {
    const t0 = performance.now();
    pass();
    times.push((performance.now() - t0) / 1000);
  }
  times.sort((a, b) => a - b);
  return times[rounds >> 1];
}

function digits(v: number): string {
  if (v >= 100) return v.toFixed(1);
  if (v >= 10) return v.toFixed(2);
  return v.toPrecision(3);
}

/** Ours ÷ anchor, in the figure's unit. */
function ratioToAnchor(ours: Figure, anchor: number): number {
  return ours.value / anchor;
}

/** Formats one side-by-side line (see the module doc). */
function formatSideBySide(s: SideBySide): string {
  const ours = `ours ${digits(s.ours.value)} ${s.ours.unit}`;
  const note = s.note === undefined ? "" : ` (${s.note})`;
  if (typeof s.anchor === "string") {
    return `${s.group}: ${s.label}: ${ours}, ${s.anchorName}: ${s.anchor}${note}`;
  }
  const ratio = ratioToAnchor(s.ours, s.anchor);
  return `${s.group}: ${s.label}: ${ours}, ${s.anchorName} ${
    digits(s.anchor)
  } ${s.ours.unit}, ratio ${ratio.toFixed(2)}${note}`;
}

/** Prints one side-by-side line on standard output. */
export function printSideBySide(s: SideBySide): void {
  console.log(formatSideBySide(s));
}
