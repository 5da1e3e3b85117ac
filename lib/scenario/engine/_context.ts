/**
 * The state of one run, shared by the engine's files: the simulated runtime, the ring, the
 * tracer and the callback log; the domains and threads by name, their callstacks and loop
 * indices; the counters the summary reports; and what every compiled step does — advance the
 * clock (`tick`), find its domain, and guard its work (`guard`: OCaml exceptions logged or passed
 * to an attempt, anything else failing the run with the step named).
 *
 * Its fields are the engine's own (this file is internal to lib/scenario/engine/): the compiled
 * steps read and write them directly, so that an allocation costs no more than a field update.
 * @module
 */
import { type Domain, Runtime, type Thread } from "../../runtime/mod.ts";
import {
  OCamlException,
  OCamlFailure,
  OCamlInvalidArgument,
  type Profile,
  type Resumable,
  runToEnd,
  ThreadExit,
} from "../../memprof/mod.ts";
import { checkDomainInvariants } from "../../memprof/invariants.ts";
import { RuntimeEventsProducer } from "../../runtime_events/mod.ts";
import { MemorySink } from "../../memtrace/mod.ts";
import { Tracer } from "../../tracer/mod.ts";
import { CallbackLog } from "../callback_log.ts";
import type { CallbackKind, RacePoint, RunEvent, RunOptions } from "../result.ts";
import { ScenarioError } from "../errors.ts";
import { ScenarioRng } from "../rng.ts";
import { Lifetimes } from "../lifetimes.ts";
import type { Lifetime, ProfileSpec, Scenario } from "../spec.ts";
import { countLeafSteps, externalSamplingRate, traceSamplingRate } from "../walk.ts";
import { ActionError } from "./_action_error.ts";
import { Frames } from "./_frames.ts";
import { RunCounts } from "./_counts.ts";
import { RunNames } from "./_names.ts";

/** The epoch of the virtual clock: trace start times are this plus nothing, in µs. */
const EPOCH_US = 1_767_225_600_000_000; // 2026-01-01T00:00:00Z

/**
 * What is left of a step (or of a part of one) that stopped where its thread may block: null
 * when it ran to its end, else the rest, a generator whose yields are the threads to run next
 * (see {@linkcode Op}).
 */
export type Rest = Resumable<void> | null;

/**
 * A compiled step, the same in both of a run's forms: it runs as plain code as far as it can —
 * to its end, unless a callback is to run that may block its thread (memprof's `Blocking`, in
 * runs with thread programs) — and returns what is left ({@linkcode Rest}). A plain run drives
 * that rest to its end at once (`runToEnd`, which fails naming the step if a callback blocks); a
 * resumable run yields through it, the baton passing to the thread it names. So each step is
 * written once, and a step where no callback is due makes no generator.
 */
export type Op = () => Rest;

/** What a tracked block's callbacks carry (OCaml's tracking value). */
export interface Tracked {
  /** memtrace object id, when the tracer traced the allocation. */
  readonly obj: number | undefined;
  /** Domain that allocated the block (its writer writes the block's later events). */
  readonly domain: number;
  /** Iteration at which the block was allocated. */
  readonly iter: number;
  /** Serial number of the alloc callback. */
  readonly serial: number;
  readonly profile: ProfileState;
}

/** Whether a memprof entry's tracker value is an engine's tracked block (not a callstack
 * stashed until its allocation callback runs). */
function isTracked(ud: unknown): ud is Tracked {
  return typeof ud === "object" && ud !== null && !Array.isArray(ud) && "serial" in ud;
}

/** A profile the run started, and its counts. */
export interface ProfileState {
  readonly name: string;
  readonly spec: ProfileSpec;
  /** Where its spec is in the scenario, for errors of its callbacks' actions: empty for a
   * `memprof.start` step, `callback allocMinor, act.start` for a profile a callback started. */
  readonly within: string;
  profile: Profile | undefined;
  readonly calls: Record<CallbackKind, number>;
  tracked: number;
  ended: number;
  readonly live: Set<Tracked>;
}

function ignoreOutcome(): void {}

/** The state of one run. */
export class RunContext {
  readonly sc: Scenario;
  readonly s: Scenario["settings"];
  readonly opts: RunOptions;
  readonly seed: number;
  readonly rng: ScenarioRng;
  readonly rt: Runtime;
  readonly ring: RuntimeEventsProducer;
  readonly traceSink: MemorySink = new MemorySink();
  readonly tracer: Tracer;
  readonly log: CallbackLog;
  /** The race points met, in order (RunResult.racePoints). */
  readonly racePoints: RacePoint[] = [];
  /** Spawns so far (the number of the next `spawn` race point, less one). */
  spawns = 0;
  /** A spawn whose parent's last allocation comes between the new domain's allocation
   * callbacks (the `spawn` race point's `childBefore`): before the callback numbered
   * `before + 1` of domain `child` runs, `parentTurn` runs (once). `seen` counts them. */
  spawnWindow:
    | { readonly child: Domain; readonly before: number; seen: number; parentTurn?: () => void }
    | undefined;
  /** The join race's `closureDuring` and `callbacksDuring`: `during` runs (once), the ending
   * domain's last collection and its orphaning, inside a callback of domain `joiner`: at the
   * end of its next allocation callback (`at: "allocEnd"`: the sampled closure of
   * `Domain.join`, while the allocation is undone), or at the start of its next callback of
   * any kind (`at: "batch"`: the batch of callbacks it was running). */
  joinWindow:
    | { readonly joiner: Domain; readonly at: "allocEnd" | "batch"; during?: () => void }
    | undefined;
  /** Domain ends (`terminate`) so far (the number of the last `join` race point). */
  domainEnds = 0;
  /** Checks, when domain `name` ends at step `at`, that its systhreads with programs ended
   * (set by the baton of a resumable run with such threads). */
  threadsOfEndingDomain: ((name: string, at: string) => void) | undefined;
  readonly lifetimes: Lifetimes;
  /** The trace's sample rate: the first profile's (or the overriding) rate. */
  readonly traceRate: number;
  /** The domains, threads, profiles and user events, by name. */
  readonly names: RunNames = new RunNames();
  /** What the summary counts. */
  readonly counts: RunCounts = new RunCounts();
  readonly frames: Frames;
  /** Per domain: the indices of the loops running on it, outermost first. */
  readonly loopStacks: Map<Domain, number[]> = new Map();
  // Where the run is (every step reads and moves these: kept here, one load away).
  /** The virtual clock, in nanoseconds. */
  clockNs = 0;
  /** Leaf steps executed. */
  step = 0;
  /** The running thread's current loop iteration (fixture logs). */
  iter = 0;
  /** The domain running the current step. */
  cur: Domain;
  /** `attempt`s open around the current step. */
  tryDepth = 0;
  readonly #totalSteps: number;
  readonly #progressEvery: number;
  #untilProgress: number;

  /** The state of a run of `sc` (validated) with `opts`. */
  constructor(sc: Scenario, opts: RunOptions) {
    this.sc = sc;
    this.opts = opts;
    const s = this.s = sc.settings;
    this.log = new CallbackLog(s.log);
    this.seed = opts.seed ?? s.seed;
    this.rng = new ScenarioRng(this.seed);
    this.ring = new RuntimeEventsProducer({
      maxDomains: s.maxDomains,
      logWsize: s.ringLog2,
      pid: s.pid,
      clock: () => this.clockNs,
    });
    this.rt = new Runtime({
      minorHeapWords: s.minorHeapWords,
      majorHeap: opts.majorHeap,
      events: this.ring,
      // Collections take virtual time (lib/runtime/gc_time.ts): the ring and the trace see it.
      advanceClock: (ns) => {
        this.clockNs += ns;
      },
      gcTime: { ...s.gcTime, ...opts.gcTime },
      pid: s.pid,
    });
    const dead = opts.races?.deadAtPromotion;
    this.rt.promotionRace = (ud) => {
      // Blocks whose allocation callback had not run at the collection are asked once it
      // returned (memprof leaves their race pending: F_RACE_PENDING); one not tracked then has
      // no number, and no callback follows: promoted.
      if (!isTracked(ud)) return false;
      const point = {
        kind: "promotion" as const,
        id: ud.serial,
        dead: dead?.has(ud.serial) ?? false,
      };
      this.racePoints.push(point);
      return point.dead;
    };
    const adopter = opts.races?.adopter;
    this.rt.adoptionRace = (userData, participants, by) => {
      const ids = userData.filter(isTracked).map((v) => v.serial).sort((a, b) => a - b);
      if (ids.length === 0) return by;
      const chosen = adopter?.get(ids[0]);
      const domain = chosen !== undefined && participants.includes(chosen) ? chosen : by;
      this.racePoints.push({ kind: "adoption", id: ids[0], ids, participants, domain });
      return domain;
    };
    const firstRate = traceSamplingRate(sc, opts.samplingRate);
    this.traceRate = firstRate;
    this.tracer = new Tracer(this.traceSink, {
      info: {
        sampleRate: firstRate,
        wordSize: 64,
        executableName: `memprof-lab/${s.name}`,
        hostName: "memprof-lab",
        ocamlRuntimeParams: `s=${s.minorHeapWords},e=${s.ringLog2},d=${s.maxDomains}`,
        pid: BigInt(s.pid),
        initialDomain: 0,
        startTime: EPOCH_US,
        context: s.description === "" ? undefined : s.description,
      },
      clock: () => EPOCH_US + Math.floor(this.clockNs / 1000),
      externalSamplingRate: externalSamplingRate(sc, opts.samplingRate),
      reportError: (e) => this.#tracerFailed(e),
    });
    const keepSites = opts.keepSites;
    const taken = new Map<Lifetime, number>();
    const takenBy = new Map<object, Map<Lifetime, number>>();
    this.lifetimes = new Lifetimes(
      this.rt,
      () => this.step,
      (addr, old) => this.cur.rememberStore(addr, old),
      keepSites === undefined ? undefined : (l, owner) => {
        const sites = keepSites.get(l);
        if (sites === undefined) return undefined;
        if (owner !== undefined && sites.some((s) => s.owner !== undefined)) {
          // The step's own keep statements of the lifetime, in the program's order: a shared
          // lifetime (keep.forever) is kept by steps the engine compiles in another order
          // than the program's (a thread's body first).
          let byLifetime = takenBy.get(owner);
          if (byLifetime === undefined) takenBy.set(owner, byLifetime = new Map());
          const k = byLifetime.get(l) ?? 0;
          byLifetime.set(l, k + 1);
          return sites.filter((s) => s.owner === owner)[k];
        }
        // The lifetime's keep statements in the program's order, one per keeper.
        const k = taken.get(l) ?? 0;
        taken.set(l, k + 1);
        return sites[k];
      },
    );
    const main = this.rt.mainDomain;
    this.frames = new Frames(main, opts.harnessFrames);
    this.names.domains.set("main", main);
    this.nameThread(main.current, "main");
    this.cur = main;
    this.#totalSteps = countLeafSteps(sc.steps);
    this.#progressEvery = Math.max(1, Math.floor(this.#totalSteps / 100));
    this.#untilProgress = this.#progressEvery;
    // OCAML_RUNTIME_EVENTS_START: the ring starts at initialisation, once the main domain exists
    // (its creation is not in the ring).
    if (opts.ringFromStart === true) this.ring.start();
  }

  /** Fails the run at step `at` (`within`: where inside the step). */
  fail(at: string, problem: string, within = ""): never {
    throw new ScenarioError(this.s.name, at, problem, within);
  }

  /** Names thread `t` (for lookups and logs); its callstack starts with the calls of `from`,
   * the thread creating it, if given. */
  nameThread(t: Thread, name: string, from?: Thread): void {
    this.names.addThread(t, name);
    this.frames.start(t, from);
  }

  /** The name of thread `t`. */
  threadName(t: Thread): string {
    return this.names.threadName(t);
  }

  /** The running domain named `name`. */
  domain(name: string, at: string): Domain {
    const d = this.names.domains.get(name);
    if (d === undefined || !d.alive) this.fail(at, `domain "${name}" is not running`);
    return d;
  }

  /** The domain named `name`, looked up once and again only after it stopped running. */
  domainCache(name: string, at: string): () => Domain {
    let d: Domain | undefined;
    return () => {
      if (d === undefined || !d.alive) d = this.domain(name, at);
      return d;
    };
  }

  /** The running thread named `name`. */
  liveThread(name: string, at: string): Thread {
    const t = this.names.threads.get(name);
    if (t === undefined || !t.alive) this.fail(at, `thread "${name}" is not running`);
    return t;
  }

  /** The loop-index stack of domain `d` (created empty on first use). */
  loopsOf(d: Domain): number[] {
    let l = this.loopStacks.get(d);
    if (l === undefined) {
      l = [];
      this.loopStacks.set(d, l);
    }
    return l;
  }

  /** The head of a log line: loop indices, virtual time, thread and domain. */
  where(): string {
    const loops = this.loopsOf(this.cur);
    // The trace's time base: µs since the start (the trace's event times).
    return `i=${loops.length === 0 ? "-" : loops.join(".")} t=${Math.floor(this.clockNs / 1000)} ${
      this.threadName(this.cur.current)
    }@${this.cur.id}`;
  }

  /** A step-level lifecycle line of the callback log: memprof and domain/thread events. */
  lifecycle(text: string): void {
    this.log.line(`${this.where()} : ${text}`);
  }

  // ---- every step ----------------------------------------------------------------------------

  /** The start of leaf step `at`: the clock advances, releases due run (with the poll of the
   * exported program's release loop), progress is reported now and then. An OCaml exception a
   * callback raises at that poll is the step's, as the program's guarded `tick` has it: logged
   * as escaped (then the step goes on), or passed to the enclosing attempt. Returns what is left
   * of it when a callback of the poll may block ({@linkcode Rest}). */
  tick(at: string): Rest {
    this.clockNs += this.s.clockTickNs;
    const n = ++this.step;
    // keep.steps releases are the harness's `release_due`, which polls once they are done.
    if (this.lifetimes.tick(n) && this.cur.alive) {
      const rest = this.releasePoll(at);
      if (rest !== null) return this.#countdownAfterG(rest, n);
    }
    this.#countdown(n);
    return null;
  }

  /** The tick of step `n` after its release poll's callbacks (`rest`). */
  *#countdownAfterG(rest: Resumable<void>, n: number): Resumable<void> {
    yield* rest;
    this.#countdown(n);
  }

  /** Step `n` counts down to the next progress report. */
  #countdown(n: number): void {
    if (--this.#untilProgress === 0) this.#progress(n);
  }

  /** The poll of the exported program's release loops (`release_due` at the start of step
   * `at`, or a `release` step's), on the domain the last step ran on, under step `at`'s guard:
   * null when it ran to its end (no callback was due, so no generator is made), else its rest. */
  releasePoll(at: string): Rest {
    return this.guard(at, () => this.cur.pollFirst());
  }

  /** How many more steps can start with nothing happening at their start but the counters
   * moving: no release due (whose loop would poll) and no progress report. */
  quietSteps(): number {
    const byRelease = this.lifetimes.nextDue - this.step - 1;
    const byProgress = this.#untilProgress - 1;
    return byRelease < byProgress ? byRelease : byProgress;
  }

  /** How many more steps can start before one reports progress. */
  stepsBeforeProgress(): number {
    return this.#untilProgress - 1;
  }

  /** The ticks of `n` steps at once, `n` at most {@linkcode quietSteps}: what `n` calls of
   * {@linkcode tick} would do. */
  skipSteps(n: number): void {
    this.elapse(n);
    this.step += n;
  }

  /** What `n` calls of {@linkcode tick} do, `n` at most {@linkcode quietSteps}, but for the
   * step number (counted by the caller): the clock and the progress countdown. */
  elapse(n: number): void {
    const tickNs = this.s.clockTickNs;
    const to = this.clockNs + n * tickNs;
    if (Number.isSafeInteger(to)) this.clockNs = to;
    else for (let k = 0; k < n; k++) this.clockNs += tickNs; // rounding as each tick's
    this.#untilProgress -= n;
  }

  #progress(n: number): void {
    this.#untilProgress = this.#progressEvery;
    this.opts.onProgress?.(n, this.#totalSteps);
  }

  /** The last progress report, when the run ends. */
  progressDone(): void {
    this.opts.onProgress?.(this.step, this.#totalSteps);
  }

  /** Runs `f` for step `at`: OCaml exceptions escaping it are logged (the OCaml program would
   * have them propagate to its handler); anything else aborts the run with the step named. `f`
   * may stop where its thread may block: then what is left of it is returned, under the same
   * guard ({@linkcode Rest}); else null. */
  guard(at: string, f: () => Rest | void): Rest {
    let rest: Rest = null;
    try {
      rest = f() ?? null;
    } catch (e) {
      this.stepFailed(at, e);
    }
    return rest === null ? null : this.#guardRestG(at, rest);
  }

  /** What is left of a guarded computation (`rest`), under step `at`'s guard. */
  *#guardRestG(at: string, rest: Resumable<void>): Resumable<void> {
    try {
      yield* rest;
    } catch (e) {
      this.stepFailed(at, e);
    }
  }

  /**
   * Domain `d` resumes after other domains ran (its turn came, or a domain it joins ended): the
   * callbacks that their collections made ready on `d` run now, all of them — what one raises
   * is logged as escaped from step `at` (or passed to an attempt), and the rest run. The
   * exported program does this in its baton code, where the domain waits for its turn and in
   * `Domain.join` (`resume_g`, `join_g`), so that no callback runs inside the baton's waits
   * (runs with {@linkcode RunOptions.exportHarness}).
   */
  drain(d: Domain, at: string): void {
    runToEnd(this.drainG(d, at), at);
  }

  /** {@linkcode drain}, resumable. */
  *drainG(d: Domain, at: string): Resumable<void> {
    const prev = this.cur;
    this.cur = d;
    for (;;) {
      try {
        yield* d.processPendingActionsG();
        break;
      } catch (e) {
        this.stepFailed(at, e);
      }
    }
    this.cur = prev;
  }

  /** What {@linkcode guard} does with what step `at` threw. */
  stepFailed(at: string, e: unknown): void {
    if (e instanceof ThreadExit) {
      // Thread.exit unwinds the thread; its top level ends it.
      const t = this.cur.current;
      this.log.line(`[${at}] thread ${this.threadName(t)} exits`);
      if (t.alive && t !== this.cur.threads[0]) t.exit();
      return;
    }
    // A callback's action failed: the run stops there, naming the action.
    if (e instanceof ActionError) this.fail(at, e.problem, e.within);
    // Failure / Invalid_argument come from the runtime refusing a call (Gc.Memprof misuse):
    // the scenario is wrong, so the run stops there.
    if (e instanceof OCamlFailure || e instanceof OCamlInvalidArgument) {
      this.fail(at, e.message);
    }
    if (e instanceof OCamlException) {
      this.counts.exceptions++;
      if (this.tryDepth > 0) throw e; // to the enclosing attempt
      this.log.line(`[${at}] exception ${e.ocamlName} escaped`);
      this.emitException("escaped", e.ocamlName);
      return;
    }
    if (e instanceof ScenarioError) throw e;
    this.fail(at, e instanceof Error ? e.message : String(e));
  }

  /** Fails step `at` when memprof's invariants do not hold on some domain. */
  checkInvariants(at: string): void {
    try {
      for (const d of this.rt.domains) checkDomainInvariants(d.memprof);
    } catch (e) {
      this.fail(at, `memprof invariant broken: ${(e as Error).message}`);
    }
  }

  // ---- records for RunOptions.onEvent --------------------------------------------------------

  /** Emits a callback's record when the callback starts (so records keep the order in which
   * callbacks begin) and returns a function that fills in its outcome when it ends. */
  reporter(ev: Exclude<RunEvent, { kind: "escaped" | "caught" | "tracerFailed" }>): (
    outcome: "some" | "none" | "unit" | { raise: string },
  ) => void {
    const onEvent = this.opts.onEvent;
    if (onEvent === undefined) return ignoreOutcome;
    const rec = { ...ev };
    onEvent(rec);
    return (outcome) => {
      (rec as { outcome: unknown }).outcome = outcome;
    };
  }

  /**
   * memtrace's `report_exn`, once the tracer failed: an OCaml exception that a memprof callback
   * raised under an external allocation's lock, which memtrace's `ext_alloc_slowpath` caught
   * (`mark_failed`), is logged and recorded (the exported program records it instead of
   * printing it, as a `report_exn` given to `Memtrace.start` may); anything else (a writer's
   * failure, an action the run refused) fails the run.
   */
  #tracerFailed(e: unknown): void {
    if (
      !(e instanceof OCamlException) || e instanceof OCamlFailure ||
      e instanceof OCamlInvalidArgument
    ) throw e;
    this.counts.exceptions++;
    this.lifecycle(`memtrace failed: exception ${e.ocamlName}, External.alloc returns None`);
    this.emitException("tracerFailed", e.ocamlName);
  }

  /** Records an OCaml exception that escaped a step, that an attempt caught, or that memtrace's
   * external allocation caught (the tracer failed). */
  emitException(kind: "escaped" | "caught" | "tracerFailed", exn: string): void {
    const onEvent = this.opts.onEvent;
    if (onEvent === undefined) return;
    const d = this.cur;
    onEvent({ kind, domain: d.id, loops: this.loopsOf(d).slice(), exn });
  }
}
