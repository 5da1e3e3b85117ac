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
import { resolve } from "node:path";
import { scenarios as registered } from "../scenarios/index.ts";
import {
  defaultDiffCacheDir,
  differenceContext,
  differenceSummary,
  type DiffResult,
  diffScenario,
  judge,
  type KnownDifference,
  parseKnownDifferences,
  removeOwnRunFolders,
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
                    scenario must differ exactly where the list says
  --no-known        tolerate no difference
  --json            print the results as JSON
  --context N       callback lines shown around a difference (default 3)
  --cache DIR       where compiled programs are kept (default: $MEMPROF_LAB_DIFF_CACHE,
                    else $XDG_CACHE_HOME/memprof-lab/differential, else ~/.cache/…)
  --setup           build the OCaml toolchain first if none is found
  --prefix DIR      OCaml toolchain prefix (as memprof-lab ocaml setup --prefix)
  --ocamlopt PATH   use this OCaml 5.3.x ocamlopt
  --ocamlfind PATH  use ocamlfind ocamlopt
  --timeout S       longest a real program may run, in seconds (default 300)
  -h, --help        show this help

Random campaign (generated scenarios instead of named ones; docs/differential.md):
  --random N        judge scenarios 0 … N-1 generated from the seed
  --seed S          the campaign's seed (default 1); scenario I of seed S is named
                    rnd-S-I and is always the same program
  --shard I/K       only the scenarios whose number is I-1 modulo K (split a campaign
                    across machines or CI jobs)
  --jobs J          scenarios judged at once (default 2)
  --runs K          runs of each generated program that must print the same log
                    (default 10)
  --stats           print how many scenarios had each step kind and option
  --out DIR         where failing scenarios are written as modules (default
                    out/diff-random; never in tests/golden, even through a link)
  --no-shrink       write failing scenarios whole, without shrinking them
  --shrink-time S   longest time spent shrinking one failure (default 180)
  --scenario-timeout S
                    longest time one scenario may take, shrinking included (default 900)

Exit status: 0 when every exportable scenario agrees or differs exactly as listed,
1 otherwise (a difference, an error, a scenario module that cannot be loaded, or an
outdated list), 2 for a wrong command line (an unknown option or scenario name, a
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
}

function failed(row: Row): boolean {
  const r = row.result;
  if (r.status === "error") return true;
  if (r.status === "not exportable") return false;
  return row.verdict !== undefined &&
    (row.verdict.kind === "unexpected" || row.verdict.kind === "now agrees" ||
      row.verdict.kind === "moved");
}

function lineOf(row: Row): string {
  const r = row.result;
  switch (r.status) {
    case "not exportable":
      return `not exportable: ${r.reason}`;
    case "error":
      return `error: ${r.message}`;
    default: {
      const s = differenceSummary(r.comparison);
      const v = row.verdict;
      if (v?.kind === "known") return `${s} (known: ${v.entry.reason})`;
      if (v?.kind === "now agrees") {
        return `${s}, but it is listed as a known difference at ${v.entry.at}: remove it ` +
          "from the known differences";
      }
      if (v?.kind === "moved") {
        return `${s}, but the known differences list it at ${v.entry.at}: update the list`;
      }
      return s;
    }
  }
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
  const random = o.random === undefined ? undefined : randomArgs(o, context, timeoutMs);
  if (random !== undefined) refuseLibraryGoldens(random.out);
  if (random !== undefined && parsed.positionals.length > 0) {
    throw new UsageError("--random judges generated scenarios: name no scenario with it");
  }
  if (random === undefined) {
    const only = [
      "seed",
      "shard",
      "jobs",
      "runs",
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
  const rows: Row[] = [];
  for (const [k, sc] of list.entries()) {
    const name = sc.settings.name;
    const result = await io.diff(sc, {
      ocamlopt: toolchain.ocamlopt,
      cacheDir: cache,
      context,
      timeoutMs,
      onProgress: progress ? (m) => io.stderr(`\r\x1b[K[${k + 1}/${list.length}] ${m}`) : undefined,
    });
    if (progress) io.stderr("\r\x1b[K");
    const verdict = result.status === "agree" || result.status === "differs"
      ? judge(name, result.comparison, known)
      : undefined;
    const row = { result, verdict };
    rows.push(row);
    if (!o.json) {
      io.stdout(`${name}: ${lineOf(row)}\n`);
      if (result.status === "differs" && result.comparison.difference !== undefined) {
        const ctx = differenceContext(result.comparison.difference);
        if (ctx.length > 0) io.stdout(ctx.join("\n") + "\n");
      }
    }
  }
  // Listed scenarios that were not run are not judged; listed names that do not exist are.
  const names = new Set(registered.map((s) => s.settings.name));
  const stale = parsed.positionals.length === 0 ? known.filter((k) => !names.has(k.scenario)) : [];
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
    known: count((r) => r.verdict?.kind === "known"),
    notExportable: count((r) => r.result.status === "not exportable"),
    errors: count((r) => r.result.status === "error"),
    callbacksCompared: compared,
  };
  const failures = count(failed) + stale.length;
  if (o.json) {
    io.stdout(
      JSON.stringify(
        {
          toolchain: { ocamlopt: toolchain.ocamlopt, version: toolchain.version },
          results: rows.map((r) => ({ ...r.result, verdict: r.verdict })),
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
  }
  return failures === 0 ? 0 : 1;
}

if (import.meta.main) Deno.exit(await run(Deno.args));
