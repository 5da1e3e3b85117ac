/**
 * Scenario → OCaml program. The program does what the scenario declares, on the real OCaml
 * 5.3 runtime: each allocation is one block of the declared size and source, kept alive exactly
 * as long as the scenario says; loops are `for` loops, calls are named functions (so their
 * frames are on the callstacks memprof records), collections are the `Gc` calls they stand for,
 * trackers do every action the scenario gives them, and domains run one at a time, handing a
 * baton over on a mutex and condition. Callbacks record into preallocated int arrays and the
 * log is printed after the run, so the program's own bookkeeping never touches the heap while
 * the scenario runs. A construct with no faithful OCaml form is refused with an
 * {@linkcode ExportError}; nothing is approximated silently.
 *
 * The work is split: exportable.ts checks every refusal (and _plan.ts decides the program's
 * shape) before any code is written; the `_emit_*.ts` writers write the code, a writer per step
 * kind; this module assembles the program. See docs/differential.md for the export rules.
 * @module
 */
import type { Lifetime, Scenario } from "../scenario/spec.ts";
import type { KeepSiteOf } from "../scenario/result.ts";
import { isPlainShellWord } from "../util/shell.ts";
import { ExportError } from "./errors.ts";
import { ocamlCommentString } from "./_ocaml_text.ts";
import { validateScenario } from "../scenario/validate.ts";
import { countedWaitsPrelude, epilogue, prelude, threadsPrelude } from "./_prelude.ts";
import { harnessBlocks, harnessMajorHeap, harnessMarkLayout } from "./_harness_heap.ts";
import type { MajorGcInitialState } from "../runtime/major_gc.ts";
import { analyseExport, DEFAULT_CALLBACK_KEEP_CAPACITY } from "./exportable.ts";
import { Emitter } from "./_emit.ts";
import { handlersCode, resumeCode, trackerCode } from "./_emit_tracker.ts";
import {
  domainFunction,
  mainCode,
  releasesCode,
  threadFunction,
  turnsOf,
} from "./_emit_domains.ts";

export { defName, MAX_PROGRAM_CHARS } from "./exportable.ts";
export { DEFAULT_CALLBACK_KEEP_CAPACITY };

/** Callstack frames the program's harness adds below the scenario's own: the function running
 * the domain's steps, plus the module initialiser and `caml_program` on the main domain, or
 * `Domain.spawn`'s body on the others; on a systhread with a program, its function and
 * `Thread.create`'s wrapper (whose `check_memprof_cb` allocates at the thread's end, with as
 * many frames); and above them, where an external allocation takes its callstack, the frame
 * of the emulated `ext_alloc_slowpath` (as memtrace's own, reached by a tail call from
 * `Memtrace.External.alloc`). The differential runner gives the simulation as many. */
export const HARNESS_FRAMES: {
  readonly main: number;
  readonly spawned: number;
  readonly thread: number;
  readonly external: number;
} = {
  main: 3,
  spawned: 2,
  thread: 2,
  external: 1,
};

/** Records an exported program's callback log holds unless told otherwise. */
export const DEFAULT_LOG_CAPACITY = 65_536;

/** The command the header of an exported program builds it with unless told otherwise: the
 * OCaml 5.3 that `deno task ocaml setup` built is not on PATH, and `ocaml exec` runs it. */
export const DEFAULT_BUILD_COMMAND: readonly string[] = [
  "deno",
  "task",
  "ocaml",
  "exec",
  "ocamlopt",
];

/** Options of {@linkcode exportOCaml}. */
export interface ExportOptions {
  /** The words that run `ocamlopt` in the build command of the program's header comment, such as
   * the full path of the toolchain's (default {@linkcode DEFAULT_BUILD_COMMAND}). Only words a
   * shell takes as they are (letters, digits, `_@%+=:,./-`) are used: with any other, the
   * default is. It changes the program's text in its header comment only. */
  readonly buildCommand?: readonly string[];
  /** Records the program's callback log can hold (default
   * {@linkcode DEFAULT_LOG_CAPACITY}). A run that would log more reports `log_overflow true`. */
  readonly logCapacity?: number;
  /** Slots of each keep site inside a callback, where the number of blocks alive at once
   * cannot be bounded from the scenario alone (default
   * {@linkcode DEFAULT_CALLBACK_KEEP_CAPACITY}). */
  readonly callbackKeepCapacity?: number;
  /** For runs whose runtime_events ring is compared (`deno task diff --rings`; default false,
   * which leaves the program as it is): once the run has ended (after its `Gc.quick_stat`),
   * the program pauses and resumes the ring through the runtime's own primitives
   * (`caml_ml_runtime_events_pause`/`resume`, C calls that allocate nothing), a mark in the
   * ring where the run ends; and after printing its log it runs `Gc.minor ()`, so that every
   * word it allocated is in the ring's counters when the runtime prints its statistics at exit
   * (`OCAMLRUNPARAM=v=0x400`). Nothing changes before the run's end. */
  readonly ringMarks?: boolean;
}

/** An exported program and what is needed to build, run and read it. */
export interface ExportedProgram {
  /** The scenario's name. */
  readonly scenario: string;
  /** The OCaml module name (the file is `<file>.ml`). */
  readonly moduleName: string;
  /** The file name, without directory: `<name>.ml`. */
  readonly fileName: string;
  /** The program text. */
  readonly source: string;
  /** OCaml function names (`Module.f12`) of the scenario's frames → the frame's definition
   * name (`Service.parse`), to read the callstacks the program prints. */
  readonly frames: ReadonlyMap<string, string>;
  /** Exceptions callbacks raise, by the number the log gives them. */
  readonly exceptions: readonly string[];
  /** `ocamlopt` arguments that build it (`-g` first, the source last; add `-o EXE`). */
  readonly compileArgs: readonly string[];
  /** The command that builds it, run from its folder, as its header says: the build command
   * ({@linkcode ExportOptions.buildCommand}), the arguments and `-o <file name without .ml>`. */
  readonly build: string;
  /** Environment the program must run with (`OCAMLRUNPARAM`). */
  readonly env: Readonly<Record<string, string>>;
  /** Its major heap when the scenario starts, for the simulation's major GC pacing (with
   * its layout, for the marking). */
  readonly majorHeap: MajorGcInitialState;
  /** The keep sites of each lifetime of the scenario, one per keep statement, in the order of
   * the program's statements, each with the step or callback action it keeps for
   * (`RunOptions.keepSites`). */
  readonly keepSites: ReadonlyMap<Lifetime, readonly KeepSiteOf[]>;
}

/**
 * Writes the OCaml program of scenario `sc`. The scenario is validated first
 * ({@linkcode validateScenario}: an object made without the builder is checked as the builder's
 * are), then checked for what has no faithful OCaml form ({@linkcode checkExportable}), and its
 * text (names, frames, description, user event names) reaches the program only inside OCaml
 * string literals (see docs/differential.md, "User text"). Throws {@linkcode ScenarioError} for
 * an invalid scenario, {@linkcode ExportError} (with the first refusal, and all of them) for
 * one with no faithful OCaml form.
 */
export function exportOCaml(sc: Scenario, options: ExportOptions = {}): ExportedProgram {
  validateScenario(sc);
  const { plan, refusals } = analyseExport(sc, options);
  if (refusals.length > 0) {
    const [first] = refusals;
    throw new ExportError(sc.settings.name, first.step, first.reason, {
      kind: first.kind,
      refusals,
    });
  }
  const em = new Emitter(sc, plan, moduleNameOf(sc.settings.name), {
    callbackKeepCapacity: options.callbackKeepCapacity ?? DEFAULT_CALLBACK_KEEP_CAPACITY,
  });
  return writeProgram(em, options);
}

/** The OCaml module name for a scenario name: `service` → `Service`, `a-b.c` → `A_b_c`. */
export function moduleNameOf(scenario: string): string {
  const base = scenario.replace(/[^A-Za-z0-9_]/g, "_");
  const safe = /^[A-Za-z]/.test(base) ? base : `S_${base}`;
  return safe[0].toUpperCase() + safe.slice(1);
}

/** The program's files and how it is built and run. */
interface Build {
  readonly fileBase: string;
  readonly compileArgs: string[];
  readonly build: string;
  readonly env: Record<string, string>;
  readonly defaultCommand: boolean;
}

function buildOf(em: Emitter, options: ExportOptions): Build {
  const fileBase = em.moduleName[0].toLowerCase() + em.moduleName.slice(1);
  const given = options.buildCommand;
  const command = given !== undefined && given.length > 0 && given.every(isPlainShellWord)
    ? given
    : DEFAULT_BUILD_COMMAND;
  const libs = em.usesEvents ? ["-I", "+runtime_events", "runtime_events.cmxa"] : [];
  if (em.plan.threadsLibrary) {
    libs.push("-I", "+unix", "-I", "+threads", "unix.cmxa", "threads.cmxa");
  }
  const compileArgs = ["-g", ...libs, `${fileBase}.ml`];
  const s = em.sc.settings;
  return {
    fileBase,
    compileArgs,
    build: `${command.join(" ")} ${compileArgs.join(" ")} -o ${fileBase}`,
    env: { OCAMLRUNPARAM: `s=${s.minorHeapWords},e=${s.ringLog2}` },
    defaultCommand: command === DEFAULT_BUILD_COMMAND,
  };
}

/** The program of a scenario with no refusal: its parts in the order OCaml needs them. */
function writeProgram(em: Emitter, options: ExportOptions): ExportedProgram {
  const { sc, plan } = em;
  const turns = turnsOf(em);
  // Trackers first: their keep sites must be known before release steps are written. Domain
  // functions: the highest number first, since a domain can only spawn later ones.
  const callbacks = plan.profiles.map((p, slot) => trackerCode(em, slot, p));
  const runs: string[] = [];
  for (let ord = sc.domains.length - 1; ord >= 0; ord--) runs.push(domainFunction(em, ord, turns));
  // The threads' functions (the program's initialisation creates the threads before the run).
  const threadRuns = plan.threadSteps.map((st, k) => threadFunction(em, st, k + 1));
  const params = {
    logCapacity: options.logCapacity ?? DEFAULT_LOG_CAPACITY,
    maxDepth: Math.max(1, em.maxDepth),
    maxFrames: plan.maxFrames,
    domains: sc.domains.length,
    threads: plan.threadSteps.length,
    initThreads: plan.initThreads,
    batonOrds: plan.batonDomains.map((d) => plan.domainOrd.get(d)!),
    threadDomains: plan.threadSteps.map((st) => plan.domainOrd.get(st.domain)!),
    profiles: plan.profiles.length,
    sites: em.sites,
    fifoSites: em.fifoSites,
    seed: sc.settings.seed,
    minorHeapWords: sc.settings.minorHeapWords,
    ringLog2: sc.settings.ringLog2,
    exceptions: plan.exceptions.length,
  };
  const handlers = [
    handlersCode(em),
    // (issue 22, polls helper) Threads drain too, at their program's end (threadFunction).
    turns.multi || plan.threadSteps.length > 0 ? resumeCode(em) : "",
  ].filter((t) => t !== "").join("\n\n");
  const build = buildOf(em, options);
  const threadsLibrary = plan.threadsLibrary;
  const source = [
    header(em, build),
    prelude(params),
    threadsLibrary
      ? threadsPrelude({
        threads: params.threads,
        initThreads: params.initThreads,
        batonOrds: params.batonOrds,
        threadDomains: params.threadDomains,
        domains: params.domains,
        spin: plan.countedWaits,
      })
      : "",
    plan.countedWaits ? countedWaitsPrelude({ domains: params.domains }) : "",
    "(* ---- Scenario ---- *)",
    plan.exceptions.map((_, i) => `exception E_${i}`).join("\n"),
    handlers,
    ...em.inits,
    "let start_fns : (unit -> unit) array = Array.make " +
    `${Math.max(1, plan.profiles.length)} (fun () -> ())`,
    ...releasesCode(em),
    ...em.defs,
    ...callbacks,
    ...threadRuns,
    ...runs,
    epilogue(),
    mainCode(em, turns, { ringMarks: options.ringMarks === true }),
  ].filter((s) => s !== "").join("\n\n") + "\n";
  return {
    scenario: sc.settings.name,
    moduleName: em.moduleName,
    fileName: `${build.fileBase}.ml`,
    source,
    frames: em.frames,
    exceptions: plan.exceptions,
    compileArgs: build.compileArgs,
    build: build.build,
    env: build.env,
    majorHeap: {
      ...harnessMajorHeap(
        harnessBlocks(params, em.initBlocks, {
          threadsLibrary,
          countedWaits: plan.countedWaits,
        }),
        sc.settings.minorHeapWords,
        { threadsLibrary, events: em.usesEvents },
      ),
      layout: harnessMarkLayout(params, em.initBlocks, {
        threadsLibrary,
        countedWaits: plan.countedWaits,
        events: em.usesEvents,
        userEvents: em.userEvents.size,
      }),
    },
    keepSites: em.keepSites,
  };
}

/** The program's header comment: what it is, and how to build and run it. */
function header(em: Emitter, build: Build): string {
  const s = em.sc.settings;
  return [
    `(* Scenario ${
      ocamlCommentString(s.name)
    }, exported by memprof-lab for the real OCaml 5.3 runtime.`,
    ...(s.description === "" ? [] : [`   ${ocamlCommentString(s.description)}`]),
    "",
    "   Build and run, from this file's folder:",
    `     ${build.build}`,
    `     OCAMLRUNPARAM=${build.env.OCAMLRUNPARAM} ./${build.fileBase}`,
    ...(build.defaultCommand
      ? [
        "   (`deno task ocaml exec` runs the tools of the OCaml 5.3 toolchain memprof-lab uses,",
        "   which `deno task ocaml setup` builds, from inside a memprof-lab checkout; elsewhere",
        "   `memprof-lab ocaml exec ocamlopt …`, or an ocamlopt 5.3 of your own.)",
      ]
      : []),
    "",
    "   It prints its callback log (see docs/differential.md); `deno task diff` compares it",
    "   with the simulation's. *)",
  ].join("\n");
}
