/**
 * What the writing of an exported program accumulates: the definitions its steps need (frames'
 * functions, initialised values, keep sites, releases, user events), and the program's length
 * so far. The step, allocation, tracker and domain writers (`_emit_*.ts`) share one
 * {@linkcode Emitter}; they write only scenarios without refusals (exportable.ts), so that what
 * they look up is there.
 * @module
 */
import type { Frame, GcKind, Lifetime, Scenario } from "../scenario/spec.ts";
import type { KeepSiteOf } from "../scenario/result.ts";
import { ExportError } from "./errors.ts";
import { defName, MAX_PROGRAM_CHARS } from "./exportable.ts";
import type { Ctx, ExportPlan } from "./_plan.ts";
import { type HarnessBlock, userEventBlocks } from "./_harness_heap.ts";
import { ocamlCommentString, ocamlString } from "./_ocaml_text.ts";
import { ocamlHexFloat } from "../util/ocaml_printf.ts";

/** The keep sites a named release clears. */
export interface ReleaseSites {
  /** keep.steps sites released up to their tail. */
  readonly fifo: number[];
  /** keep.until sites. */
  readonly slots: number[];
  /** keep.ring and keep.list sites. */
  readonly rings: number[];
}

/** Options the writers follow. */
export interface EmitOptions {
  /** Slots of each keep site inside a callback. */
  readonly callbackKeepCapacity: number;
}

/** The writing's state (see the module doc). */
export class Emitter {
  /** Functions of frames, in the order written. */
  readonly defs: string[] = [];
  /** Values the program initialises (size choices, marshalled strings, counters, events). */
  readonly inits: string[] = [];
  /** Blocks the scenario's initialised values keep in the heap (see _harness_heap.ts). */
  readonly initBlocks: HarnessBlock[] = [];
  /** OCaml function names (`Module.f12`) of frames → the frame's definition name. */
  readonly frames: Map<string, string> = new Map();
  /** Keep-site capacities, by site. */
  readonly sites: number[] = [];
  /** Keep sites of each lifetime, in the order of the program's keep statements. */
  readonly keepSites: Map<Lifetime, KeepSiteOf[]> = new Map();
  /** keep.steps sites. */
  readonly fifoSites: number[] = [];
  /** Sites each named release clears, by name in order of first use. */
  readonly releaseSites: Map<string, ReleaseSites> = new Map();
  /** User events by name: their number and type. */
  readonly userEvents: Map<string, { readonly id: number; readonly type: string }> = new Map();
  /** Deepest loop nesting written. */
  maxDepth = 0;
  /** Whether the program uses runtime_events. */
  usesEvents = false;
  /** Whether the emulation of memtrace's `External` is written (lib/export/_emit_external.ts). */
  externalReady = false;
  /** The step whose code is being written. */
  stepAt = "settings";
  #counter = 0;
  /** Characters of code written so far (see {@linkcode MAX_PROGRAM_CHARS}). */
  #codeChars = 0;

  constructor(
    /** The scenario. */
    readonly sc: Scenario,
    /** Its plan. */
    readonly plan: ExportPlan,
    /** The program's module name. */
    readonly moduleName: string,
    /** Options. */
    readonly options: EmitOptions,
  ) {}

  /** A fresh OCaml name with `prefix`. */
  fresh(prefix: string): string {
    return `${prefix}${++this.#counter}`;
  }

  /** Counts `n` more characters of code written for step `at`; refuses the scenario once the
   * program would be longer than {@linkcode MAX_PROGRAM_CHARS}, before it is all held. */
  grow(n: number, at: string): void {
    this.#codeChars += n;
    if (this.#codeChars > MAX_PROGRAM_CHARS) {
      const reason = `the program would be more than ${MAX_PROGRAM_CHARS} characters (its code ` +
        `reaches ${this.#codeChars} here), more than ocamlopt compiles in reasonable time`;
      throw new ExportError(this.sc.settings.name, at, reason, { kind: "programSize" });
    }
  }

  /** A function standing for frame `frame`, running `body`; returns its name. */
  frameFunction(frame: Frame, body: string): string {
    const fn = this.fresh("f");
    this.frames.set(`${this.moduleName}.${fn}`, defName(frame));
    const def = `(* ${
      ocamlCommentString(frame)
    } *)\nlet[@inline never] ${fn} () =\n  ${body}\n  Sys.opaque_identity ()`;
    this.grow(def.length, this.stepAt);
    this.defs.push(def);
    return fn;
  }

  /** `code` run inside the frames `frames` (caller first): a chain of named functions. */
  inFrames(frames: readonly Frame[], code: string): string {
    let inner = code;
    for (let k = frames.length - 1; k >= 0; k--) {
      inner = `${this.frameFunction(frames[k], `${inner};`)} ()`;
    }
    return inner;
  }

  /** A new keep site of `capacity` slots for lifetime `l`, recorded as its next site. */
  siteOf(l: Lifetime, capacity: number, ctx: Ctx): number {
    this.sites.push(capacity);
    const s = this.sites.length - 1;
    let list = this.keepSites.get(l);
    if (list === undefined) this.keepSites.set(l, list = []);
    list.push({ site: s, capacity, owner: ctx.owner });
    return s;
  }

  /** The sites release `name` clears. */
  releaseOf(name: string): ReleaseSites {
    let r = this.releaseSites.get(name);
    if (r === undefined) {
      r = { fifo: [], slots: [], rings: [] };
      this.releaseSites.set(name, r);
    }
    return r;
  }

  /** The OCaml value of user event `name` of `type`, registered at its first use. */
  userEvent(name: string, type: string): string {
    let e = this.userEvents.get(name);
    if (e === undefined) {
      e = { id: this.userEvents.size, type };
      this.userEvents.set(name, e);
      const t = type === "unit" ? "unit" : type === "int" ? "int" : "span";
      this.inits.push(
        `type Runtime_events.User.tag += Ev_${e.id}\n` +
          `let ev_${e.id} = Runtime_events.User.register ${
            ocamlString(name)
          } Ev_${e.id} Runtime_events.Type.${t}`,
      );
      this.initBlocks.push(...userEventBlocks(e.id === 0));
    }
    return `ev_${e.id}`;
  }

  /** The slot of profile `name`. */
  profileSlot(name: string | undefined): number {
    return this.#planned(this.plan.profileSlot.get(name ?? ""), `profile ${name}`);
  }

  /** Whether code of context `ctx` runs on the main domain: its own steps, or those of one of
   * its threads with programs (a spawned domain's threads and main thread have other numbers). */
  onMainDomain(ctx: { readonly ord: number; readonly thread: number }): boolean {
    if (ctx.thread === 0) return ctx.ord === 0;
    const st = this.plan.threadSteps[ctx.thread - 1];
    return st !== undefined && st.domain === "main";
  }

  /** The number of thread `name` (0 for the main thread). */
  threadOf(name: string): number {
    return this.#planned(this.plan.threadIndex.get(name), `thread ${name}`);
  }

  /** The number of exception `name`. */
  exceptionOf(name: string): number {
    const i = this.plan.exceptions.indexOf(name);
    return this.#planned(i < 0 ? undefined : i, `exception ${name}`);
  }

  #planned<T>(value: T | undefined, what: string): T {
    if (value === undefined) {
      throw new Error(`internal error: ${what} is not in the export's plan (checkExportable)`);
    }
    return value;
  }
}

/** The code of a collection. */
export function gcCode(what: GcKind): string {
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

/** An OCaml float expression of exactly `x`: a hexadecimal literal, or the Stdlib's name of an
 * infinity or NaN (`Printf "%h"`'s `-infinity` is no OCaml expression of a float). */
export function camlFloat(x: number): string {
  if (x === Infinity) return "infinity";
  if (x === -Infinity) return "neg_infinity";
  if (Number.isNaN(x)) return "nan";
  return ocamlHexFloat(x);
}
