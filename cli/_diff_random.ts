/**
 * `memprof-lab diff --random N`: a random differential campaign (lib/differential/campaign.ts).
 * Each generated scenario is judged against the real runtime; a failure is shrunk and written as
 * a scenario module that `memprof-lab diff PATH` reproduces.
 * @module
 */
import { printable, printableLines } from "../lib/util/printable.ts";
import { dirname, relative, resolve } from "node:path";
import {
  type CampaignItem,
  type CampaignPlan,
  differenceContext,
  differenceSummary,
  FeatureCounts,
  judge,
  type KnownDifference,
  type RandomOutcome,
  randomScenarioModule,
  type runCampaign,
  type Verdict,
} from "../lib/differential/mod.ts";
import { UsageError, writeOutputData } from "./_io.ts";
import { parseInteger } from "./_args.ts";

/** The campaign's settings, from the command line. */
export interface RandomArgs {
  readonly plan: CampaignPlan;
  readonly jobs: number;
  readonly out: string;
  readonly stats: boolean;
  readonly json: boolean;
  readonly shrink: boolean;
  readonly shrinkMs: number;
  readonly runs: number;
  readonly context: number;
  readonly timeoutMs: number;
  readonly scenarioTimeoutMs: number;
}

/** Parses `--shard I/K`: two integers of the one rule (cli/_args.ts), 1 ≤ I ≤ K. */
export function parseShard(text: string | undefined): { index: number; of: number } | undefined {
  if (text === undefined) return undefined;
  const parts = text.split("/");
  const refuse = () => new UsageError(`--shard must be I/K with 1 ≤ I ≤ K, got '${text}'`);
  if (parts.length !== 2) throw refuse();
  const [index, of] = parts.map((p) => {
    try {
      return parseInteger("diff", "--shard", p, { min: 1 });
    } catch {
      throw refuse();
    }
  });
  if (index > of) throw refuse();
  return { index, of };
}

/** What the campaign's I/O needs. */
export interface RandomIO {
  stdout(text: string): void;
  stderr(text: string): void;
  isTerminal(): boolean;
  /** Runs the campaign (injectable for tests). */
  runCampaign: typeof runCampaign;
  /** Until the returned function is called, SIGINT and SIGTERM call `cleanup` and end the
   * process (cli/_io.ts `onStopSignals`). */
  onStop?(cleanup: () => void): () => void;
}

interface Row {
  readonly name: string;
  readonly index: number;
  readonly status: "agree" | "differs" | "not exportable" | "error";
  readonly line: string;
  readonly verdict?: Verdict;
  readonly outcome?: RandomOutcome;
  readonly module?: string;
  readonly failed: boolean;
}

const SCENARIO_MODULE = new URL("../lib/scenario/mod.ts", import.meta.url).pathname;

/** The import specifier of lib/scenario/mod.ts from folder `dir`. */
function scenarioImport(dir: string): string {
  const rel = relative(resolve(dir), SCENARIO_MODULE);
  return rel.startsWith(".") ? rel : `./${rel}`;
}

/** Runs the campaign; returns the exit status. */
export async function runRandom(
  args: RandomArgs,
  ocamlopt: readonly string[],
  cacheDir: string,
  known: readonly KnownDifference[],
  io: RandomIO,
): Promise<number> {
  const t0 = performance.now();
  const { plan } = args;
  const buildDir = Deno.makeTempDirSync({ prefix: "memprof-lab-random-" });
  const features = new FeatureCounts();
  const rows: Row[] = [];
  const progress = io.isTerminal() && !args.json;
  const total = plan.shard === undefined
    ? plan.count
    : Math.ceil((plan.count - plan.shard.index + 1) / plan.shard.of);
  if (!args.json) {
    io.stdout(
      `random campaign: seed ${plan.seed}, scenarios 0-${plan.count - 1}` +
        (plan.shard ? ` (shard ${plan.shard.index}/${plan.shard.of}: ${total})` : "") +
        `, ${args.jobs} job${args.jobs === 1 ? "" : "s"}\n`,
    );
  }
  void cacheDir; // Generated programs are never reused: they build in a temporary folder.
  const removeBuildDir = () => {
    try {
      Deno.removeSync(buildDir, { recursive: true });
    } catch { /* gone */ }
  };
  const stopped = io.onStop?.(removeBuildDir); // killed by a signal, it goes too
  try {
    await io.runCampaign({
      plan,
      jobs: args.jobs,
      scenarioTimeoutMs: args.scenarioTimeoutMs,
      config: {
        ocamlopt,
        cacheDir: buildDir,
        timeoutMs: args.timeoutMs,
        firstRuns: args.runs,
        context: args.context,
        shrink: args.shrink,
        shrinkMs: args.shrinkMs,
        noShrink: known.map((k) => k.scenario),
      },
      onProgress: progress
        ? (name, m) =>
          io.stderr(`\r\x1b[K[${rows.length + 1}/${total}] ${printable(name)}: ${printable(m)}`)
        : undefined,
      onItem: (item) => {
        if (progress) io.stderr("\r\x1b[K");
        const row = rowOf(item, known, args);
        if (item.kind === "outcome") features.add(item.outcome.features);
        rows.push(row);
        if (!args.json) {
          io.stdout(`${row.name}: ${row.line}\n`);
          const r = row.outcome?.shrunk?.result ?? row.outcome?.result;
          if (row.failed && r?.status === "differs" && r.comparison.difference !== undefined) {
            const ctx = differenceContext(r.comparison.difference);
            if (ctx.length > 0) io.stdout(ctx.join("\n") + "\n");
          }
        }
      },
    });
  } finally {
    stopped?.();
    removeBuildDir();
  }
  const minutes = (performance.now() - t0) / 60_000;
  rows.sort((a, b) => a.index - b.index);
  const count = (p: (r: Row) => boolean) => rows.filter(p).length;
  const totals = {
    scenarios: rows.length,
    agree: count((r) => r.status === "agree"),
    differ: count((r) => r.status === "differs"),
    known: count((r) => r.verdict?.kind === "known"),
    refused: count((r) => r.status === "not exportable"),
    errors: count((r) => r.status === "error"),
    failed: count((r) => r.failed),
    callbacksCompared: rows.reduce((n, r) => {
      const res = r.outcome?.result;
      return n +
        (res?.status === "agree" || res?.status === "differs" ? res.comparison.compared : 0);
    }, 0),
    minutes: Number(minutes.toFixed(2)),
    scenariosPerMinute: Number((rows.length / Math.max(minutes, 1e-9)).toFixed(1)),
  };
  if (args.json) {
    io.stdout(
      JSON.stringify(
        {
          plan,
          results: rows.map((r) => ({
            scenario: r.name,
            index: r.index,
            status: r.status,
            line: r.line,
            verdict: r.verdict,
            module: r.module,
            steps: r.outcome?.steps,
            shrunkSteps: r.outcome?.shrunk?.steps,
            features: r.outcome?.features,
          })),
          totals,
          features: args.stats ? features.rows() : undefined,
          ok: totals.failed === 0,
        },
        null,
        2,
      ) + "\n",
    );
  } else {
    if (args.stats) io.stdout("\n" + statsTable(features).join("\n") + "\n");
    io.stdout(
      `\n${totals.scenarios} scenarios: ${totals.agree} agree, ${totals.differ} differ ` +
        `(${totals.known} known), ${totals.refused} refused, ${totals.errors} errors; ` +
        `${totals.callbacksCompared} callbacks compared; ${minutes.toFixed(1)} min, ` +
        `${totals.scenariosPerMinute} scenarios/min\n`,
    );
    if (totals.failed > 0) {
      io.stdout(
        `reproduce a failure with: deno task diff PATH (the modules named above), or ` +
          `deno task diff --random ${plan.count} --seed ${plan.seed} --shard ...\n`,
      );
    }
  }
  return totals.failed === 0 ? 0 : 1;
}

function rowOf(item: CampaignItem, known: readonly KnownDifference[], args: RandomArgs): Row {
  if (item.kind === "failure") {
    return {
      name: item.name,
      index: item.index,
      status: "error",
      line: `error: ${printableLines(item.message)}`,
      failed: true,
    };
  }
  const o = item.outcome;
  const r = o.result;
  const base = { name: o.name, index: o.index, outcome: o };
  switch (r.status) {
    case "not exportable":
      return { ...base, status: r.status, line: `not exportable: ${r.reason}`, failed: false };
    case "agree":
    case "differs": {
      const verdict = judge(o.name, r.comparison, known);
      const s = differenceSummary(r.comparison);
      if (verdict.kind === "ok") {
        return { ...base, status: r.status, line: s, verdict, failed: false };
      }
      if (verdict.kind === "known") {
        return {
          ...base,
          status: r.status,
          line: `${s} (known: ${verdict.entry.reason})`,
          verdict,
          failed: false,
        };
      }
      if (verdict.kind === "now agrees") {
        return {
          ...base,
          status: r.status,
          line: `${s}, but it is listed as a known difference: remove it from the list`,
          verdict,
          failed: true,
        };
      }
      const module = writeModule(o, args);
      return {
        ...base,
        status: r.status,
        line: `${s}${verdict.kind === "moved" ? " (listed elsewhere: update the list)" : ""}` +
          ` -> ${describeModule(o, module)}`,
        verdict,
        module,
        failed: true,
      };
    }
    case "error": {
      const module = writeModule(o, args);
      return {
        ...base,
        status: "error",
        line: `error: ${printable(r.message.split("\n")[0])} -> ${describeModule(o, module)}`,
        module,
        failed: true,
      };
    }
  }
}

function describeModule(o: RandomOutcome, module: string): string {
  const s = o.shrunk;
  if (s === undefined) return `${module} (${o.steps} steps, not shrunk)`;
  return `minimal: ${module} (${s.steps} steps, from ${o.steps}; ${s.tried} tried` +
    `${s.cutShort ? ", shrinking cut short" : ""})`;
}

/** Writes the (shrunk) failing scenario as a module in the output folder; returns its path. */
function writeModule(o: RandomOutcome, args: RandomArgs): string {
  const path = `${args.out}/${o.name}.ts`;
  const program = o.shrunk?.program ?? o.program;
  const { seed, count } = args.plan;
  const source = randomScenarioModule(program, o.name, {
    scenarioModule: scenarioImport(dirname(path)),
    header: [
      `${o.shrunk ? "Shrunk from" : "Generated as"} scenario ${o.index} of` +
      ` \`deno task diff --random ${count} --seed ${seed}\`.`,
      `Reproduce: deno task diff ${path}`,
    ],
  });
  Deno.mkdirSync(args.out, { recursive: true });
  writeOutputData(path, source);
  return path;
}

function statsTable(f: FeatureCounts): string[] {
  const rows = f.rows();
  const width = Math.max(...rows.map((r) => r.feature.length));
  const lines = [`features (${f.scenarios} scenarios; share of scenarios having each):`];
  for (const r of rows) {
    lines.push(
      `  ${r.feature.padEnd(width)}  ${String(r.count).padStart(6)}  ${
        (100 * r.share).toFixed(1).padStart(5)
      } %${r.share < 0.01 ? "  (below 1 %)" : ""}`,
    );
  }
  return lines;
}
