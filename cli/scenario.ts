/**
 * `deno task scenario` — run scenarios, write their outputs, compare or update their goldens.
 * @module
 */
import { parseArgs } from "node:util";
import {
  compareGolden,
  GOLDEN_FILES,
  goldenIndexSource,
  goldenOf,
  type RunResult,
  runScenario,
  type Scenario,
} from "../lib/scenario/mod.ts";
import { scenarios as registered } from "../scenarios/index.ts";
import { runMain, UsageError } from "./_io.ts";

const HELP = `Usage: deno task scenario [NAME|PATH ...] [options]

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
  --update      rewrite tests/golden/<scenario>/ from this run (review the diff!) and
                regenerate tests/golden/index.ts; not with --seed or --rate
  -h, --help    show this help

Outputs are written to temporary files and renamed, so none is ever half-written.`;

const GOLDEN_DIR = new URL("../tests/golden/", import.meta.url);

async function loadScenario(arg: string): Promise<Scenario> {
  const byName = registered.find((s) => s.settings.name === arg);
  if (byName !== undefined) return byName;
  if (!arg.endsWith(".ts")) {
    throw new UsageError(
      `no scenario named "${arg}"`,
      `known scenarios: ${registered.map((s) => s.settings.name).join(", ")}`,
    );
  }
  const url = new URL(arg, `file://${Deno.cwd()}/`);
  let mod: { default?: Scenario };
  try {
    mod = await import(url.href);
  } catch (e) {
    throw new UsageError(`cannot load ${arg}: ${(e as Error).message}`);
  }
  if (mod.default === undefined || typeof mod.default !== "object" || !("steps" in mod.default)) {
    throw new UsageError(`${arg} has no default export made with scenario(...)`);
  }
  return mod.default;
}

/** Writes `data` to `dir/name` through a temporary file renamed into place. */
function writeAtomic(dir: string, name: string, data: Uint8Array | string): void {
  const path = `${dir}/${name}`;
  const tmp = `${path}.${Deno.pid}.tmp`;
  if (typeof data === "string") Deno.writeTextFileSync(tmp, data);
  else Deno.writeFileSync(tmp, data);
  Deno.renameSync(tmp, path);
}

function writeOutputs(dir: string, r: RunResult): void {
  Deno.mkdirSync(dir, { recursive: true });
  writeAtomic(dir, "trace.ctf", r.ctf);
  writeAtomic(dir, "trace.txt", r.traceDump);
  if (r.eventsImage.length > 0) {
    writeAtomic(dir, `${r.scenario.settings.pid}.events`, r.eventsImage);
  }
  writeAtomic(dir, "events.txt", r.eventsDump);
  writeAtomic(dir, "callbacks.txt", r.callbackLog);
  writeAtomic(dir, "summary.json", JSON.stringify(r.summary, null, 2) + "\n");
}

function readGolden(name: string) {
  const dir = new URL(`${name}/`, GOLDEN_DIR);
  try {
    return {
      ctf: Deno.readFileSync(new URL(GOLDEN_FILES.ctf, dir)),
      traceDump: Deno.readTextFileSync(new URL(GOLDEN_FILES.traceDump, dir)),
      eventsDump: Deno.readTextFileSync(new URL(GOLDEN_FILES.eventsDump, dir)),
      callbackLog: Deno.readTextFileSync(new URL(GOLDEN_FILES.callbackLog, dir)),
    };
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    throw e;
  }
}

function writeGolden(r: RunResult): void {
  const dir = new URL(`${r.scenario.settings.name}/`, GOLDEN_DIR).pathname;
  Deno.mkdirSync(dir, { recursive: true });
  const g = goldenOf(r);
  writeAtomic(dir, GOLDEN_FILES.ctf, g.ctf);
  writeAtomic(dir, GOLDEN_FILES.traceDump, g.traceDump);
  writeAtomic(dir, GOLDEN_FILES.eventsDump, g.eventsDump);
  writeAtomic(dir, GOLDEN_FILES.callbackLog, g.callbackLog);
}

/** A progress bar on stderr when it is a terminal; silence otherwise. */
function progress(label: string): ((done: number, total: number) => void) | undefined {
  if (!Deno.stderr.isTerminal()) return undefined;
  const enc = new TextEncoder();
  let last = -1;
  return (done, total) => {
    const pct = total === 0 ? 100 : Math.min(100, Math.floor((done / total) * 100));
    if (pct === last) return;
    last = pct;
    const w = 30, fill = Math.round((pct / 100) * w);
    Deno.stderr.writeSync(
      enc.encode(
        `\r  [${"#".repeat(fill)}${"-".repeat(w - fill)}] ${
          String(pct).padStart(3)
        }% ${label}\x1b[K`,
      ),
    );
  };
}

function clearProgress(): void {
  if (Deno.stderr.isTerminal()) Deno.stderr.writeSync(new TextEncoder().encode("\r\x1b[K"));
}

function table(rows: string[][]): string {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  return rows.map((r) =>
    r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join("  ")
  ).join("\n");
}

async function main(): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({
      args: Deno.args,
      allowPositionals: true,
      strict: true,
      options: {
        seed: { type: "string" },
        rate: { type: "string" },
        out: { type: "string", default: "out" },
        list: { type: "boolean" },
        update: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (e) {
    throw new UsageError((e as Error).message, HELP);
  }
  const { values, positionals } = parsed;
  if (values.help) return console.log(HELP);
  if (values.list) {
    for (const s of registered) {
      console.log(`${s.settings.name.padEnd(32)} ${s.settings.description}`);
    }
    return;
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
    : await Promise.all(positionals.map(loadScenario));

  const rows = [[
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
  ]];
  let failures = 0;
  for (const sc of list) {
    const name = sc.settings.name;
    const t0 = performance.now();
    let r: RunResult;
    try {
      r = runScenario(sc, { seed, samplingRate: rate, onProgress: progress(name) });
    } catch (e) {
      clearProgress();
      console.error(`error: ${(e as Error).message}`);
      failures++;
      continue;
    }
    clearProgress();
    const ms = performance.now() - t0;
    writeOutputs(`${values.out}/${name}`, r);
    let golden = "none";
    if (values.update) {
      writeGolden(r);
      golden = "updated";
    } else if (seed === undefined && rate === undefined) {
      const g = readGolden(name);
      if (g !== undefined) {
        const diff = compareGolden(goldenOf(r), g);
        golden = diff === undefined ? "same" : "DIFFERS";
        if (diff !== undefined) console.error(`${name}: ${diff}`);
      }
    } else golden = "-";
    const s = r.summary;
    const cbs = Object.values(s.callbacks).reduce((a, b) => a + b, 0);
    const ok = s.balance.every((b) => b.ok) ? "ok" : "BROKEN";
    rows.push([
      name,
      String(s.steps),
      String(s.allocations),
      String(s.wordsAllocated),
      String(s.samples),
      String(cbs),
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
    const names = registered.map((s) => s.settings.name).filter((n) => readGolden(n) !== undefined);
    writeAtomic(GOLDEN_DIR.pathname.replace(/\/$/, ""), "index.ts", goldenIndexSource(names));
  }
  console.log(table(rows));
  console.log(`\noutputs in ${values.out}/<scenario>/`);
  if (failures > 0) {
    console.error(`${failures} scenario(s) failed`);
    Deno.exit(1);
  }
}

runMain(main);
