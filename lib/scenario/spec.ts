/**
 * The data a scenario script builds: settings and a tree of steps. The builder (builder.ts)
 * produces it, the validator (validate.ts) checks it, the engine (engine.ts) runs it. Everything
 * here is plain data, so a scenario can be inspected, printed and validated before it runs.
 * @module
 */

import type { GcTimeModel } from "../runtime/gc_time.ts";
import type { ALLOC_SOURCES, GC_KINDS } from "./_schema.ts";

/** A call-stack frame, written as memtrace prints locations: `defname@file:line:start-end`. */
export type Frame = string;

/** A block size in words (header excluded), fixed or drawn from the scenario's seeded RNG. */
export type SizeSpec =
  | number
  | { readonly uniform: readonly [number, number] }
  | { readonly choice: readonly number[] }
  | { readonly geometric: { readonly mean: number; readonly max?: number } };

/** How long a block stays reachable. */
export type Lifetime =
  | { readonly kind: "drop" }
  /** reachable while the next `steps` steps run (or until `release(until)`, if sooner) */
  | { readonly kind: "steps"; readonly steps: number; readonly until?: string }
  | { readonly kind: "until"; readonly name: string }
  | { readonly kind: "forever" }
  /** linked from the block kept before it at the same step, like a list's cells: only the
   * newest is stored in a global (OCaml's remembered set sees one store per block kept, which
   * costs an entry only when the previous one is no longer young), until `release(name)` */
  | { readonly kind: "list"; readonly name: string }
  /** stored in the next of `slots` slots of a global array in turn, replacing (and so
   * releasing) the block stored there `slots` keeps before; `release(name)` empties them */
  | { readonly kind: "ring"; readonly slots: number; readonly name?: string }
  /** the k-th execution of the step uses `lifetimes[(k - 1) mod length]` */
  | { readonly kind: "cycle"; readonly lifetimes: readonly Lifetime[] };

/** Where a block comes from (what memprof reports and how it is sampled): `caml` (inline by
 * OCaml code), `runtime` (a C primitive), `array` (`Array.make`), `major` (`caml_alloc_shr`),
 * `custom` (`caml_alloc_custom_mem`) or `unmarshal` (a one-block value); the schema's
 * `ALLOC_SOURCES` (lib/scenario/_schema.ts) says more of each. */
export type AllocSource = typeof ALLOC_SOURCES[number];

/** What a callback of the tracker may do besides returning. */
export type CallbackAction =
  | { readonly kind: "raise"; readonly exn: string }
  | { readonly kind: "stop" }
  | { readonly kind: "start"; readonly profile: ProfileSpec }
  | { readonly kind: "discard" }
  | { readonly kind: "alloc"; readonly words: number; readonly lifetime: Lifetime }
  | { readonly kind: "gc"; readonly what: GcKind }
  | { readonly kind: "switchThread"; readonly thread: string }
  | { readonly kind: "exitThread" }
  /** The thread running the callback blocks inside it and `thread` (a systhread with its own
   * program, or the domain's main thread) runs until the baton comes back. */
  | { readonly kind: "yieldTo"; readonly thread: string }
  /** The same, to the thread after the one running the callback in `threads` (after the last,
   * the first): a ring of threads each blocking inside its own callbacks. */
  | { readonly kind: "yieldToNext"; readonly threads: readonly string[] };

/** When an action fires, counting this callback kind's calls in its profile from 1. */
export type Trigger =
  | { readonly kind: "nth"; readonly n: number }
  | { readonly kind: "every"; readonly period: number; readonly offset: number }
  | { readonly kind: "always" };

/** The behaviour of one callback kind. */
export interface CallbackSpec {
  /** For alloc and promote callbacks: return a tracking value ("track") or `None`. */
  readonly result: "track" | "none";
  /** Actions, run in order before returning when their trigger matches. */
  readonly actions: readonly { readonly when: Trigger; readonly action: CallbackAction }[];
}

/** The five callbacks of a `Gc.Memprof.tracker`. Missing ones keep the default: alloc and
 * promote track, deallocation just logs. */
export interface TrackerSpec {
  /** Called for blocks sampled in the minor heap. */
  readonly allocMinor?: CallbackSpec;
  /** Called for blocks sampled in the major heap. */
  readonly allocMajor?: CallbackSpec;
  /** Called when a tracked minor block is promoted. */
  readonly promote?: CallbackSpec;
  /** Called when a tracked minor block dies. */
  readonly deallocMinor?: CallbackSpec;
  /** Called when a tracked major block dies. */
  readonly deallocMajor?: CallbackSpec;
}

/** Arguments of `Gc.Memprof.start`. */
export interface ProfileSpec {
  /** Label for logs and for `discard`; defaults to `p1`, `p2`, … */
  readonly name?: string;
  /** λ, the fraction of words sampled, in [0, 1]. */
  readonly samplingRate: number;
  /** Most frames recorded per callstack. */
  readonly callstackSize: number;
  /** The callbacks' behaviours. */
  readonly tracker: TrackerSpec;
}

/** Kinds of explicit collection: `minor`, `majorSlice`, `major`, `fullMajor`, `compact`. */
export type GcKind = typeof GC_KINDS[number];

/** User event payloads of runtime_events. */
export type UserEventSpec =
  | { readonly type: "unit" }
  | { readonly type: "int"; readonly value: number }
  | { readonly type: "span"; readonly phase: "begin" | "end" }
  | { readonly type: "custom"; readonly bytes: readonly number[] };

/** Steps that happen on one domain carry its name. */
export interface OnDomain {
  /** The domain's name (`main` or the name given to `spawn`). */
  readonly domain: string;
}

/** One step of a scenario. `at` is its position, for error messages (`step 3.2`). */
export type Step =
  & { readonly at: string }
  & (
    | OnDomain & {
      readonly kind: "alloc";
      readonly size: SizeSpec;
      readonly source: AllocSource;
      /** Out-of-heap words of a custom block. */
      readonly customMem?: SizeSpec;
      readonly lifetime: Lifetime;
      readonly frames: readonly Frame[];
    }
    | OnDomain & {
      readonly kind: "allocCombined";
      /** Sizes in the compiler's layout order (memprof walks them in this order). */
      readonly sizes: readonly SizeSpec[];
      /** One lifetime per component. */
      readonly lifetimes: readonly Lifetime[];
      readonly frames: readonly (readonly Frame[])[];
    }
    | OnDomain & {
      readonly kind: "unmarshal";
      /** Sizes of the value's blocks, in the order they are read (the root first). */
      readonly blocks: readonly SizeSpec[];
      readonly lifetime: Lifetime;
      readonly frames: readonly Frame[];
    }
    | OnDomain & { readonly kind: "gc"; readonly what: GcKind }
    | OnDomain & { readonly kind: "poll" }
    | OnDomain & { readonly kind: "spawn"; readonly child: string }
    | OnDomain & { readonly kind: "terminate" }
    | OnDomain & { readonly kind: "threadCreate"; readonly thread: string }
    | OnDomain & { readonly kind: "threadSwitch"; readonly thread: string }
    | OnDomain & { readonly kind: "threadExit"; readonly thread: string }
    /** `Thread.create` of a systhread running its own program, `body` (the thread does not
     * run until the baton is passed to it). */
    | OnDomain & {
      readonly kind: "threadSpawn";
      readonly thread: string;
      readonly body: readonly Step[];
    }
    /** The thread running this program blocks (a blocking section, waiting for its turn) and
     * `thread` runs, until the baton comes back. */
    | OnDomain & { readonly kind: "yieldTo"; readonly thread: string }
    /** `Thread.join`: waits until `thread`'s program has ended (passing it the baton if it
     * still runs). */
    | OnDomain & { readonly kind: "threadJoin"; readonly thread: string }
    /** `Thread.yield`: pending actions run; no other thread takes the lock (all wait for
     * their turn). */
    | OnDomain & { readonly kind: "threadYield" }
    | OnDomain & { readonly kind: "blocking"; readonly body: readonly Step[] }
    /** OCaml's `try body with _ -> ()`: an exception a callback raises in a step of `body`
     * skips the rest of `body`. (Outside any attempt, it is logged and the next step runs.) */
    | OnDomain & { readonly kind: "attempt"; readonly body: readonly Step[] }
    | OnDomain & { readonly kind: "memprofStart"; readonly profile: ProfileSpec }
    | OnDomain & { readonly kind: "memprofStop" }
    | OnDomain & { readonly kind: "memprofDiscard"; readonly profile: string }
    | OnDomain & { readonly kind: "call"; readonly frame: Frame; readonly body: readonly Step[] }
    | OnDomain & { readonly kind: "repeat"; readonly count: number; readonly body: readonly Step[] }
    /** OCaml's `if i mod every = offset then body`, where `i` is the index (from 1) of the
     * `loop`-th loop enclosing the step on its domain, counting from the outermost (1). */
    | OnDomain & {
      readonly kind: "when";
      readonly loop: number;
      readonly every: number;
      readonly offset: number;
      readonly body: readonly Step[];
    }
    /** `Domain.join`: `target`'s function returns (its last step ran) and this domain waits for
     * its termination. */
    | OnDomain & { readonly kind: "join"; readonly target: string }
    | OnDomain & {
      readonly kind: "extAlloc";
      readonly bytes: SizeSpec;
      readonly lifetime: Lifetime;
    }
    | OnDomain & {
      readonly kind: "userEvent";
      readonly name: string;
      readonly event: UserEventSpec;
    }
    | { readonly kind: "release"; readonly name: string }
    | { readonly kind: "eventsStart" }
    | { readonly kind: "eventsPause" }
    | { readonly kind: "eventsResume" }
  );

/** Scenario-wide settings. */
export interface ScenarioSettings {
  /** Identifier: letters, digits, `-`, `_`, `.`; names the golden folder. */
  readonly name: string;
  /** Free text, shown by `--list` and stored in the trace. */
  readonly description?: string;
  /** Seed of the scenario's own random choices (sizes). memprof's generator is seeded by the
   * domain id, as in OCaml, whatever this is. Default 1. */
  readonly seed?: number;
  /** Default sampling rate of `memprof.start` (default 1e-4). */
  readonly samplingRate?: number;
  /** Default callstack size of `memprof.start` (default 16). */
  readonly callstackSize?: number;
  /** Minor heap per domain, in words (default 262,144). */
  readonly minorHeapWords?: number;
  /** runtime_events ring size, log2 of words (default 16). */
  readonly ringLog2?: number;
  /** Virtual clock advance per executed step, in nanoseconds (default 1,000). */
  readonly clockTickNs?: number;
  /** Maximum number of domains (runtime_events `Max_domains`; default 16). */
  readonly maxDomains?: number;
  /** Process id written in the trace and ring file (default 4242). */
  readonly pid?: number;
  /** Sampling rate of external allocations traced through the tracer (default: the first
   * profile's rate). */
  readonly externalSamplingRate?: number;
  /** Format of the callback log: the engine's own (default), or one of the fixture formats. */
  readonly log?: LogFormat;
  /** Costs of collections in virtual time, overriding the fitted defaults (nanoseconds; see
   * lib/runtime/gc_time.ts and docs/runtime_events.md): e.g. `{ minorFixedNs: 5_000 }`. */
  readonly gcTime?: Partial<GcTimeModel>;
}

/** Formats of the callback log. The fixture formats are those of
 * `tests/fixtures/memprof_exact` (alloc callbacks: `<iteration> minor size=.. n=..`) and
 * `memprof_lifecycle` (every callback: `<iteration> <callback> id=<allocating iteration>`). */
export type LogFormat =
  | { readonly format: "default" }
  | { readonly format: "memprof_exact"; readonly program: string }
  | { readonly format: "memprof_lifecycle"; readonly program: string; readonly keep: number };

/** A built scenario: settings plus the steps, ready to validate and run. */
export interface Scenario {
  /** The settings, with every default filled in. */
  readonly settings:
    & Required<Omit<ScenarioSettings, "description" | "externalSamplingRate">>
    & {
      readonly description: string;
      readonly externalSamplingRate: number | undefined;
    };
  /** The steps, in order. */
  readonly steps: readonly Step[];
  /** Names of the domains, in creation order ("main" first). */
  readonly domains: readonly string[];
  /** Names of the threads per domain (each domain's main thread is named after it). */
  readonly threads: ReadonlyMap<string, string>;
  /** Names of the profiles started anywhere, in order. */
  readonly profiles: readonly string[];
}
