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
 * See docs/differential.md for the export rules.
 * @module
 */
import type {
  CallbackAction,
  CallbackSpec,
  Frame,
  GcKind,
  Lifetime,
  ProfileSpec,
  Scenario,
  SizeSpec,
  Step,
  Trigger,
} from "../scenario/spec.ts";
import type { KeepSiteOf } from "../scenario/result.ts";
import { forEachStep, hasBody, someAction, usesThreadPrograms } from "../scenario/walk.ts";
import { ocamlHexFloat } from "../util/ocaml_printf.ts";
import { isPlainShellWord } from "../util/shell.ts";
import { ExportError } from "./errors.ts";
import { ocamlCommentString, ocamlString } from "./_ocaml_text.ts";
import { validateScenario } from "../scenario/validate.ts";
import { epilogue, prelude, threadsPrelude } from "./_prelude.ts";
import {
  type HarnessBlock,
  harnessBlocks,
  harnessMajorHeap,
  harnessMarkLayout,
  userEventBlocks,
} from "./_harness_heap.ts";
import type { MajorGcInitialState } from "../runtime/major_gc.ts";

/** Callstack frames the program's harness adds below the scenario's own: the function running
 * the domain's steps, plus the module initialiser and `caml_program` on the main domain, or
 * `Domain.spawn`'s body on the others; on a systhread with a program, its function and
 * `Thread.create`'s wrapper (whose `check_memprof_cb` allocates at the thread's end, with as
 * many frames). The differential runner gives the simulation as many. */
export const HARNESS_FRAMES: {
  readonly main: number;
  readonly spawned: number;
  readonly thread: number;
} = {
  main: 3,
  spawned: 2,
  thread: 2,
};

/** Records an exported program's callback log holds unless told otherwise. */
export const DEFAULT_LOG_CAPACITY = 65_536;

/** Slots of each keep site inside a callback unless told otherwise. */
export const DEFAULT_CALLBACK_KEEP_CAPACITY = 4_096;

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
 * are), and its text (names, frames, description, user event names) reaches the program only
 * inside OCaml string literals (see docs/differential.md, "User text"). Throws
 * {@linkcode ScenarioError} for an invalid scenario, {@linkcode ExportError} for one with no
 * faithful OCaml form.
 */
export function exportOCaml(sc: Scenario, options: ExportOptions = {}): ExportedProgram {
  validateScenario(sc);
  return new Exporter(sc, options).run();
}

/** The OCaml module name for a scenario name: `service` → `Service`, `a-b.c` → `A_b_c`. */
export function moduleNameOf(scenario: string): string {
  const base = scenario.replace(/[^A-Za-z0-9_]/g, "_");
  const safe = /^[A-Za-z]/.test(base) ? base : `S_${base}`;
  return safe[0].toUpperCase() + safe.slice(1);
}

import { MAX_YOUNG_WOSIZE } from "../runtime/mod.ts";
const KIND_INDEX = {
  allocMinor: 0,
  allocMajor: 1,
  promote: 2,
  deallocMinor: 3,
  deallocMajor: 4,
} as const;
type CallbackKindName = keyof typeof KIND_INDEX;
const CALLBACK_KINDS = Object.keys(KIND_INDEX) as CallbackKindName[];
/** Why a domain is not joined while the joining domain samples. */
const JOIN_RACE = "Domain.join waits for the domain's termination only if it has not finished " +
  "yet, which depends on timing, and the real runs then sample the joining domain at other " +
  "points (loop_indices: one iteration earlier in 2 of 30 runs; domain_exit_tracked: the " +
  "join's own closure sampled in some runs only), a race point not modelled yet";

/** Why a domain does not spawn another while its profile samples and a callback may raise. */
const SPAWN_RAISE = "a callback raising inside Domain.spawn (its allocations run the parent's " +
  "callbacks) would make it fail before or after the new domain started, which the exported " +
  "program cannot follow";

/**
 * Programs longer than this many characters are refused: 16 Mi, about 190 times the largest
 * library scenario's program. Each step's code is a few hundred characters to a few kilobytes (a
 * drawn size is a `match` over up to 257 sizes, written where the block is allocated), so a
 * scenario of a few megabytes could ask for hundreds of megabytes of program, beyond what ocamlopt
 * compiles in reasonable time, and held in memory while it is written.
 */
export const MAX_PROGRAM_CHARS = 16 * 1024 * 1024;

/** Sites whose capacity would exceed this many slots are refused (memory of the program). */
const MAX_SITE_CAPACITY = 50_000_000;

/** Where code is generated: on which domain, how deep in loops, inside what. */
interface Ctx {
  /** The scenario's number of the domain running the code. */
  readonly ord: number;
  /** Loops enclosing the code on that domain. */
  readonly depth: number;
  /** Inside an `attempt`: exceptions propagate to it instead of being logged per step. */
  readonly inAttempt: boolean;
  /** Inside a tracker callback. */
  readonly inCallback: boolean;
  /** The most times the code can run (product of enclosing loop counts). */
  readonly bound: number;
  /** The systhread running the code (0: the main thread; k: the k-th with a program). */
  readonly thread: number;
  /** Step position, for errors. */
  readonly at: string;
  /** The step (or callback action) whose code this is: what its keep sites are recorded
   * under (`ExportedProgram.keepSites`' `owner`). */
  readonly owner?: object;
}

interface Segment {
  readonly ord: number;
  readonly steps: Step[];
  /** Domains whose termination this segment's domain waits for before it starts. */
  joins: number[];
  /** The segment ends with its domain's termination. */
  terminates: boolean;
}

class Exporter {
  readonly #name: string;
  readonly #moduleName: string;
  readonly #domainOrd = new Map<string, number>();
  readonly #defs: string[] = [];
  readonly #inits: string[] = [];
  /** Blocks the scenario's initialised values keep in the heap (see _harness_heap.ts). */
  readonly #initBlocks: HarnessBlock[] = [];
  readonly #frames = new Map<string, string>();
  readonly #exceptions: string[] = [];
  readonly #exceptionIndex = new Map<string, number>();
  readonly #profileSlot = new Map<string, number>();
  readonly #profileSpecs: ProfileSpec[] = [];
  /** Domains ended by a `join`: their function waits for the joiner to release it. */
  readonly #joined = new Set<number>();
  /** Position of the step that starts each profile (directly or through its callbacks). */
  readonly #profileAt: string[] = [];
  readonly #sites: number[] = [];
  readonly #keepSites = new Map<Lifetime, KeepSiteOf[]>();
  readonly #fifoSites: number[] = [];
  readonly #releaseSites = new Map<
    string,
    { fifo: number[]; slots: number[]; rings: number[] }
  >();
  readonly #userEvents = new Map<string, { id: number; type: string }>();
  readonly #logCapacity: number;
  readonly #ringMarks: boolean;
  readonly #callbackKeepCapacity: number;
  readonly #buildCommand: readonly string[];
  #counter = 0;
  #maxDepth = 0;
  #usesEvents = false;
  #canRaise = false;
  /** Systhreads with programs, in creation order (thread k is `threadSteps[k - 1]`). */
  readonly #threadSteps: Extract<Step, { kind: "threadSpawn" }>[] = [];
  /** Thread number by name ("main" is 0). */
  readonly #threadIndex = new Map<string, number>([["main", 0]]);

  readonly #sc: Scenario;

  constructor(sc: Scenario, options: ExportOptions) {
    this.#sc = sc;
    this.#name = sc.settings.name;
    this.#moduleName = moduleNameOf(this.#name);
    this.#logCapacity = options.logCapacity ?? DEFAULT_LOG_CAPACITY;
    this.#ringMarks = options.ringMarks === true;
    this.#callbackKeepCapacity = options.callbackKeepCapacity ?? DEFAULT_CALLBACK_KEEP_CAPACITY;
    const given = options.buildCommand;
    this.#buildCommand = given !== undefined && given.length > 0 && given.every(isPlainShellWord)
      ? given
      : DEFAULT_BUILD_COMMAND;
    sc.domains.forEach((d, i) => this.#domainOrd.set(d, i));
  }

  #refuse(at: string, reason: string): never {
    throw new ExportError(this.#name, at, reason);
  }

  #fresh(prefix: string): string {
    return `${prefix}${++this.#counter}`;
  }

  run(): ExportedProgram {
    for (const st of this.#sc.steps) {
      if (st.kind !== "threadSpawn") continue;
      this.#threadSteps.push(st);
      this.#threadIndex.set(st.thread, this.#threadSteps.length);
    }
    const threads = this.#threadSteps.length > 0 || usesThreadPrograms(this.#sc);
    if (threads && this.#sc.domains.length > 1) {
      this.#refuse(
        this.#threadSteps[0]?.at ?? "settings",
        "systhreads with programs in a scenario with several domains: the exported program " +
          "passes one baton between domains and another between the main domain's threads, " +
          "and does not combine them",
      );
    }
    this.#collectProfiles();
    this.#canRaise = this.#profileSpecs.some((p) =>
      someAction(p.tracker, (a) => a.kind === "raise")
    );
    const segments = this.#segments();
    const multi = this.#sc.domains.length > 1;
    // Domain functions: the highest number first, since a domain can only spawn later ones.
    // Trackers first: their keep sites must be known before release steps are written.
    const callbacks = this.#profileSpecs.map((p, slot) => this.#trackerCode(slot, p));
    const runs: string[] = [];
    const aliveAtEnd = this.#aliveAtEnd();
    const flushBase = segments.length;
    const exitTurn = flushBase + aliveAtEnd.length;
    const trailingJoins = segments.length > 0 && segments[segments.length - 1].terminates
      ? [segments[segments.length - 1].ord]
      : [];
    for (let ord = this.#sc.domains.length - 1; ord >= 0; ord--) {
      runs.push(
        this.#domainFunction(ord, segments, aliveAtEnd, flushBase, exitTurn, trailingJoins, multi),
      );
    }
    // The threads' functions (the program's initialisation creates the threads before the run).
    const threadRuns = this.#threadSteps.map((st, k) => this.#threadFunction(st, k + 1));
    const maxFrames = Math.max(0, ...this.#profileSpecs.map((p) => p.callstackSize));
    if (maxFrames > MAX_FRAMES_RECORDED) {
      const slot = this.#profileSpecs.findIndex((p) => p.callstackSize === maxFrames);
      this.#refuse(
        this.#profileAt[slot],
        `a callstack size of ${maxFrames}: the exported program records at most ` +
          `${MAX_FRAMES_RECORDED} frames per callback`,
      );
    }
    const params = {
      logCapacity: this.#logCapacity,
      maxDepth: Math.max(1, this.#maxDepth),
      maxFrames,
      domains: this.#sc.domains.length,
      threads: this.#threadSteps.length,
      profiles: this.#profileSpecs.length,
      sites: this.#sites,
      fifoSites: this.#fifoSites,
      seed: this.#sc.settings.seed,
      minorHeapWords: this.#sc.settings.minorHeapWords,
      ringLog2: this.#sc.settings.ringLog2,
      exceptions: this.#exceptions.length,
    };
    const exnDecls = this.#exceptions.map((_, i) => `exception E_${i}`).join("\n");
    const handlers = [
      this.#handlersCode(),
      // (issue 22, polls helper) Threads drain too, at their program's end (threadFunction).
      multi || this.#threadSteps.length > 0 ? this.#resumeCode() : "",
    ]
      .filter((t) => t !== "").join("\n\n");
    const releases = [...this.#releaseSites.entries()].map(([name, s], i) =>
      `(* release ${ocamlCommentString(name)} *)\nlet[@inline never] release_${i} () =\n  ${
        [
          ...s.fifo.map((k) => `release_site ${k};`),
          ...s.slots.map((k) => `release_slots ${k};`),
          ...s.rings.map((k) => `release_ring ${k};`),
        ]
          .join("\n  ")
      }\n  Sys.poll_actions ()`
    );
    const main = this.#mainCode(aliveAtEnd, exitTurn, multi);
    const header = this.#header();
    const source = [
      header,
      prelude(params),
      this.#usesThreadLib()
        ? threadsPrelude({ threads: this.#threadSteps.length, domains: params.domains })
        : "",
      "(* ---- Scenario ---- *)",
      exnDecls,
      handlers,
      ...this.#inits,
      "let start_fns : (unit -> unit) array = Array.make " +
      `${Math.max(1, this.#profileSpecs.length)} (fun () -> ())`,
      ...releases,
      ...this.#defs,
      ...callbacks,
      ...threadRuns,
      ...runs,
      epilogue(),
      main,
    ].filter((s) => s !== "").join("\n\n") + "\n";
    return {
      scenario: this.#name,
      moduleName: this.#moduleName,
      fileName: `${this.#fileBase()}.ml`,
      source,
      frames: this.#frames,
      exceptions: this.#exceptions,
      compileArgs: this.#compileArgs(),
      build: this.#build(),
      env: this.#env(),
      majorHeap: {
        ...harnessMajorHeap(
          harnessBlocks(params, this.#initBlocks, { threadsLibrary: this.#usesThreadLib() }),
          this.#sc.settings.minorHeapWords,
          { threadsLibrary: this.#usesThreadLib(), events: this.#usesEvents },
        ),
        layout: harnessMarkLayout(params, this.#initBlocks, {
          threadsLibrary: this.#usesThreadLib(),
          events: this.#usesEvents,
          userEvents: this.#userEvents.size,
        }),
      },
      keepSites: this.#keepSites,
    };
  }

  #fileBase(): string {
    return this.#moduleName[0].toLowerCase() + this.#moduleName.slice(1);
  }

  #compileArgs(): string[] {
    const libs = this.#usesEvents ? ["-I", "+runtime_events", "runtime_events.cmxa"] : [];
    if (this.#usesThreadLib()) {
      libs.push("-I", "+unix", "-I", "+threads", "unix.cmxa", "threads.cmxa");
    }
    return ["-g", ...libs, `${this.#fileBase()}.ml`];
  }

  /** Whether the program uses systhreads (and links the threads library). */
  #usesThreadLib(): boolean {
    return this.#threadSteps.length > 0 || usesThreadPrograms(this.#sc);
  }

  #env(): Record<string, string> {
    const s = this.#sc.settings;
    return { OCAMLRUNPARAM: `s=${s.minorHeapWords},e=${s.ringLog2}` };
  }

  /** The command that builds the program, from its folder, as the header prints it. */
  #build(): string {
    return `${this.#buildCommand.join(" ")} ${
      this.#compileArgs().join(" ")
    } -o ${this.#fileBase()}`;
  }

  #header(): string {
    const base = this.#fileBase();
    const env = this.#env().OCAMLRUNPARAM;
    const usesDefault = this.#buildCommand === DEFAULT_BUILD_COMMAND;
    return [
      `(* Scenario ${
        ocamlCommentString(this.#name)
      }, exported by memprof-lab for the real OCaml 5.3 runtime.`,
      ...(this.#sc.settings.description === ""
        ? []
        : [`   ${ocamlCommentString(this.#sc.settings.description)}`]),
      "",
      "   Build and run, from this file's folder:",
      `     ${this.#build()}`,
      `     OCAMLRUNPARAM=${env} ./${base}`,
      ...(usesDefault
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

  // ---- profiles and trackers -----------------------------------------------------------------

  #collectProfiles(): void {
    forEachStep(this.#sc.steps, true, (st) => {
      if (st.kind === "memprofStart") this.#addProfile(st.profile, st.at);
      return true;
    });
  }

  #addProfile(p: ProfileSpec, at: string): number {
    if (p.name === undefined) {
      this.#refuse(at, "a profile started by a callback needs a name (act.start({ name, … }))");
    }
    const known = this.#profileSlot.get(p.name);
    if (known !== undefined) {
      if (JSON.stringify(this.#profileSpecs[known]) !== JSON.stringify(p)) {
        this.#refuse(at, `profile "${p.name}" is started with two different specifications`);
      }
      return known;
    }
    const slot = this.#profileSpecs.length;
    this.#profileSlot.set(p.name, slot);
    this.#profileSpecs.push(p);
    this.#profileAt.push(at);
    for (const k of CALLBACK_KINDS) {
      for (const { action } of p.tracker[k]?.actions ?? []) {
        if (action.kind === "start") this.#addProfile(action.profile, at);
        if (action.kind === "raise") this.#exceptionOf(action.exn);
      }
    }
    return slot;
  }

  #exceptionOf(name: string): number {
    let i = this.#exceptionIndex.get(name);
    if (i === undefined) {
      i = this.#exceptions.length;
      this.#exceptions.push(name);
      this.#exceptionIndex.set(name, i);
    }
    return i;
  }

  #handlersCode(): string {
    if (!this.#canRaise) return "";
    const arms = (kind: number) =>
      this.#exceptions.map((_, i) => `| E_${i} -> record_exn ${kind} ${i}`).join(" ");
    return [
      `let[@inline never] escaped e = match e with ${arms(5)} | e -> raise e`,
      `let[@inline never] caught_at o k e = loops.(o) <- k; match e with ${arms(6)} | e -> raise e`,
      "(* A step's tick, whose release may poll: what a callback raises there is the step's. *)",
      "let[@inline never] tick_g () = try tick () with e -> escaped e",
    ].join("\n");
  }

  /**
   * How a domain resumes (several domains): at its turn, after a `Domain.join` and before its
   * final poll, it runs the callbacks that the other domains' collections made ready on it, all
   * of them (`process_pending`, retried after each exception, which is logged), as the
   * simulation drains a resuming domain (RunOptions.exportHarness). `Domain.join` polls in its
   * wait loop: a callback raising there aborts the join, which is retried until it returns.
   */
  #resumeCode(): string {
    if (!this.#canRaise) {
      return [
        "let[@inline never] resume_dom () = process_pending ()",
        "let[@inline never] join_dom (d : unit Domain.t) = Domain.join d",
      ].join("\n");
    }
    return [
      "(* A domain resuming runs every callback made ready on it by other domains' collections;",
      "   Domain.join polls, and a callback raising there aborts it: it is retried. *)",
      "let rec resume_dom () =",
      "  match process_pending () with",
      "  | () -> ()",
      "  | exception e -> escaped e; ignore (Sys.opaque_identity (resume_dom ()))",
      "let rec join_dom (d : unit Domain.t) =",
      "  match Domain.join d with",
      "  | () -> ()",
      "  | exception e -> escaped e; ignore (Sys.opaque_identity (join_dom d))",
    ].join("\n");
  }

  #trackerCode(slot: number, p: ProfileSpec): string {
    const spec = (k: CallbackKindName): CallbackSpec =>
      p.tracker[k] ?? { result: k.startsWith("dealloc") ? "none" : "track", actions: [] };
    const ctx: Ctx = {
      ord: 0,
      depth: 0,
      inAttempt: true,
      inCallback: true,
      bound: Infinity,
      at: this.#profileAt[slot],
      thread: 0,
    };
    const fns: string[] = [];
    for (const k of CALLBACK_KINDS) {
      const ki = KIND_INDEX[k];
      const s = spec(k);
      const acts = s.actions.map(({ when, action }) =>
        `if ${triggerCode(when)} then begin ${this.#actionCode(action, slot, ctx)} end;`
      ).join("\n  ");
      const fn = `cb_${slot}_${ki}`;
      // After the run (`frozen`, from the final poll on), callbacks do nothing: the program's
      // own bookkeeping (printing the log) allocates and collects, and the simulation, whose
      // run ends at the final poll, has no such callbacks.
      if (ki <= 1) {
        const ret = s.result === "track" ? "set_outcome b 1; Some id" : "set_outcome b 0; None";
        fns.push(
          `let ${fn} (info : Gc.Memprof.allocation) : int option =\n` +
            `  if !frozen then None else begin\n` +
            `  let b = record_alloc ${ki} info in\n  let id = !serial in\n  ignore id;\n` +
            `  let n = bump ${slot} ${ki} in\n  ignore n;\n  ${acts}\n  ${ret}\n  end`,
        );
      } else if (ki === 2) {
        const ret = s.result === "track" ? "set_outcome b 1; Some v" : "set_outcome b 0; None";
        fns.push(
          `let ${fn} (v : int) : int option =\n  if !frozen then None else begin\n` +
            `  let b = record ${ki} v in\n` +
            `  let n = bump ${slot} ${ki} in\n  ignore n;\n  ${acts}\n  ${ret}\n  end`,
        );
      } else {
        fns.push(
          `let ${fn} (v : int) : unit =\n  if !frozen then () else begin\n` +
            `  let b = record ${ki} v in\n` +
            `  let n = bump ${slot} ${ki} in\n  ignore n;\n  ${acts}\n  set_outcome b 2\n  end`,
        );
      }
    }
    const tracker = `let trk_${slot} : (int, int) Gc.Memprof.tracker = {\n` +
      `  Gc.Memprof.alloc_minor = cb_${slot}_0; alloc_major = cb_${slot}_1;\n` +
      `  promote = cb_${slot}_2; dealloc_minor = cb_${slot}_3; dealloc_major = cb_${slot}_4 }`;
    const start = `let start_${slot} () =\n` +
      // (issue 22, polls helper) Five stores, not a loop: its back-edges would poll.
      `  ${[0, 1, 2, 3, 4].map((k) => `calls.(${slot * 5 + k}) <- 0;`).join(" ")}\n` +
      `  prof.(${slot}) <- Obj.repr (Gc.Memprof.start ~sampling_rate:(${
        camlFloat(p.samplingRate)
      }) ~callstack_size:${p.callstackSize} trk_${slot})\n` +
      `let () = start_fns.(${slot}) <- start_${slot}`;
    return `(* profile ${ocamlCommentString(p.name!)} *)\n${
      fns.join("\n\n")
    }\n\n${tracker}\n\n${start}`;
  }

  #actionCode(a: CallbackAction, slot: number, ctx: Ctx): string {
    switch (a.kind) {
      case "raise":
        return `set_outcome b ${3 + this.#exceptionOf(a.exn)}; raise E_${this.#exceptionOf(a.exn)}`;
      case "stop":
        return "Gc.Memprof.stop ()";
      case "start":
        return `start_fns.(${this.#profileSlot.get(a.profile.name!)!}) ()`;
      case "discard":
        return `Gc.Memprof.discard (Obj.obj prof.(${slot}))`;
      case "alloc":
        return this.#keepCode(camlBlock(a.words), a.lifetime, { ...ctx, owner: a }, {
          linkable: true,
        });
      case "gc":
        return gcCode(a.what);
      case "switchThread":
      case "exitThread":
        return this.#refuse(
          ctx.at,
          "callbacks that switch or exit systhreads of the older form are not exported: the " +
            "scenario DSL runs a domain's steps as one program, so the rest of the program would " +
            "have to continue on another systhread (threads with programs of their own and " +
            "act.yieldTo are; see docs/differential.md)",
        );
      case "yieldTo":
        // The thread running the callback holds the baton: it passes it, and waits inside
        // (unless its program ended: the baton went on then).
        return `(let me = th_self () in if th_ended.(me) = 0 then th_pass me ${
          this.#threadOf(a.thread, ctx.at)
        })`;
      case "yieldToNext": {
        // The first thread after the running one in the ring that can take the baton: a match
        // on the running thread, then tests in ring order (no loop: it would poll).
        const ring = a.threads.map((t) => this.#threadOf(t, ctx.at));
        const arms = ring.map((me, i) => {
          let pick = "-1";
          for (let j = ring.length - 1; j >= 1; j--) {
            const c = ring[(i + j) % ring.length];
            pick = `if th_can_run ${c} then ${c} else ${pick}`;
          }
          return `| ${me} -> ${pick}`;
        });
        return `(let me = th_self () in if th_ended.(me) = 0 then begin let k = (match me with ` +
          `${arms.join(" ")} | _ -> fail "yieldToNext: not in the ring") in ` +
          `if k >= 0 then th_pass me k end)`;
      }
    }
  }

  // ---- segments: which domain runs which top-level steps ---------------------------------------

  #segments(): Segment[] {
    const segs: Segment[] = [];
    let cur: Segment | undefined;
    let pendingJoins: number[] = [];
    const alive = new Set<number>([0]);
    // Domains whose profile samples (a top-level start not yet stopped; a spawned domain takes
    // its parent's): Domain.join allocates there at points that race with the ending domain,
    // and Domain.spawn's allocations may run callbacks that raise.
    const sampling = new Set<string>();
    const steps = this.#sc.steps;
    for (const [k, st] of steps.entries()) {
      const domain = "domain" in st ? st.domain : undefined;
      if (st.kind === "memprofStart") sampling.add(st.domain);
      if (st.kind === "memprofStop") sampling.delete(st.domain);
      const joiner = st.kind === "join"
        ? st.domain
        : st.kind === "terminate"
        ? (steps.slice(k + 1).find((n) => "domain" in n && n.domain !== st.domain) as
          | { domain: string }
          | undefined)?.domain ?? "main"
        : undefined;
      if (st.kind === "spawn" && sampling.has(st.domain) && this.#canRaise) {
        this.#refuse(st.at, `Domain.spawn while domain "${st.domain}" samples: ${SPAWN_RAISE}`);
      }
      if (joiner !== undefined && sampling.has(joiner)) {
        this.#refuse(st.at, `Domain.join while domain "${joiner}" samples: ${JOIN_RACE}`);
      }
      if (st.kind === "spawn" && sampling.has(st.domain)) sampling.add(st.child);
      // Steps of no domain (release, runtime_events control) run on the current domain, or on
      // the main domain after a termination.
      const ord = domain !== undefined
        ? this.#domainOrd.get(domain)!
        : cur !== undefined && !cur.terminates
        ? cur.ord
        : 0;
      if (cur === undefined || cur.ord !== ord || cur.terminates) {
        cur = { ord, steps: [], joins: pendingJoins, terminates: false };
        pendingJoins = [];
        segs.push(cur);
      }
      this.#checkNesting(st, domain);
      cur.steps.push(st);
      if (st.kind === "spawn") alive.add(this.#domainOrd.get(st.child)!);
      if (st.kind === "terminate" || st.kind === "join") {
        const ending = st.kind === "join" ? this.#domainOrd.get(st.target)! : ord;
        if (ending === 0) this.#refuse(st.at, "the main domain cannot terminate");
        if (st.kind === "join") this.#joined.add(ending);
        alive.delete(ending);
        if (st.kind === "terminate") {
          cur.terminates = true;
          pendingJoins.push(ord);
        }
      }
    }
    return segs;
  }

  /** Compound steps run on one domain only; spawn and terminate stay at the top level. */
  #checkNesting(st: Step, domain: string | undefined): void {
    if (!hasBody(st)) return;
    forEachStep(st.body, true, (inner) => {
      if (inner.kind === "spawn" || inner.kind === "terminate" || inner.kind === "join") {
        this.#refuse(
          inner.at,
          `${inner.kind} inside a ${st.kind}: domains are spawned and terminated only at the ` +
            "top level of an exported scenario (each domain's steps run in one OCaml function)",
        );
      }
      if ("domain" in inner && inner.domain !== domain) {
        this.#refuse(
          inner.at,
          `a step of domain "${inner.domain}" inside a ${st.kind} of domain "${domain}": ` +
            "an exported compound step holds the steps of its own domain only",
        );
      }
      return true;
    });
  }

  /** Thread number of `name` (0 for the main thread). */
  #threadOf(name: string, at: string): number {
    const k = this.#threadIndex.get(name);
    if (k === undefined) this.#refuse(at, `no thread "${name}" with a program`);
    return k;
  }

  /** The function of thread `k` (a systhread with a program): it starts, waits for its first
   * turn, runs its steps, and passes the baton on at its end. (issue 22, polls helper) Before
   * that, it runs the callbacks still pending, each raise logged (`resume_dom`): they would run
   * in `Thread.create`'s wrapper (its `check_memprof_cb`), whose handler swallows what they
   * raise and allocates, running more of them. */
  #threadFunction(st: Extract<Step, { kind: "threadSpawn" }>, k: number): string {
    const ctx: Ctx = {
      ord: this.#sc.domains.length + k - 1,
      depth: 0,
      inAttempt: false,
      inCallback: false,
      bound: 1,
      at: st.at,
      thread: k,
    };
    const body = this.#stepsCode(st.body, ctx);
    return `(* thread ${ocamlCommentString(st.thread)} *)
let[@inline never] run_thread_${k} () =
  ` +
      `th_start ${k};
  ${body}
  resume_dom ();
  th_end ${k}`;
  }

  #aliveAtEnd(): number[] {
    const dead = new Set<number>();
    for (const st of this.#sc.steps) {
      if (st.kind === "terminate") dead.add(this.#domainOrd.get(st.domain)!);
      if (st.kind === "join") dead.add(this.#domainOrd.get(st.target)!);
    }
    return this.#sc.domains.map((_, i) => i).filter((i) => !dead.has(i));
  }

  #domainFunction(
    ord: number,
    segments: readonly Segment[],
    aliveAtEnd: readonly number[],
    flushBase: number,
    exitTurn: number,
    trailingJoins: readonly number[],
    multi: boolean,
  ): string {
    const fn = ord === 0 ? "run_main" : `run_${ord}`;
    const lines: string[] = [];
    if (ord !== 0) {
      lines.push(`ord_of_index.(Domain.self_index ()) <- ${ord};`, `announce_started ${ord};`);
    }
    const joinCode = (joins: readonly number[]) =>
      joins.map((j) => `join_dom (Obj.obj doms.(${j}) : unit Domain.t);`);
    segments.forEach((seg, i) => {
      if (seg.ord !== ord) return;
      if (multi) lines.push(`wait_turn ${i};`, ...joinCode(seg.joins), "resume_dom ();");
      const ctx: Ctx = {
        ord,
        depth: 0,
        inAttempt: false,
        inCallback: false,
        bound: 1,
        at: "",
        thread: 0,
      };
      lines.push(this.#stepsCode(seg.steps, ctx));
      if (multi) lines.push(`pass_turn ${i + 1};`);
    });
    // A domain ended by a join waits, after its last step, for the joiner to let it end.
    // (issue 22, polls helper) Released, it drains what is still pending (the `terminate`
    // step's resume_dom: do_at_exit's poll would run it, and a raise there would end the domain
    // with an exception that Domain.join raises again for ever).
    if (this.#joined.has(ord)) lines.push(`wait_released ${ord};`, "resume_dom ();");
    const flushIndex = aliveAtEnd.indexOf(ord);
    if (flushIndex >= 0) {
      if (multi) {
        lines.push(`wait_turn ${flushBase + flushIndex};`);
        if (flushIndex === 0) lines.push(...joinCode(trailingJoins));
        lines.push("resume_dom ();");
      }
      lines.push("(* the simulation's final poll: pending callbacks run *)");
      lines.push(this.#guarded("process_pending ()", false) + ";");
      if (multi) lines.push(`pass_turn ${flushBase + flushIndex + 1};`);
      // The main domain ends the run after every flush; the others end after that.
      if (multi) lines.push(`wait_turn ${ord === 0 ? exitTurn : exitTurn + 1};`);
    }
    return `let[@inline never] ${fn} () =\n  ${lines.join("\n  ")}\n  Sys.opaque_identity ()`;
  }

  #mainCode(aliveAtEnd: readonly number[], exitTurn: number, multi: boolean): string {
    const joins = aliveAtEnd.filter((o) => o !== 0).map((o) =>
      `  Domain.join (Obj.obj doms.(${o}) : unit Domain.t);`
    );
    const marks = this.#ringMarks;
    return [
      ...(marks
        ? [
          "(* The ring's mark where the run ends (deno task diff --rings). *)",
          'external ring_pause : unit -> unit = "caml_ml_runtime_events_pause"',
          'external ring_resume : unit -> unit = "caml_ml_runtime_events_resume"',
          'external ring_sys_exit : int -> unit = "caml_sys_exit"',
          "",
        ]
        : []),
      "let () =",
      "  ord_of_index.(Domain.self_index ()) <- 0;",
      ...(this.#threadSteps.length === 0 ? [] : [
        "  (* The systhreads, each waiting for its first turn; then the tick thread, which",
        "     interrupts the domain every 50 ms, is stopped: its interrupts would make the next",
        "     allocation enter the runtime and do GC work or run callbacks at a time that",
        "     depends on the clock. *)",
        ...this.#threadSteps.map((_, k) => `  th_create ${k + 1} run_thread_${k + 1};`),
        "  thread_cleanup ();",
      ]),
      "  Gc.full_major ();",
      "  let s0 = Gc.quick_stat () in",
      "  (* An empty minor heap, as the simulation starts with; then nothing allocates but the",
      "     scenario. *)",
      "  Gc.minor ();",
      "  run_main ();",
      "  frozen := true;",
      "  let s1 = Gc.quick_stat () in",
      ...(marks ? ["  ring_pause ();", "  ring_resume ();"] : []),
      ...(multi ? [`  pass_turn ${exitTurn + 1};`] : []),
      ...joins,
      "  print_log ~minors:(s1.Gc.minor_collections - s0.Gc.minor_collections - 1)",
      "    ~majors:(s1.Gc.major_collections - s0.Gc.major_collections)" + (marks ? ";" : ""),
      ...(marks
        ? [
          "  (* Every word allocated in the ring's counters: the minor heap emptied, a major slice",
          "     for the words allocated since the last one, and exit without at_exit's work. *)",
          "  flush stdout;",
          "  Gc.minor ();",
          "  ignore (Gc.major_slice 0);",
          "  ring_sys_exit 0",
        ]
        : []),
    ].join("\n");
  }

  // ---- steps -----------------------------------------------------------------------------------

  #stepsCode(steps: readonly Step[], ctx: Ctx): string {
    if (steps.length === 0) return "();";
    return steps.map((st) => this.#stepCode(st, { ...ctx, at: st.at, owner: st })).join("\n  ");
  }

  /** A leaf step: counted, then its body, with exceptions logged unless an attempt takes them.
   * `pre` (a `let … in` drawing a size) runs before the handler is set up, so that every path
   * through an allocating loop body still reaches the allocation (see lib/scenario/polling.ts). */
  #leaf(body: string, ctx: Ctx, pre = ""): string {
    const guarded = this.#guarded(body, ctx.inAttempt);
    const tick = this.#tick(ctx);
    return pre === "" ? `${tick} ${guarded};` : `${tick} (${pre}${guarded});`;
  }

  /** The step's tick: its releases may poll, and an exception a callback raises there is the
   * step's, logged (then the step goes on) unless an attempt takes it, as the simulation has
   * it. The handler is in a function of its own, so that the step is one call, as before. */
  #tick(ctx: Ctx): string {
    return !this.#canRaise || ctx.inAttempt ? "tick ();" : "tick_g ();";
  }

  #guarded(body: string, inAttempt: boolean): string {
    if (!this.#canRaise || inAttempt) return `(${body})`;
    return `(try ${body} with e -> escaped e)`;
  }

  #loopBase(ord: number): string {
    return `(${ord} * (max_depth + 1))`;
  }

  #stepCode(st: Step, ctx: Ctx): string {
    const outer = this.#stepAt;
    this.#stepAt = st.at;
    const code = this.#stepCodeOf(st, ctx);
    this.#stepAt = outer;
    // The code of steps without a body, and the functions of frames, are what the program is made
    // of (a body's code is in its step's, or in its frame's function).
    if (!("body" in st)) this.#grow(code.length, st.at);
    return code;
  }
  /** The step whose code is being written. */
  #stepAt = "settings";
  /** Characters of code written so far (see {@linkcode MAX_PROGRAM_CHARS}). */
  #codeChars = 0;

  /** Counts `n` more characters of code written for step `at`; refuses the scenario once the
   * program would be longer than {@linkcode MAX_PROGRAM_CHARS}, before it is all held. */
  #grow(n: number, at: string): void {
    this.#codeChars += n;
    if (this.#codeChars > MAX_PROGRAM_CHARS) {
      this.#refuse(
        at,
        `the program would be more than ${MAX_PROGRAM_CHARS} characters (its code reaches ` +
          `${this.#codeChars} here), more than ocamlopt compiles in reasonable time`,
      );
    }
  }

  #stepCodeOf(st: Step, ctx: Ctx): string {
    switch (st.kind) {
      case "alloc": {
        const { pre, code } = this.#allocSite(st, ctx);
        return this.#leaf(code, ctx, pre);
      }
      case "allocCombined":
        return this.#leaf(this.#combinedSite(st, ctx), ctx);
      case "unmarshal": {
        const blocks = st.blocks.map((b) => this.#constantSize(b, st.at, "unmarshal block"));
        return this.#leaf(
          this.#inFrames(st.frames, this.#keepCode(this.#marshalled(blocks), st.lifetime, ctx)),
          ctx,
        );
      }
      case "gc":
        return this.#leaf(gcCode(st.what), ctx);
      case "poll":
        return this.#leaf("Sys.poll_actions ()", ctx);
      case "spawn": {
        // The spawning domain's minor heap is emptied first, so that no block the program
        // keeps is young while two domains share a minor collection: OCaml 5.3 shares the
        // remembered sets' promotion among them, and memprof may test a kept block before
        // another domain promoted it (see docs/differential.md). The simulation does the same.
        const child = this.#domainOrd.get(st.child)!;
        return `${this.#tick(ctx)} ${this.#guarded("Gc.minor ()", ctx.inAttempt)}; resume_dom (); ${
          this.#guarded(
            `doms.(${child}) <- Obj.repr (Domain.spawn run_${child}); wait_started ${child}`,
            ctx.inAttempt,
          )
        };`;
      }
      case "terminate":
        // (issue 22, polls helper) The domain's function returns into Domain.spawn's body,
        // whose do_at_exit polls in its prologue: callbacks still pending run there, and one
        // raising would end the domain with an exception that Domain.join re-raises for ever
        // (join_dom). The domain drains them first, each raise logged, as the simulation does.
        return `${
          this.#tick(ctx)
        } resume_dom (); (* the domain's function returns: Domain.join by the next domain *)`;
      case "threadCreate":
      case "threadSwitch":
      case "threadExit":
      case "blocking":
        return this.#refuse(
          st.at,
          "systhreads of the older form (thread(name) with switchTo, exit, blocking) are not " +
            "exported: a thread switch moves the rest of the domain's straight-line steps onto " +
            "another thread, which has no one-to-one OCaml form; threads with programs of their " +
            "own (thread(name, body)) are (see docs/differential.md)",
        );
      case "threadSpawn":
        // Created at initialisation (so that the tick thread is stopped before the scenario
        // starts); it waits there for its first turn.
        return `${this.#tick(ctx)} th_spawned.(${this.#threadOf(st.thread, st.at)}) <- 1; ` +
          "(* Thread.create: the thread was created before the run; it waits *)";
      case "yieldTo":
        return `${this.#tick(ctx)} th_pass ${ctx.thread} ${this.#threadOf(st.thread, st.at)};`;
      case "threadJoin":
        return `${this.#tick(ctx)} th_join ${ctx.thread} ${this.#threadOf(st.thread, st.at)};`;
      case "threadYield":
        return this.#leaf("Thread.yield ()", ctx);
      case "memprofStart":
        return this.#leaf(`start_fns.(${this.#profileSlot.get(st.profile.name!)!}) ()`, ctx);
      case "memprofStop":
        return this.#leaf("Gc.Memprof.stop ()", ctx);
      case "memprofDiscard": {
        const slot = this.#profileSlot.get(st.profile);
        if (slot === undefined) this.#refuse(st.at, `profile "${st.profile}" is never started`);
        return this.#leaf(`Gc.Memprof.discard (Obj.obj prof.(${slot}))`, ctx);
      }
      case "call": {
        const fn = this.#frameFunction(st.frame, this.#stepsCode(st.body, ctx));
        return `${fn} ();`;
      }
      case "repeat": {
        const k = ctx.depth + 1;
        this.#maxDepth = Math.max(this.#maxDepth, k);
        const lb = this.#loopBase(ctx.ord);
        const i = `i${k}`;
        const body = this.#stepsCode(st.body, { ...ctx, depth: k, bound: ctx.bound * st.count });
        const loop =
          `loops.(${lb}) <- ${k};\n  for ${i} = 1 to ${st.count} do\n  loops.(${lb} + ${k}) <- ${i};\n  ${body}\n  done;\n  loops.(${lb}) <- ${ctx.depth}`;
        // A callback raising at the loop's back-edge poll leaves the loop: outside attempts the
        // exception is logged there, as the simulation does, and the next step runs.
        if (!this.#canRaise || ctx.inAttempt) return `${loop};`;
        return `(try\n  ${loop}\n  with e -> loops.(${lb}) <- ${ctx.depth}; escaped e);`;
      }
      case "attempt": {
        const body = this.#stepsCode(st.body, { ...ctx, inAttempt: true });
        if (!this.#canRaise) return `begin\n  ${body}\n  end;`;
        return `(try\n  ${body}\n  ()\n  with e -> caught_at ${
          this.#loopBase(ctx.ord)
        } ${ctx.depth} e);`;
      }
      case "when": {
        const body = this.#stepsCode(st.body, ctx);
        return `if loops.(${
          this.#loopBase(ctx.ord)
        } + ${st.loop}) mod ${st.every} = ${st.offset} ` +
          `then begin\n  ${body}\n  end;`;
      }
      case "join": {
        const target = this.#domainOrd.get(st.target)!;
        return `${this.#tick(ctx)} release_domain ${target}; ` +
          `join_dom (Obj.obj doms.(${target}) : unit Domain.t); resume_dom ();`;
      }
      case "extAlloc":
        return this.#refuse(
          st.at,
          "external allocations (Memtrace.External) need the memtrace library, which the " +
            "OCaml toolchain built here does not have",
        );
      case "userEvent": {
        this.#usesEvents = true;
        const ev = this.#userEvent(st.name, st.event.type, st.at);
        switch (st.event.type) {
          case "unit":
            return this.#leaf(`Runtime_events.User.write ${ev} ()`, ctx);
          case "int":
            return this.#leaf(`Runtime_events.User.write ${ev} (${st.event.value})`, ctx);
          case "span":
            return this.#leaf(
              `Runtime_events.User.write ${ev} Runtime_events.Type.${
                st.event.phase === "begin" ? "Begin" : "End"
              }`,
              ctx,
            );
          case "custom":
            return this.#refuse(st.at, "custom user events are not exported");
        }
        break;
      }
      case "release": {
        this.#releaseOf(st.name);
        const i = [...this.#releaseSites.keys()].indexOf(st.name);
        // Guarded as the simulation's release: its poll may raise.
        return this.#leaf(`release_${i} ()`, ctx);
      }
      case "eventsStart":
        this.#usesEvents = true;
        return this.#leaf("Runtime_events.start ()", ctx);
      case "eventsPause":
        this.#usesEvents = true;
        return this.#leaf("Runtime_events.pause ()", ctx);
      case "eventsResume":
        this.#usesEvents = true;
        return this.#leaf("Runtime_events.resume ()", ctx);
    }
  }

  #userEvent(name: string, type: string, at: string): string {
    let e = this.#userEvents.get(name);
    if (e === undefined) {
      e = { id: this.#userEvents.size, type };
      this.#userEvents.set(name, e);
      const t = type === "unit" ? "unit" : type === "int" ? "int" : "span";
      if (!name.isWellFormed()) {
        this.#refuse(
          at,
          `user event name ${
            JSON.stringify(name)
          } is not well-formed Unicode: a lone surrogate has no UTF-8 form for OCaml`,
        );
      }
      this.#inits.push(
        `type Runtime_events.User.tag += Ev_${e.id}\n` +
          `let ev_${e.id} = Runtime_events.User.register ${
            ocamlString(name)
          } Ev_${e.id} Runtime_events.Type.${t}`,
      );
      this.#initBlocks.push(...userEventBlocks(e.id === 0));
    } else if (e.type !== type) {
      this.#refuse(at, `user event "${name}" is written with two types`);
    }
    return `ev_${e.id}`;
  }

  /** A function standing for frame `frame`, running `body`; returns its name. */
  #frameFunction(frame: Frame, body: string): string {
    const fn = this.#fresh("f");
    this.#frames.set(`${this.#moduleName}.${fn}`, defName(frame));
    const def = `(* ${
      ocamlCommentString(frame)
    } *)\nlet[@inline never] ${fn} () =\n  ${body}\n  Sys.opaque_identity ()`;
    this.#grow(def.length, this.#stepAt);
    this.#defs.push(def);
    return fn;
  }

  /** `code` run inside the frames `frames` (caller first): a chain of named functions. */
  #inFrames(frames: readonly Frame[], code: string): string {
    let inner = code;
    for (let k = frames.length - 1; k >= 0; k--) {
      inner = `${this.#frameFunction(frames[k], `${inner};`)} ()`;
    }
    return inner;
  }

  // ---- allocations -----------------------------------------------------------------------------

  #allocSite(
    st: Extract<Step, { kind: "alloc" }>,
    ctx: Ctx,
  ): { pre: string; code: string } {
    const at = st.at;
    let code: string;
    // Without frames of its own, the size is drawn before the step's handler (see leaf).
    let pre = "";
    switch (st.source) {
      case "caml": {
        const n = this.#sizeCode(st.size, at);
        if (n.constant !== undefined) {
          code = this.#keepCode(camlBlock(n.constant), st.lifetime, ctx, {
            linkable: n.constant <= MAX_YOUNG_WOSIZE,
          });
        } else if (st.frames.length === 0) {
          pre = `let n = ${n.draw} in `;
          code = this.#keepCode(camlBlockMatch(n.values, "n"), st.lifetime, ctx, {
            linkable: largest(n.values) <= MAX_YOUNG_WOSIZE,
          });
        } else {
          code = `let n = ${n.draw} in ${
            this.#keepCode(camlBlockMatch(n.values, "n"), st.lifetime, ctx, {
              linkable: largest(n.values) <= MAX_YOUNG_WOSIZE,
            })
          }`;
        }
        break;
      }
      case "runtime":
      case "array":
      case "major": {
        const n = this.#sizeCode(st.size, at);
        if (st.source === "major" && smallest(n.values) <= MAX_YOUNG_WOSIZE) {
          this.#refuse(
            at,
            `a direct major allocation of ${smallest(n.values)} words: no OCaml primitive ` +
              `allocates a block of at most ${MAX_YOUNG_WOSIZE} words with caml_alloc_shr`,
          );
        }
        const expr = st.source === "array" ? "Array.make n z" : "Bytes.create (8 * n - 1)";
        code = `let n = ${n.draw} in ${
          this.#keepCode(`Obj.repr (${expr})`, st.lifetime, ctx, {
            linkable: st.source === "array" && largest(n.values) <= MAX_YOUNG_WOSIZE,
          })
        }`;
        break;
      }
      case "custom": {
        const n = this.#constantSize(st.size, at, "custom block");
        if (n < 6 || n > 21) {
          this.#refuse(
            at,
            `a custom block of ${n} words: exported custom blocks are char Bigarrays, of 5 + ` +
              `(number of dimensions) words, so 6 to 21 words`,
          );
        }
        const m = this.#sizeCode(st.customMem ?? 0, at);
        const dims = this.#fresh("dims");
        this.#inits.push(`let ${dims} = Array.make ${n - 5} 1`);
        this.#initBlocks.push({ wosize: n - 5, fields: "ints", via: "root" });
        code = `${dims}.(0) <- 8 * (${m.draw}); ` + this.#keepCode(
          `Obj.repr (Bigarray.Genarray.create Bigarray.char Bigarray.c_layout ${dims})`,
          st.lifetime,
          ctx,
        );
        break;
      }
      case "unmarshal": {
        const n = this.#constantSize(st.size, at, "unmarshalled block");
        code = this.#keepCode(this.#marshalled([n]), st.lifetime, ctx);
        break;
      }
    }
    return { pre, code: this.#inFrames(st.frames, code) };
  }

  #combinedSite(st: Extract<Step, { kind: "allocCombined" }>, ctx: Ctx): string {
    const lens = st.sizes.map((s) => this.#constantSize(s, st.at, "combined allocation"));
    const frameLists = st.frames;
    const outer = frameLists[0] ?? [];
    for (const fl of frameLists) {
      const same = fl.length === outer.length &&
        fl.every((f, i) => i === fl.length - 1 ? defName(f) === defName(outer[i]) : f === outer[i]);
      if (!same) {
        this.#refuse(
          st.at,
          `combined-allocation components with different frames (${JSON.stringify(fl)} vs ${
            JSON.stringify(outer)
          }): the components of one combined allocation are ` +
            "allocated by one OCaml function, so they share their frames and only the innermost " +
            "frame's location may differ (an inlined function adds no frame of its own to " +
            "memprof's callstack)",
        );
      }
    }
    // The compiler lists the components in the reverse of their evaluation order.
    const binds: string[] = [];
    for (let k = lens.length - 1; k >= 0; k--) {
      binds.push(`let b${k} = Sys.opaque_identity (${camlExpr(lens[k])}) in`);
    }
    const keeps = lens.map((_, k) =>
      this.#keepCode(`Obj.repr b${k}`, st.lifetimes[k] ?? st.lifetimes[0], ctx, {
        bound: true,
        linkable: true,
      })
    );
    return this.#inFrames(outer, `${binds.join(" ")} ${keeps.join("; ")}`);
  }

  #constantSize(s: SizeSpec, at: string, what: string): number {
    if (typeof s !== "number") {
      this.#refuse(at, `the ${what} needs a constant size to be exported`);
    }
    return s;
  }

  /** Code drawing a size as the simulation does, and the values it can take (≤ 256 listed). */
  #sizeCode(s: SizeSpec, at: string): {
    draw: string;
    values: number[];
    constant?: number;
  } {
    if (typeof s === "number") return { draw: `${s}`, values: [s], constant: s };
    if ("uniform" in s) {
      const [a, b] = s.uniform;
      return {
        draw: `size_uniform ${a} ${b}`,
        values: range(a, Math.min(b, MAX_YOUNG_WOSIZE + 1)),
      };
    }
    if ("choice" in s) {
      const arr = this.#fresh("choice");
      this.#inits.push(`let ${arr} = [| ${s.choice.join("; ")} |]`);
      // A global array the program's initialisation allocates (issue 22, rnd-5-311): the
      // harness heap's model counts it, as marking and the pools do.
      this.#initBlocks.push({ wosize: s.choice.length, fields: "ints", via: "root" });
      return { draw: `size_choice ${arr}`, values: [...new Set(s.choice)] };
    }
    const { mean, max } = s.geometric;
    if (max === undefined) {
      this.#refuse(at, "sizes.geometric without a maximum cannot be exported");
    }
    // Mean 1 is p = 1: every draw is 1 and nothing is drawn (size_geometric returns before
    // using log1p(-1) = -infinity, as the simulation's sizeSource does).
    const p = 1 / mean;
    return {
      draw: `size_geometric (${camlFloat(p)}) (${camlFloat(Math.log1p(-p))}) ${max}`,
      values: range(1, Math.min(max, MAX_YOUNG_WOSIZE + 1)),
    };
  }

  /** A string holding a marshalled value whose blocks intern reads in the order `blocks`. */
  #marshalled(blocks: readonly number[]): string {
    const v = this.#fresh("marshalled");
    this.#inits.push(
      `let ${v} =\n  let sizes = [| ${blocks.join("; ")} |] in\n` +
        "  let rec build i =\n    let b = Obj.new_block 0 sizes.(i) in\n" +
        "    for j = 0 to sizes.(i) - 1 do Obj.set_field b j (Obj.repr 0) done;\n" +
        "    if i + 1 < Array.length sizes then Obj.set_field b 0 (build (i + 1));\n    b\n" +
        "  in\n  Marshal.to_string (build 0) []",
    );
    // Blocks over Max_young_wosize words are built in the major heap (Obj.new_block's
    // caml_alloc_shr), and dropped once marshalled. A young block that such a block links,
    // directly or through young ones, is in the remembered set (Obj.set_field's caml_modify):
    // the next minor collection promotes it, garbage.
    let major = false;
    for (const n of blocks) {
      const promoted = major && n <= MAX_YOUNG_WOSIZE ? { promoted: true as const } : {};
      this.#initBlocks.push({ wosize: n, fields: "ints", via: "dead", ...promoted });
      if (n > MAX_YOUNG_WOSIZE) major = true;
    }
    // The string stays in the heap: Marshal's 20-byte header, then per block a 1-byte header
    // (fewer than 8 fields, tag 0) or a 5-byte one, and one byte per integer field (a block's
    // first field holds the next block, written in place).
    let bytes = 20;
    blocks.forEach((n, i) => {
      bytes += (n < 8 ? 1 : 5) + n - (i + 1 < blocks.length && n > 0 ? 1 : 0);
    });
    this.#initBlocks.push({ wosize: Math.floor(bytes / 8) + 1, fields: "noscan", via: "root" });
    // The primitive itself, not Marshal.from_string: its OCaml wrappers would add two frames.
    return `(input_value_from_string ${v} 0 : Obj.t)`;
  }

  /** Code allocating `alloc` (an Obj.t expression) and keeping it as `l` says. `block` says
   * what it is: a young block whose first field may hold a pointer (`linkable`, as a list's
   * cells are linked), and whether `alloc` is already an Obj.t (`bound`). */
  #keepCode(
    alloc: string,
    l: Lifetime,
    ctx: Ctx,
    block: { readonly bound?: boolean; readonly linkable?: boolean } = {},
  ): string {
    const value = block.bound ? alloc : `Obj.repr (${alloc})`;
    if (l.kind === "drop") return `ignore (Sys.opaque_identity (${value}))`;
    return `let blk = ${value} in ${this.#keepStmt(l, ctx, block.linkable === true)}`;
  }

  /** Keeps `blk` as lifetime `l` says (a new site per lifetime in the program). */
  #keepStmt(l: Lifetime, ctx: Ctx, linkable: boolean): string {
    switch (l.kind) {
      case "drop":
        return "ignore blk";
      case "forever":
        return `keep_slot ${
          this.#siteOf(l, ctx.inCallback ? this.#callbackKeepCapacity : ctx.bound, ctx)
        } blk`;
      case "until": {
        const s = this.#siteOf(l, ctx.inCallback ? this.#callbackKeepCapacity : ctx.bound, ctx);
        this.#releaseOf(l.name).slots.push(s);
        return `keep_slot ${s} blk`;
      }
      case "steps": {
        const s = this.#siteOf(l, ctx.inCallback ? this.#callbackKeepCapacity : l.steps + 1, ctx);
        this.#fifoSites.push(s);
        if (l.until !== undefined) this.#releaseOf(l.until).fifo.push(s);
        return `keep_steps ${s} ${l.steps} blk`;
      }
      case "cycle": {
        const c = this.#fresh("cycle");
        this.#inits.push(`let ${c} = ref 0`);
        this.#initBlocks.push({ wosize: 1, fields: "ints", via: "root" });
        const arms = l.lifetimes.map((x, i) => `| ${i} -> ${this.#keepStmt(x, ctx, linkable)}`);
        return `(let k = !${c} in ${c} := (if k + 1 = ${l.lifetimes.length} then 0 else k + 1); ` +
          `match k with ${arms.join(" ")} | _ -> ())`;
      }
      case "ring": {
        const s = this.#siteOf(l, l.slots, ctx);
        if (l.name !== undefined) this.#releaseOf(l.name).rings.push(s);
        return `keep_ring ${s} blk`;
      }
      case "list": {
        if (!linkable) {
          this.#refuse(
            ctx.at,
            "keep.list links each block to the previous one through its first field: only " +
              "blocks of at most 256 words allocated by OCaml code or Array.make can be linked",
          );
        }
        const s = this.#siteOf(l, 1, ctx);
        this.#releaseOf(l.name).rings.push(s);
        return `keep_list ${s} blk`;
      }
    }
  }

  /** {@linkcode #site} for the keep statement of lifetime `l`, recorded as its next site. */
  #siteOf(l: Lifetime, capacity: number, ctx: Ctx): number {
    const s = this.#site(capacity, ctx);
    let list = this.#keepSites.get(l);
    if (list === undefined) this.#keepSites.set(l, list = []);
    list.push({ site: s, capacity, owner: ctx.owner });
    return s;
  }

  #site(capacity: number, ctx: Ctx): number {
    if (!(capacity <= MAX_SITE_CAPACITY)) {
      this.#refuse(
        ctx.at,
        `blocks kept here may number ${capacity}: more than the ${MAX_SITE_CAPACITY} slots ` +
          "an exported keep site holds",
      );
    }
    this.#sites.push(capacity);
    return this.#sites.length - 1;
  }

  #releaseOf(name: string): { fifo: number[]; slots: number[]; rings: number[] } {
    let r = this.#releaseSites.get(name);
    if (r === undefined) {
      r = { fifo: [], slots: [], rings: [] };
      this.#releaseSites.set(name, r);
    }
    return r;
  }
}

/** Frames recorded per allocation callback, at most. */
const MAX_FRAMES_RECORDED = 1024;

/** `defname` of a frame `defname@file:line:start-end`. */
export function defName(frame: string): string {
  const at = frame.lastIndexOf("@");
  return at < 0 ? frame : frame.slice(0, at);
}

/** An OCaml float expression of exactly `x`: a hexadecimal literal, or the Stdlib's name of an
 * infinity or NaN (`Printf "%h"`'s `-infinity` is no OCaml expression of a float). */
function camlFloat(x: number): string {
  if (x === Infinity) return "infinity";
  if (x === -Infinity) return "neg_infinity";
  if (Number.isNaN(x)) return "nan";
  return ocamlHexFloat(x);
}

function range(a: number, b: number): number[] {
  const out: number[] = [];
  for (let i = a; i <= b; i++) out.push(i);
  return out;
}

/** An OCaml expression allocating one block of `n` words in OCaml code (`Alloc_small`). */
function camlExpr(n: number): string {
  if (n > MAX_YOUNG_WOSIZE) return `Array.make ${n} z`;
  if (n === 1) return "ref z";
  return `(${new Array<string>(n).fill("z").join(", ")})`;
}

function camlBlock(n: number): string {
  return `Obj.repr (Sys.opaque_identity (${camlExpr(n)}))`;
}

/** A match allocating a block of `n` words for each possible size. When every size is at most
 * 256 words, the largest is the catch-all arm, so that every arm allocates inline. */
function camlBlockMatch(values: readonly number[], v: string): string {
  const small = [...new Set(values)].filter((n) => n <= MAX_YOUNG_WOSIZE).sort((a, b) => a - b);
  if (small.length === values.length && small.length > 0) {
    const last = small.pop()!;
    const arms = small.map((n) => `| ${n} -> ${camlBlock(n)}`);
    return `(match ${v} with ${arms.join(" ")} | _ -> ${camlBlock(last)})`;
  }
  const arms = small.map((n) => `| ${n} -> ${camlBlock(n)}`);
  return `(match ${v} with ${arms.join(" ")} | n -> Obj.repr (Array.make n z))`;
}

function gcCode(what: GcKind): string {
  switch (what) {
    case "minor":
      return "Gc.minor ()";
    case "majorSlice":
      return "ignore (Gc.major_slice 0)";
    case "major":
      return "Gc.major ()";
    case "fullMajor":
      return "Gc.full_major ()";
    case "compact":
      return "Gc.compact ()";
  }
}

function triggerCode(t: Trigger): string {
  switch (t.kind) {
    case "always":
      return "true";
    case "nth":
      return `n = ${t.n}`;
    case "every":
      return `(n >= ${t.offset} && (n - ${t.offset}) mod ${t.period} = 0)`;
  }
}

/** The largest of `values` (-Infinity for none), without spreading them as arguments: a size
 * choice of a scenario made by hand can be longer than a call's arguments may be. */
function largest(values: readonly number[]): number {
  let m = -Infinity;
  for (const v of values) if (v > m) m = v;
  return m;
}

/** The smallest of `values` (Infinity for none); see {@linkcode largest}. */
function smallest(values: readonly number[]): number {
  let m = Infinity;
  for (const v of values) if (v < m) m = v;
  return m;
}
