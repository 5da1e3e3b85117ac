/**
 * One differential run: a scenario is simulated and, exported to OCaml, compiled (binaries are
 * cached by content hash) and run on the real runtime; both canonical logs are compared. The
 * first time a binary runs it runs three times, and a program whose output changes from one run
 * to the next is reported as a nondeterministic export (a bug of the export, not a difference) —
 * unless the simulation met race points (RacePoint): then the program runs `racyRuns` times and
 * each distinct log must be reproduced by the simulation under a resolution read from it.
 * @module
 */
import { type RunOptions, type RunResult, runScenario, type Scenario } from "../scenario/mod.ts";
import {
  DEFAULT_LOG_CAPACITY,
  type ExportedProgram,
  ExportError,
  exportOCaml,
  HARNESS_FRAMES,
} from "../export/mod.ts";
import { canonicalLine, type CanonicalLog, parseRealLog, RealLogError } from "./canonical.ts";
import { compareLogs, type Comparison } from "./compare.ts";
import type { JoinOutcome, RacePoint, RaceResolution, RunEvent } from "../scenario/mod.ts";
import { processAlive } from "../ocaml/_process.ts";
import { writeFileAtomicSync } from "../util/atomic_file.ts";
import { judgeRings, type RingJudgement, type RingMode } from "./ring_run.ts";

/** How to build and run the real programs. */
export interface DiffOptions {
  /** The native compiler command (e.g. `["/…/bin/ocamlopt"]`). */
  readonly ocamlopt: readonly string[];
  /** Where compiled programs are kept between runs. */
  readonly cacheDir: string;
  /** Runs of a new binary that must print the same log (default 3). */
  readonly firstRuns?: number;
  /** Runs of a program with race points, each log explained by a resolution of the races
   * (default 20). */
  readonly racyRuns?: number;
  /** Longest a real program may run, in ms (default 300,000). */
  readonly timeoutMs?: number;
  /** Lines of context around a difference (default 3). */
  readonly context?: number;
  /** Progress messages (compiling, running). */
  readonly onProgress?: (message: string) => void;
  /** The environment the compiler runs in (default: this process's, which needs env
   * permission); OCAMLLIB, CAMLLIB and OCAMLPARAM are always removed from it. */
  readonly env?: Readonly<Record<string, string>>;
  /** Whether the runtime_events rings are compared too (default `auto`: when the scenario
   * starts runtime_events; `always` is `deno task diff --rings`). See lib/differential/rings.ts. */
  readonly rings?: RingMode;
}

/** Runs of a program with race points (`DiffOptions.racyRuns`). */
export const DEFAULT_RACY_RUNS = 20;

/** One distinct real log of a program with race points. */
export interface RaceOutcome {
  /** How many runs printed it. */
  readonly runs: number;
  /** The resolution read from it: the tracked blocks (allocation numbers) reported dead at a
   * promotion race. */
  readonly deadAtPromotion: readonly number[];
  /** The resolution read from it: adoption races (by id) whose orphans another domain than the
   * collecting one adopted, with that domain. */
  readonly adopter: readonly (readonly [number, number])[];
  /** The resolution read from it: the spawns whose new domain allocated first. */
  readonly childFirst: readonly number[];
  /** The resolution read from it: the domain ends whose joiner was not where it usually is,
   * with where it was (`RaceResolution.join`). */
  readonly join: readonly (readonly [number, JoinOutcome])[];
  /** Whether the simulation with that resolution printed the same log. */
  readonly reproduced: boolean;
}

/** What happened to one scenario. */
export type DiffResult =
  & { readonly scenario: string }
  & (
    | {
      readonly status: "agree" | "differs";
      readonly comparison: Comparison;
      /** Callbacks on each side. */
      readonly callbacks: { readonly sim: number; readonly real: number };
      /** Collections on each side. */
      readonly collections: {
        readonly sim: { readonly minor: number; readonly major: number };
        readonly real: { readonly minor: number; readonly major: number };
      };
      /** The binary was new and ran `firstRuns` times with identical output. */
      readonly verifiedNow: boolean;
      /** For a scenario with race points: its runs, and each distinct real outcome with the
       * resolution of the races that reproduced it (or did not: then the comparison is that
       * outcome's). */
      readonly races?: { readonly runs: number; readonly outcomes: readonly RaceOutcome[] };
      /** The rings' comparison, when they were compared ({@linkcode DiffOptions.rings}). */
      readonly rings?: RingJudgement;
    }
    | { readonly status: "not exportable"; readonly reason: string }
    | { readonly status: "error"; readonly message: string }
  );

/** The simulation's canonical log of `sc`, with the harness frames the export adds and what its
 * harness does with several domains (RunOptions.exportHarness). */
export function simulateCanonical(
  sc: Scenario,
  opts: Pick<RunOptions, "majorHeap" | "keepSites" | "races"> = {},
): CanonicalLog {
  return simulateWithRaces(sc, opts).log;
}

/** A simulation of a scenario under a resolution of its race points: its canonical log and the
 * race points it met ({@linkcode resolveRaces}' `simulations`). */
export interface SimulatedRun {
  /** The canonical log. */
  readonly log: CanonicalLog;
  /** The race points the run met, in order. */
  readonly racePoints: readonly RacePoint[];
}

/**
 * Simulations of one scenario (with one model) by resolution of its race points, for
 * {@linkcode resolveRaces}' calls on the distinct real logs of one program: a simulation
 * depends on the resolution only. Holds at most `maxLines` lines of canonical logs (about 100
 * bytes a line); past them, new simulations are not kept.
 */
export class SimulationCache {
  readonly #runs = new Map<string, SimulatedRun>();
  readonly #maxLines: number;
  #lines = 0;

  /** A cache holding at most `maxLines` log lines (default 2,000,000). */
  constructor(maxLines = 2_000_000) {
    this.#maxLines = maxLines;
  }

  /** The simulation under resolution `key` ({@linkcode resolutionKey}), made by `make` unless
   * kept. */
  get(key: string, make: () => SimulatedRun): SimulatedRun {
    const known = this.#runs.get(key);
    if (known !== undefined) return known;
    const made = make();
    if (this.#lines + made.log.lines.length <= this.#maxLines) {
      this.#runs.set(key, made);
      this.#lines += made.log.lines.length;
    }
    return made;
  }
}

/** The options of a simulation run as the exported program runs: its harness's frames, heap
 * and keep sites, each event into `events`. */
function asExported(
  events: RunEvent[],
  program: Pick<RunOptions, "majorHeap" | "keepSites">,
): RunOptions {
  return {
    onEvent: (e) => events.push(e),
    harnessFrames: HARNESS_FRAMES,
    exportHarness: true,
    majorHeap: program.majorHeap,
    keepSites: program.keepSites,
  };
}

/** {@linkcode simulateCanonical}, with the race points the run met. */
function simulateWithRaces(
  sc: Scenario,
  opts: Pick<RunOptions, "majorHeap" | "keepSites" | "races">,
): SimulatedRun {
  const events: RunEvent[] = [];
  const result = runScenario(sc, { ...asExported(events, opts), races: opts.races });
  return {
    log: {
      lines: events.map(canonicalLine),
      minorCollections: result.summary.minorCollections,
      majorCycles: result.summary.majorCycles,
      minorHeapWords: sc.settings.minorHeapWords,
      overflow: false,
    },
    racePoints: result.racePoints,
  };
}

/** A canonical callback line's kind, domain and allocation number (undefined for lines
 * without one: escapes). */
function callbackOf(
  line: string | undefined,
): { kind: string; domain: number; id: number } | undefined {
  const m = line === undefined ? null : /^([a-z_]+) d([0-9]+) .* id=([0-9]+)( |$)/.exec(line);
  return m === null ? undefined : { kind: m[1], domain: Number(m[2]), id: Number(m[3]) };
}

/** Simulations {@linkcode resolveRaces} may spend trying race outcomes that show only later
 * (other adopters of orphans, a spawn's allocations in the other order). Every outcome of every
 * spawn and join is tried at each step (see `search`): rnd-35-385's shrunk program, 4 spawns
 * and 4 domain ends, took 53. */
const MAX_RACE_TRIES = 128;

/** The join race's outcomes, in the order resolveRaces tries them. */
const JOIN_OUTCOMES: readonly JoinOutcome[] = [
  "late",
  "closureFirst",
  "callbacksFirst",
  "closureDuring",
  "callbacksDuring",
];

/** What a run of a scenario with race points must reproduce: the resolution read from its log. */
export interface ReadResolution {
  /** The tracked blocks reported dead at a promotion race. */
  readonly deadAtPromotion: readonly number[];
  /** The adopter of each adoption race's orphans (race `id` → domain), where it was not the
   * collecting domain. */
  readonly adopter: readonly (readonly [number, number])[];
  /** The spawns whose new domain allocated its DLS array before the parent its result. */
  readonly childFirst: readonly number[];
  /** The spawns whose parent allocated its result after some of the new domain's first
   * allocation callbacks (spawn → how many). */
  readonly childBefore: readonly (readonly [number, number])[];
  /** The domain ends (by number) whose joiner was not where it usually is
   * (`RaceResolution.join`), with where it was. */
  readonly join: readonly (readonly [number, JoinOutcome])[];
}

/**
 * The resolution of the race points that explains the real log `real`, read from it: starting
 * with the default resolution (every racing block promoted, orphans adopted by the collecting
 * domain), each time the first difference is explained by a race point — a racing block the real
 * run reported dead (`dealloc_minor` where the simulation has `promote`, same block), or an
 * orphaned block's callback run on another participant of its adoption race — that race is
 * resolved that way and the scenario simulated again. A difference neither explains may come
 * from a race whose outcome shows only later (an adoption by another participant, a spawn's
 * allocations in the other order): the other outcome of each such unresolved race point is then
 * tried, in the order the simulation met them, and kept if the logs agree further (at most
 * `MAX_RACE_TRIES` simulations in all). Stops at agreement or at a difference no race explains;
 * returns the last simulation and the resolution.
 */
export function resolveRaces(
  sc: Scenario,
  real: CanonicalLog,
  opts: Pick<RunOptions, "majorHeap" | "keepSites"> & {
    /** Simulations already made of `sc` (with the same model), shared by the calls for the
     * distinct real logs of one program; filled as the search goes. */
    readonly simulations?: SimulationCache;
  } = {},
): { sim: CanonicalLog; resolution: ReadResolution; racePoints: number } {
  const dead = new Set<number>();
  const adopter = new Map<number, number>();
  const childFirst = new Set<number>();
  const childBefore = new Map<number, number>();
  const join = new Map<number, JoinOutcome>();
  const decided = new Set<string>();
  let tries = 0;
  const model = { majorHeap: opts.majorHeap, keepSites: opts.keepSites };
  const simulate = (races: RaceResolution): SimulatedRun => {
    const make = () => simulateWithRaces(sc, { ...model, races });
    return opts.simulations?.get(resolutionKey(races), make) ?? make();
  };
  const current = (): RaceResolution => ({
    deadAtPromotion: dead,
    adopter,
    childFirst,
    childBefore,
    join,
  });
  /** How far a trial resolution makes the logs agree (Infinity: they agree), the race points
   * it met, and the racing blocks it had to take as dead to get there: a difference that is a
   * racing block's promotion where the real run reported its death is resolved so and the
   * trial simulated again (so that two outcomes of a point that agree equally far until such a
   * block are told apart). */
  const attempt = (
    races: RaceResolution,
  ): { reach: number; points: readonly RacePoint[]; deaths: readonly number[] } => {
    const deaths: number[] = [];
    // One try, however many deaths it meets: each is a distinct racing block, so they are
    // bounded by the run's race points (counting them as tries spent the budget on an outcome
    // with dozens of blocks reported dead, 1 run in 50 of domains_orphans under load).
    tries++;
    for (;;) {
      const trial = deaths.length === 0
        ? races
        : { ...races, deadAtPromotion: new Set([...races.deadAtPromotion!, ...deaths]) };
      const { log, racePoints } = simulate(trial);
      const d = compareLogs(log, real, { context: 0 }).difference;
      const reach = d === undefined ? Infinity : d.kind === "callback" ? d.index : -1;
      const id = reach > 0 && reach !== Infinity ? deadRace(log, racePoints, reach) : undefined;
      if (id === undefined || deaths.includes(id)) return { reach, points: racePoints, deaths };
      deaths.push(id);
    }
  };
  /** The racing block whose promotion at callback `index` of `log` the real run reported as
   * its death, if that is the difference there. */
  const deadRace = (
    log: CanonicalLog,
    points: readonly RacePoint[],
    index: number,
  ): number | undefined => {
    const ours = callbackOf(log.lines[index - 1]);
    const theirs = callbackOf(real.lines[index - 1]);
    if (ours === undefined || theirs === undefined || ours.id !== theirs.id) return undefined;
    const racing = points.some((p) => p.kind === "promotion" && p.id === ours.id && !p.dead);
    return ours.kind === "promote" && theirs.kind === "dealloc_minor" && racing
      ? ours.id
      : undefined;
  };
  /** The other outcomes of a race point that shows only later and elsewhere, as changes of
   * the resolution `base` (none for a point already decided or read). */
  const alternatives = (
    p: RacePoint,
    base: RaceResolution,
  ): { key: string; races: RaceResolution; keep: () => void }[] => {
    if (
      p.kind === "spawn" && !base.childFirst!.has(p.spawn) && !base.childBefore!.has(p.spawn)
    ) {
      const trial = new Set(base.childFirst).add(p.spawn);
      const out: { key: string; races: RaceResolution; keep: () => void }[] = [{
        key: `spawn ${p.spawn}`,
        races: { ...base, childFirst: trial },
        keep: () => void childFirst.add(p.spawn),
      }];
      // The parent's result between the new domain's first callbacks.
      for (let k = 1; k < (p.childCallbacks ?? 0); k++) {
        out.push({
          key: `spawn ${p.spawn} after ${k}`,
          races: { ...base, childBefore: new Map(base.childBefore).set(p.spawn, k) },
          keep: () => void childBefore.set(p.spawn, k),
        });
      }
      return out;
    }
    if (p.kind === "adoption" && !base.adopter!.has(p.id)) {
      return p.participants.filter((o) => o !== p.domain).map((other) => ({
        key: `adoption ${p.id} ${other}`,
        races: { ...base, adopter: new Map(base.adopter).set(p.id, other) },
        keep: () => adopter.set(p.id, other),
      }));
    }
    // A join's outcome is tried again once the resolution changed: closureFirst and
    // closureDuring agree equally far until a racing block the collection promotes is known
    // dead, after which only one of them agrees further.
    if (p.kind === "join") {
      const now = base.join!.get(p.join) ?? p.outcome;
      return JOIN_OUTCOMES.filter((o) => o !== now).map((outcome) => ({
        key: `join ${p.join} ${outcome}`,
        races: { ...base, join: new Map(base.join).set(p.join, outcome) },
        keep: () => join.set(p.join, outcome),
      }));
    }
    return [];
  };
  /** Each of `level` (outcomes that agree exactly as far as `index`) with the other outcomes
   * of the adoption races it met that the last simulation (`met`) did not: keeps the first pair
   * that agrees further. */
  const tryAdoptions = (
    level: readonly {
      races: RaceResolution;
      keep: () => void;
      points: readonly RacePoint[];
    }[],
    met: ReadonlySet<number>,
    index: number,
  ): boolean => {
    for (const alt of level) {
      for (const q of alt.points) {
        if (q.kind !== "adoption" || met.has(q.id)) continue;
        for (const inner of alternatives(q, alt.races)) {
          if (tries >= MAX_RACE_TRIES) return false;
          if (attempt(inner.races).reach > index) {
            alt.keep();
            inner.keep();
            return true;
          }
        }
      }
    }
    return false;
  };
  /** Tries the other outcomes of the race points that show only later and elsewhere (an
   * adoption by another participant, a spawn's allocations in the other order, a joiner that
   * was elsewhere when its domain ended), in the order the last simulation met them: for a
   * spawn or a join, the outcome that makes the logs agree furthest beyond `index` is kept, for
   * an adoption the first participant that makes them agree further. An outcome that
   * makes them agree exactly as far but meets adoption races the last simulation did not (a
   * joiner that ran its callbacks before the orphans existed leaves them to a later
   * collection's participants) is tried with each of those races' other outcomes too. */
  const search = (points: readonly RacePoint[], index: number): boolean => {
    const met = new Set(points.filter((p) => p.kind === "adoption").map((p) => p.id));
    // An outcome tried under one resolution may be tried again under another.
    const state = resolutionKey(current());
    // A spawn's outcomes differ only in where the parent's result comes among the new domain's
    // first callbacks, all near the same place: the one that agrees furthest is kept (the first
    // that agrees further may be a neighbour of the real one). So do a join's: closureFirst and
    // closureDuring agree up to the closure's promotion. And so across points: every outcome
    // of every spawn and join is tried, and the one that agrees furthest kept, since another
    // point's outcome can agree a callback further by chance (an earlier domain end's joiner
    // running its callbacks elsewhere moves a later closure's sample) where the real cause is a
    // later point. A join outcome that agrees exactly as far, but meets adoption races the last
    // simulation did not, is tried with their other outcomes too (below).
    let best: { reach: number; keep: () => void; deaths: readonly number[] } | undefined;
    const levels = new Map<
      RacePoint,
      { races: RaceResolution; keep: () => void; points: readonly RacePoint[] }[]
    >();
    for (const p of points) {
      if (p.kind !== "spawn" && p.kind !== "join") continue;
      const level: { races: RaceResolution; keep: () => void; points: readonly RacePoint[] }[] = [];
      levels.set(p, level);
      for (const alt of alternatives(p, current())) {
        const key = `${alt.key} | ${state}`;
        if (tries >= MAX_RACE_TRIES || decided.has(key)) continue;
        decided.add(key);
        const { reach, deaths, points } = attempt(alt.races);
        if (reach > index && (best === undefined || reach > best.reach)) {
          best = { reach, keep: alt.keep, deaths };
        }
        if (reach === index) level.push({ races: alt.races, keep: alt.keep, points });
      }
      if (best?.reach === Infinity) break;
    }
    if (best !== undefined) {
      best.keep();
      for (const id of best.deaths) dead.add(id);
      return true;
    }
    for (const p of points) {
      if (p.kind === "spawn") continue;
      if (p.kind === "join") {
        if (tryAdoptions(levels.get(p) ?? [], met, index)) return true;
        continue;
      }
      // An adoption's other participants, tried again in each search (they may explain a
      // difference further on).
      for (const alt of alternatives(p, current())) {
        if (tries >= MAX_RACE_TRIES) return false;
        const trial = attempt(alt.races);
        if (trial.reach > index) {
          alt.keep();
          return true;
        }
        if (trial.reach !== index) continue;
        if (tryAdoptions([{ ...alt, points: trial.points }], met, index)) return true;
      }
    }
    return false;
  };
  for (;;) {
    const { log, racePoints } = simulate(current());
    const d = compareLogs(log, real, { context: 0 }).difference;
    if (d !== undefined && d.kind === "callback") {
      const ours = callbackOf(log.lines[d.index - 1]);
      const theirs = callbackOf(real.lines[d.index - 1]);
      if (ours !== undefined && theirs !== undefined && ours.id === theirs.id) {
        const id = ours.id;
        if (
          ours.kind === "promote" && theirs.kind === "dealloc_minor" &&
          racePoints.some((p) => p.kind === "promotion" && p.id === id && !p.dead)
        ) {
          dead.add(id);
          continue;
        }
        const adoption = racePoints.find((p): p is Extract<RacePoint, { kind: "adoption" }> =>
          p.kind === "adoption" && p.ids.includes(id) && !adopter.has(p.id) &&
          p.participants.includes(theirs.domain) && p.domain === ours.domain
        );
        if (ours.kind === theirs.kind && ours.domain !== theirs.domain && adoption) {
          adopter.set(adoption.id, theirs.domain);
          continue;
        }
      }
      // An adoption by another participant shows later, and elsewhere: the orphans' tables
      // reach the final adopter in another order (a domain that adopted them orphans them
      // again, its own table first), so their callbacks run in another order on the same
      // domain. Each unresolved adoption race is tried with its other participants, and a
      // choice is kept when the logs then agree further; so are spawn and join races.
      if (search(racePoints, d.index)) continue;
    }
    return {
      sim: log,
      resolution: {
        deadAtPromotion: [...dead].sort((a, b) => a - b),
        adopter: [...adopter].sort((a, b) => a[0] - b[0]),
        childFirst: [...childFirst].sort((a, b) => a - b),
        childBefore: [...childBefore].sort((a, b) => a[0] - b[0]),
        join: [...join].sort((a, b) => a[0] - b[0]),
      },
      racePoints: racePoints.length,
    };
  }
}

/** A resolution as text, to tell resolutions apart. */
function resolutionKey(r: RaceResolution): string {
  const sorted = <T>(xs: Iterable<T>) => JSON.stringify([...xs].sort());
  return [
    sorted(r.deadAtPromotion ?? []),
    sorted(r.adopter ?? []),
    sorted(r.childFirst ?? []),
    sorted(r.childBefore ?? []),
    sorted(r.join ?? []),
  ].join(" ");
}

/** {@linkcode judgeRings}, a failure of the ring side (a ring program that does not build or
 * crashes, a simulation that throws) being the ring's error, not the scenario's. */
async function judgeRingsSafely(
  sc: Scenario,
  io: Parameters<typeof judgeRings>[1],
): Promise<RingJudgement> {
  try {
    return await judgeRings(sc, io);
  } catch (e) {
    if (e instanceof Error) {
      return { status: "error", message: `the ring run failed: ${e.message}` };
    }
    throw e;
  }
}

/** The simulation's run of `sc` with its ring started from the first step, `ringLog2` words
 * per domain, and the harness of `program`: its callback lines, ring and collections. */
export function simulateRing(
  sc: Scenario,
  ringLog2: number,
  program: Pick<ExportedProgram, "majorHeap" | "keepSites">,
): {
  lines: string[];
  image: Uint8Array;
  minor: number;
  major: number;
  gc: RunResult["gc"];
} {
  const events: RunEvent[] = [];
  const resized: Scenario = { ...sc, settings: { ...sc.settings, ringLog2 } };
  const result = runScenario(resized, { ...asExported(events, program), ringFromStart: true });
  return {
    lines: events.map(canonicalLine),
    image: result.eventsImage,
    minor: result.summary.minorCollections,
    major: result.summary.majorCycles,
    gc: result.gc,
  };
}

/** Exports, builds, runs and compares scenario `sc`. Never throws for a scenario's problem:
 * those are results. */
export async function diffScenario(sc: Scenario, opts: DiffOptions): Promise<DiffResult> {
  const scenario = sc.settings.name;
  let program: ExportedProgram;
  try {
    program = exportOCaml(sc);
  } catch (e) {
    if (e instanceof ExportError) return { scenario, status: "not exportable", reason: e.reason };
    throw e;
  }
  let sim: CanonicalLog;
  let racy: boolean;
  const model = { majorHeap: program.majorHeap, keepSites: program.keepSites };
  try {
    const first = simulateWithRaces(sc, model);
    sim = first.log;
    racy = first.racePoints.length > 0;
  } catch (e) {
    return { scenario, status: "error", message: `simulation failed: ${(e as Error).message}` };
  }
  // Size the program's log from the simulation: room for twice its callbacks.
  const capacity = 2 * sim.lines.length + 1024;
  if (capacity > DEFAULT_LOG_CAPACITY) program = exportOCaml(sc, { logCapacity: capacity });
  try {
    const exe = await buildProgram(program, opts);
    if (racy) return await judgeRacy(sc, exe, program, opts);
    const { output, verifiedNow } = await runVerified(exe, program, opts);
    const real = parseRealLog(output, program);
    const result = judgedResult(scenario, sim, real, { context: opts.context, verifiedNow });
    const mode = opts.rings ?? "auto";
    const usesEvents = program.compileArgs.includes("runtime_events.cmxa");
    if (result.status === "error" || result.status === "not exportable") return result;
    if (mode === "never" || (mode === "auto" && !usesEvents)) return result;
    const rings = await judgeRingsSafely(sc, {
      logCapacity: Math.max(capacity, DEFAULT_LOG_CAPACITY),
      simLines: sim.lines,
      realOutput: output,
      context: opts.context,
      exec: async (ringProgram, env) => {
        const exe = await buildProgram(ringProgram, opts);
        opts.onProgress?.(`running ${scenario} with its ring`);
        const run = await runInFolder(exe, env, opts, (cwd) => {
          const file = [...Deno.readDirSync(cwd)].find((e) => /^[0-9]+\.events$/.test(e.name));
          return file === undefined ? undefined : Deno.readFileSync(`${cwd}/${file.name}`);
        });
        return { stdout: run.stdout, stderr: run.stderr, ring: run.collected };
      },
      simulate: (s, ringLog2) => simulateRing(s, ringLog2, program),
    });
    return { ...result, rings };
  } catch (e) {
    if (e instanceof DiffRunError || e instanceof RealLogError) {
      return { scenario, status: "error", message: e.message };
    }
    throw e;
  }
}

/**
 * A scenario with race points: its program runs `opts.racyRuns` times (default 20); each
 * distinct log is explained by a resolution of the races read from it ({@linkcode resolveRaces})
 * and must then agree exactly. The result is that of the first distinct log that does not, else
 * of the last one, with every outcome listed.
 */
async function judgeRacy(
  sc: Scenario,
  exe: string,
  program: ExportedProgram,
  opts: DiffOptions,
): Promise<DiffResult> {
  const runs = opts.racyRuns ?? DEFAULT_RACY_RUNS;
  const seen = new Map<string, number>();
  for (let k = 1; k <= runs; k++) {
    opts.onProgress?.(`running ${program.scenario} (${k}/${runs}, race points)`);
    const out = await runOnce(exe, program, opts);
    seen.set(out, (seen.get(out) ?? 0) + 1);
  }
  const outcomes: RaceOutcome[] = [];
  let last: DiffResult | undefined;
  const simulations = new SimulationCache();
  for (const [output, count] of seen) {
    const real = parseRealLog(output, program);
    const { sim, resolution } = resolveRaces(sc, real, {
      majorHeap: program.majorHeap,
      keepSites: program.keepSites,
      simulations,
    });
    const r = judgedResult(program.scenario, sim, real, {
      context: opts.context,
      verifiedNow: false,
    });
    outcomes.push({ runs: count, ...resolution, reproduced: r.status === "agree" });
    last = r;
    if (r.status !== "agree") break;
  }
  return { ...last!, races: { runs, outcomes } } as DiffResult;
}

/** The result of comparing the canonical logs `sim` and `real` of scenario `scenario`. */
export function judgedResult(
  scenario: string,
  sim: CanonicalLog,
  real: CanonicalLog,
  opts: { readonly context?: number; readonly verifiedNow: boolean },
): DiffResult {
  const comparison = compareLogs(sim, real, { context: opts.context });
  return {
    scenario,
    status: comparison.difference === undefined ? "agree" : "differs",
    comparison,
    callbacks: { sim: sim.lines.length, real: real.lines.length },
    collections: {
      sim: { minor: sim.minorCollections, major: sim.majorCycles },
      real: { minor: real.minorCollections, major: real.majorCycles },
    },
    verifiedNow: opts.verifiedNow,
  };
}

/** A program that did not build, crashed, timed out or was not deterministic. */
export class DiffRunError extends Error {
  /** Error class name. */
  override name = "DiffRunError";
}

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

function compilerEnv(
  given: Readonly<Record<string, string>> | undefined,
): { clearEnv?: boolean; env?: Record<string, string> } {
  const readable = given !== undefined ||
    Deno.permissions.querySync({ name: "env" }).state === "granted";
  if (!readable) return {};
  const env = { ...(given ?? Deno.env.toObject()) };
  delete env.OCAMLLIB;
  delete env.CAMLLIB;
  delete env.OCAMLPARAM;
  return { clearEnv: true, env };
}

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Compiles `program` unless a binary of the same source, arguments and compiler is cached.
 * Returns the executable's path. */
export async function buildProgram(program: ExportedProgram, opts: DiffOptions): Promise<string> {
  const key = await sha256Hex(
    [program.source, program.compileArgs.join(" "), opts.ocamlopt.join(" ")].join("\0"),
  );
  const dir = `${opts.cacheDir}/${program.scenario}-${key.slice(0, 16)}`;
  const exe = `${dir}/program`;
  if (exists(exe)) return exe;
  Deno.mkdirSync(opts.cacheDir, { recursive: true });
  const tmp = Deno.makeTempDirSync({ dir: opts.cacheDir, prefix: ".build-" });
  try {
    Deno.writeTextFileSync(`${tmp}/${program.fileName}`, program.source);
    opts.onProgress?.(`compiling ${program.scenario}`);
    const [cmd, ...pre] = opts.ocamlopt;
    const out = await new Deno.Command(cmd, {
      args: [...pre, ...program.compileArgs, "-o", "program"],
      cwd: tmp,
      // A stray OCAMLLIB/CAMLLIB would point the compiler at another standard library: they are
      // removed when the environment can be read (given, or with env permission).
      ...compilerEnv(opts.env),
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!out.success) {
      const log = new TextDecoder().decode(out.stderr) + new TextDecoder().decode(out.stdout);
      Deno.writeTextFileSync(`${tmp}/compile.log`, log);
      const kept = `${opts.cacheDir}/failed-${program.scenario}`;
      try {
        Deno.removeSync(kept, { recursive: true });
      } catch { /* none */ }
      Deno.renameSync(tmp, kept);
      throw new DiffRunError(
        `the exported program did not compile (a bug of the export): ${
          log.split("\n").slice(0, 12).join("\n")
        }\n(program and log kept in ${kept})`,
      );
    }
    try {
      Deno.renameSync(tmp, dir);
    } catch (e) {
      // Another run built the same program meanwhile: use theirs.
      if (!exists(exe)) throw e;
      Deno.removeSync(tmp, { recursive: true });
    }
    return exe;
  } catch (e) {
    if (exists(tmp)) Deno.removeSync(tmp, { recursive: true });
    throw e;
  }
}

/** Where run folders are made. */
const RUN_ROOT = "/tmp";
/** A run folder's name, exactly: `memprof-lab-` and 16 hex digits (one length, see runOnce). */
const RUN_DIR_NAME = /^memprof-lab-[0-9a-f]{16}$/;
/** The file of a run folder naming the process that made it (its pid). */
const RUN_OWNER_FILE = ".owner";

/** Programs this isolate is running, killed when the process is stopped. */
const runningPrograms = new Set<Deno.ChildProcess>();
/** Whether this isolate swept the folders of dead processes already. */
let swept = false;

/** A new directory `/tmp/memprof-lab-<16 hex digits>` (Deno's own temporary names drop leading
 * zeros, so their length varies), holding `.owner` with this process's pid. The first one of an
 * isolate sweeps the folders left by processes that are gone ({@linkcode sweepRunFolders}). */
function fixedLengthTempDir(): string {
  if (!swept) {
    swept = true;
    sweepRunFolders();
  }
  for (;;) {
    const bytes = crypto.getRandomValues(new Uint8Array(8));
    const hex = [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
    const dir = `${RUN_ROOT}/memprof-lab-${hex}`;
    try {
      Deno.mkdirSync(dir, { mode: 0o700 });
    } catch (e) {
      if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
      continue;
    }
    try {
      Deno.writeTextFileSync(`${dir}/${RUN_OWNER_FILE}`, `${Deno.pid}\n`);
    } catch (e) {
      Deno.removeSync(dir, { recursive: true });
      throw e;
    }
    return dir;
  }
}

/** The pid in the `.owner` file of run folder `dir` (a regular file holding a pid), if any. */
function runFolderOwner(dir: string): number | undefined {
  try {
    const path = `${dir}/${RUN_OWNER_FILE}`;
    if (!Deno.lstatSync(path).isFile) return undefined;
    const m = /^([1-9][0-9]{0,9})\n?$/.exec(Deno.readTextFileSync(path));
    return m === null ? undefined : Number(m[1]);
  } catch {
    return undefined;
  }
}

/** The run folders in `root` (directories, not links, named exactly as runs name them) with
 * their owners' pids. */
function runFolders(root: string): { dir: string; owner: number }[] {
  const found: { dir: string; owner: number }[] = [];
  try {
    for (const e of Deno.readDirSync(root)) {
      if (!e.isDirectory || e.isSymlink || !RUN_DIR_NAME.test(e.name)) continue;
      const dir = `${root}/${e.name}`;
      const owner = runFolderOwner(dir);
      if (owner !== undefined) found.push({ dir, owner });
    }
  } catch { /* cannot list the folder: nothing to do */ }
  return found;
}

/**
 * Removes the run folders left by processes killed while a program ran: the directories of
 * `/tmp` (or `root`) named exactly `memprof-lab-<16 hex digits>` whose `.owner` file names a
 * process that is not running (`isAlive`, default: asked with `kill -0`, which needs
 * `--allow-run`; a process it cannot ask about counts as running). A folder without such a file,
 * of another name, or of a live process is left alone. Returns the folders removed.
 */
export function sweepRunFolders(
  opts: { readonly root?: string; readonly isAlive?: (pid: number) => boolean } = {},
): string[] {
  const isAlive = opts.isAlive ?? processAlive;
  const removed: string[] = [];
  for (const { dir, owner } of runFolders(opts.root ?? RUN_ROOT)) {
    if (owner === Deno.pid || isAlive(owner)) continue;
    try {
      Deno.removeSync(dir, { recursive: true });
      removed.push(dir);
    } catch { /* removed meanwhile, or not ours to remove */ }
  }
  return removed;
}

/**
 * For a process about to end on SIGINT or SIGTERM: kills the programs this isolate is running and
 * removes every run folder of this process (those of its workers too: they share its pid).
 */
export function removeOwnRunFolders(root = RUN_ROOT): void {
  for (const child of runningPrograms) {
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
  }
  for (const { dir, owner } of runFolders(root)) {
    if (owner !== Deno.pid) continue;
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch { /* already gone */ }
  }
}

/**
 * Runs the program once. It runs as `/tmp/memprof-lab-XXXXXXXXXXXXXXXX/program` (one length) whatever the
 * cache folder: the runtime keeps the executable's path (`Sys.executable_name`) in the heap, and
 * the major collector's pacing follows the heap's size, so a path of another length shifts when
 * major cycles end (seen: a CI checkout's longer path moved a difference by 41 callbacks).
 */
async function runOnce(exe: string, program: ExportedProgram, opts: DiffOptions): Promise<string> {
  return (await runInFolder(exe, program.env, opts)).stdout;
}

/** What a program run in its folder printed, and what `collect` took from the folder before it
 * was removed. */
interface FolderRun<T> {
  readonly stdout: string;
  readonly stderr: string;
  readonly collected: T | undefined;
}

/** Runs `exe` once in a run folder (see {@linkcode runOnce}) with environment `env`; `collect`
 * reads what it needs from the folder (given its path) once the program has ended well. */
async function runInFolder<T = never>(
  exe: string,
  env: Readonly<Record<string, string>>,
  opts: DiffOptions,
  collect?: (cwd: string) => T,
): Promise<FolderRun<T>> {
  const cwd = fixedLengthTempDir();
  const timeoutMs = opts.timeoutMs ?? 300_000;
  try {
    Deno.copyFileSync(exe, `${cwd}/program`);
    Deno.chmodSync(`${cwd}/program`, 0o755);
    const child = await spawnRetrying(
      new Deno.Command(`${cwd}/program`, {
        cwd,
        env: { ...env },
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }),
    );
    runningPrograms.add(child);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        child.kill("SIGKILL");
      } catch { /* already gone */ }
    }, timeoutMs);
    let out: Deno.CommandOutput;
    try {
      out = await child.output();
    } finally {
      clearTimeout(timer);
      runningPrograms.delete(child);
    }
    if (timedOut) {
      throw new DiffRunError(`the real program did not finish within ${timeoutMs / 1000} s`);
    }
    if (!out.success) {
      const err = new TextDecoder().decode(out.stderr).trim().split("\n").slice(-8).join("\n");
      throw new DiffRunError(
        `the real program exited with status ${out.code}${
          out.signal ? ` (signal ${out.signal})` : ""
        }: ${err}`,
      );
    }
    return {
      stdout: new TextDecoder().decode(out.stdout),
      stderr: new TextDecoder().decode(out.stderr),
      collected: collect?.(cwd),
    };
  } finally {
    Deno.removeSync(cwd, { recursive: true });
  }
}

/**
 * Spawns `cmd`, trying again a few times when the executable is "busy" (ETXTBSY): a process
 * forked elsewhere in this process (another worker of a campaign) while the copy of the program
 * was open for writing holds that descriptor until it execs, and exec refuses a file open for
 * writing.
 */
async function spawnRetrying(cmd: Deno.Command): Promise<Deno.ChildProcess> {
  for (let attempt = 1;; attempt++) {
    try {
      return cmd.spawn();
    } catch (e) {
      if (attempt >= 20 || !(e instanceof Error) || !/Text file busy|os error 26/.test(e.message)) {
        throw e;
      }
      await new Promise((r) => setTimeout(r, 25 * attempt));
    }
  }
}

/** Runs the program; a binary's first use runs it `firstRuns` times and insists on one output. */
async function runVerified(
  exe: string,
  program: ExportedProgram,
  opts: DiffOptions,
): Promise<{ output: string; verifiedNow: boolean }> {
  const marker = `${exe}.verified`;
  if (exists(marker)) {
    opts.onProgress?.(`running ${program.scenario}`);
    return { output: await runOnce(exe, program, opts), verifiedNow: false };
  }
  const runs = opts.firstRuns ?? 3;
  let first: string | undefined;
  for (let k = 1; k <= runs; k++) {
    opts.onProgress?.(`running ${program.scenario} (${k}/${runs}, first use)`);
    const out = await runOnce(exe, program, opts);
    if (first === undefined) first = out;
    else if (out !== first) {
      const a = first.split("\n"), b = out.split("\n");
      let i = 0;
      while (i < a.length && a[i] === b[i]) i++;
      throw new DiffRunError(
        `the real program is not deterministic (a bug of the export): runs 1 and ${k} part at ` +
          `line ${i + 1}: ${JSON.stringify(a[i] ?? "")} vs ${JSON.stringify(b[i] ?? "")}`,
      );
    }
  }
  // Through a temporary and a rename: a marker cut short would make a binary look verified.
  writeFileAtomicSync(marker, new TextEncoder().encode(await sha256Hex(first!)));
  return { output: first!, verifiedNow: true };
}
