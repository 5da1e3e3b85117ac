// `deno task test`: runs `deno test` with the arguments given and condenses its report to one
// line per test file, then deno's summary. A file with a failure is reported whole (its tests,
// their output), as are deno's ERRORS and FAILURES sections; skip notices (`SKIPPED: …`) are
// kept; the `Check …` lines of type checking are dropped. With MEMPROF_LAB_VERBOSE=1, deno's
// report passes unchanged (and the tests print their statistics, tests/verbose.ts).
//
//   deno task test                          # every test
//   deno task test tests/cli/args_test.ts   # some files (deno test's arguments)
//   MEMPROF_LAB_VERBOSE=1 deno task test    # deno's whole report

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

async function main(args: string[]): Promise<number> {
  const verbose = Deno.env.get("MEMPROF_LAB_VERBOSE") === "1";
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
