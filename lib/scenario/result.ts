/**
 * What running a scenario takes and gives: options, the outputs, and the summary.
 * @module
 */
import type { TracerStats } from "../tracer/mod.ts";
import type { Lifetime, Scenario } from "./spec.ts";
import type { MajorGcInitialState } from "../runtime/major_gc.ts";
import type { GcTimeModel } from "../runtime/gc_time.ts";

/** A keep site of the exported program ({@linkcode RunOptions.keepSites}). */
export interface KeepSiteOf {
  /** The site's number in the program. */
  readonly site: number;
  /** Its slots. */
  readonly capacity: number;
  /** The step (or callback action) whose keep statement it is. When given, the simulation
   * gives each keeper of a step the sites recorded for that step, whatever the order it
   * creates keepers in (a lifetime such as `keep.forever` is one value that several steps,
   * of several threads, share); without it, the lifetime's sites are taken in order. */
  readonly owner?: object;
}

/** Options of {@linkcode runScenario}. */
export interface RunOptions {
  /** Overrides the scenario's seed. */
  seed?: number;
  /** Overrides the sampling rate of every profile the scenario starts. */
  samplingRate?: number;
  /** Called now and then with the executed and expected numbers of leaf steps. */
  onProgress?: (done: number, total: number) => void;
  /** Runs memprof's invariant checker after every top-level step (slower). */
  checkInvariants?: boolean;
  /** Receives every callback and every exception a step lets escape or an attempt catches, as
   * structured records (the differential runner's canonical log is built from them). A
   * callback's record arrives when the callback starts, so records keep the order in which
   * callbacks start; its `outcome` is filled in when the callback ends: read records after
   * the run (or after the callback), not inside `onEvent`. */
  onEvent?: (event: RunEvent) => void;
  /** Frames that sit below the scenario's own on every callstack, as in a real program whose
   * steps run inside harness functions: `main` on the main domain, `spawned` on the others,
   * `thread` on systhreads running programs of their own; and `external` above them where an
   * external allocation captures its callstack (`Printexc.get_callstack` in memtrace's
   * `ext_alloc_slowpath`, whose own frame is on it: the exported program's emulation has that
   * one frame). Each is a count of `<harness>` placeholder frames (default 0). */
  harnessFrames?: {
    readonly main: number;
    readonly spawned: number;
    readonly thread?: number;
    readonly external?: number;
  };
  /**
   * What the exported OCaml program (lib/export) does with several domains beyond the steps
   * themselves (default false; the differential runner sets it): its baton lets each domain
   * resume by draining its pending actions — the callbacks that the other domains' collections
   * made ready on it run all at once, each exception logged as escaped — at the start of its
   * turn, after `Domain.join` and before its final poll; and before each `Domain.spawn` it
   * empties the spawning domain's minor heap (`Gc.minor ()`), so that no block the program
   * keeps is young while two domains share a minor collection (see docs/differential.md).
   */
  exportHarness?: boolean;
  /** The program's own major heap when the scenario starts (the major GC's pacing depends on
   * it). Default: that of a minimal exported program (see lib/runtime/major_gc.ts). */
  majorHeap?: MajorGcInitialState;
  /** Where the exported program keeps the blocks of each lifetime of the scenario: its keep
   * sites, one per keep statement, in the order the lifetime's statements come in the program
   * (lib/export/ocaml.ts, `ExportedProgram.keepSites`). With {@linkcode majorHeap}'s layout,
   * the major GC's marking finds kept blocks in their sites' slots. */
  keepSites?: ReadonlyMap<Lifetime, readonly KeepSiteOf[]>;
  /** Costs of collections in virtual time (default: lib/runtime/gc_time.ts's fitted ones). */
  gcTime?: Partial<GcTimeModel>;
  /** How this run resolves OCaml 5.3's race points ({@linkcode RacePoint}; docs/differential.md,
   * "Race points"). Default: every tracked block promoted. */
  races?: RaceResolution;
  /** Whether the runtime_events ring is started before the first step, as OCaml starts it at
   * initialisation when `OCAML_RUNTIME_EVENTS_START` is set (default false: only the scenario's
   * `events.start()` starts it). A started ring makes user-event writes C calls
   * (`Runtime_events.User.write` calls its primitive only while the ring is active), and the
   * scenario's own `events.start()` then does nothing, as `Runtime_events.start` does. */
  ringFromStart?: boolean;
  /** @internal Whether a loop whose body only allocates small blocks it drops runs the
   * iterations before the next thing that can happen (a sample, a collection, a release, a
   * progress report, the loop's end) at once, moving only the counters (default true). The
   * tests run scenarios both ways and compare every output. */
  skipQuietIterations?: boolean;
}

/**
 * A point of a run whose outcome on the real OCaml 5.3 runtime depends on timing, and how this
 * run resolved it (docs/differential.md, "Race points").
 *
 * - `promotion`: a tracked young block that a global slot holds was promoted by a minor
 *   collection that several domains shared; the remembered set's promotion is split among them
 *   (minor_gc.c, caml_empty_minor_heap_promote) and its domain's memprof checks its tracked
 *   blocks without waiting for the others (caml_memprof_after_minor_gc), so it reports the block
 *   promoted, or dead (the block lives on, untracked). `id` is the block's allocation callback
 *   number, as in the callback log.
 * - `spawn`: a domain spawned while its parent samples. `Domain.spawn` allocates its result
 *   record in the parent once the new domain runs (stdlib/domain.ml), while the new domain
 *   allocates its DLS array (`Array.make 8`, whose callback runs before it returns): when both
 *   are sampled, their callbacks run in either order.
 * - `adoption`: the tracked blocks of a terminated domain (orphans) were waiting when several
 *   domains took part in a collection; whichever scans memprof's roots first adopts them all
 *   (memprof.c, orphans_adopt), and their later callbacks run on it. `id` is the smallest
 *   allocation number among them, `ids` all of them.
 * - `join`: a domain ended (`terminate`, or a `join` step) while the domain that joins it samples
 *   or both hold tracked blocks. The ending domain empties its minor heap in a last collection, then orphans
 *   its memprof tables, then releases the joiner (runtime/domain.c, `domain_thread_func`,
 *   `domain_terminate`); where the joiner is meanwhile depends on timing
 *   ({@linkcode JoinOutcome}). `join` numbers the run's domain ends from 1.
 */
export type RacePoint =
  | {
    /** The kind of race. */
    readonly kind: "promotion";
    /** The tracked block's allocation callback number. */
    readonly id: number;
    /** Whether this run reported the block dead (a `deallocMinor` callback instead of
     * `promote`). */
    readonly dead: boolean;
  }
  | {
    /** The kind of race. */
    readonly kind: "adoption";
    /** The smallest allocation number among the orphaned blocks (the race's key). */
    readonly id: number;
    /** The allocation numbers of the orphaned blocks. */
    readonly ids: readonly number[];
    /** The domains taking part in the collection. */
    readonly participants: readonly number[];
    /** The domain that adopted them in this run. */
    readonly domain: number;
  }
  | {
    /** The kind of race. */
    readonly kind: "spawn";
    /** The spawn's number in the run (1 for the first `Domain.spawn`). */
    readonly spawn: number;
    /** Whether the new domain allocated its DLS array before the parent allocated
     * Domain.spawn's result, in this run. */
    readonly childFirst: boolean;
    /** How many of the new domain's first allocation callbacks ran before the parent's result
     * was allocated, where only some did (`RaceResolution.childBefore`). */
    readonly childBefore?: number;
    /** The allocation callbacks of the new domain's first allocations (its systhread's
     * descriptor with the threads library, its DLS array) in this run. */
    readonly childCallbacks?: number;
  }
  | {
    /** The kind of race. */
    readonly kind: "join";
    /** The domain end's number in the run (1 for the first `terminate`). */
    readonly join: number;
    /** Where the joining domain was in this run. */
    readonly outcome: JoinOutcome;
  };

/**
 * Where the joining domain is when a domain ends (the `join` race point; docs/differential.md,
 * "Race points"). Callbacks the ending domain's last collection makes ready on the joiner run at
 * its next poll, which is the allocation of `Domain.join`'s closure (3 words) when that comes
 * after the collection; memprof's `caml_memprof_run_callbacks_res` adopts the orphans waiting
 * then (orphans_adopt).
 *
 * - `late`: the joiner allocates the closure after the ending domain orphaned its tables: its
 *   callbacks run there, first adopting the orphans, and the closure is drawn from the countdown
 *   their batch's end placed (the default for a `terminate`). For a `join` step, the joiner ran
 *   OCaml code when the collection came (between releasing the domain and `Domain.join`): it
 *   took part at its next poll, the closure's allocation, which runs those callbacks first.
 * - `callbacksFirst`: it allocates the closure between the last collection and the orphaning:
 *   its callbacks run there, before the orphans exist, and the orphans wait for the next
 *   collection or callback run of any domain.
 * - `closureFirst`: it allocated the closure before the last collection (which promotes it,
 *   the join's frame holding it), then waited in `Domain.join`; its callbacks run once it is
 *   released, after the orphaning, adopting the orphans (the default for a `join` step). Its
 *   sampling then goes on from a countdown drawn where the minor heap was empty, not after the
 *   closure.
 * - `closureDuring`: the closure's allocation was sampled before the last collection, and the
 *   collection (and the orphaning) came while its allocation callback ran, the allocation undone:
 *   the closure is allocated after it, young, so that it is neither promoted nor reported dead
 *   there; its callback comes before the collection's. Only when the closure is sampled (else as
 *   `closureFirst`). Seen in 3 of 400 real runs of tests/differential/terminate_sampling.ts.
 * - `callbacksDuring`: the joiner, woken before the domain ended, was running callbacks that
 *   earlier collections made ready on it when the last collection came (at a poll inside one of
 *   them): memprof was suspended on the joiner then, so that collection drew no countdown for it
 *   (`caml_memprof_set_trigger` draws only while sampling), and the callbacks it made ready on
 *   the joiner run in the same batch. The orphans, made after that batch began, wait for the
 *   next collection or callback run of any domain. Only when the joiner has callbacks pending
 *   (else as `callbacksFirst`). Seen in about 1 of 100 loaded real runs of
 *   scenarios/domains_orphans.ts.
 */
export type JoinOutcome =
  | "late"
  | "callbacksFirst"
  | "closureFirst"
  | "closureDuring"
  | "callbacksDuring";

/** A resolution of a run's race points ({@linkcode RacePoint}). */
export interface RaceResolution {
  /** The tracked blocks (allocation callback numbers) whose promotion race ends in a reported
   * death. */
  readonly deadAtPromotion?: ReadonlySet<number>;
  /** For adoption races (by their `id`): the domain that adopts the orphans. Default: the
   * domain that started the collection. */
  readonly adopter?: ReadonlyMap<number, number>;
  /** Spawns (by their number, from 1) whose new domain allocates its DLS array before the
   * parent allocates Domain.spawn's result. Default: the parent first (the more frequent real
   * outcome). */
  readonly childFirst?: ReadonlySet<number>;
  /** Spawns (by their number) whose parent allocates Domain.spawn's result after this many of
   * the new domain's first allocation callbacks ran, but not all: the new domain runs them
   * together at its first poll (with the threads library, its systhread's descriptor too, two
   * blocks), while the parent runs on. */
  readonly childBefore?: ReadonlyMap<number, number>;
  /** Domain ends (by their number, from 1) and where the joining domain was
   * ({@linkcode JoinOutcome}). Default: `late` for a `terminate` (its joiner is woken as the
   * domain ends), `closureFirst` for a `join` step (its joiner releases the domain and joins at
   * once). */
  readonly join?: ReadonlyMap<number, JoinOutcome>;
}

/** One callback or exception of a run, as {@linkcode RunOptions.onEvent} receives it. */
export type RunEvent =
  | {
    readonly kind: "allocMinor" | "allocMajor";
    /** Domain id running the callback. */
    readonly domain: number;
    /** Indices of the loops enclosing the step on that domain, outermost first. */
    readonly loops: readonly number[];
    readonly size: number;
    readonly nSamples: number;
    /** `normal`, `marshal` or `custom`. */
    readonly source: string;
    /** Callstack memprof captured, innermost first. */
    readonly callstack: readonly string[];
    /** The allocation's number: alloc callbacks are numbered from 1 in the order they run. */
    readonly id: number;
    /** What the callback did: returned a value, returned `None`, or raised. */
    readonly outcome: "some" | "none" | { readonly raise: string };
  }
  | {
    readonly kind: "promote" | "deallocMinor" | "deallocMajor";
    readonly domain: number;
    readonly loops: readonly number[];
    /** The number of the allocation callback that tracked the block. */
    readonly id: number;
    /** For promote: as for allocation callbacks; deallocation callbacks return nothing. */
    readonly outcome: "some" | "none" | "unit" | { readonly raise: string };
  }
  | {
    /** `tracerFailed`: memtrace's external allocation caught it (the tracer failed). */
    readonly kind: "escaped" | "caught" | "tracerFailed";
    readonly domain: number;
    readonly loops: readonly number[];
    /** The OCaml exception's name. */
    readonly exn: string;
  };

/** Counts a run gathers; printed by the CLI, stored with the goldens. */
export interface Summary {
  /** The scenario's name. */
  scenario: string;
  /** The scenario's seed. */
  seed: number;
  /** Leaf steps executed. */
  steps: number;
  /** Blocks the scenario's steps allocated. */
  allocations: number;
  /** Their words, headers included (what memprof samples). */
  wordsAllocated: number;
  /** Minor collections, all domains together. */
  minorCollections: number;
  /** Major GC cycles completed. */
  majorCycles: number;
  /** Memprof callbacks run, by kind. */
  callbacks: Record<CallbackKind, number>;
  /** Samples reported by allocation callbacks. */
  samples: number;
  /** OCaml exceptions that escaped a step (raised by callbacks). */
  exceptions: number;
  /** Per profile: alloc callbacks that returned a value = promotions + deallocations + live. */
  balance: { profile: string; tracked: number; ended: number; live: number; ok: boolean }[];
  /** Orphan tables (of terminated domains and exited threads) adopted, and their entries. */
  orphansAdopted: { tables: number; entries: number };
  /** The memtrace trace: events written and its size in bytes. */
  trace: { events: number; bytes: number };
  /** The ring image: size, and the ring words a reader of the final image finds overwritten
   * (OCaml's lost-events figure, summed over domains). */
  ring: { bytes: number; lostWords: number };
  /** What the memtrace tracer did. */
  tracer: TracerStats;
}

/** Everything a run produces. */
export interface RunResult {
  /** The scenario that ran. */
  scenario: Scenario;
  /** Its counts. */
  summary: Summary;
  /** The memtrace trace. */
  ctf: Uint8Array;
  /** Its dump (the `trace dump` text). */
  traceDump: string;
  /** The runtime_events ring image (`<pid>.events` content). */
  eventsImage: Uint8Array;
  /** Its dump (the `events dump` text). */
  eventsDump: string;
  /** Every callback with its arguments and result. */
  callbackLog: string;
  /** The run's collection statistics, every domain's together, as OCaml's
   * `OCAMLRUNPARAM=v=0x400` prints them at exit (words; `minorWords` allocated in minor heaps,
   * `promotedWords` and `majorWords` headers included; `forcedMajors`: `Gc.full_major` and
   * `Gc.compact` calls). */
  gc: {
    readonly minorWords: number;
    readonly promotedWords: number;
    readonly majorWords: number;
    readonly forcedMajors: number;
  };
  /** The race points the run met, in order, with how it resolved each. */
  racePoints: readonly RacePoint[];
  /** Hands one of the text outputs to `write` in chunks of about 64 Ki characters, whose
   * concatenation is that output, without building it as one string. The three text outputs
   * above are made when first read (then kept), so that a caller streaming them instead
   * never holds them whole. */
  writeText(output: TextOutput, write: (chunk: string) => void): void;
}

/** The text outputs of a run. */
export type TextOutput = "traceDump" | "eventsDump" | "callbackLog";

/** The callbacks of a tracker. */
export type CallbackKind =
  | "allocMinor"
  | "allocMajor"
  | "promote"
  | "deallocMinor"
  | "deallocMajor";
