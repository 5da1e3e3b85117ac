/**
 * The differential suite: a scenario simulated and run, exported, on the real OCaml 5.3
 * runtime; their canonical callback logs compared. See docs/differential.md.
 *
 * @example Compare two canonical logs
 * ```ts
 * import { compareLogs, differenceSummary } from "./mod.ts";
 * import { assert } from "node:console";
 *
 * const base = { minorCollections: 1, majorCycles: 0, minorHeapWords: 262144, overflow: false };
 * const sim = { ...base, lines: ["alloc_minor d0 i=1 size=1 n=1 src=normal id=1 stack=[] -> none"] };
 * const real = { ...base, lines: ["alloc_minor d0 i=2 size=1 n=1 src=normal id=1 stack=[] -> none"] };
 * assert(differenceSummary(compareLogs(sim, real)) === "differs at callback 1");
 * ```
 * @module
 */
export {
  canonicalLine,
  type CanonicalLog,
  HARNESS,
  parseRealLog,
  RealLogError,
} from "./canonical.ts";
export { defaultDiffCacheDir, DIFF_CACHE_ENV_VAR } from "./cache.ts";
export {
  compareLogs,
  type Comparison,
  type Difference,
  differenceContext,
  differenceSummary,
  type LinesApart,
} from "./compare.ts";
export {
  CALLBACK_KEYS,
  differenceKey,
  judge,
  judgeKey,
  judgeRefusal,
  type KnownDifference,
  KnownDifferencesError,
  type KnownKeys,
  NOT_EXPORTABLE,
  parseKnownDifferences,
  type Verdict,
} from "./known.ts";
export {
  canonicalLines,
  compareRings,
  HISTORY_COUNTERS,
  nestingProblem,
  phaseDurations,
  readRings,
  realRunWindow,
  type RingComparison,
  type RingDifference,
  ringDifferenceAt,
  ringDifferenceContext,
  ringDifferenceSummary,
  type RingEvent,
  type RingRecord,
  type RingWindow,
  RingWindowError,
  simulatedRunWindow,
  UNMODELLED_COUNTERS,
} from "./rings.ts";
export {
  judgeRings,
  MAX_RING_LOG2,
  MIN_RING_LOG2,
  RING_KEYS,
  ringEnv,
  type RingExec,
  type RingJudgement,
  ringKey,
  type RingMode,
  ringProblem,
  type RingSimulation,
} from "./ring_run.ts";
export { Calibration, formatCalibration, type PhaseCalibration } from "./calibration.ts";
export {
  buildProgram,
  DEFAULT_RACY_RUNS,
  type DiffOptions,
  type DiffResult,
  DiffRunError,
  diffScenario,
  judgedResult,
  type RaceOutcome,
  type ReadResolution,
  removeOwnRunFolders,
  resolveRaces,
  simulateCanonical,
  type SimulatedRun,
  simulateRing,
  SimulationCache,
  sweepRunFolders,
} from "./run.ts";
export {
  type CampaignItem,
  type CampaignOptions,
  type CampaignPlan,
  planIndices,
  runCampaign,
  type WorkerConfig,
} from "./campaign.ts";
export { EXPORTABLE_FEATURES, FeatureCounts, scenarioFeatures } from "./features.ts";
export {
  failureClass,
  type GenCallback,
  type GenProfile,
  type GenProgram,
  type GenStep,
  type GenTracker,
  judgeRandom,
  type JudgeRandomOptions,
  type RandomOutcome,
  randomProgram,
  randomScenario,
  randomScenarioModule,
  randomScenarioName,
  scenarioSeed,
  stepCount,
} from "./random.ts";
