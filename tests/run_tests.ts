// `deno task test` and `deno task test:full`: run `deno test` with the arguments given and
// condense its report to one line per test file, then deno's summary. A file with a failure is
// reported whole (its tests, their output), as are deno's ERRORS and FAILURES sections; skip
// notices (`SKIPPED: …`) are kept; the `Check …` lines of type checking are dropped. With
// MEMPROF_LAB_VERBOSE=1, deno's report passes unchanged (and the tests print their statistics,
// tests/verbose.ts).
//
//   deno task test                          # the quick tier (tests/tier.ts)
//   deno task test:full                     # every test at full size, the real runtime's too
//   deno task test tests/cli/args_test.ts   # some files (deno test's arguments)
//   MEMPROF_LAB_VERBOSE=1 deno task test    # deno's whole report
//   MEMPROF_LAB_TEST_JOBS=2 deno task test  # two files at a time
//
// The tier is MEMPROF_LAB_TEST_TIER (quick when unset; `test:full` sets full), passed on to every
// deno test started. In the quick tier, the files of tests/ (or of the folders given) run but the
// real-runtime ones (tests/tier.ts `REAL_RUNTIME_FILES`), and a line at the end says what was not
// run and how to run it; a file that uses the real runtime (it imports tests/real_toolchain.ts),
// named on its own, runs in the full tier, in a deno test of its own, and one summary of deno's
// form closes the run.
//
// With MEMPROF_LAB_TEST_JOBS=N (N > 1) and no file, folder or filter given (only flags), the
// tier's test files of tests/ run N at a time, each in a `deno test --no-check` of its own, after
// one `deno check` of them all (run as the first job): each file's report is printed whole when it
// ends (condensed as above), and one summary of deno's form closes the run, with the totals of
// every file. Any other argument runs deno test once, as without it.

import { relative, resolve } from "node:path";
import { parseTier, REAL_RUNTIME_FILES, type Tier, TIER_ENV_VAR } from "./tier.ts";

/** Matches the control sequences of colored output. */
// deno-lint-ignore no-control-regex
const ANSI = /\x1b\[[0-9;]*m/g;

/** A file's report, held until its end decides whether it is shown whole or in one line. */
interface FileReport {
  readonly name: string;
  readonly lines: string[];
  readonly started: number;
  passed: number;
  failed: number;
  ignored: number;
}

/**
 * The condensing of deno test's pretty report (its standard output), line by line: `push`
 * returns the lines to print now, `end` those left at the end. Pure, for tests.
 */
export class Condenser {
  #file: FileReport | undefined;
  /** Inside deno's ERRORS / FAILURES sections, or past the summary: everything passes. */
  #tail = false;
  /** Inside an output block (`------- output -------` … `----- output end -----`). */
  #output = false;
  readonly #now: () => number;

  /** `now`: the clock, in milliseconds (for the files' durations). */
  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
  }

  /** The lines to print for deno's next line of output `raw`. */
  push(raw: string): string[] {
    const line = raw.replace(ANSI, "");
    if (this.#tail) return [raw];
    if (/^ (ERRORS|FAILURES) $/.test(line) || /^(ok|FAILED) \| \d+ passed/.test(line)) {
      this.#tail = true;
      return [...this.#flush(), raw];
    }
    const running = /^running \d+ tests? from (.*)$/.exec(line);
    if (running !== null && !this.#output) {
      const out = this.#flush();
      this.#file = {
        name: running[1],
        lines: [raw],
        started: this.#now(),
        passed: 0,
        failed: 0,
        ignored: 0,
      };
      return out;
    }
    const marker = /^-{5,} (?:pre-test |post-test )?output(?: end)? -{5,}$/.test(line);
    if (marker) this.#output = !line.includes(" end ");
    const f = this.#file;
    const skip = line.startsWith("SKIPPED:") ? [raw] : [];
    if (f === undefined) {
      // Before the first file (pre-test output of its module): skip notices only.
      return skip;
    }
    f.lines.push(raw);
    if (!this.#output && !marker) {
      // A test running for over a minute has deno's notices after its name, and its result
      // on a line of its own (` ok (2m34s)`).
      const result = /^\S.* \.\.\. (ok|FAILED|ignored)\b/.exec(line) ??
        /^\s+(ok|FAILED|ignored) \(/.exec(line);
      if (result?.[1] === "ok") f.passed++;
      else if (result?.[1] === "FAILED") f.failed++;
      else if (result?.[1] === "ignored") f.ignored++;
    }
    return skip;
  }

  /** The lines left to print once deno's output ended. */
  end(): string[] {
    return this.#flush();
  }

  /** The report of the file being read, if any: whole when something failed, else one line. */
  #flush(): string[] {
    const f = this.#file;
    this.#file = undefined;
    this.#output = false;
    if (f === undefined) return [];
    if (f.failed > 0) return f.lines;
    const seconds = ((this.#now() - f.started) / 1000).toFixed(1);
    const counts = [`${f.passed} passed`, ...(f.ignored > 0 ? [`${f.ignored} ignored`] : [])];
    return [`${f.name} ... ok | ${counts.join(" | ")} (${seconds} s)`];
  }
}

/** Calls `each` with every line of `stream` (a last line without newline included). */
async function lines(stream: ReadableStream<Uint8Array>, each: (line: string) => void) {
  let rest = "";
  const decoder = new TextDecoder();
  for await (const bytes of stream) {
    const parts = (rest + decoder.decode(bytes, { stream: true })).split("\n");
    rest = parts.pop()!;
    for (const p of parts) each(p);
  }
  rest += decoder.decode();
  if (rest !== "") each(rest);
}

/** The counts of deno's summary line (`ok | 4 passed (1 step) | 0 failed | 1 ignored (9s)`):
 * each label (`passed`, `failed`, `ignored`, `filtered out`, `measured`) with its number and
 * steps; undefined for another line. */
export function parseSummary(
  raw: string,
): Map<string, { count: number; steps: number }> | undefined {
  const line = raw.replace(ANSI, "").trim();
  const m = /^(ok|FAILED) \| (.*?)(?: \(\S+\))?$/.exec(line);
  if (m === null || !/^\d+ passed/.test(m[2])) return undefined;
  const counts = new Map<string, { count: number; steps: number }>();
  for (const part of m[2].split(" | ")) {
    const p = /^(\d+) ([a-z ]+?)(?: \((\d+) steps?\))?$/.exec(part);
    if (p === null) return undefined;
    counts.set(p[2], { count: Number(p[1]), steps: Number(p[3] ?? 0) });
  }
  return counts;
}

/** Deno's way of writing a duration: `178ms`, `9s`, `14m24s`. */
export function denoDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const s = Math.floor(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${s % 60}s`;
}

/** One summary line of deno's form for the summed `counts` of several runs, `failedRuns` of
 * which failed without a summary of their own (each counts as a failed test). */
export function mergedSummary(
  counts: readonly Map<string, { count: number; steps: number }>[],
  failedRuns: number,
  ms: number,
): string {
  const total = new Map<string, { count: number; steps: number }>();
  for (const label of ["passed", "failed"]) total.set(label, { count: 0, steps: 0 });
  for (const c of counts) {
    for (const [label, v] of c) {
      const t = total.get(label) ?? { count: 0, steps: 0 };
      total.set(label, { count: t.count + v.count, steps: t.steps + v.steps });
    }
  }
  total.get("failed")!.count += failedRuns;
  const order = ["passed", "failed", "ignored", "measured", "filtered out"];
  const labels = [...total.keys()].sort((a, b) =>
    (order.indexOf(a) + 1 || order.length + 1) - (order.indexOf(b) + 1 || order.length + 1)
  );
  const parts = labels.flatMap((label) => {
    const { count, steps } = total.get(label)!;
    if (count === 0 && steps === 0 && label !== "passed" && label !== "failed") return [];
    const st = steps === 0 ? "" : ` (${steps} step${steps === 1 ? "" : "s"})`;
    return [`${count} ${label}${st}`];
  });
  const ok = total.get("failed")!.count === 0;
  return `${ok ? "ok" : "FAILED"} | ${parts.join(" | ")} (${denoDuration(ms)})`;
}

/** The test files deno test finds under `dir` (`*_test.ts`, `*.test.ts`, `test.ts` and their
 * other extensions), sorted. */
function testFiles(dir: string): string[] {
  const found: string[] = [];
  const walk = (d: string) => {
    for (const e of Deno.readDirSync(d)) {
      const path = `${d}/${e.name}`;
      if (e.isDirectory && !e.name.startsWith(".") && e.name !== "node_modules") walk(path);
      else if (e.isFile && /(^|[._])test\.(ts|tsx|mts|js|mjs|jsx)$/.test(e.name)) {
        found.push(path);
      }
    }
  };
  walk(dir);
  return found.sort();
}

/** What one job printed, condensed, and deno's summary counts when it printed one. */
interface JobReport {
  readonly lines: string[];
  readonly counts?: Map<string, { count: number; steps: number }>;
  readonly success: boolean;
}

/** Runs `deno` with `args`, condensing its report as {@linkcode Condenser} does (unless
 * `verbose`), holding what it prints until it ends; the summary line is taken out. `label` names
 * the run if it ends without a summary. */
async function job(
  args: string[],
  verbose: boolean,
  label: string,
  env: Record<string, string> = {},
): Promise<JobReport> {
  const child = new Deno.Command(Deno.execPath(), {
    args,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const out: string[] = [];
  const err: string[] = [];
  let counts: Map<string, { count: number; steps: number }> | undefined;
  const condenser = new Condenser();
  const keep = (l: string) => {
    const c = parseSummary(l);
    if (c !== undefined) counts = c;
    else out.push(l);
  };
  await Promise.all([
    lines(child.stdout, (l) => (verbose ? [l] : condenser.push(l)).forEach(keep)),
    lines(child.stderr, (l) => {
      if (verbose || !/^(Check|Download) /.test(l.replace(ANSI, ""))) err.push(l);
    }),
  ]);
  if (!verbose) condenser.end().forEach(keep);
  const status = await child.status;
  // deno's blank line before its summary, and its closing `error: Test failed`, go with it.
  while (out.length > 0 && out.at(-1)!.replace(ANSI, "").trim() === "") out.pop();
  const tail = err.filter((l) =>
    !/^(error: Test failed|Stack backtrace:|\s+\d+: <unknown>)$/.test(l.replace(ANSI, ""))
  );
  // A run that ended without its summary (killed, crashed) says so.
  const end = counts === undefined && !status.success
    ? [
      `${label} ... FAILED: deno ${args[0]} exited with status ${status.code}${
        status.signal === null ? "" : ` (${status.signal})`
      } without its summary`,
    ]
    : [];
  return { lines: [...out, ...tail, ...end], counts, success: status.success };
}

/** The run of `files` with `jobs` at a time (MEMPROF_LAB_TEST_JOBS): one type check, then each
 * file in a deno test of its own; returns the exit status. */
async function runJobs(
  files: string[],
  flags: string[],
  jobs: number,
  verbose: boolean,
  tier: Tier,
): Promise<number> {
  const t0 = performance.now();
  const enc = new TextEncoder();
  const print = (ls: string[]) => {
    if (ls.length > 0) Deno.stdout.writeSync(enc.encode(ls.join("\n") + "\n"));
  };
  const queue: (() => Promise<JobReport>)[] = [
    // Type checking, once for every file (each run below skips it).
    async () => {
      const r = await job(["check", ...files], true, "type check");
      return r.success ? { lines: [], success: true } : r;
    },
    ...files.map((f) => () =>
      job(["test", "--no-check", ...flags, f], verbose, `./${f}`, { [TIER_ENV_VAR]: tier })
    ),
  ];
  const counts: Map<string, { count: number; steps: number }>[] = [];
  let failedRuns = 0;
  const worker = async () => {
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      const r = await next();
      print(r.lines);
      if (r.counts !== undefined) counts.push(r.counts);
      else if (!r.success) failedRuns++;
      if (r.counts !== undefined && !r.success && (r.counts.get("failed")?.count ?? 0) === 0) {
        failedRuns++;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(jobs, queue.length) }, worker));
  const summary = mergedSummary(counts, failedRuns, performance.now() - t0);
  print(["", summary]);
  return summary.startsWith("ok ") ? 0 : 1;
}

/** The flags of deno test that take their value as the next argument (`--filter NAME`): that
 * value is no path even if a file of its name exists. */
const VALUE_FLAGS = new Set([
  "--filter",
  "--seed",
  "--reporter",
  "--junit-path",
  "--config",
  "-c",
  "--import-map",
  "--lock",
  "--location",
  "--cert",
]);

/** `args` split into deno test's flags (with their values) and the files and folders named. */
export function splitArgs(
  args: readonly string[],
  isPath: (arg: string) => boolean,
): { flags: string[]; paths: string[] } {
  const flags: string[] = [], paths: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a.startsWith("-")) {
      flags.push(a);
      if (VALUE_FLAGS.has(a) && i + 1 < args.length) flags.push(args[++i]);
    } else if (isPath(a)) paths.push(a);
    else flags.push(a);
  }
  return { flags, paths };
}

/** Whether the test file at `path` uses the real OCaml runtime: it imports
 * tests/real_toolchain.ts (a file that cannot be read does not). */
function usesRealRuntime(path: string): boolean {
  try {
    return /from\s+["'][./]*(?:tests\/)?real_toolchain\.ts["']/.test(Deno.readTextFileSync(path));
  } catch {
    return false;
  }
}

/** A path as the checkout names it: relative to the working folder, without `./`. */
function checkoutPath(path: string): string {
  return relative(Deno.cwd(), resolve(path));
}

/** One deno test of a run: its tier, and what it is given besides the flags. */
interface Group {
  readonly tier: Tier;
  readonly paths: string[];
}

/** The plan of a run in `tier` given `paths` (none: the whole of tests/): the deno tests to run,
 * and, in the quick tier, the real-runtime files left out. In the quick tier a folder brings its
 * test files but the real-runtime ones (tests/tier.ts `REAL_RUNTIME_FILES`), and a file that
 * uses the real runtime, named on its own, runs in the full tier (a deno test of its own): the
 * quick tier would run nothing of it, or not its point. */
export function plan(
  tier: Tier,
  paths: readonly string[],
  io: {
    isDirectory: (path: string) => boolean;
    testFiles: (dir: string) => string[];
    usesRealRuntime: (path: string) => boolean;
    checkoutPath: (path: string) => string;
  },
): { groups: Group[]; leftOut: string[] } {
  if (tier === "full") return { groups: [{ tier, paths: [...paths] }], leftOut: [] };
  const quick: string[] = [], full: string[] = [], leftOut: string[] = [];
  const real = (f: string) => REAL_RUNTIME_FILES.includes(io.checkoutPath(f));
  for (const p of paths.length === 0 ? ["tests"] : paths) {
    if (io.isDirectory(p)) {
      for (const f of io.testFiles(p.replace(/\/+$/, ""))) (real(f) ? leftOut : quick).push(f);
    } else (real(p) || io.usesRealRuntime(p) ? full : quick).push(p);
  }
  const groups: Group[] = [];
  if (quick.length > 0 || full.length === 0) groups.push({ tier: "quick", paths: quick });
  if (full.length > 0) groups.push({ tier: "full", paths: full });
  return { groups, leftOut };
}

/** The line closing a quick run: what the quick tier did not run, and how to run it. */
export function quickTierLine(leftOut: readonly string[], paths: readonly string[]): string {
  const files = leftOut.length === 0
    ? ""
    : `${leftOut.length} real-runtime file${leftOut.length === 1 ? "" : "s"} (${
      leftOut.map((f) => f.replace(/^(\.\/)?tests\//, "")).join(", ")
    }), `;
  return `quick tier: not run: ${files}the real-runtime tests of the other files (ignored), ` +
    `the costly loops at full size (tests/tier.ts); all of it: deno task test:full${
      paths.length === 0 ? "" : " " + paths.join(" ")
    }`;
}

/** Runs deno test with `args` in `tier`, printing its report condensed (as it comes); deno's
 * summary line is printed unless `holdSummary`, when it is returned instead. */
async function stream(
  args: string[],
  tier: Tier,
  verbose: boolean,
  holdSummary: boolean,
): Promise<{ code: number; counts?: Map<string, { count: number; steps: number }> }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["test", ...args],
    env: { [TIER_ENV_VAR]: tier },
    stdin: "inherit",
    stdout: verbose && !holdSummary ? "inherit" : "piped",
    stderr: verbose ? "inherit" : "piped",
  }).spawn();
  let counts: Map<string, { count: number; steps: number }> | undefined;
  const enc = new TextEncoder();
  // With the summary held, blank lines wait for a line after them: deno's blank line before its
  // summary goes with it.
  let blanks = 0;
  const out = (text: string) => {
    const c = holdSummary ? parseSummary(text) : undefined;
    if (c !== undefined) counts = c;
    else if (holdSummary && text.replace(ANSI, "").trim() === "") blanks++;
    else {
      Deno.stdout.writeSync(enc.encode("\n".repeat(blanks) + text + "\n"));
      blanks = 0;
    }
  };
  const condenser = new Condenser();
  await Promise.all([
    verbose && !holdSummary
      ? Promise.resolve()
      : lines(child.stdout, (l) => (verbose ? [l] : condenser.push(l)).forEach(out)),
    // Type checking says `Check <file>` per file: dropped; errors pass.
    verbose ? Promise.resolve() : lines(child.stderr, (l) => {
      if (!/^(Check|Download) /.test(l.replace(ANSI, ""))) {
        Deno.stderr.writeSync(enc.encode(l + "\n"));
      }
    }),
  ]);
  if (!verbose) condenser.end().forEach(out);
  const status = await child.status;
  return { code: status.signal === null ? status.code : 1, counts };
}

async function main(args: string[]): Promise<number> {
  const verbose = Deno.env.get("MEMPROF_LAB_VERBOSE") === "1";
  const jobs = Number(Deno.env.get("MEMPROF_LAB_TEST_JOBS") ?? "1");
  const given = Deno.env.get(TIER_ENV_VAR);
  const tier = given === undefined || given === "" ? "quick" : parseTier(given);
  if (tier === undefined) {
    console.error(`${TIER_ENV_VAR} must be quick or full, got '${given}'`);
    return 2;
  }
  const isDirectory = (p: string) => {
    try {
      return Deno.statSync(p).isDirectory;
    } catch {
      return false;
    }
  };
  const { flags, paths } = splitArgs(args, (a) => {
    try {
      Deno.statSync(a);
      return true;
    } catch {
      return false;
    }
  });
  const { groups, leftOut } = plan(tier, paths, {
    isDirectory,
    testFiles,
    usesRealRuntime,
    checkoutPath,
  });
  let code: number;
  if (
    Number.isInteger(jobs) && jobs > 1 && paths.length === 0 &&
    args.every((a) => a.startsWith("--allow-"))
  ) {
    const files = tier === "full" ? testFiles("tests") : groups[0].paths;
    code = await runJobs(files, args, jobs, verbose, tier);
  } else if (groups.length === 1) {
    code = (await stream([...flags, ...groups[0].paths], groups[0].tier, verbose, false)).code;
  } else {
    // Files of both tiers: a deno test each, one summary of deno's form for both.
    const t0 = performance.now();
    const counts: Map<string, { count: number; steps: number }>[] = [];
    let failedRuns = 0;
    for (const g of groups) {
      const r = await stream([...flags, ...g.paths], g.tier, verbose, true);
      if (r.counts !== undefined) counts.push(r.counts);
      if (r.code !== 0 && (r.counts?.get("failed")?.count ?? 0) === 0) failedRuns++;
    }
    const summary = mergedSummary(counts, failedRuns, performance.now() - t0);
    console.log(`\n${summary}`);
    code = summary.startsWith("ok ") ? 0 : 1;
  }
  if (tier === "quick") console.log(quickTierLine(leftOut, paths));
  return code;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
