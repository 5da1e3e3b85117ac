/**
 * `memprof-lab scenario` (`deno task scenario`) — run scenarios, write their outputs, compare or update their goldens.
 *
 * The command works through {@linkcode ScenarioCliIO}, so that tests can run it in-process with
 * files and consoles stubbed.
 *
 * Exit status: 0 when everything ran and equals its golden; 1 for any failure (an invalid
 * scenario, a module that does not type-check or load, a run that fails, a golden that differs,
 * an output that cannot be written); 2 for a wrong command line (unknown option or scenario,
 * bad value, missing file).
 * @module
 */
import { printableLines } from "../lib/util/printable.ts";
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import {
  countLeafSteps,
  DEFAULT_MAX_STEPS,
  isPlainName,
  PLAIN_NAME_RULE,
  type RunResult,
  runScenario,
  type Scenario,
} from "../lib/scenario/mod.ts";
import {
  foreignOwner,
  type Golden,
  GOLDEN_FILES,
  goldenFolderFiles,
  goldenFromFiles,
  goldenIndexSource,
  type GoldenMode,
  goldenMode,
  goldenOf,
  type GoldenPlace,
  goldenPlace,
  goldenVerdict,
  isGoldenFolderFile,
  MODULE_RECORD,
} from "../lib/scenario/golden.ts";
import { scenarios as registered } from "../scenarios/index.ts";
import {
  isModulePath,
  type LoadedScenario,
  loadScenarioEntry,
  ScenarioLoadError,
  unknownScenario,
} from "./_load.ts";
import {
  exitStatusOf,
  isWithin,
  processExists,
  realPathOfExisting,
  UsageError,
  writeAll,
  writeOutputData,
  writeStderr,
  writeStdout,
} from "./_io.ts";
import { usageLines } from "./_usage.ts";
import { parseCommandLine, parseIntegerOption, parseRate } from "./_args.ts";
import { isPlainShellWord, shellWord } from "../lib/util/shell.ts";
import { findToolchain } from "../lib/ocaml/mod.ts";
import { DEFAULT_BUILD_COMMAND, exportOCaml } from "../lib/export/mod.ts";
import { Reader } from "../lib/memtrace/mod.ts";
import { aggregateTrace, buildReport } from "../lib/trace_analysis/mod.ts";

export const HELP = `${usageLines("scenario", "[NAME|PATH ...] [options]")}

Runs scenarios through the simulated OCaml runtime with memprof, runtime_events and the
memtrace tracer, writes each one's outputs, and prints a summary table. With no NAME, runs
every scenario of scenarios/index.ts. A PATH is a module whose default export is a scenario;
it is type-checked (deno check) before it runs.

Options:
  --seed N      override each scenario's seed (its own random choices; memprof's generator
                is seeded by domain id, as in OCaml)
  --rate R      override the sampling rate of every profile (0 <= R <= 1)
  --out DIR     where outputs go (default: out); one folder per scenario with trace.ctf,
                trace.txt, events.txt, callbacks.txt, summary.json, report.html (memprof-lab
                trace report) and, when the scenario starts runtime_events, the ring
                <pid>.events; replaced as a whole
  --list        list the registered scenarios and exit
  --export-ocaml DIR
                write DIR/<name>.ml, a standalone OCaml 5.3 program doing what each
                scenario declares, instead of running the scenarios; its header and this
                command print how to build it (with the full path of the toolchain's
                ocamlopt when one is found, else through 'ocaml exec') and run it; see
                docs/differential.md
  --update      rewrite the goldens from this run (review the diff!): tests/golden/<name>/
                and tests/golden/index.ts for library scenarios; for a PATH outside the
                library, <golden dir>/<file name>/; not with --seed or --rate
  --check       fail (exit 1) unless every scenario has goldens and equals them
  --golden-dir DIR
                goldens of PATH scenarios outside the library (default: the folder
                golden/ beside each module); kept per module file, never in tests/golden
                (not even through a symbolic link)
  --max-steps N refuse scenarios expected to run more than N steps (default 1e9)
  --no-check    do not type-check PATH modules before running them
  --progress    show progress even when stderr is not a terminal (a line per 10%)
  -h, --help    show this help

The table has one row per scenario: steps, allocations, words, samples, callbacks, trace
events, orphans adopted, ring KiB, lost ring words, balance, golden and milliseconds;
docs/scenarios.md ("The summary table") says what each counts.
A run that differs from its golden is reported with the first differing line and exits 1.
Exit status: 0 all good; 1 a failure (invalid scenario or module, failed run, golden
differs, output not written); 2 a wrong command line.`;

/** A directory entry. */
export interface DirEntry {
  readonly name: string;
  readonly isDirectory: boolean;
}

/** What the command needs from the outside world. */
export interface ScenarioCliIO {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Whether stderr is a terminal (for the progress bar). */
  isTerminal(): boolean;
  /** Writes a file whole: to a temporary name, then renamed into place. */
  writeFileAtomic(path: string, data: Uint8Array | string): void;
  /** Writes a file (inside a temporary folder of this run's). */
  writeFile(path: string, data: Uint8Array | string): void;
  /** Writes a file (inside a temporary folder of this run's) from the text chunks `fill`
   * hands to `write`, as they come. Without it, the chunks are joined for `writeFile`. */
  writeFileStream?(path: string, fill: (write: (chunk: string) => void) => void): void;
  mkdirAll(path: string): void;
  /** A file's bytes, or undefined when it does not exist. */
  readFile(path: string): Uint8Array | undefined;
  /** A folder's entries, or undefined when it does not exist. */
  readDir(path: string): DirEntry[] | undefined;
  /** What is at `path` (symbolic links are not followed). */
  kind(path: string): "file" | "directory" | "other" | undefined;
  rename(from: string, to: string): void;
  /** Removes a file or a folder with its content; nothing when it does not exist. */
  removeAll(path: string): void;
  /** This process's id (names its temporary folders). */
  readonly pid: number;
  /** Whether process `pid` exists; undefined when it cannot be known. */
  processAlive(pid: number): boolean | undefined;
  /** Calls `handler` on SIGINT or SIGTERM until the returned function is called. */
  onInterrupt(handler: (signal: "SIGINT" | "SIGTERM") => void): () => void;
  /** Ends the process. */
  exit(status: number): never;
  /** Lets the event loop run (signal handlers) before going on. */
  nextTurn(): Promise<void>;
  /** The current folder, against which relative paths are resolved. */
  cwd(): string;
  /** Imports a scenario module given on the command line. */
  importModule(path: string): Promise<{ default?: unknown }>;
  /** Type-checks scenario modules (`deno check`): whether they pass, and the errors. */
  typeCheck(paths: readonly string[]): Promise<{ ok: boolean; output: string }>;
  /** Folder of the library's golden files (`tests/golden`). */
  goldenDir: string;
  /** The real path of `path`: symbolic links resolved in the part of it that exists (default:
   * `path` as it is). */
  realPath?(path: string): string;
  /** The command that runs the ocamlopt of the OCaml 5.3 toolchain memprof-lab uses (its full
   * path), for the build commands of `--export-ocaml`; undefined when none is found (default:
   * none). */
  ocamlopt?(): Promise<readonly string[] | undefined>;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The real files and consoles. */
export const denoIO: ScenarioCliIO = {
  stdout: writeStdout,
  stderr: writeStderr,
  isTerminal: () => Deno.stderr.isTerminal(),
  writeFileAtomic: writeOutputData,
  writeFile: (path, data) =>
    Deno.writeFileSync(path, typeof data === "string" ? encoder.encode(data) : data),
  writeFileStream(path, fill) {
    const file = Deno.openSync(path, { write: true, create: true, truncate: true });
    try {
      fill((chunk) => writeAll(file, chunk));
    } finally {
      file.close();
    }
  },
  mkdirAll: (path) => Deno.mkdirSync(path, { recursive: true }),
  readFile(path) {
    try {
      return Deno.readFileSync(path);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return undefined;
      throw e;
    }
  },
  readDir(path) {
    try {
      return [...Deno.readDirSync(path)].map((e) => ({ name: e.name, isDirectory: e.isDirectory }));
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return undefined;
      throw e;
    }
  },
  kind(path) {
    try {
      const s = Deno.lstatSync(path);
      return s.isFile ? "file" : s.isDirectory ? "directory" : "other";
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return undefined;
      throw e;
    }
  },
  rename: (from, to) => Deno.renameSync(from, to),
  removeAll(path) {
    try {
      Deno.removeSync(path, { recursive: true });
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
  },
  pid: Deno.pid,
  processAlive: processExists,
  onInterrupt(handler) {
    const installed: [Deno.Signal, () => void][] = [];
    for (const signal of ["SIGINT", "SIGTERM"] as const) {
      const h = () => handler(signal);
      try {
        Deno.addSignalListener(signal, h);
        installed.push([signal, h]);
      } catch { /* signal not supported here */ }
    }
    return () => {
      for (const [signal, h] of installed) Deno.removeSignalListener(signal, h);
    };
  },
  exit: (status) => Deno.exit(status),
  nextTurn: () => new Promise((r) => setTimeout(r, 0)),
  cwd: () => Deno.cwd(),
  importModule: (path) => import(moduleUrl(Deno.cwd(), path)),
  typeCheck: denoCheck,
  goldenDir: new URL("../tests/golden", import.meta.url).pathname,
  realPath: realPathOfExisting,
  async ocamlopt() {
    try {
      return (await findToolchain())?.ocamlopt;
    } catch {
      return undefined; // no permission to read the environment or run ocamlopt: no path known
    }
  },
};

function moduleUrl(cwd: string, path: string): string {
  return new URL(path, `file://${cwd.endsWith("/") ? cwd : cwd + "/"}`).href;
}

/** `deno check` of the modules with this repository's configuration (the one they run
 * with), by the deno executable running this command. */
async function denoCheck(paths: readonly string[]): Promise<{ ok: boolean; output: string }> {
  const config = new URL("../deno.json", import.meta.url).pathname;
  let out: Deno.CommandOutput;
  try {
    out = await new Deno.Command(Deno.execPath(), {
      args: ["check", "--quiet", "--config", config, ...paths],
      env: { NO_COLOR: "1", RUST_BACKTRACE: "0" },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
  } catch (e) {
    if (e instanceof Deno.errors.NotCapable || e instanceof Deno.errors.PermissionDenied) {
      throw new UsageError(
        "type-checking scenario modules runs `deno check`: allow it with --allow-run " +
          "(deno task scenario does), or pass --no-check",
      );
    }
    throw e;
  }
  const text = decoder.decode(out.stdout) + decoder.decode(out.stderr);
  return { ok: out.success, output: readableCheckOutput(text, Deno.cwd()) };
}

/** `deno check` output with `file:` URLs as paths (relative to `cwd` when inside it) and
 * without the backtrace deno may append. */
export function readableCheckOutput(text: string, cwd: string): string {
  const lines: string[] = [];
  for (const line of text.split("\n")) {
    if (line.startsWith("Stack backtrace:")) break;
    if (line === "error: Type checking failed.") continue;
    lines.push(line.replace(/file:\/\/\/[^\s:)]+/g, (url) => {
      let path: string;
      try {
        path = fileURLToPath(url);
      } catch {
        return url;
      }
      const rel = relative(cwd, path);
      return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel) ? rel : path;
    }));
  }
  return lines.join("\n").trimEnd() + "\n";
}

// ---- output folders, replaced as a whole -------------------------------------------------------

/** Whether `child` is strictly inside folder `parent`. */
function inside(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel);
}

const OUTPUT_FILE =
  /^(trace\.ctf|trace\.txt|[0-9]+\.events|events\.txt|callbacks\.txt|summary\.json|report\.html)$/;
const TEMPORARY = /^\.(.+)\.([0-9]{1,10})\.(tmp|old)$/;

/** A file's content: bytes, text, or text handed in chunks to `write` as it is made. */
type FileData = Uint8Array | string | ((write: (chunk: string) => void) => void);

/** Writes `data` to `path` through `io`, streaming text made in chunks when `io` can. */
function writeData(io: ScenarioCliIO, path: string, data: FileData): void {
  if (typeof data !== "function") return io.writeFile(path, data);
  if (io.writeFileStream !== undefined) return io.writeFileStream(path, data);
  const parts: string[] = [];
  data((chunk) => parts.push(chunk));
  io.writeFile(path, parts.join(""));
}

/** Folders whose stale temporaries were swept in this run. */
const swept = new WeakMap<ScenarioCliIO, Set<string>>();

/** Removes the temporary folders of runs killed before they finished (their process is gone),
 * restoring a previous folder a run was interrupted while swapping. */
function sweepStale(io: ScenarioCliIO, parent: string): void {
  let done = swept.get(io);
  if (done === undefined) swept.set(io, done = new Set());
  if (done.has(parent)) return;
  done.add(parent);
  for (const e of io.readDir(parent) ?? []) {
    const m = TEMPORARY.exec(e.name);
    if (m === null || !e.isDirectory) continue;
    const pid = Number(m[2]);
    if (pid === io.pid || io.processAlive(pid) !== false) continue;
    const path = join(parent, e.name), final = join(parent, m[1]);
    if (m[3] === "old" && io.kind(final) === undefined) io.rename(path, final);
    else io.removeAll(path);
  }
}

/**
 * Writes `files` as folder `dir`, replacing what was there as a whole: into a temporary folder
 * beside it (`.<name>.<pid>.tmp`), then swapped in by renames, so that an interrupted run
 * leaves the old folder or the new one, never a mix. SIGINT/SIGTERM while writing remove the
 * temporary folder and end the process. A folder holding anything else than `owned` files is
 * not replaced.
 */
async function writeFolder(
  io: ScenarioCliIO,
  dir: string,
  files: readonly (readonly [string, FileData])[],
  owned: (name: string) => boolean,
): Promise<void> {
  const parent = dirname(dir), base = basename(dir);
  if (!isPlainName(base)) throw new Error(`cannot write ${dir}: not a plain folder name`);
  for (const [name] of files) {
    if (!inside(dir, join(dir, name)) || name.includes("/")) {
      throw new Error(`cannot write ${join(dir, name)}: outside ${dir}`);
    }
  }
  io.mkdirAll(parent);
  sweepStale(io, parent);
  const existing = io.kind(dir);
  if (existing === "file" || existing === "other") {
    throw new Error(`cannot write ${dir}: it exists and is not a folder`);
  }
  if (existing === "directory") {
    const foreign = (io.readDir(dir) ?? []).filter((e) => e.isDirectory || !owned(e.name));
    if (foreign.length > 0) {
      throw new Error(
        `not replacing ${dir}: it holds ${
          foreign.map((e) => e.name).slice(0, 5).join(", ")
        }, which this command does not write (move them away or choose another folder)`,
      );
    }
  }
  const tmp = join(parent, `.${base}.${io.pid}.tmp`);
  const old = join(parent, `.${base}.${io.pid}.old`);
  io.removeAll(tmp);
  const stopListening = io.onInterrupt((signal) => {
    io.removeAll(tmp);
    io.exit(signal === "SIGINT" ? 130 : 143);
  });
  try {
    io.mkdirAll(tmp);
    for (const [name, data] of files) {
      try {
        writeData(io, join(tmp, name), data);
      } catch (e) {
        throw new Error(`cannot write ${join(dir, name)}: ${(e as Error).message}`);
      }
      await io.nextTurn(); // an interrupt here removes the temporary folder
    }
    // The swap: no await from here on, so no signal handler runs half-way.
    if (existing === "directory") io.rename(dir, old);
    try {
      io.rename(tmp, dir);
    } catch (e) {
      if (existing === "directory") io.rename(old, dir);
      throw new Error(`cannot write ${dir}: ${(e as Error).message}`);
    }
    if (existing === "directory") {
      try {
        io.removeAll(old);
      } catch { /* swept by the next run */ }
    }
  } catch (e) {
    try {
      io.removeAll(tmp);
    } catch { /* nothing more to do */ }
    throw e;
  } finally {
    stopListening();
  }
}

async function writeOutputs(io: ScenarioCliIO, dir: string, r: RunResult): Promise<void> {
  // The text outputs are streamed into their files, never made whole (they can be hundreds
  // of megabytes); the report is made when its turn comes.
  const files: [string, FileData][] = [
    ["trace.ctf", r.ctf],
    ["trace.txt", (write) => r.writeText("traceDump", write)],
  ];
  if (r.eventsImage.length > 0) files.push([`${r.scenario.settings.pid}.events`, r.eventsImage]);
  files.push(
    ["events.txt", (write) => r.writeText("eventsDump", write)],
    ["callbacks.txt", (write) => r.writeText("callbackLog", write)],
    ["summary.json", JSON.stringify(r.summary, null, 2) + "\n"],
    ["report.html", (write) => write(buildReport(aggregateTrace(Reader.fromBytes(r.ctf))))],
  );
  await writeFolder(io, dir, files, (n) => OUTPUT_FILE.test(n));
}

// ---- goldens -------------------------------------------------------------------------------

/** The goldens stored at `place`, if any. */
function readGolden(io: ScenarioCliIO, place: GoldenPlace): Golden | undefined {
  return goldenFromFiles((name) => io.readFile(join(place.dir, name)));
}

/** Writes the goldens of `r` at `place`, replacing the folder whole (lib/scenario/golden.ts
 * says which files it holds). */
async function writeGolden(io: ScenarioCliIO, place: GoldenPlace, r: RunResult): Promise<void> {
  await writeFolder(
    io,
    place.dir,
    goldenFolderFiles(place, goldenOf(r)),
    (n) => isGoldenFolderFile(place, n),
  );
}

// ---- progress ------------------------------------------------------------------------------

/** Progress on stderr: a bar on a terminal, a line per 10% with `--progress`, else nothing. */
function progress(io: ScenarioCliIO, label: string, lines: boolean) {
  const bar = io.isTerminal();
  if (!bar && !lines) return undefined;
  let last = -1;
  const t0 = performance.now();
  return (done: number, total: number) => {
    const pct = total === 0 ? 100 : Math.min(100, Math.floor((done / total) * 100));
    // A bar moves every percent; lines come every 10%.
    const step = bar ? pct : Math.floor(pct / 10);
    if (step === last) return;
    last = step;
    const counts = `${formatCount(done)}/${formatCount(total)} steps`;
    if (!bar) {
      io.stderr(`  ${label}: ${String(pct).padStart(3)}% (${counts})\n`);
      return;
    }
    const s = (performance.now() - t0) / 1000;
    const eta = done > 0 && done < total
      ? `, ${((s / done) * (total - done)).toFixed(0)} s left`
      : "";
    const w = 30, fill = Math.round((pct / 100) * w);
    io.stderr(
      `\r  [${"#".repeat(fill)}${"-".repeat(w - fill)}] ${
        String(pct).padStart(3)
      }% ${label} (${counts}${eta})\x1b[K`,
    );
  };
}

function formatCount(n: number): string {
  return Number.isSafeInteger(n) ? n.toLocaleString("en-US") : n.toExponential(2);
}

/** Below the table when a scenario is marked `0*` in its `trace ev` column. */
export const UNTRACED_NOTE =
  "* samples but no trace event: no allocation callback returned Some (a tracker of cb.none()\n" +
  "  callbacks), and memtrace's tracer writes only the blocks a callback tracks: not a failure\n" +
  '  (docs/scenarios.md, "The summary table")\n';

/** Below the table when a scenario is marked `0!` in its `samples` column. */
export const NO_PROFILE_NOTE =
  "! no profile started: the scenario never calls memprof.start, so memprof samples nothing\n" +
  "  and its trace and report are empty: not a failure, but probably not what was meant\n" +
  '  (docs/scenarios.md, "The summary table")\n';

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

/** The problem with running `sc` under `--max-steps`, if any. */
function tooBig(sc: Scenario, maxSteps: number): string | undefined {
  const steps = countLeafSteps(sc.steps);
  if (steps <= maxSteps) return undefined;
  return `scenario ${sc.settings.name} would run about ${formatCount(steps)} steps, more than ` +
    `--max-steps ${formatCount(maxSteps)} (raise --max-steps to run it anyway)`;
}

/** The folder of the memprof-lab checkout this command runs from (tests/golden's grandparent). */
function checkoutRoot(io: ScenarioCliIO): string {
  return resolve(io.goldenDir, "..", "..");
}

/**
 * The words that run ocamlopt in the build commands of programs exported to `dir`, such that
 * the command works as printed from there: the full path of the toolchain's ocamlopt when it is
 * found; else `deno task ocaml exec ocamlopt` inside the checkout, `memprof-lab ocaml exec
 * ocamlopt` outside it (where `deno task` finds no task).
 */
async function buildCommandFor(io: ScenarioCliIO, dir: string): Promise<readonly string[]> {
  const found = await io.ocamlopt?.();
  if (found !== undefined && found.length > 0 && found.every(isPlainShellWord)) return found;
  return isWithin(checkoutRoot(io), resolve(io.cwd(), dir))
    ? DEFAULT_BUILD_COMMAND
    : ["memprof-lab", "ocaml", "exec", "ocamlopt"];
}

/** `--export-ocaml DIR`: one program per scenario; refusals are reported, the rest written. */
async function exportAll(
  io: ScenarioCliIO,
  list: readonly Scenario[],
  dir: string,
  maxSteps: number,
): Promise<number> {
  io.mkdirAll(dir);
  const buildCommand = await buildCommandFor(io, dir);
  let failures = 0;
  for (const sc of list) {
    const name = sc.settings.name;
    try {
      const big = tooBig(sc, maxSteps);
      if (big !== undefined) throw new Error(big);
      // Room in the program's callback log for twice the simulation's callbacks.
      const counts = runScenario(sc).summary.callbacks;
      const callbacks = Object.values(counts).reduce((a, b) => a + b, 0);
      const program = exportOCaml(sc, {
        logCapacity: Math.max(65_536, 2 * callbacks + 1024),
        buildCommand,
      });
      const path = join(dir, program.fileName);
      if (!inside(resolve(dir), resolve(path))) {
        throw new Error(`cannot write ${path}: outside ${dir}`);
      }
      io.writeFileAtomic(path, program.source);
      const exe = program.fileName.replace(/\.ml$/, "");
      const cd = `cd ${shellWord(dir)}`;
      io.stdout(
        `${name}: ${path}\n  build: (${cd} && ${program.build})\n` +
          `  run:   (${cd} && OCAMLRUNPARAM=${program.env.OCAMLRUNPARAM} ./${exe})\n`,
      );
    } catch (e) {
      failures++;
      io.stderr(`error: ${printableLines((e as Error).message)}\n`);
    }
  }
  return failures === 0 ? 0 : 1;
}

// ---- the command ---------------------------------------------------------------------------

interface Options {
  seed?: number;
  rate?: number;
  out: string;
  /** What the run does with goldens (lib/scenario/golden.ts). */
  golden: GoldenMode;
  check: boolean;
  goldenDir?: string;
  maxSteps: number;
  typeCheck: boolean;
  progress: boolean;
}

function parseOptions(argv: string[]) {
  const parsed = parseCommandLine("scenario", argv, {
    allowPositionals: true,
    options: {
      seed: { type: "string" },
      rate: { type: "string" },
      out: { type: "string", default: "out" },
      list: { type: "boolean" },
      update: { type: "boolean" },
      check: { type: "boolean" },
      "golden-dir": { type: "string" },
      "max-steps": { type: "string" },
      "no-check": { type: "boolean" },
      progress: { type: "boolean" },
      "export-ocaml": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  const v = parsed.values;
  const seed = parseIntegerOption("scenario", "--seed", v.seed, { max: 2 ** 32 - 1 });
  const rate = v.rate === undefined ? undefined : parseRate("scenario", "--rate", v.rate);
  const maxSteps = parseIntegerOption("scenario", "--max-steps", v["max-steps"], { min: 1 }) ??
    DEFAULT_MAX_STEPS;
  if (v.out === "") throw new UsageError("--out needs a folder");
  if (v["golden-dir"] === "") throw new UsageError("--golden-dir needs a folder");
  const overridden = seed !== undefined || rate !== undefined;
  const mode = goldenMode({ update: v.update === true, check: v.check === true, overridden });
  if ("refusal" in mode) throw new UsageError(mode.refusal);
  const options: Options = {
    seed,
    rate,
    out: v.out!,
    golden: mode.mode,
    check: v.check === true,
    goldenDir: v["golden-dir"],
    maxSteps,
    typeCheck: v["no-check"] !== true,
    progress: v.progress === true,
  };
  if (v["export-ocaml"] !== undefined && (v.update === true || options.check || overridden)) {
    throw new UsageError(
      "--export-ocaml exports scenarios as they are: not with --update, --check, --seed or --rate",
    );
  }
  return { options, values: v, positionals: parsed.positionals };
}

/** Loads the scenarios named on the command line: usage errors first, then type checks, then
 * imports. Returns the scenarios, or the failures to report. */
async function loadAll(
  io: ScenarioCliIO,
  args: readonly string[],
  options: Options,
): Promise<{ loaded: LoadedScenario[]; errors: string[] }> {
  const exists = (p: string) => io.kind(resolve(io.cwd(), p)) !== undefined;
  for (const arg of args) {
    if (!isModulePath(arg) && !registered.some((s) => s.settings.name === arg)) {
      throw unknownScenario(arg);
    }
    if (isModulePath(arg) && !exists(arg)) throw new UsageError(`cannot load ${arg}: no such file`);
  }
  const modules = args.filter(isModulePath);
  if (options.typeCheck && modules.length > 0) {
    const { ok, output } = await io.typeCheck(modules);
    if (!ok) {
      const errors = [
        `${modules.join(", ")}: type errors (deno check; --no-check skips this check):\n` +
        output.trimEnd(),
      ];
      return { loaded: [], errors };
    }
  }
  const loaded: LoadedScenario[] = [];
  const errors: string[] = [];
  for (const arg of args) {
    try {
      loaded.push(
        await loadScenarioEntry(io.importModule, arg, {
          exists,
          moduleUrl: (p) => moduleUrl(io.cwd(), p),
        }),
      );
    } catch (e) {
      if (!(e instanceof ScenarioLoadError)) throw e;
      errors.push(e.message);
    }
  }
  return { loaded, errors };
}

/** Where the goldens of `entry` are; throws a usage error where they must not be. */
function placeOf(io: ScenarioCliIO, entry: LoadedScenario, options: Options): GoldenPlace {
  const r = goldenPlace({
    libraryDir: io.goldenDir,
    cwd: io.cwd(),
    name: entry.scenario.settings.name,
    library: entry.library,
    ...(entry.module === undefined ? {} : { module: entry.module }),
    ...(options.goldenDir === undefined ? {} : { goldenDir: options.goldenDir }),
    ...(io.realPath === undefined ? {} : { realPath: io.realPath }),
  });
  if ("refusal" in r) throw new UsageError(r.refusal);
  return r.place;
}

async function main(argv: string[], io: ScenarioCliIO): Promise<number> {
  const { options, values, positionals } = parseOptions(argv);
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
  const { loaded: list, errors } = positionals.length === 0
    ? {
      loaded: registered.map((scenario): LoadedScenario => ({ scenario, library: true })),
      errors: [],
    }
    : await loadAll(io, positionals, options);
  if (errors.length > 0) {
    for (const message of errors) io.stderr(`error: ${printableLines(message)}\n`);
    return 1;
  }
  const seen = new Map<string, string>();
  for (const { scenario: sc, module } of list) {
    const name = sc.settings.name, from = module ?? name;
    const other = seen.get(name);
    if (other !== undefined) {
      throw new UsageError(`${other} and ${from} are both scenario ${name}: run them separately`);
    }
    seen.set(name, from);
  }
  const exportDir = values["export-ocaml"];
  if (exportDir !== undefined) {
    return await exportAll(io, list.map((e) => e.scenario), exportDir, options.maxSteps);
  }
  // Where goldens are compared or written (checked before anything runs).
  const places = list.map((e) => options.golden !== "none" ? placeOf(io, e, options) : { dir: "" });
  if (options.goldenDir !== undefined && list.every((e) => e.library)) {
    throw new UsageError(
      "--golden-dir is for scenario modules outside the library (the library's goldens are " +
        "tests/golden)",
    );
  }

  const out = resolve(io.cwd(), options.out);
  const rows = [COLUMNS];
  let failures = 0, differ = 0, libraryUpdated = false, untraced = false;
  const unprofiled: string[] = [];
  for (const [k, entry] of list.entries()) {
    const sc = entry.scenario, name = sc.settings.name, place = places[k];
    const fail = (message: string) => {
      io.stderr(`error: ${printableLines(message)}\n`);
      failures++;
    };
    const dir = join(out, name);
    if (!isPlainName(name) || !inside(out, dir)) {
      fail(`scenario ${JSON.stringify(name)}: its name must be ${PLAIN_NAME_RULE}`);
      continue;
    }
    const big = tooBig(sc, options.maxSteps);
    if (big !== undefined) {
      fail(big);
      continue;
    }
    const t0 = performance.now();
    let r: RunResult;
    const bar = progress(io, name, options.progress);
    bar?.(0, countLeafSteps(sc.steps));
    try {
      r = runScenario(sc, { seed: options.seed, samplingRate: options.rate, onProgress: bar });
    } catch (e) {
      if (bar && io.isTerminal()) io.stderr("\r\x1b[K");
      fail((e as Error).message);
      continue;
    }
    if (bar && io.isTerminal()) io.stderr("\r\x1b[K");
    const ms = performance.now() - t0;
    try {
      await writeOutputs(io, dir, r);
    } catch (e) {
      fail((e as Error).message);
      continue;
    }
    const owner = place.dir === "" ? undefined : foreignOwner(place, {
      exists: io.kind(place.dir) !== undefined,
      record: place.module === undefined ? undefined : io.readFile(join(place.dir, MODULE_RECORD)),
    });
    const verdict = goldenVerdict({
      mode: options.golden,
      check: options.check,
      place,
      ...(entry.module === undefined ? {} : { module: entry.module }),
      owner,
      got: goldenOf(r),
      stored: () => readGolden(io, place),
    }, rerun(io, entry, options, "--update"));
    let golden: string = verdict.outcome;
    if (verdict.note !== undefined) io.stderr(`${name}: ${verdict.note}\n`);
    if (verdict.diff !== undefined) {
      differ++;
      io.stderr(
        `${name}: ${verdict.diff}\n  (if the change is intended: ${
          rerun(io, entry, options, "--update")
        }, then review the diff)\n`,
      );
    }
    if (verdict.error !== undefined) {
      fail(verdict.outcome === "refused" ? verdict.error : `scenario ${name} ${verdict.error}`);
    }
    if (verdict.outcome === "write") {
      try {
        await writeGolden(io, place, r);
        golden = "updated";
        if (entry.library) libraryUpdated = true;
        else reportUnregistered(io, entry, place, options);
      } catch (e) {
        fail((e as Error).message);
        golden = "failed";
      }
    }
    const s = r.summary;
    const callbacks = Object.values(s.callbacks).reduce((a, b) => a + b, 0);
    const ok = s.balance.every((b) => b.ok) ? "ok" : "BROKEN";
    // Samples but no trace event: no allocation callback returned Some, and the tracer writes
    // only what a callback tracks. Not a failure, but it reads as one: marked, explained below.
    const none = s.samples > 0 && s.trace.events === 0 && s.balance.every((b) => b.tracked === 0);
    if (none) untraced = true;
    // No profile started: nothing can be sampled. Marked, explained below and on stderr.
    const noProfile = s.balance.length === 0;
    if (noProfile) unprofiled.push(name);
    rows.push([
      name,
      String(s.steps),
      String(s.allocations),
      String(s.wordsAllocated),
      String(s.samples) + (noProfile ? "!" : ""),
      String(callbacks),
      String(s.trace.events) + (none ? "*" : ""),
      String(s.orphansAdopted.entries),
      (s.ring.bytes / 1024).toFixed(0),
      String(s.ring.lostWords),
      ok,
      golden,
      ms.toFixed(0),
    ]);
    if (ok !== "ok") failures++;
  }
  if (libraryUpdated) {
    const names = registered.map((s) => s.settings.name).filter((n) =>
      readGolden(io, { dir: join(io.goldenDir, n) }) !== undefined
    );
    io.writeFileAtomic(join(io.goldenDir, "index.ts"), goldenIndexSource(names));
  }
  // A row is a scenario that ran and whose outputs were written: without any, the errors
  // said it all (no empty table, no "outputs in" where nothing was written, no tally).
  if (rows.length === 1) return failures + differ > 0 ? 1 : 0;
  io.stdout(table(rows) + "\n");
  if (untraced) io.stdout(UNTRACED_NOTE);
  if (unprofiled.length > 0) io.stdout(NO_PROFILE_NOTE);
  io.stdout(`\noutputs in ${options.out}/<scenario>/\n`);
  if (unprofiled.length > 0) {
    io.stderr(
      `warning: ${unprofiled.length} scenario(s) never start a profile, so nothing was ` +
        `sampled: ${unprofiled.join(", ")}\n`,
    );
  }
  if (differ > 0) io.stderr(`${differ} scenario(s) differ from their goldens\n`);
  if (failures > 0) io.stderr(`${failures} scenario(s) failed\n`);
  return failures + differ > 0 ? 1 : 0;
}

/**
 * The command that runs scenario `entry` again with `flag` (`--update`, `--check`) as this run
 * did, to be followed as printed from the same folder: its module path (or library name), and
 * the options that decide where its goldens and outputs go and whether it runs at all
 * (`--golden-dir` for a module, `--out`, `--max-steps`, `--no-check`). `deno task scenario` from
 * inside the repository, else `memprof-lab scenario` (`deno task` finds no task elsewhere).
 */
function rerun(io: ScenarioCliIO, entry: LoadedScenario, options: Options, flag: string): string {
  const words = [
    isWithin(checkoutRoot(io), resolve(io.cwd())) ? "deno task scenario" : "memprof-lab scenario",
    shellWord(entry.module ?? entry.scenario.settings.name),
  ];
  if (entry.module !== undefined && !entry.library && options.goldenDir !== undefined) {
    words.push("--golden-dir", shellWord(options.goldenDir));
  }
  if (options.out !== "out") words.push("--out", shellWord(options.out));
  if (options.maxSteps !== DEFAULT_MAX_STEPS) words.push("--max-steps", String(options.maxSteps));
  if (entry.module !== undefined && !options.typeCheck) words.push("--no-check");
  words.push(flag);
  return words.join(" ");
}

/** What `--update` wrote for a scenario outside the library, and how to make it one. */
function reportUnregistered(
  io: ScenarioCliIO,
  entry: LoadedScenario,
  place: GoldenPlace,
  options: Options,
): void {
  const name = entry.scenario.settings.name;
  const files = [...Object.values(GOLDEN_FILES), MODULE_RECORD].join(", ");
  const taken = registered.some((s) => s.settings.name === name)
    ? `  (The library has a scenario named ${name} already: rename this one first.)\n`
    : "";
  io.stderr(
    `${name}: wrote ${place.dir}/ (${files}).\n` +
      `  ${entry.module} is not a library scenario, so deno test does not check it; compare ` +
      `with:\n    ${rerun(io, entry, options, "--check")}\n` +
      `  To make it one: move it into scenarios/, import it in scenarios/index.ts, then run\n` +
      `    deno task scenario ${name} --update\n` +
      `  (which writes tests/golden/${name}/ and tests/golden/index.ts; review the diff).\n` +
      taken,
  );
}

/** Runs the command; returns its exit status (0 ok, 1 failures, 2 usage errors). */
export async function run(argv: string[], io: ScenarioCliIO = denoIO): Promise<number> {
  try {
    return await main(argv, io);
  } catch (e) {
    return exitStatusOf(e, io.stderr);
  }
}

if (import.meta.main) Deno.exit(await run(Deno.args));
