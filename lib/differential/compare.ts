/**
 * Comparing the simulation's canonical log with the real program's.
 * @module
 */
import type { CanonicalLog } from "./canonical.ts";

/** The first differing line of two sequences of lines (a log's callbacks, a ring's events),
 * with lines around it on each side. */
export interface LinesApart {
  /** 1-based number of the first differing line. */
  readonly index: number;
  /** The simulation's lines around it (`context` before, the line, `context` after). */
  readonly sim: readonly string[];
  /** The real program's lines around it, as `sim`. */
  readonly real: readonly string[];
  /** Number of the first line in `sim` and `real` (1-based). */
  readonly firstLine: number;
}

/** Where two logs first part. */
export type Difference =
  | { readonly kind: "callback" } & LinesApart
  | {
    readonly kind: "collections";
    readonly sim: { readonly minor: number; readonly major: number };
    readonly real: { readonly minor: number; readonly major: number };
  }
  | { readonly kind: "minorHeap"; readonly sim: number; readonly real: number }
  | { readonly kind: "overflow" };

/** The result of {@linkcode compareLogs}. */
export interface Comparison {
  /** Callback lines compared (up to and including the first difference). */
  readonly compared: number;
  /** The first difference, or undefined when the logs agree. */
  readonly difference?: Difference;
}

/** Compares the logs: heap size, then callbacks line by line, then collection counts. */
export function compareLogs(
  sim: CanonicalLog,
  real: CanonicalLog,
  options: { readonly context?: number } = {},
): Comparison {
  const context = options.context ?? 3;
  if (real.overflow) return { compared: 0, difference: { kind: "overflow" } };
  if (sim.minorHeapWords !== real.minorHeapWords) {
    return {
      compared: 0,
      difference: { kind: "minorHeap", sim: sim.minorHeapWords, real: real.minorHeapWords },
    };
  }
  const n = Math.max(sim.lines.length, real.lines.length);
  for (let i = 0; i < n; i++) {
    if (sim.lines[i] === real.lines[i]) continue;
    const from = Math.max(0, i - context);
    const to = i + context + 1;
    return {
      compared: i + 1,
      difference: {
        kind: "callback",
        index: i + 1,
        sim: sim.lines.slice(from, to),
        real: real.lines.slice(from, to),
        firstLine: from + 1,
      },
    };
  }
  if (sim.minorCollections !== real.minorCollections || sim.majorCycles !== real.majorCycles) {
    return {
      compared: n,
      difference: {
        kind: "collections",
        sim: { minor: sim.minorCollections, major: sim.majorCycles },
        real: { minor: real.minorCollections, major: real.majorCycles },
      },
    };
  }
  return { compared: n };
}

/** One line saying where the logs part (`differs at callback 12`), or `agree`. */
export function differenceSummary(c: Comparison): string {
  const d = c.difference;
  if (d === undefined) return `agree (${c.compared} callbacks)`;
  switch (d.kind) {
    case "callback":
      return `differs at callback ${d.index}`;
    case "collections":
      return `differs in collections: simulation ${d.sim.minor} minor / ${d.sim.major} major, ` +
        `real ${d.real.minor} minor / ${d.real.major} major`;
    case "minorHeap":
      return `differs in minor heap size: simulation ${d.sim} words, real ${d.real} words`;
    case "overflow":
      return "the real program's callback log overflowed";
  }
}

/** The context lines of a callback difference, marked `sim`/`real`, for printing. */
export function differenceContext(d: Difference): string[] {
  if (d.kind !== "callback") return [];
  const out: string[] = [];
  const width = String(d.firstLine + Math.max(d.sim.length, d.real.length)).length;
  const num = (k: number) => String(d.firstLine + k).padStart(width);
  out.push("  simulation:");
  d.sim.forEach((l, k) => out.push(`  ${d.firstLine + k === d.index ? ">" : " "} ${num(k)} ${l}`));
  if (d.sim.length === 0 || d.firstLine + d.sim.length <= d.index) {
    out.push(`  > ${num(d.index - d.firstLine)} (no more callbacks)`);
  }
  out.push("  real OCaml 5.3:");
  d.real.forEach((l, k) => out.push(`  ${d.firstLine + k === d.index ? ">" : " "} ${num(k)} ${l}`));
  if (d.real.length === 0 || d.firstLine + d.real.length <= d.index) {
    out.push(`  > ${num(d.index - d.firstLine)} (no more callbacks)`);
  }
  return out;
}
