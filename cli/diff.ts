/**
 * `memprof-lab diff` (`deno task diff`): the differential suite. Every scenario (all of scenarios/index.ts by
 * default) is simulated and, exported to OCaml, run on the real OCaml 5.3 runtime; the two
 * canonical callback logs and collection counts are compared.
 *
 *   memprof-lab diff                        # the whole library
 *   memprof-lab diff ref_loop ./mine.ts     # some scenarios, by name or path
 *   memprof-lab diff --json
 *
 * @module
 */
import { printable, printableLines } from "../lib/util/printable.ts";
import { resolve } from "node:path";
import { scenarios as registered } from "../scenarios/index.ts";
import {
  Calibration,
  DEFAULT_RACY_RUNS,
  defaultDiffCacheDir,
  differenceContext,
  differenceSummary,
  type DiffResult,
  diffScenario,
  formatCalibration,
  judge,
  judgeKey,
  judgeRefusal,
  type KnownDifference,
  parseKnownDifferences,
  removeOwnRunFolders,
  RING_KEYS,
  ringDifferenceContext,
  ringDifferenceSummary,
  type RingJudgement,
  ringKey,
  ringProblem,
  runCampaign,
  type Verdict,
} from "../lib/differential/mod.ts";
import { findToolchain, setupToolchain, type Toolchain } from "../lib/ocaml/mod.ts";
import { loadScenarioEntry } from "./_load.ts";
import { parseShard, type RandomArgs, runRandom } from "./_diff_random.ts";
import {
  exitStatusOf,
  isWithin,
  onStopSignals,
  realPathOfExisting,
  UsageError,
  writeStderr,
  writeStdout,
} from "./_io.ts";
import { usageLines } from "./_usage.ts";
import { parseCommandLine, parseIntegerOption } from "./_args.ts";

/** Usage text printed by --help. */
export const USAGE = `${usageLines("diff", "[options] [NAME|PATH ...]")}

Runs each scenario in the simulation and, exported to an OCaml program, on the real
OCaml 5.3.0 runtime, and compares their callback logs (every callback in order, with
its loop indices, domain, size, samples, source, callstack and result) and their
numbers of minor and major collections. Without names, every scenario of the library.
A PATH is a module whose default export is a scenario.

Options:
  --known FILE      known differences (default: scenarios/known_differences.json); a listed
                    scenario must differ exactly where the list says, and a scenario of the
                    library the export refuses must be listed as "not exportable" with why
  --no-known        tolerate no difference (nor ring difference)
  --allow-refused   tolerate scenarios the export refuses, and a run that compares no
                    callback (both fail the run otherwise: nothing was judged)
  --rings           compare the runtime_events rings too, for every scenario (by default,
                    only those that start runtime_events): the real program runs with its
                    ring on from its start and OCAMLRUNPARAM=v=0x400; events, counters,
                    lifecycle and user events are compared ring by ring, gc-stats of the
                    real ring against the runtime's own statistics, and a table compares
                    the phases' durations (known ring differences:
                    scenarios/known_ring_differences.json)
  --json            print the results as JSON
  --context N       callback lines shown around a difference (default 3)
  --cache DIR       where compiled programs are kept (default: $MEMPROF_LAB_DIFF_CACHE,
                    else $XDG_CACHE_HOME/memprof-lab/differential, else ~/.cache/…)
  --setup           build the OCaml toolchain first if none is found
  --prefix DIR      OCaml toolchain prefix (as memprof-lab ocaml setup --prefix)
  --ocamlopt PATH   use this OCaml 5.3.x ocamlopt
  --ocamlfind PATH  use ocamlfind ocamlopt
  --timeout S       longest a real program may run, in seconds (default 300)
  --runs K          runs of a program whose simulation meets race points (default 20); each
                    distinct real log must be reproduced under a resolution read from it
  -h, --help        show this help

Random campaign (generated scenarios instead of named ones; docs/differential.md):
  --random N        judge scenarios 0 … N-1 generated from the seed
  --seed S          the campaign's seed (default 1); scenario I of seed S is named
                    rnd-S-I and is always the same program
  --shard I/K       only the scenarios whose number is I-1 modulo K (split a campaign
                    across machines or CI jobs)
  --jobs J          scenarios judged at once (default 2)
  --runs K          runs of each generated program that must print the same log
                    (default 10; a program with race points runs at least 20 times)
  --stats           print how many scenarios had each step kind and option
  --out DIR         where failing scenarios are written as modules (default
                    out/diff-random; never in tests/golden, even through a link)
  --no-shrink       write failing scenarios whole, without shrinking them
  --shrink-time S   longest time spent shrinking one failure (default 180)
  --scenario-timeout S
                    longest time one scenario may take, shrinking included (default 900)

Exit status: 0 when every scenario agrees or differs exactly as listed, 1 otherwise (a
difference, an error, a scenario the export refuses, no callback compared, a scenario
module that cannot be loaded, or an outdated list), 2 for a wrong command line (an unknown option or scenario name, a
missing file), 130 and 143 when stopped by SIGINT and SIGTERM.
`;

/** What the command needs from the outside world. */
export interface DiffCliIO {
  stdout(text: string): void;
  stderr(text: string): void;
  isTerminal(): boolean;
  env(name: string): string | undefined;
  readTextFile(path: string): string | undefined;
  importModule(path: string): Promise<{ default?: unknown }>;
  /** Whether a scenario module given by path exists (a missing one is a usage error); when
   * absent, a missing module is found by its import failing (exit 1). */
  exists?(path: string): boolean;
  /** Finds (or, with `setup`, builds) the toolchain. */
  toolchain(
    opts: { prefix?: string; ocamlopt?: string; ocamlfind?: string; setup: boolean },
  ): Promise<Toolchain | undefined>;
  /** Runs one scenario (injectable for tests). */
  diff: typeof diffScenario;
  /** Runs a random campaign (injectable for tests; default the worker pool). */
  runCampaign?: typeof runCampaign;
  /** Until the returned function is called, SIGINT and SIGTERM call `cleanup` and end the
   * process (status 130, 143). Without it, signals are left alone. */
  onStop?(cleanup: () => void): () => void;
}

/** The real consoles, files and toolchain. */
export const denoIO: DiffCliIO = {
  stdout: writeStdout,
  stderr: writeStderr,
  isTerminal: () => Deno.stderr.isTerminal(),
  env: (name) => Deno.env.get(name),
  readTextFile(path) {
    try {
      return Deno.readTextFileSync(path);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return undefined;
      throw e;
    }
  },
  importModule: (path) => import(new URL(path, `file://${Deno.cwd()}/`).href),
  exists(path) {
    try {
      Deno.statSync(path);
      return true;
    } catch {
      return false;
    }
  },
  toolchain: async ({ setup, ...opts }) =>
    setup
      ? await setupToolchain({ ...opts, onProgress: (l) => writeStderr(l + "\n") })
      : await findToolchain(opts),
  diff: diffScenario,
  onStop: onStopSignals,
};

const DEFAULT_KNOWN = new URL("../scenarios/known_differences.json", import.meta.url).pathname;
const DEFAULT_KNOWN_RINGS =
  new URL("../scenarios/known_ring_differences.json", import.meta.url).pathname;
const LIBRARY_GOLDENS = new URL("../tests/golden", import.meta.url).pathname;

/** Refuses a `--out` folder that is the library's goldens or inside them, by real path too (a
 * symbolic link into tests/golden counts). */
function refuseLibraryGoldens(out: string): void {
  const real = realPathOfExisting(out);
  if (
    isWithin(LIBRARY_GOLDENS, resolve(out)) || isWithin(realPathOfExisting(LIBRARY_GOLDENS), real)
  ) {
    throw new UsageError(
      `--out ${out}${real === resolve(out) ? "" : ` (really ${real})`} is in tests/golden, ` +
        `which holds the library's goldens only: give another folder`,
    );
  }
}

function cacheDir(io: DiffCliIO, option: string | undefined): string {
  if (option !== undefined) return option;
  const dir = defaultDiffCacheDir((name) => io.env(name));
  if (dir === undefined) {
    throw new UsageError("no cache folder: set HOME, XDG_CACHE_HOME or --cache");
  }
  return dir;
}

function positiveInt(name: string, text: string | undefined, dflt: number): number {
  return parseIntegerOption("diff", name, text, { min: 1 }) ?? dflt;
}

/** The campaign's settings from the parsed options. */
function randomArgs(
  o: Record<string, string | boolean | undefined>,
  context: number,
  timeoutMs: number,
): RandomArgs {
  const str = (k: string) => o[k] as string | undefined;
  const count = positiveInt("--random", str("random"), 1);
  const seed = parseIntegerOption("diff", "--seed", str("seed")) ?? 1;
  return {
    plan: { seed, count, shard: parseShard(str("shard")) },
    jobs: positiveInt("--jobs", str("jobs"), 2),
    runs: positiveInt("--runs", str("runs"), 10),
    out: str("out") ?? "out/diff-random",
    stats: o.stats === true,
    json: o.json === true,
    shrink: o["no-shrink"] !== true,
    shrinkMs: positiveInt("--shrink-time", str("shrink-time"), 180) * 1000,
    scenarioTimeoutMs: positiveInt("--scenario-timeout", str("scenario-timeout"), 900) * 1000,
    context,
    timeoutMs,
  };
}

/** A result with its verdict, as printed and returned as JSON. */
interface Row {
  readonly result: DiffResult;
  readonly verdict: Verdict | undefined;
  /** The rings' verdict against the known ring differences, when rings were compared. */
  readonly ringVerdict?: Verdict;
}

function badVerdict(v: Verdict | undefined): boolean {
  return v !== undefined &&
    (v.kind === "unexpected" || v.kind === "now agrees" || v.kind === "moved" ||
      v.kind === "now exportable");
}

function failed(row: Row): boolean {
  const r = row.result;
  if (r.status === "error") return true;
  if (
    r.status !== "not exportable" && r.rings !== undefined && ringProblem(r.rings) !== undefined
  ) {
    return true;
  }
  return badVerdict(row.verdict) || badVerdict(row.ringVerdict);
}

/** The lines saying how the rings compared. */
function ringLines(j: RingJudgement, v: Verdict | undefined): string[] {
  if (j.status !== "compared") {
    const known = v?.kind === "known" ? ` (known: ${v.entry.reason})` : "";
    return [`  rings: ${j.status === "error" ? "error: " : ""}${j.message}${known}`];
  }
  let s = ringDifferenceSummary(j.comparison);
  if (v?.kind === "known") s += ` (known: ${v.entry.reason})`;
  if (v?.kind === "now agrees") {
    s += `, but it is listed as a known ring difference at ${v.entry.at}: remove it from the list`;
  }
  if (v?.kind === "moved") {
    s += `, but the known ring differences list it at ${v.entry.at}: update the list`;
  }
  const out = [`  rings (e=${j.ringLog2}): ${s.replace(/^rings /, "")}`];
  if (j.comparison.difference !== undefined && v?.kind !== "known") {
    out.push(...ringDifferenceContext(j.comparison.difference));
  }
  const problem = ringProblem(j);
  const g = j.gcStats.real.runtime;
  out.push(
    problem !== undefined
      ? `  ${problem}`
      : `  gc-stats: the real ring's equal OCAMLRUNPARAM=v=0x400 (${g.minor_collections} minor, ` +
        `${g.major_collections} major, ${g.minor_words} minor words, ${g.promoted_words} promoted, ` +
        `${g.major_words} major); the simulated ring's equal its counters`,
  );
  return out;
}

/** What a refused scenario's line says to do, by how it was named. */
function refusalAdvice(row: Row, named: boolean): string {
  const v = row.verdict;
  if (v === undefined || v.kind === "known") return "";
  if (v.kind === "moved") {
    return `; the known differences list it at ${v.entry.at}: update the list`;
  }
  return named
    ? '; nothing was judged: make it exportable (docs/differential.md, "What is refused, ' +
      'and why"), or pass --allow-refused to tolerate it'
    : '; list it in the known differences ("at": "not exportable") with why, or make ' +
      "it exportable";
}

function lineOf(row: Row, named: boolean): string {
  const r = row.result;
  switch (r.status) {
    case "not exportable":
      if (row.verdict?.kind === "known") {
        return `not exportable (known: ${row.verdict.entry.reason})`;
      }
      return `not exportable: ${r.reason}${refusalAdvice(row, named)}`;
    case "error":
      return `error: ${printableLines(r.message)}`;
    default: {
      const s = differenceSummary(r.comparison) + racesNote(r);
      const v = row.verdict;
      if (v?.kind === "known") return `${s} (known: ${v.entry.reason})`;
      if (v?.kind === "now agrees") {
        return `${s}, but it is listed as a known difference at ${v.entry.at}: remove it ` +
          "from the known differences";
      }
      if (v?.kind === "moved") {
        return `${s}, but the known differences list it at ${v.entry.at}: update the list`;
      }
      if (v?.kind === "now exportable") {
        return `${s}, but it is listed as not exportable: remove it from the known differences`;
      }
      return s;
    }
  }
}

/** For a scenario with race points: its runs and distinct outcomes, and whether each was
 * reproduced. */
function racesNote(r: DiffResult): string {
  if (r.status !== "agree" && r.status !== "differs") return "";
  const races = r.races;
  if (races === undefined) return "";
  const n = races.outcomes.length;
  const all = races.outcomes.every((o) => o.reproduced);
  return ` [race points: ${races.runs} runs, ${n} distinct outcome${n === 1 ? "" : "s"}${
    all ? `, ${n === 1 ? "" : "each "}reproduced` : ""
  }]`;
}

function table(rows: readonly Row[]): string[] {
  // The headers are the keys of the results --json prints (callbacks.sim, collections.sim.minor…).
  const head = ["scenario", "status", "callbacks", "minor", "major"];
  const body = rows.map(({ result: r, verdict: v }) => {
    if (r.status === "not exportable" || r.status === "error") {
      return [r.scenario, r.status, "", "", ""];
    }
    const res = r.status === "agree"
      ? "agree"
      : `differs at ${v?.kind === "known" ? `${v.entry.at} (known)` : differenceAt(r)}`;
    return [
      r.scenario,
      res,
      `${r.callbacks.sim}/${r.callbacks.real}`,
      `${r.collections.sim.minor}/${r.collections.real.minor}`,
      `${r.collections.sim.major}/${r.collections.real.major}`,
    ];
  });
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const fmt = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join("  ").trimEnd();
  return [fmt(head), fmt(widths.map((w) => "-".repeat(w))), ...body.map(fmt)];
}

function differenceAt(r: Extract<DiffResult, { status: "agree" | "differs" }>): string {
  const d = r.comparison.difference;
  if (d === undefined) return "";
  return d.kind === "callback" ? `callback ${d.index}` : d.kind;
}

function ringsOf(row: Row): RingJudgement | undefined {
  const r = row.result;
  return r.status === "agree" || r.status === "differs" ? r.rings : undefined;
}

function withoutDurations(j: RingJudgement): unknown {
  if (j.status !== "compared") return j;
  const { durations: _durations, ...rest } = j;
  return rest;
}

/** Runs the command; returns its exit status. */
export async function run(args: string[], io: DiffCliIO = denoIO): Promise<number> {
  // Stopped by a signal, the command removes the folders its real programs run in (its
  // campaign workers' too), and kills the programs.
  const stopped = io.onStop?.(() => removeOwnRunFolders());
  try {
    return await main(args, io);
  } catch (e) {
    return exitStatusOf(e, io.stderr);
  } finally {
    stopped?.();
  }
}

async function main(args: string[], io: DiffCliIO): Promise<number> {
  const parsed = parseCommandLine("diff", args, {
    allowPositionals: true,
    options: {
      known: { type: "string" },
      "no-known": { type: "boolean" },
      json: { type: "boolean" },
      context: { type: "string" },
      cache: { type: "string" },
      setup: { type: "boolean" },
      prefix: { type: "string" },
      ocamlopt: { type: "string" },
      ocamlfind: { type: "string" },
      timeout: { type: "string" },
      random: { type: "string" },
      seed: { type: "string" },
      shard: { type: "string" },
      jobs: { type: "string" },
      runs: { type: "string" },
      stats: { type: "boolean" },
      out: { type: "string" },
      "no-shrink": { type: "boolean" },
      "shrink-time": { type: "string" },
      "scenario-timeout": { type: "string" },
      "allow-refused": { type: "boolean" },
      rings: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  const o = parsed.values;
  if (o.help) {
    io.stdout(USAGE);
    return 0;
  }
  const context = positiveInt("--context", o.context, 3);
  const timeoutMs = positiveInt("--timeout", o.timeout, 300) * 1000;
  let known: KnownDifference[] = [];
  if (!o["no-known"]) {
    const file = o.known ?? DEFAULT_KNOWN;
    const text = io.readTextFile(file);
    if (text === undefined) {
      if (o.known !== undefined) throw new UsageError(`no such file: ${file}`);
    } else known = parseKnownDifferences(text, file);
  }
  let knownRings: KnownDifference[] = [];
  if (!o["no-known"]) {
    const text = io.readTextFile(DEFAULT_KNOWN_RINGS);
    if (text !== undefined) {
      knownRings = parseKnownDifferences(text, DEFAULT_KNOWN_RINGS, RING_KEYS);
    }
  }
  const random = o.random === undefined ? undefined : randomArgs(o, context, timeoutMs);
  if (random !== undefined) refuseLibraryGoldens(random.out);
  if (random !== undefined && o.rings === true) {
    throw new UsageError("--rings compares named or library scenarios, not --random ones");
  }
  if (random !== undefined && parsed.positionals.length > 0) {
    throw new UsageError("--random judges generated scenarios: name no scenario with it");
  }
  if (random === undefined) {
    const only = [
      "seed",
      "shard",
      "jobs",
      "stats",
      "out",
      "no-shrink",
      "shrink-time",
      "scenario-timeout",
    ]
      .find((k) => o[k as keyof typeof o] !== undefined);
    if (only !== undefined) throw new UsageError(`--${only} goes with --random N`);
  }
  const list = random !== undefined
    ? []
    : parsed.positionals.length === 0
    ? [...registered]
    : await Promise.all(parsed.positionals.map((a) =>
      loadScenarioEntry(io.importModule, a, { exists: io.exists?.bind(io) }).then((e) =>
        e.scenario
      )
    ));
  const toolchain = await io.toolchain({
    prefix: o.prefix,
    ocamlopt: o.ocamlopt,
    ocamlfind: o.ocamlfind,
    setup: o.setup === true,
  });
  if (toolchain === undefined) {
    io.stderr(
      "error: no OCaml 5.3 toolchain found: run `deno task ocaml setup` (about 3 minutes), " +
        "pass --setup, or give --ocamlopt PATH\n",
    );
    return 1;
  }
  const cache = cacheDir(io, o.cache);
  if (random !== undefined) {
    return await runRandom(random, toolchain.ocamlopt, cache, known, {
      stdout: io.stdout,
      stderr: io.stderr,
      isTerminal: io.isTerminal,
      runCampaign: io.runCampaign ?? runCampaign,
      onStop: io.onStop,
    });
  }
  const progress = io.isTerminal() && !o.json;
  // Scenarios named on the command line must be judged; the library's refusals are listed.
  const named = parsed.positionals.length > 0;
  const rows: Row[] = [];
  const calibration = new Calibration();
  for (const [k, sc] of list.entries()) {
    const name = sc.settings.name;
    const result = await io.diff(sc, {
      ocamlopt: toolchain.ocamlopt,
      cacheDir: cache,
      context,
      timeoutMs,
      racyRuns: positiveInt("--runs", o.runs, DEFAULT_RACY_RUNS),
      rings: o.rings === true ? "always" : "auto",
      onProgress: progress
        ? (m) => io.stderr(`\r\x1b[K[${k + 1}/${list.length}] ${printable(m)}`)
        : undefined,
    });
    if (progress) io.stderr("\r\x1b[K");
    const ran = result.status === "agree" || result.status === "differs";
    const verdict = ran
      ? judge(name, result.comparison, known)
      : result.status === "not exportable" && o["allow-refused"] !== true
      ? (named ? { kind: "unexpected" as const } : judgeRefusal(name, known))
      : undefined;
    const rings = ran ? result.rings : undefined;
    const ringVerdict = rings === undefined || (rings.status === "error")
      ? undefined
      : judgeKey(name, ringKey(rings), knownRings);
    if (rings?.status === "compared") calibration.add(rings.durations);
    const row = { result, verdict, ringVerdict };
    rows.push(row);
    if (!o.json) {
      io.stdout(`${name}: ${lineOf(row, named)}\n`);
      if (result.status === "differs" && result.comparison.difference !== undefined) {
        const ctx = differenceContext(result.comparison.difference);
        if (ctx.length > 0) io.stdout(ctx.join("\n") + "\n");
      }
      if (rings !== undefined) io.stdout(ringLines(rings, ringVerdict).join("\n") + "\n");
    }
  }
  // Listed scenarios that were not run are not judged; listed names that do not exist are.
  const names = new Set(registered.map((s) => s.settings.name));
  const stale = parsed.positionals.length === 0
    ? [...known, ...knownRings].filter((k) => !names.has(k.scenario))
    : [];
  const compared = rows.reduce(
    (n, r) =>
      n +
      (r.result.status === "agree" || r.result.status === "differs"
        ? r.result.comparison.compared
        : 0),
    0,
  );
  const count = (p: (r: Row) => boolean) => rows.filter(p).length;
  const totals = {
    scenarios: rows.length,
    agree: count((r) => r.result.status === "agree"),
    differ: count((r) => r.result.status === "differs"),
    known: count((r) => r.result.status === "differs" && r.verdict?.kind === "known"),
    notExportable: count((r) => r.result.status === "not exportable"),
    errors: count((r) => r.result.status === "error"),
    callbacksCompared: compared,
    ringsCompared: count((r) => ringsOf(r)?.status === "compared"),
    ringsAgree: count((r) => {
      const j = ringsOf(r);
      return j?.status === "compared" && j.comparison.difference === undefined;
    }),
    ringsKnown: count((r) => r.ringVerdict?.kind === "known"),
    ringEventsCompared: rows.reduce((n, r) => {
      const j = ringsOf(r);
      return n + (j?.status === "compared" ? j.comparison.compared : 0);
    }, 0),
  };
  // A run that compared no callback judged nothing a memprof user cares about.
  const nothingJudged = totals.callbacksCompared === 0 && o["allow-refused"] !== true;
  const calibrationRows = calibration.table();
  const failures = count(failed) + stale.length + (nothingJudged ? 1 : 0);
  if (o.json) {
    io.stdout(
      JSON.stringify(
        {
          toolchain: { ocamlopt: toolchain.ocamlopt, version: toolchain.version },
          results: rows.map((r) => ({
            ...r.result,
            // The durations are in the calibration table: not repeated per scenario.
            ...(ringsOf(r) === undefined ? {} : { rings: withoutDurations(ringsOf(r)!) }),
            verdict: r.verdict,
            ...(r.ringVerdict === undefined ? {} : { ringVerdict: r.ringVerdict }),
          })),
          ...(calibration.scenarios === 0 ? {} : { calibration: calibrationRows }),
          staleKnownDifferences: stale,
          totals,
          ok: failures === 0,
        },
        null,
        2,
      ) + "\n",
    );
  } else {
    io.stdout(
      "\n" + table(rows).join("\n") +
        "\n(callbacks, minor and major collections: simulation/real)\n\n",
    );
    for (const s of stale) {
      io.stdout(`known difference for "${s.scenario}": no such scenario in the library\n`);
    }
    io.stdout(
      `${totals.scenarios} scenarios: ${totals.agree} agree, ${totals.differ} differ ` +
        `(${totals.known} known), ${totals.notExportable} not exportable, ` +
        `${totals.errors} errors; ${totals.callbacksCompared} callbacks compared\n`,
    );
    if (totals.ringsCompared > 0) {
      io.stdout(
        `rings: ${totals.ringsCompared} compared, ${totals.ringsAgree} agree, ` +
          `${totals.ringsKnown} differ as listed; ${totals.ringEventsCompared} events compared\n`,
      );
      io.stdout(
        `\nphase durations, simulation against real (ns, pooled over ${calibration.scenarios} ` +
          `scenarios; ratio = median sim / median real):\n` +
          formatCalibration(calibrationRows).join("\n") + "\n",
      );
    }
    if (nothingJudged) {
      // Scenarios that ran but compared nothing want more samples; refused or failed ones said
      // above what to do.
      io.stdout(
        totals.agree + totals.differ > 0
          ? "no callback was compared, so nothing was judged: give a scenario whose profiles " +
            "sample (a higher samplingRate, more allocations), or pass --allow-refused\n"
          : "no callback was compared: no scenario could be judged (see above), or pass " +
            "--allow-refused\n",
      );
    }
  }
  return failures === 0 ? 0 : 1;
}

if (import.meta.main) Deno.exit(await run(Deno.args));
