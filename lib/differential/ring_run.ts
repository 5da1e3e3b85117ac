/**
 * The ring side of a differential run (`deno task diff --rings`): the scenario's program,
 * exported with the ring's marks, runs with runtime_events on from its initialisation and
 * `OCAMLRUNPARAM=v=0x400`; the simulation runs with its ring started from the first step; the
 * rings are compared ({@linkcode compareRings}), the real ring's statistics are compared with
 * the runtime's own, and the simulation's with its own counters.
 * @module
 */
import type { Scenario } from "../scenario/mod.ts";
import { type ExportedProgram, exportOCaml } from "../export/mod.ts";
import {
  gcVerboseDifferences,
  gcVerboseOfRing,
  type GcVerboseStats,
  parseGcVerbose,
} from "../runtime_events/mod.ts";
import type { KnownKeys } from "./known.ts";
import {
  canonicalLines,
  compareRings,
  phaseDurations,
  readRings,
  realRunWindow,
  type RingComparison,
  ringDifferenceAt,
  type RingWindow,
  simulatedRunWindow,
} from "./rings.ts";

/** Whether a differential run compares rings: `always` (`--rings`), `auto` (default: when the
 * scenario starts runtime_events itself) or `never`. */
export type RingMode = "always" | "auto" | "never";

/** The smallest ring (log2 of its words per domain) ring runs use: the scenario's own, if
 * larger. A ring that loses events is tried again 2 sizes larger, up to {@linkcode MAX_RING_LOG2}. */
export const MIN_RING_LOG2 = 16;
/** The largest ring ring runs try. */
export const MAX_RING_LOG2 = 22;

/** What the ring side found. */
export type RingJudgement =
  | {
    readonly status: "compared";
    /** The ring size used on both sides (log2 of words per domain). */
    readonly ringLog2: number;
    readonly comparison: RingComparison;
    /** Whether a side's callback log changed with the ring on (it must not). */
    readonly callbacksChanged: { readonly sim: boolean; readonly real: boolean };
    /** gc-stats against the runtime's own figures (real) and the simulation's own counters. */
    readonly gcStats: {
      readonly real: {
        readonly ring: GcVerboseStats;
        readonly runtime: GcVerboseStats;
        readonly differences: readonly string[];
      };
      readonly sim: {
        readonly ring: GcVerboseStats;
        readonly own: GcVerboseStats;
        readonly differences: readonly string[];
      };
    };
    /** Phase durations (ns) in each side's run, by phase name (the timing calibration). */
    readonly durations: {
      readonly sim: Readonly<Record<string, readonly number[]>>;
      readonly real: Readonly<Record<string, readonly number[]>>;
    };
  }
  | { readonly status: "error"; readonly message: string }
  | {
    /** The real program's ring was not the same from one run to the next. */
    readonly status: "nondeterministic";
    readonly message: string;
  };

/** The places `scenarios/known_ring_differences.json` names: where the rings first part
 * (`ring 0 event 17`, `nesting simulation ring 1`, `lost real`) or `nondeterministic`. */
export const RING_KEYS: KnownKeys = {
  pattern:
    /^(ring (0|[1-9][0-9]*) event [1-9][0-9]*|nesting (simulation|real) ring (0|[1-9][0-9]*)|lost (simulation|real)|nondeterministic)$/,
  description: '"ring R event N", "nesting simulation|real ring R", "lost simulation|real" ' +
    'or "nondeterministic"',
};

/** Where the rings of a judgement part, in the known list's terms (undefined when they agree,
 * or when the ring side failed: see {@linkcode ringProblem}). */
export function ringKey(j: RingJudgement): string | undefined {
  if (j.status === "nondeterministic") return "nondeterministic";
  if (j.status === "error") return undefined;
  const d = j.comparison.difference;
  return d === undefined ? undefined : ringDifferenceAt(d);
}

/** Runs a program in a run folder with `env` and gives its output and its ring file. */
export type RingExec = (
  program: ExportedProgram,
  env: Readonly<Record<string, string>>,
) => Promise<{ stdout: string; stderr: string; ring: Uint8Array | undefined }>;

/** The environment of a ring run: the program's, with the ring size, `v=0x400`, and the ring
 * started at initialisation and kept in the run folder (`dir`) when the program ends. */
export function ringEnv(
  program: ExportedProgram,
  ringLog2: number,
  dir: string,
): Record<string, string> {
  const base = program.env.OCAMLRUNPARAM ?? "";
  const params = base.split(",").filter((p) => p !== "" && !/^[ev]=/.test(p));
  return {
    ...program.env,
    OCAMLRUNPARAM: [...params, `e=${ringLog2}`, "v=0x400"].join(","),
    OCAML_RUNTIME_EVENTS_START: "1",
    OCAML_RUNTIME_EVENTS_PRESERVE: "1",
    OCAML_RUNTIME_EVENTS_DIR: dir,
  };
}

/** The simulation's side: its callback lines and ring with the ring on from the start. */
export type RingSimulation = (
  sc: Scenario,
  ringLog2: number,
) => {
  lines: readonly string[];
  image: Uint8Array;
  minor: number;
  major: number;
  /** The run's own statistics, every domain's (`RunResult.gc`). */
  gc: {
    readonly minorWords: number;
    readonly promotedWords: number;
    readonly majorWords: number;
    readonly forcedMajors: number;
  };
};

/** Compares the rings of scenario `sc` (see the module documentation). `simLines` and
 * `realOutput` are the callback log and the output of the runs without ring. */
export async function judgeRings(
  sc: Scenario,
  io: {
    readonly logCapacity: number;
    readonly simLines: readonly string[];
    readonly realOutput: string;
    readonly exec: RingExec;
    readonly simulate: RingSimulation;
    readonly context?: number;
    /** Runs of the ring program that must give one ring (default 2). */
    readonly runs?: number;
  },
): Promise<RingJudgement> {
  const program = exportOCaml(sc, { logCapacity: io.logCapacity, ringMarks: true });
  let ringLog2 = Math.max(MIN_RING_LOG2, sc.settings.ringLog2);
  for (;;) {
    const first = await io.exec(program, ringEnv(program, ringLog2, "."));
    if (first.ring === undefined) {
      return { status: "error", message: "the ring program left no ring file" };
    }
    const realRec = readRings(first.ring);
    if (realRec.lostWords > 0 && ringLog2 + 2 <= MAX_RING_LOG2) {
      ringLog2 += 2;
      continue;
    }
    let realWindow: RingWindow;
    try {
      realWindow = realRunWindow(realRec);
    } catch (e) {
      return { status: "error", message: `the real ring: ${(e as Error).message}` };
    }
    for (let k = 2; k <= (io.runs ?? 2); k++) {
      const again = await io.exec(program, ringEnv(program, ringLog2, "."));
      const other = again.ring === undefined ? undefined : readRings(again.ring);
      const same = other !== undefined && other.lostWords === realRec.lostWords &&
        sameWindows(realWindow, realRunWindowOrEmpty(other));
      if (!same) {
        return {
          status: "nondeterministic",
          message: `the real ring is not deterministic: runs 1 and ${k} wrote different events`,
        };
      }
    }
    const sim = io.simulate(sc, ringLog2);
    const simRec = readRings(sim.image);
    const simWindow = simulatedRunWindow(simRec);
    const comparison = compareRings(
      { window: simWindow, lostWords: simRec.lostWords },
      { window: realWindow, lostWords: realRec.lostWords },
      { context: io.context },
    );
    let runtime: GcVerboseStats;
    try {
      // heap_words and top_heap_words: no event gives the heap's size at exit.
      const { heap: _heap, ...figures } = parseGcVerbose(first.stderr);
      runtime = figures;
    } catch (e) {
      return { status: "error", message: `the real program's statistics: ${(e as Error).message}` };
    }
    const realRing = gcVerboseOfRing(first.ring).stats;
    const simRing = gcVerboseOfRing(sim.image).stats;
    // The simulation's own counters, as v=0x400 would print them at exit.
    const g = sim.gc;
    const own: GcVerboseStats = {
      allocated_words: g.minorWords + g.majorWords - g.promotedWords,
      minor_words: g.minorWords,
      promoted_words: g.promotedWords,
      major_words: g.majorWords,
      minor_collections: sim.minor,
      major_collections: sim.major,
      forced_major_collections: g.forcedMajors,
    };
    return {
      status: "compared",
      ringLog2,
      comparison,
      callbacksChanged: {
        sim: !sameLines(sim.lines, io.simLines),
        real: first.stdout !== io.realOutput,
      },
      gcStats: {
        real: {
          ring: realRing,
          runtime,
          differences: gcVerboseDifferences(realRing, runtime),
        },
        sim: { ring: simRing, own, differences: gcVerboseDifferences(simRing, own) },
      },
      durations: {
        sim: Object.fromEntries(phaseDurations(simWindow)),
        real: Object.fromEntries(phaseDurations(realWindow)),
      },
    };
  }
}

function realRunWindowOrEmpty(rec: ReturnType<typeof readRings>): RingWindow {
  try {
    return realRunWindow(rec);
  } catch {
    return new Map();
  }
}

function sameLines(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((l, i) => l === b[i]);
}

function sameWindows(a: RingWindow, b: RingWindow): boolean {
  if (a.size !== b.size) return false;
  for (const [d, events] of a) {
    const other = b.get(d);
    if (other === undefined || !sameLines(canonicalLines(events), canonicalLines(other))) {
      return false;
    }
  }
  return true;
}

/** Whether a result's ring side is something to fail on, and why (undefined when it is not):
 * an error, a callback log changed by the ring, gc-stats unequal to the runtime's or to the
 * simulation's own counters. The ring comparison itself is judged against the known list. */
export function ringProblem(j: RingJudgement): string | undefined {
  if (j.status === "error") return j.message;
  if (j.status === "nondeterministic") return undefined;
  if (j.callbacksChanged.real) return "the real program's callbacks changed with the ring on";
  if (j.callbacksChanged.sim) return "the simulation's callbacks changed with the ring on";
  if (j.gcStats.real.differences.length > 0) {
    return `gc-stats of the real ring ≠ OCAMLRUNPARAM=v=0x400: ${
      j.gcStats.real.differences.join(", ")
    }`;
  }
  if (j.gcStats.sim.differences.length > 0) {
    return `gc-stats of the simulated ring ≠ the simulation's counters: ${
      j.gcStats.sim.differences.join(", ")
    }`;
  }
  return undefined;
}
