/**
 * Random differential testing: scenarios generated from a seed (\_gen_program.ts), each judged
 * like a library scenario, and a difference shrunk to a minimal scenario that an ordinary module
 * reproduces. `deno task diff --random N` runs a campaign (cli/diff.ts, with a pool of workers);
 * this module is one scenario's work, which the pool runs in each worker.
 *
 * Scenario `I` of seed `S` is named `rnd-S-I` and is always the same program: the generator is
 * fast-check's, seeded with a hash of `S` and `I`, so a campaign can be split into shards and any
 * scenario regenerated alone.
 * @module
 */
import fc from "fast-check";
import { checkExportable, ExportError, exportOCaml } from "../export/mod.ts";
import { countLeafSteps, type Scenario, ScenarioError } from "../scenario/mod.ts";
import { forEachStep } from "../scenario/walk.ts";
import { type GenProgram, genProgram, withinBudget } from "./_gen_program.ts";
import { shrinkCandidates } from "./_shrink.ts";
import { buildGenScenario, emitGenModule } from "./_gen_build.ts";
import { scenarioFeatures } from "./features.ts";
import { type DiffResult, simulateCanonical } from "./run.ts";

export type { GenCallback, GenProfile, GenProgram, GenStep, GenTracker } from "./_gen_program.ts";

/** The name of scenario `index` of the campaign of `seed`. */
export function randomScenarioName(seed: number, index: number): string {
  return `rnd-${seed}-${index}`;
}

/** fast-check's seed for scenario `index` of `seed` (a 32-bit mix of both). */
export function scenarioSeed(seed: number, index: number): number {
  let h = Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(index + 1, 0xc2b2ae35);
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  h = Math.imul(h, 0x846ca68b);
  h ^= h >>> 16;
  return h | 0;
}

/** The scenario `p` builds into, or undefined when it builds into none (the builder's checks
 * refuse it). */
function builtScenario(p: GenProgram): Scenario | undefined {
  try {
    return buildGenScenario(p, "rnd-check");
  } catch (e) {
    if (e instanceof ScenarioError) return undefined;
    throw e;
  }
}

/** Whether `p` builds into a valid scenario that the OCaml export accepts
 * ({@linkcode checkExportable}: no refusal, without writing the program; a generated program
 * is far shorter than the export's limit on a program's length). */
export function isExportable(p: GenProgram): boolean {
  const sc = builtScenario(p);
  return sc !== undefined && checkExportable(sc).length === 0;
}

/**
 * Whether `p` builds into a valid scenario that the OCaml export accepts, and that does not
 * misuse `Gc.Memprof` as it runs. A misuse cannot be excluded by construction alone:
 * `Gc.Memprof.stop` first runs the allocation callbacks still pending and raises what one of
 * them raises, leaving the profile running (memprof.c, caml_memprof_stop), so after a sampled
 * allocation of several blocks with raising callbacks, the next start or discard fails, in
 * OCaml as in the simulation. Such a program is not generated. Any other failure of the
 * simulation is left to the campaign, which reports it.
 */
export function isValidProgram(p: GenProgram): boolean {
  const sc = builtScenario(p);
  // The refusals first: a refused program is not written.
  if (sc === undefined || checkExportable(sc).length > 0) return false;
  let misuse;
  try {
    misuse = misusesMemprof(sc);
  } catch (e) {
    if (e instanceof ExportError) return false;
    throw e;
  }
  return !misuse;
}

/** Whether `sc`, simulated as the campaign simulates it (with its exported program's heap and
 * keep sites, whose marking moves slices, hence where callbacks run: rnd-19-978 misused
 * `Gc.Memprof` only so), calls `Gc.Memprof` in a state that makes it fail. Throws the
 * export's error if `sc` is refused. */
export function misusesMemprof(sc: Scenario): boolean {
  const program = exportOCaml(sc);
  try {
    simulateCanonical(sc, { majorHeap: program.majorHeap, keepSites: program.keepSites });
  } catch (e) {
    if (e instanceof ScenarioError && MEMPROF_MISUSE.test(e.message)) return true;
  }
  return false;
}

/** The failures of `Gc.Memprof` calls made in the wrong state. */
const MEMPROF_MISUSE =
  /Gc\.Memprof\.(start: already started|stop: no profile running|discard: profile not stopped)/;

/** The arbitrary of valid generated programs (one instance: fast-check's generation and
 * shrinking both go through it). */
export function exportablePrograms(): fc.Arbitrary<GenProgram> {
  return genProgram().filter((p) => withinBudget(p) && isValidProgram(p));
}

const ARBITRARY = exportablePrograms();

/** Program `index` of the campaign of `seed`. */
export function randomProgram(seed: number, index: number): GenProgram {
  return fc.sample(ARBITRARY, { seed: scenarioSeed(seed, index), numRuns: 1 })[0];
}

/** Scenario `index` of the campaign of `seed`, and the program it is built from. */
export function randomScenario(
  seed: number,
  index: number,
): { readonly program: GenProgram; readonly scenario: Scenario } {
  const program = randomProgram(seed, index);
  return { program, scenario: buildGenScenario(program, randomScenarioName(seed, index)) };
}

/** Steps of a scenario as written (every step once, bodies included). */
export function stepCount(sc: Scenario): number {
  let n = 0;
  forEachStep(sc.steps, true, () => {
    n++;
    return true;
  });
  return n;
}

/** How a result failed, for shrinking: a shrunk scenario must fail the same way. */
export function failureClass(r: DiffResult): string | undefined {
  switch (r.status) {
    case "agree":
    case "not exportable":
      return undefined;
    case "differs": {
      const d = r.comparison.difference!;
      return `differs:${d.kind}`;
    }
    case "error": {
      const m = r.message;
      if (m.startsWith("simulation failed")) return "error:simulation";
      if (m.includes("did not compile")) return "error:compile";
      if (m.includes("not deterministic")) return "error:nondeterministic";
      if (m.includes("did not finish")) return "error:timeout";
      if (m.includes("exited with status")) return "error:crash";
      return "error:other";
    }
  }
}

/** What judging one random scenario gave. */
export interface RandomOutcome {
  /** The scenario's index in its campaign. */
  readonly index: number;
  /** Its name, `rnd-SEED-INDEX`. */
  readonly name: string;
  /** The generated program it was built from. */
  readonly program: GenProgram;
  /** Features of the scenario (features.ts). */
  readonly features: readonly string[];
  /** Steps as written. */
  readonly steps: number;
  /** Leaf steps executed (loops unrolled). */
  readonly executedSteps: number;
  /** The judgement of the simulation against the real runtime. */
  readonly result: DiffResult;
  /** For a failure: the smallest program found that fails the same way. */
  readonly shrunk?: {
    readonly program: GenProgram;
    readonly steps: number;
    readonly result: DiffResult;
    /** Candidates tried while shrinking. */
    readonly tried: number;
    /** Whether shrinking stopped at its time budget rather than at a local minimum. */
    readonly cutShort: boolean;
  };
  /** Wall-clock milliseconds, shrinking included. */
  readonly ms: number;
}

/** Options of {@linkcode judgeRandom}. */
export interface JudgeRandomOptions {
  /** Judges one scenario (the real runtime's diff, or a stand-in in tests). `verify` asks for
   * the full determinism check (off while shrinking: candidates run once). */
  readonly diff: (sc: Scenario, opts: { readonly verify: boolean }) => Promise<DiffResult>;
  /** Shrink failures (default true). */
  readonly shrink?: boolean;
  /** Longest time spent shrinking one failure, in ms (default 180,000). */
  readonly shrinkMs?: number;
  /** Most candidates tried while shrinking (default 400). */
  readonly shrinkRuns?: number;
  /** Progress messages. */
  readonly onProgress?: (message: string) => void;
}

/** Generates scenario `index` of `seed`, judges it and, if it fails, shrinks it. */
export async function judgeRandom(
  seed: number,
  index: number,
  opts: JudgeRandomOptions,
): Promise<RandomOutcome> {
  const t0 = performance.now();
  const name = randomScenarioName(seed, index);
  const { program, scenario } = randomScenario(seed, index);
  const result = await opts.diff(scenario, { verify: true });
  const base = {
    index,
    name,
    program,
    features: [...scenarioFeatures(scenario)].sort(),
    steps: stepCount(scenario),
    executedSteps: countLeafSteps(scenario.steps),
    result,
  };
  const cls = failureClass(result);
  if (cls === undefined || opts.shrink === false) {
    return { ...base, ms: performance.now() - t0 };
  }
  const shrunk = await shrinkFailure(seed, index, cls, opts, program, result);
  return { ...base, shrunk, ms: performance.now() - t0 };
}

async function shrinkFailure(
  seed: number,
  index: number,
  cls: string,
  opts: JudgeRandomOptions,
  program: GenProgram,
  result: DiffResult,
): Promise<RandomOutcome["shrunk"]> {
  const name = randomScenarioName(seed, index);
  const start = performance.now();
  const budgetMs = opts.shrinkMs ?? 180_000;
  const maxRuns = opts.shrinkRuns ?? 400;
  let best = { program, steps: stepCount(buildGenScenario(program, name)), result };
  let tried = 0;
  let cutShort = false;
  const spent = (share: number) =>
    performance.now() - start > share * budgetMs || tried >= maxRuns * share;
  /** Whether candidate `p` fails the same way (and keeps it as the best if smaller). */
  const fails = async (p: GenProgram): Promise<boolean> => {
    tried++;
    const sc = buildGenScenario(p, name);
    // A nondeterministic program shows only over several runs.
    const r = await opts.diff(sc, { verify: cls === "error:nondeterministic" });
    if (failureClass(r) !== cls) return false;
    const steps = stepCount(sc);
    if (steps <= best.steps) best = { program: p, steps, result: r };
    opts.onProgress?.(`shrinking ${name}: ${best.steps} steps (${tried} tried)`);
    return true;
  };
  // First fast-check's shrinking (a third of the budget): it regenerates the same first value
  // from the same seed and shrinks it; the property "passes" for candidates that do not fail
  // the same way. Once its budget is spent, the property interrupts the run (a precondition
  // failure that interrupts, as fast-check's own time limits do), which ends fast-check's
  // shrinking with the smallest failure found so far: passing every further candidate instead
  // made fast-check go through all of them, minutes of CPU for a large program, for nothing.
  await fc.check(
    fc.asyncProperty(ARBITRARY, async (p) => {
      if (spent(1 / 3)) {
        cutShort = true;
        throw new fc.PreconditionFailure(true);
      }
      return !(await fails(p));
    }),
    { seed: scenarioSeed(seed, index), numRuns: 1 },
  );
  // Then structural candidates, greedily: the first that still fails is taken, and its own
  // candidates are tried, until none fails or the budget is spent.
  cutShort = false;
  let progress = true;
  while (progress && !cutShort) {
    progress = false;
    for (const c of shrinkCandidates(best.program)) {
      if (spent(1)) {
        cutShort = true;
        break;
      }
      if (!withinBudget(c) || !isValidProgram(c)) continue;
      if (await fails(c)) {
        progress = true;
        break;
      }
    }
  }
  return { ...best, tried, cutShort };
}

/** The scenario module reproducing `program` as scenario `name`; `scenarioModule` is the import
 * specifier of lib/scenario/mod.ts from the module's folder. */
export function randomScenarioModule(
  program: GenProgram,
  name: string,
  opts: { readonly scenarioModule: string; readonly header?: readonly string[] },
): string {
  return emitGenModule(program, name, opts);
}
