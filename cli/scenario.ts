/**
 * `deno task scenario` — run scenarios, write their outputs, compare or update their goldens.
 *
 * The command works through {@linkcode ScenarioCliIO}, so that tests can run it in-process with
 * files and consoles stubbed.
 * @module
 */
import { parseArgs } from "node:util";
import {
  compareGolden,
  type Golden,
  GOLDEN_FILES,
  goldenIndexSource,
  goldenOf,
  type RunResult,
  runScenario,
  type Scenario,
} from "../lib/scenario/mod.ts";
import { scenarios as registered } from "../scenarios/index.ts";
import { loadScenario } from "./_load.ts";
import { UsageError, writeDataAtomic } from "./_io.ts";
import { exportOCaml } from "../lib/export/mod.ts";

export const HELP = `Usage: deno task scenario [NAME|PATH ...] [options]

Runs scenarios through the simulated OCaml runtime with memprof, runtime_events and the
memtrace tracer, writes each one's outputs, and prints a summary table. With no NAME, runs
every scenario of scenarios/index.ts. A PATH is a module whose default export is a scenario.

Options:
  --seed N      override each scenario's seed (its own random choices; memprof's generator
                is seeded by domain id, as in OCaml)
  --rate R      override the sampling rate of every profile (0 <= R <= 1)
  --out DIR     where outputs go (default: out); one folder per scenario with trace.ctf,
                trace.txt, <pid>.events, events.txt, callbacks.txt and summary.json
  --list        list the registered scenarios and exit
  --export-ocaml DIR
                write DIR/<name>.ml, a standalone OCaml 5.3 program doing what each
                scenario declares (its header gives the ocamlopt and run commands), instead
                of running the scenarios; see docs/differential.md
  --update      rewrite tests/golden/<scenario>/ from this run (review the diff!) and
                regenerate tests/golden/index.ts; not with --seed or --rate
  -h, --help    show this help

Outputs are written to temporary files and renamed, so none is ever half-written.`;

/** What the command needs from the outside world. */
export interface ScenarioCliIO {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Whether stderr is a terminal (for the progress bar). */
  isTerminal(): boolean;
  /** Writes a file whole: to a temporary name, then renamed into place. */
  writeFileAtomic(path: string, data: Uint8Array | string): void;
  mkdirAll(path: string): void;
  /** A file's bytes, or undefined when it does not exist. */
  readFile(path: string): Uint8Array | undefined;
  /** Imports a scenario module given on the command line. */
  importModule(path: string): Promise<{ default?: unknown }>;
  /** Folder of the golden files (`tests/golden`). */
  goldenDir: string;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The real files and consoles. */
export const denoIO: ScenarioCliIO = {
  stdout: (text) => void Deno.stdout.writeSync(encoder.encode(text)),
  stderr: (text) => void Deno.stderr.writeSync(encoder.encode(text)),
  isTerminal: () => Deno.stderr.isTerminal(),
  writeFileAtomic: writeDataAtomic,
  mkdirAll: (path) => Deno.mkdirSync(path, { recursive: true }),
  readFile(path) {
    try {
      return Deno.readFileSync(path);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return undefined;
      throw e;
    }
  },
  importModule: (path) => import(new URL(path, `file://${Deno.cwd()}/`).href),
  goldenDir: new URL("../tests/golden", import.meta.url).pathname,
};

function writeOutputs(io: ScenarioCliIO, dir: string, r: RunResult): void {
  io.mkdirAll(dir);
  io.writeFileAtomic(`${dir}/trace.ctf`, r.ctf);
  io.writeFileAtomic(`${dir}/trace.txt`, r.traceDump);
  if (r.eventsImage.length > 0) {
    io.writeFileAtomic(`${dir}/${r.scenario.settings.pid}.events`, r.eventsImage);
  }
  io.writeFileAtomic(`${dir}/events.txt`, r.eventsDump);
  io.writeFileAtomic(`${dir}/callbacks.txt`, r.callbackLog);
  io.writeFileAtomic(`${dir}/summary.json`, JSON.stringify(r.summary, null, 2) + "\n");
}

function readGolden(io: ScenarioCliIO, name: string): Golden | undefined {
  const dir = `${io.goldenDir}/${name}`;
  const files = [
    io.readFile(`${dir}/${GOLDEN_FILES.ctf}`),
    io.readFile(`${dir}/${GOLDEN_FILES.traceDump}`),
    io.readFile(`${dir}/${GOLDEN_FILES.eventsDump}`),
    io.readFile(`${dir}/${GOLDEN_FILES.callbackLog}`),
  ];
  if (files.some((f) => f === undefined)) return undefined;
  const [ctf, trace, events, callbacks] = files as Uint8Array[];
  return {
    ctf,
    traceDump: decoder.decode(trace),
    eventsDump: decoder.decode(events),
    callbackLog: decoder.decode(callbacks),
  };
}

function writeGolden(io: ScenarioCliIO, r: RunResult): void {
  const dir = `${io.goldenDir}/${r.scenario.settings.name}`;
  io.mkdirAll(dir);
  const g = goldenOf(r);
  io.writeFileAtomic(`${dir}/${GOLDEN_FILES.ctf}`, g.ctf);
  io.writeFileAtomic(`${dir}/${GOLDEN_FILES.traceDump}`, g.traceDump);
  io.writeFileAtomic(`${dir}/${GOLDEN_FILES.eventsDump}`, g.eventsDump);
  io.writeFileAtomic(`${dir}/${GOLDEN_FILES.callbackLog}`, g.callbackLog);
}

/** A progress bar on stderr when it is a terminal; nothing otherwise. */
function progress(io: ScenarioCliIO, label: string) {
  if (!io.isTerminal()) return undefined;
  let last = -1;
  return (done: number, total: number) => {
    const pct = total === 0 ? 100 : Math.min(100, Math.floor((done / total) * 100));
    if (pct === last) return;
    last = pct;
    const w = 30, fill = Math.round((pct / 100) * w);
    io.stderr(
      `\r  [${"#".repeat(fill)}${"-".repeat(w - fill)}] ${String(pct).padStart(3)}% ${label}\x1b[K`,
    );
  };
}

function table(rows: string[][]): string {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  return rows.map((r) =>
    r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join("  ")
  ).join("\n");
}

const COLUMNS = [
  "scenario",
  "steps",
  "allocs",
  "words",
  "samples",
  "callbacks",
  "trace ev",
  "orphans",
  "ring KiB",
  "lost w",
  "balance",
  "golden",
  "ms",
];

/** `--export-ocaml DIR`: one program per scenario; refusals are reported, the rest written. */
function exportAll(io: ScenarioCliIO, list: readonly Scenario[], dir: string): number {
  io.mkdirAll(dir);
  let failures = 0;
  for (const sc of list) {
    const name = sc.settings.name;
    try {
      // Room in the program's callback log for twice the simulation's callbacks.
      const counts = runScenario(sc).summary.callbacks;
      const callbacks = Object.values(counts).reduce((a, b) => a + b, 0);
      const program = exportOCaml(sc, { logCapacity: Math.max(65_536, 2 * callbacks + 1024) });
      const path = `${dir}/${program.fileName}`;
      io.writeFileAtomic(path, program.source);
      const exe = program.fileName.replace(/\.ml$/, "");
      io.stdout(
        `${name}: ${path}\n  build: (cd ${dir} && ocamlopt ${
          program.compileArgs.join(" ")
        } -o ${exe})\n  run:   (cd ${dir} && OCAMLRUNPARAM=${program.env.OCAMLRUNPARAM} ./${exe})\n`,
      );
    } catch (e) {
      failures++;
      io.stderr(`error: ${(e as Error).message}\n`);
    }
  }
  return failures === 0 ? 0 : 1;
}

async function main(argv: string[], io: ScenarioCliIO): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        seed: { type: "string" },
        rate: { type: "string" },
        out: { type: "string", default: "out" },
        list: { type: "boolean" },
        update: { type: "boolean" },
        "export-ocaml": { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (e) {
    throw new UsageError((e as Error).message, HELP);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.stdout(HELP + "\n");
    return 0;
  }
  if (values.list) {
    for (const s of registered) {
      io.stdout(`${s.settings.name.padEnd(32)} ${s.settings.description}\n`);
    }
    return 0;
  }
  const seed = values.seed === undefined ? undefined : Number(values.seed);
  if (seed !== undefined && !(Number.isInteger(seed) && seed >= 0 && seed < 2 ** 32)) {
    throw new UsageError(`--seed must be an integer in [0, 2^32), got ${values.seed}`);
  }
  const rate = values.rate === undefined ? undefined : Number(values.rate);
  if (rate !== undefined && !(rate >= 0 && rate <= 1)) {
    throw new UsageError(`--rate must be within [0, 1], got ${values.rate}`);
  }
  if (values.update && (seed !== undefined || rate !== undefined)) {
    throw new UsageError("--update records goldens with each scenario's own seed and rates");
  }
  const list = positionals.length === 0
    ? registered
    : await Promise.all(positionals.map((p) => loadScenario(io.importModule, p)));
  const exportDir = values["export-ocaml"];
  if (exportDir !== undefined) {
    if (values.update || seed !== undefined || rate !== undefined) {
      throw new UsageError(
        "--export-ocaml exports scenarios as they are: not with --update, --seed or --rate",
      );
    }
    return exportAll(io, list, exportDir);
  }

  const rows = [COLUMNS];
  let failures = 0;
  for (const sc of list) {
    const name = sc.settings.name;
    const t0 = performance.now();
    let r: RunResult;
    const bar = progress(io, name);
    try {
      r = runScenario(sc, { seed, samplingRate: rate, onProgress: bar });
    } catch (e) {
      if (bar) io.stderr("\r\x1b[K");
      io.stderr(`error: ${(e as Error).message}\n`);
      failures++;
      continue;
    }
    if (bar) io.stderr("\r\x1b[K");
    const ms = performance.now() - t0;
    writeOutputs(io, `${values.out}/${name}`, r);
    let golden = "-";
    if (values.update) {
      writeGolden(io, r);
      golden = "updated";
    } else if (seed === undefined && rate === undefined) {
      const g = readGolden(io, name);
      golden = "none";
      if (g !== undefined) {
        const diff = compareGolden(goldenOf(r), g);
        golden = diff === undefined ? "same" : "DIFFERS";
        if (diff !== undefined) {
          io.stderr(
            `${name}: ${diff}\n  (if the change is intended: deno task scenario ${name} --update, then review the diff)\n`,
          );
        }
      }
    }
    const s = r.summary;
    const callbacks = Object.values(s.callbacks).reduce((a, b) => a + b, 0);
    const ok = s.balance.every((b) => b.ok) ? "ok" : "BROKEN";
    rows.push([
      name,
      String(s.steps),
      String(s.allocations),
      String(s.wordsAllocated),
      String(s.samples),
      String(callbacks),
      String(s.trace.events),
      String(s.orphansAdopted.entries),
      (s.ring.bytes / 1024).toFixed(0),
      String(s.ring.lostWords),
      ok,
      golden,
      ms.toFixed(0),
    ]);
    if (ok !== "ok") failures++;
  }
  if (values.update) {
    const names = registered.map((s) => s.settings.name).filter((n) =>
      readGolden(io, n) !== undefined
    );
    io.writeFileAtomic(`${io.goldenDir}/index.ts`, goldenIndexSource(names));
  }
  io.stdout(table(rows) + "\n");
  io.stdout(`\noutputs in ${values.out}/<scenario>/\n`);
  if (failures > 0) {
    io.stderr(`${failures} scenario(s) failed\n`);
    return 1;
  }
  return 0;
}

/** Runs the command; returns its exit status (2 for usage errors, 1 for failures). */
export async function run(argv: string[], io: ScenarioCliIO = denoIO): Promise<number> {
  try {
    return await main(argv, io);
  } catch (e) {
    io.stderr(`error: ${(e as Error).message}\n`);
    if (e instanceof UsageError) {
      if (e.hint) io.stderr(e.hint + "\n");
      return 2;
    }
    return 1;
  }
}

if (import.meta.main) Deno.exit(await run(Deno.args));
