/**
 * The timing calibration of `deno task diff --rings`: the simulation's phase durations (the
 * virtual-time model of lib/runtime/gc_time.ts) against the real ring's, phase by phase, over
 * every scenario whose rings were compared. Each phase's durations are pooled over the
 * scenarios; a row gives both medians, their ratio (simulation / real) and the spread of each
 * side (10th and 90th percentiles, nearest rank).
 * @module
 */

/** One phase's row. Durations in nanoseconds. */
export interface PhaseCalibration {
  /** The phase's name (`minor`, `major_slice`…). */
  readonly phase: string;
  /** Durations measured on each side. */
  readonly count: { readonly sim: number; readonly real: number };
  /** Medians (nearest rank). */
  readonly median: { readonly sim: number; readonly real: number };
  /** `median.sim / median.real` (Infinity when the real median is 0). */
  readonly ratio: number;
  /** 10th percentile of each side. */
  readonly p10: { readonly sim: number; readonly real: number };
  /** 90th percentile of each side. */
  readonly p90: { readonly sim: number; readonly real: number };
}

/** The value of rank ⌈p/100 × n⌉ of `sorted` (ascending, not empty). */
function nearestRank(sorted: readonly number[], p: number): number {
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1];
}

/** Pools phase durations over scenarios and makes the table. */
export class Calibration {
  #sim = new Map<string, number[]>();
  #real = new Map<string, number[]>();
  /** Scenarios added. */
  scenarios = 0;

  /** Adds one scenario's durations (by phase name, in ns). */
  add(
    durations: {
      readonly sim: Readonly<Record<string, readonly number[]>>;
      readonly real: Readonly<Record<string, readonly number[]>>;
    },
  ): void {
    this.scenarios++;
    for (
      const [side, into] of [[durations.sim, this.#sim], [durations.real, this.#real]] as const
    ) {
      for (const [phase, list] of Object.entries(side)) {
        let to = into.get(phase);
        if (to === undefined) into.set(phase, to = []);
        for (const v of list) to.push(v);
      }
    }
  }

  /** The rows of the phases measured at least `minCount` times on both sides (default 1), in
   * decreasing order of real durations measured. */
  table(minCount = 1): PhaseCalibration[] {
    const rows: PhaseCalibration[] = [];
    for (const [phase, realList] of this.#real) {
      const simList = this.#sim.get(phase);
      if (simList === undefined || simList.length < minCount || realList.length < minCount) {
        continue;
      }
      const s = [...simList].sort((a, b) => a - b);
      const r = [...realList].sort((a, b) => a - b);
      const median = { sim: nearestRank(s, 50), real: nearestRank(r, 50) };
      rows.push({
        phase,
        count: { sim: s.length, real: r.length },
        median,
        ratio: median.real === 0 ? Infinity : median.sim / median.real,
        p10: { sim: nearestRank(s, 10), real: nearestRank(r, 10) },
        p90: { sim: nearestRank(s, 90), real: nearestRank(r, 90) },
      });
    }
    return rows.sort((a, b) => b.count.real - a.count.real || (a.phase < b.phase ? -1 : 1));
  }
}

/** The table as text lines (a header, a rule, one line per phase). */
export function formatCalibration(rows: readonly PhaseCalibration[]): string[] {
  const head = [
    "phase",
    "n sim/real",
    "median sim",
    "median real",
    "ratio",
    "p10–p90 sim",
    "p10–p90 real",
  ];
  const body = rows.map((r) => [
    r.phase,
    `${r.count.sim}/${r.count.real}`,
    String(r.median.sim),
    String(r.median.real),
    Number.isFinite(r.ratio) ? r.ratio.toFixed(2) : "∞",
    `${r.p10.sim}–${r.p90.sim}`,
    `${r.p10.real}–${r.p90.real}`,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const fmt = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ")
      .trimEnd();
  return [fmt(head), fmt(widths.map((w) => "-".repeat(w))), ...body.map(fmt)];
}
