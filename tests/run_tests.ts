// `deno task test`: runs `deno test` with the arguments given and condenses its report to one
// line per test file, then deno's summary. A file with a failure is reported whole (its tests,
// their output), as are deno's ERRORS and FAILURES sections; skip notices (`SKIPPED: …`) are
// kept; the `Check …` lines of type checking are dropped. With MEMPROF_LAB_VERBOSE=1, deno's
// report passes unchanged (and the tests print their statistics, tests/verbose.ts).
//
//   deno task test                          # every test
//   deno task test tests/cli/args_test.ts   # some files (deno test's arguments)
//   MEMPROF_LAB_VERBOSE=1 deno task test    # deno's whole report
//   MEMPROF_LAB_TEST_JOBS=2 deno task test  # every test, two files at a time
//
// With MEMPROF_LAB_TEST_JOBS=N (N > 1) and no file, folder or filter given (only flags), the
// test files of tests/ run N at a time, each in a `deno test --no-check` of its own, after one
// `deno check` of them all (run as the first job): each file's report is printed whole when it
// ends (condensed as above), and one summary of deno's form closes the run, with the totals of
// every file. Any other argument runs deno test once, as without it.

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
async function job(args: string[], verbose: boolean, label: string): Promise<JobReport> {
  const child = new Deno.Command(Deno.execPath(), {
    args,
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
    ...files.map((f) => () => job(["test", "--no-check", ...flags, f], verbose, `./${f}`)),
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

async function main(args: string[]): Promise<number> {
  const verbose = Deno.env.get("MEMPROF_LAB_VERBOSE") === "1";
  const jobs = Number(Deno.env.get("MEMPROF_LAB_TEST_JOBS") ?? "1");
  if (Number.isInteger(jobs) && jobs > 1 && args.every((a) => a.startsWith("--allow-"))) {
    return await runJobs(testFiles("tests"), args, jobs, verbose);
  }
  const child = new Deno.Command(Deno.execPath(), {
    args: ["test", ...args],
    stdin: "inherit",
    stdout: verbose ? "inherit" : "piped",
    stderr: verbose ? "inherit" : "piped",
  }).spawn();
  if (!verbose) {
    const enc = new TextEncoder();
    const out = (text: string) => Deno.stdout.writeSync(enc.encode(text + "\n"));
    const condenser = new Condenser();
    await Promise.all([
      lines(child.stdout, (l) => condenser.push(l).forEach(out)),
      // Type checking says `Check <file>` per file: dropped; errors pass.
      lines(child.stderr, (l) => {
        if (!/^(Check|Download) /.test(l.replace(ANSI, ""))) {
          Deno.stderr.writeSync(enc.encode(l + "\n"));
        }
      }),
    ]);
    condenser.end().forEach(out);
  }
  const status = await child.status;
  return status.signal === null ? status.code : 1;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
