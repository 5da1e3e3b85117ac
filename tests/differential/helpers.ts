// Shared by the differential tests: small scenarios, canonical logs, the log an exported program
// prints (written here from the simulation's events, as a faithful real run would print it), and
// fake compilers and programs (shell scripts) standing in for the OCaml toolchain.
import { join } from "node:path";
import {
  act,
  cb,
  keep,
  type RunEvent,
  runScenario,
  type Scenario,
  scenario,
} from "../../lib/scenario/mod.ts";
import { defName, type ExportedProgram, HARNESS_FRAMES } from "../../lib/export/mod.ts";
import {
  type CanonicalLog,
  type Comparison,
  type DiffResult,
  judgedResult,
  simulateCanonical,
} from "../../lib/differential/mod.ts";

// ---- scenarios ---------------------------------------------------------------------------------

/** Main domain only: frames, nested loops, a callback raising outside and inside an attempt,
 * blocks that die young and blocks promoted. Every word is sampled (rate 1). */
export const small: Scenario = scenario({ name: "diff_small", minorHeapWords: 8192 }, (s) => {
  const m = s.main;
  m.memprof.start({
    samplingRate: 1,
    callstackSize: 8,
    tracker: { allocMinor: cb.track().on(3, act.raise("Boom")).on(6, act.raise("Bang")) },
  });
  m.call(
    "Small.outer@small.ml:1:0-10",
    () => m.repeat(2, () => m.repeat(2, () => m.alloc(2, { at: "Small.leaf@small.ml:2:2-8" }))),
  );
  m.attempt(() => {
    m.alloc(1, { lifetime: keep.forever });
    m.alloc(3, { lifetime: keep.forever });
  });
  m.alloc(4, { lifetime: keep.forever, at: "Small.keep@small.ml:3:2-9" });
  m.minorGc();
  m.memprof.stop();
});

/** Two domains, one after the other: the worker's callstacks have two harness frames. */
export const twoDomains: Scenario = scenario({ name: "diff_two_domains" }, (s) => {
  const m = s.main;
  m.memprof.start({ samplingRate: 1, callstackSize: 8 });
  m.alloc(2, { at: "Two.main@two.ml:1:0-5" });
  m.memprof.stop();
  // The worker starts a profile of its own: a spawn or join while the parent samples races.
  const w = m.spawn("worker");
  w.memprof.start({ samplingRate: 1, callstackSize: 8 });
  w.repeat(3, () => w.alloc(1, { at: "Two.work@two.ml:2:0-5" }));
  w.terminate();
  m.memprof.start({ name: "again", samplingRate: 1, callstackSize: 8 });
  m.alloc(1);
  m.minorGc();
  m.memprof.stop();
});

/** Scenarios the child process (fake_toolchain_child.ts) can be asked to run, by name. */
export const childScenarios: Readonly<Record<string, Scenario>> = {
  [small.settings.name]: small,
  [twoDomains.settings.name]: twoDomains,
};

/** The simulation's events of `sc`, with the harness frames and the harness the export adds
 * (as simulateCanonical). */
export function simulationEvents(sc: Scenario): RunEvent[] {
  const events: RunEvent[] = [];
  runScenario(sc, {
    onEvent: (e) => events.push(e),
    harnessFrames: HARNESS_FRAMES,
    exportHarness: true,
  });
  return events;
}

// ---- canonical logs ----------------------------------------------------------------------------

/** A canonical log with the given lines and, unless overridden, 1 minor collection, 0 major
 * cycles, the default minor heap and no overflow. */
export function canonical(
  lines: readonly string[],
  over: Partial<CanonicalLog> = {},
): CanonicalLog {
  return {
    lines,
    minorCollections: 1,
    majorCycles: 0,
    minorHeapWords: 262_144,
    overflow: false,
    ...over,
  };
}

/** `n` distinct callback lines. */
export function callbackLines(n: number): string[] {
  return Array.from(
    { length: n },
    (_, i) => `alloc_minor d0 i=${i + 1} size=1 n=1 src=normal id=${i + 1} stack=[] -> none`,
  );
}

// ---- the real program's log --------------------------------------------------------------------

/** Record kinds, as docs of the exported program's log number them. */
const KIND_CODE: Record<RunEvent["kind"], number> = {
  allocMinor: 0,
  allocMajor: 1,
  promote: 2,
  deallocMinor: 3,
  deallocMajor: 4,
  escaped: 5,
  caught: 6,
  tracerFailed: 7,
};
const SOURCE_CODE: Record<string, number> = { normal: 0, marshal: 1, custom: 2 };

/** What the program's log says about collections and its heap. */
export interface RealTrailer {
  minorHeapWords: number;
  minorCollections: number;
  majorCycles: number;
  overflow?: boolean;
}

/** The log an exported program prints for `events`: callstack frames by their OCaml function
 * names (`Module.fN`, harness frames as `Module.run_main`), exceptions by their number. */
export function realLogOf(
  events: readonly RunEvent[],
  program: ExportedProgram,
  t: RealTrailer,
): string {
  const fnOf = new Map<string, string>();
  for (const [fn, def] of program.frames) if (!fnOf.has(def)) fnOf.set(def, fn);
  const exn = (name: string) => {
    const i = program.exceptions.indexOf(name);
    if (i < 0) throw new Error(`exception ${name} is not in the program`);
    return i;
  };
  const outcome = (o: "some" | "none" | "unit" | { readonly raise: string }) =>
    o === "none" ? 0 : o === "some" ? 1 : o === "unit" ? 2 : 3 + exn(o.raise);
  const rows = events.map((e) => {
    const loops = [e.loops.length, ...e.loops].join(" ");
    switch (e.kind) {
      case "allocMinor":
      case "allocMajor": {
        const names = e.callstack.map((f) =>
          f === "<harness>" ? `${program.moduleName}.run_main` : fnOf.get(defName(f))!
        );
        return `${KIND_CODE[e.kind]} ${e.domain} ${e.id} ${e.size} ${e.nSamples} ` +
          `${SOURCE_CODE[e.source]} ${outcome(e.outcome)} ${loops} | ${names.length}` +
          names.map((n) => ` ${n}`).join("");
      }
      case "promote":
      case "deallocMinor":
      case "deallocMajor":
        return `${KIND_CODE[e.kind]} ${e.domain} ${e.id} 0 0 0 ${outcome(e.outcome)} ${loops}`;
      case "escaped":
      case "caught":
      case "tracerFailed":
        return `${KIND_CODE[e.kind]} ${e.domain} 0 ${exn(e.exn)} 0 0 0 ${loops}`;
    }
  });
  return [
    "memprof-lab differential log 1",
    `minor_heap_words ${t.minorHeapWords}`,
    ...rows,
    `minor_collections ${t.minorCollections}`,
    `major_cycles ${t.majorCycles}`,
    `log_overflow ${t.overflow === true}`,
    "",
  ].join("\n");
}

// ---- canned differential results ---------------------------------------------------------------

/** A result whose comparison is `comparison` (agree when it has no difference). */
export function resultOf(scenario: string, comparison: Comparison): DiffResult {
  return {
    scenario,
    status: comparison.difference === undefined ? "agree" : "differs",
    comparison,
    callbacks: { sim: comparison.compared, real: comparison.compared },
    collections: { sim: { minor: 1, major: 0 }, real: { minor: 1, major: 0 } },
    verifiedNow: false,
  };
}

// ---- files and fake programs -------------------------------------------------------------------

/** Runs `fn` with a fresh temporary directory, removed afterwards. */
export async function withTemp<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await Deno.makeTempDir({ prefix: "memprof-diff-test-" });
  try {
    return await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/** Writes an executable shell script at `path`. */
export async function script(path: string, body: string): Promise<string> {
  await Deno.mkdir(join(path, ".."), { recursive: true });
  await Deno.writeTextFile(path, `#!/bin/sh\n${body}\n`);
  await Deno.chmod(path, 0o755);
  return path;
}

/** Quotes `s` for the shell. */
export function sh(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/**
 * A fake `ocamlopt` in `dir`: appends its arguments to `dir/compiler.calls`, insists on being
 * given an existing `.ml` file in its working directory, then copies the program script
 * `dir/program.sh` to the `-o` output. With `fail`, it prints an error and exits 2 instead.
 * Write the program with {@linkcode fakeProgram}.
 */
export async function fakeCompiler(dir: string, opts: { fail?: boolean } = {}): Promise<string> {
  const calls = join(dir, "compiler.calls");
  const body = opts.fail
    ? `echo "$@" >> ${sh(calls)}\n` +
      `echo 'File "x.ml", line 1, characters 0-3:' >&2\necho 'Error: Syntax error' >&2\nexit 2`
    : [
      `echo "$@" >> ${sh(calls)}`,
      'out=""; ml=""; prev=""',
      'for a in "$@"; do',
      '  [ "$prev" = "-o" ] && out="$a"',
      '  case "$a" in *.ml) ml="$a";; esac',
      '  prev="$a"',
      "done",
      '[ -f "$ml" ] || { echo "no source $ml" >&2; exit 4; }',
      '[ -n "$out" ] || { echo "no -o" >&2; exit 4; }',
      `cp ${sh(join(dir, "program.sh"))} "$out" && chmod +x "$out"`,
    ].join("\n");
  return await script(join(dir, "ocamlopt"), body);
}

/** Writes the program the fake compiler produces: each run appends a line to `dir/runs`, then
 * does `body`. */
export async function fakeProgram(dir: string, body: string): Promise<void> {
  await script(join(dir, "program.sh"), `echo run >> ${sh(join(dir, "runs"))}\n${body}`);
}

/** Lines of a file, or 0 when it does not exist. */
export async function lineCount(path: string): Promise<number> {
  try {
    return (await Deno.readTextFile(path)).split("\n").filter((l) => l !== "").length;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return 0;
    throw e;
  }
}

// ---- the child process -------------------------------------------------------------------------

/** What fake_toolchain_child.ts is asked to do. */
export interface ChildRequest {
  /** `build`: buildProgram (as many times as `times`); `diff`: diffScenario (`times` times). */
  readonly op: "build" | "diff";
  readonly scenario: string;
  readonly ocamlopt: readonly string[];
  readonly cacheDir: string;
  readonly times?: number;
  readonly timeoutMs?: number;
  readonly firstRuns?: number;
}

/** What the child answers: one outcome per call, and the progress messages. */
export interface ChildAnswer {
  readonly outcomes: (
    | { readonly value: unknown }
    | { readonly error: { readonly name: string; readonly message: string } }
  )[];
  readonly progress: string[];
}

const CHILD = new URL("./fake_toolchain_child.ts", import.meta.url).pathname;
const ROOT = new URL("../../", import.meta.url).pathname;

/**
 * Runs `buildProgram` or `diffScenario` in a child Deno. They read the whole environment to give
 * the compiler (run.ts, compilerEnv), which needs --allow-env, a permission the test suite does
 * not have; a child process is given it.
 */
export async function inChild(
  req: ChildRequest,
  env: Record<string, string> = {},
): Promise<ChildAnswer> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--allow-read",
      "--allow-write",
      "--allow-run",
      "--allow-env",
      CHILD,
      JSON.stringify(req),
    ],
    cwd: ROOT,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(out.stdout);
  if (!out.success) {
    throw new Error(
      `child failed (${out.code}): ${new TextDecoder().decode(out.stderr)}\n${stdout}`,
    );
  }
  return JSON.parse(stdout) as ChildAnswer;
}

/**
 * A differential run in which the simulation is judged by itself, with `fault` applied to the
 * simulated side's lines: a stand-in for the real runtime when testing the campaign. A scenario
 * the simulation refuses while running is an error result, as `diffScenario` gives it.
 */
export function judgedBySimulation(
  sc: Scenario,
  fault: (line: string) => string,
): Promise<DiffResult> {
  const scenario = sc.settings.name;
  let real: CanonicalLog;
  try {
    real = simulateCanonical(sc);
  } catch (e) {
    return Promise.resolve({
      scenario,
      status: "error",
      message: `simulation failed: ${(e as Error).message}`,
    });
  }
  const sim = { ...real, lines: real.lines.map(fault) };
  return Promise.resolve(judgedResult(scenario, sim, real, { verifiedNow: true }));
}
