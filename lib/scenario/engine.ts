/**
 * The engine: runs a scenario through the simulated runtime (lib/runtime) and memprof
 * (lib/memprof), records runtime_events in a ring image (lib/runtime_events), and traces every
 * domain into a memtrace `.ctf` (lib/tracer). Everything runs on a virtual clock with seeded
 * generators: the same scenario and seed give byte-identical outputs.
 *
 * Steps are compiled once into closures; a `repeat` runs its body's closures in a plain loop, so
 * a loop of small allocations costs little more than the runtime's own allocation path.
 *
 * Scenarios with systhreads running programs of their own (`d.thread(name, body)`) run in a
 * resumable form instead: each thread's steps compile to generators, so that a thread that
 * blocks — at a `yieldTo` or `join` step, or inside a callback (`act.yieldTo`) — is suspended
 * where it is, however deep in the runtime, while the thread it names runs; the scheduler
 * (`runResumable`) resumes it when the baton comes back. The runtime and memprof paths that
 * may run callbacks have resumable forms (`allocG`, `runCallbacksG`, …) doing exactly what
 * the plain ones do. Every other scenario runs the plain closures, as fast as before.
 * @module
 */
import { type Domain, Runtime, type Thread } from "../runtime/mod.ts";
import {
  type AllocationInfo,
  Blocking,
  OCamlException,
  OCamlFailure,
  OCamlInvalidArgument,
  type Profile,
  type Resumable,
  ThreadExit,
  type Tracker,
} from "../memprof/mod.ts";
import { checkDomainInvariants } from "../memprof/invariants.ts";
import {
  bytesType,
  dumpCallbacks,
  RuntimeEventsCursor,
  RuntimeEventsProducer,
  Type,
  type UserEvent,
} from "../runtime_events/mod.ts";
import { dumpTrace, dumpTraceTo, MemorySink, Reader } from "../memtrace/mod.ts";
import { Tracer } from "../tracer/mod.ts";
import { CallbackLog, type LogHeaderFacts } from "./callback_log.ts";
import type {
  CallbackKind,
  RunEvent,
  RunOptions,
  RunResult,
  Summary,
  TextOutput,
} from "./result.ts";
import { ScenarioError } from "./errors.ts";
import { ScenarioRng, sizeSource } from "./rng.ts";
import { type Keeper, Lifetimes } from "./lifetimes.ts";
import { allocatesOnEveryPath } from "./polling.ts";
import type {
  CallbackAction,
  CallbackSpec,
  GcKind,
  ProfileSpec,
  Scenario,
  Step,
  TrackerSpec,
  Trigger,
  UserEventSpec,
} from "./spec.ts";

const LOG_NAMES: Record<CallbackKind, string> = {
  allocMinor: "alloc_minor",
  allocMajor: "alloc_major",
  promote: "promote",
  deallocMinor: "dealloc_minor",
  deallocMajor: "dealloc_major",
};

function ignoreOutcome(): void {}

/** The placeholder frame of {@linkcode RunOptions.harnessFrames}. */
const HARNESS_FRAME = "<harness>";

/** `Gc.Memprof.allocation_source` names, by number. */
const SOURCE_NAMES = ["normal", "marshal", "custom"];

/** The epoch of the virtual clock: trace start times are this plus nothing, in µs. */
const EPOCH_US = 1_767_225_600_000_000; // 2026-01-01T00:00:00Z

/** What a tracked block's callbacks carry (OCaml's tracking value). */
interface Tracked {
  /** memtrace object id, when the tracer traced the allocation. */
  obj: number | undefined;
  /** Domain that allocated the block (its writer writes the block's later events). */
  domain: number;
  /** Iteration at which the block was allocated. */
  iter: number;
  /** Serial number of the alloc callback. */
  serial: number;
  profile: ProfileState;
}

interface ProfileState {
  name: string;
  spec: ProfileSpec;
  profile: Profile | undefined;
  calls: Record<CallbackKind, number>;
  tracked: number;
  ended: number;
  live: Set<Tracked>;
}

type Op = () => void;

/** A callback's start: its number among its kind's calls in its profile, its log line's head,
 * the reporter of its record, and the serial of the allocation it is about. */
interface CallbackStart {
  readonly n: number;
  readonly head: string;
  readonly report: (outcome: "some" | "none" | "unit" | { raise: string }) => void;
  readonly serial: number;
}
/** A compiled step of a resumable run: what it yields is the thread to run next. */
type GOp = () => Resumable<void>;

/** A thread of a resumable run: the main thread (whose program is the scenario's top-level
 * steps) or a systhread with a program of its own, and what the engine keeps per thread. */
interface ThreadCtx {
  readonly name: string;
  /** The runtime's thread (created before the run). */
  thread: Thread | undefined;
  /** Its `thread` step ran: the baton may pass to it. */
  spawned: boolean;
  /** Its compiled program (none for the main thread: the top-level steps). */
  readonly program: GOp | undefined;
  /** Where its program stands, once it started. */
  gen: Resumable<ThreadCtx | undefined> | undefined;
  /** `blocked`: waits for its turn; `joining`: waits for `Thread.join` to return. */
  state: "new" | "running" | "blocked" | "joining" | "ended";
  /** Its loop indices (the running thread's are its domain's, see `loopsOf`). */
  readonly loops: number[];
  /** `attempt`s open around its current step. */
  tryDepth: number;
  /** Its current loop iteration (fixture logs). */
  iter: number;
  /** The thread that last passed it the baton (its program's end gives it back). */
  handedBy: ThreadCtx | undefined;
  /** The thread waiting in `join` for its end. */
  joiner: ThreadCtx | undefined;
}

/** The frames of a thread's enclosing `call` steps, outermost first. `version` changes at every
 * push and pop, so that allocation steps can reuse the callstack they built last time. */
interface FrameStack {
  frames: string[];
  version: number;
}

let frameVersions = 0;

/**
 * Runs a (validated) scenario. Throws {@linkcode ScenarioError} when a step fails.
 *
 * @example Run a scenario and look at its summary and outputs
 * ```ts
 * import { runScenario, scenario } from "./mod.ts";
 * import assert from "node:assert/strict";
 *
 * const sc = scenario({ name: "demo" }, (s) => {
 *   s.main.memprof.start({ samplingRate: 0.01 });
 *   s.main.repeat(1_000, () => s.main.alloc(4));
 *   s.main.memprof.stop();
 * });
 * const result = runScenario(sc);
 * assert.equal(result.summary.allocations, 1_000);
 * assert.ok(result.ctf.length > 0 && result.traceDump.length > 0);
 * ```
 */
export function runScenario(sc: Scenario, options: RunOptions = {}): RunResult {
  return new Engine(sc, options, usesThreadPrograms(sc)).run();
}

/** @internal Runs `sc` in the resumable form whatever it holds: a scenario without thread
 * programs gives exactly what {@linkcode runScenario} gives (the tests check that the two
 * forms agree on every library scenario). */
export function runScenarioResumable(sc: Scenario, options: RunOptions = {}): RunResult {
  return new Engine(sc, options, true).run();
}

/** Whether `sc` has systhreads with programs of their own, or steps or callback actions that
 * pass the baton between them: it then runs in the resumable form. */
export function usesThreadPrograms(sc: Scenario): boolean {
  const tracker = (t: TrackerSpec): boolean =>
    (Object.values(t) as (CallbackSpec | undefined)[]).some((spec) =>
      spec?.actions.some(({ action }) =>
        action.kind === "yieldTo" || action.kind === "yieldToNext" ||
        (action.kind === "start" && tracker(action.profile.tracker))
      )
    );
  const walk = (steps: readonly Step[]): boolean =>
    steps.some((st) =>
      st.kind === "threadSpawn" || st.kind === "yieldTo" || st.kind === "threadJoin" ||
      st.kind === "threadYield" || (st.kind === "memprofStart" && tracker(st.profile.tracker)) ||
      ("body" in st && walk(st.body))
    );
  return walk(sc.steps);
}

class Engine {
  private readonly s: Scenario["settings"];
  private readonly seed: number;
  private readonly rng: ScenarioRng;
  private readonly rt: Runtime;
  private readonly ring: RuntimeEventsProducer;
  private readonly traceSink = new MemorySink();
  private readonly tracer: Tracer;
  private readonly domains = new Map<string, Domain>();
  private readonly threads = new Map<string, Thread>();
  private readonly threadNames = new Map<Thread, string>();
  private readonly frames = new Map<Thread, FrameStack>();
  /** Per domain: the indices of the loops running on it, outermost first. */
  private readonly loopStacks = new Map<Domain, number[]>();
  /** `<harness>` frames below every callstack (see RunOptions.harnessFrames). */
  private readonly harnessMain: readonly string[];
  private readonly harnessSpawned: readonly string[];
  private readonly harnessThread: readonly string[];
  /** Resumable runs: the threads, by name (those with programs in the order of their `thread`
   * steps, then "main"), and the one running. */
  private readonly ctxs = new Map<string, ThreadCtx>();
  private running: ThreadCtx | undefined;
  /** Runtime threads that run programs of their own (their callstacks start afresh). */
  private readonly programThreads = new Set<Thread>();
  private readonly profiles = new Map<string, ProfileState>();
  private readonly userEvents = new Map<string, UserEvent<unknown>>();
  private readonly lifetimes: Lifetimes;
  /** The trace's sample rate: the first profile's (or the overriding) rate. */
  private readonly traceRate: number;
  private readonly log: CallbackLog;
  private clockNs = 0;
  private step = 0;
  private iter = 0;
  private serial = 0;
  private cur!: Domain;
  private exceptions = 0;
  private lostWords = 0;
  private tryDepth = 0;
  private allocations = 0;
  private words = 0;
  private samples = 0;
  private readonly callbackCounts: Record<CallbackKind, number> = {
    allocMinor: 0,
    allocMajor: 0,
    promote: 0,
    deallocMinor: 0,
    deallocMajor: 0,
  };
  private readonly totalSteps: number;
  private readonly progressEvery: number;
  private untilProgress: number;
  /** The longest loop run so far and the minor collections during it (log headers). */
  private mainLoop = { count: 0, minors: 0, domain: 0 };

  constructor(
    private readonly sc: Scenario,
    private readonly opts: RunOptions,
    private readonly resumable: boolean,
  ) {
    this.s = sc.settings;
    this.log = new CallbackLog(this.s.log);
    this.seed = opts.seed ?? this.s.seed;
    this.rng = new ScenarioRng(this.seed);
    this.ring = new RuntimeEventsProducer({
      maxDomains: this.s.maxDomains,
      logWsize: this.s.ringLog2,
      pid: this.s.pid,
      clock: () => this.clockNs,
    });
    this.rt = new Runtime({
      minorHeapWords: this.s.minorHeapWords,
      majorHeap: this.opts.majorHeap,
      events: this.ring,
      // Collections take virtual time (lib/runtime/gc_time.ts): the ring and the trace see it.
      advanceClock: (ns) => {
        this.clockNs += ns;
      },
      gcTime: { ...this.s.gcTime, ...this.opts.gcTime },
      pid: this.s.pid,
    });
    const firstRate = opts.samplingRate ?? firstProfileRate(sc.steps) ?? this.s.samplingRate;
    this.traceRate = firstRate;
    this.tracer = new Tracer(this.traceSink, {
      info: {
        sampleRate: firstRate,
        wordSize: 64,
        executableName: `memprof-lab/${this.s.name}`,
        hostName: "memprof-lab",
        ocamlRuntimeParams:
          `s=${this.s.minorHeapWords},e=${this.s.ringLog2},d=${this.s.maxDomains}`,
        pid: BigInt(this.s.pid),
        initialDomain: 0,
        startTime: EPOCH_US,
        context: this.s.description === "" ? undefined : this.s.description,
      },
      clock: () => EPOCH_US + Math.floor(this.clockNs / 1000),
      externalSamplingRate: this.s.externalSamplingRate ?? firstRate,
    });
    this.lifetimes = new Lifetimes(
      this.rt,
      () => this.step,
      (addr, old) => this.cur.rememberStore(addr, old),
    );
    const hf = opts.harnessFrames ?? { main: 0, spawned: 0 };
    this.harnessMain = new Array<string>(hf.main).fill(HARNESS_FRAME);
    this.harnessSpawned = new Array<string>(hf.spawned).fill(HARNESS_FRAME);
    this.harnessThread = new Array<string>(hf.thread ?? 0).fill(HARNESS_FRAME);
    const main = this.rt.mainDomain;
    this.domains.set("main", main);
    this.nameThread(main.current, "main");
    this.cur = main;
    this.totalSteps = countLeafSteps(sc.steps);
    this.progressEvery = Math.max(1, Math.floor(this.totalSteps / 100));
    this.untilProgress = this.progressEvery;
  }

  private fail(at: string, problem: string): never {
    throw new ScenarioError(this.s.name, at, problem);
  }

  private nameThread(t: Thread, name: string): void {
    this.threads.set(name, t);
    this.threadNames.set(t, name);
    this.frames.set(t, { frames: [], version: ++frameVersions });
  }

  // ---- the run -------------------------------------------------------------------------------

  run(): RunResult {
    if (this.resumable) this.runResumable(this.compileG(this.sc.steps, true));
    else {
      this.compile(this.sc.steps, true)();
      // Leave nothing pending: callbacks of the last steps run at a final poll of each domain.
      for (const d of this.domains.values()) {
        if (!d.alive) continue;
        this.cur = d;
        this.guard("end", () => d.processPendingActions());
      }
    }
    this.tracer.close();
    this.opts.onProgress?.(this.step, this.totalSteps);
    const ctf = this.traceSink.bytes().slice();
    // One read of the trace counts its events; its dump is made when asked for (writeText).
    const traceEvents = dumpTrace(Reader.fromBytes(ctf), () => {});
    // Without events.start() there is no ring file, as in OCaml without OCAML_RUNTIME_EVENTS_START.
    // The producer's image itself, not a copy: nothing writes to it after the run.
    const eventsImage = this.ring.started ? this.ring.bytes : new Uint8Array(0);
    if (this.ring.started) {
      new RuntimeEventsCursor(eventsImage).readPoll({
        lostEvents: (_d, words) => {
          this.lostWords += words;
        },
      });
    }
    const log = this.log, facts = this.logFacts();
    const writeText = (output: TextOutput, write: (chunk: string) => void): void => {
      if (output === "callbackLog") return log.writeText(facts, write);
      if (output === "eventsDump") {
        if (eventsImage.length > 0) writeImageDump(eventsImage, write);
        return;
      }
      // As the lines joined with newlines, plus a final newline (one even without lines).
      let wrote = false;
      dumpTraceTo(Reader.fromBytes(ctf), (text) => {
        if (text.length > 0) wrote = true;
        write(text);
      });
      if (!wrote) write("\n");
    };
    const texts = new Map<TextOutput, string>();
    const text = (output: TextOutput): string => {
      let t = texts.get(output);
      if (t === undefined) {
        const parts: string[] = [];
        writeText(output, (chunk) => parts.push(chunk));
        texts.set(output, t = parts.join(""));
      }
      return t;
    };
    return {
      scenario: this.sc,
      ctf,
      get traceDump() {
        return text("traceDump");
      },
      eventsImage,
      get eventsDump() {
        return text("eventsDump");
      },
      get callbackLog() {
        return text("callbackLog");
      },
      writeText,
      summary: this.summary(traceEvents, ctf.length, eventsImage.length),
    };
  }

  /** Runs `f` for step `at`: OCaml exceptions escaping it are logged (the OCaml program would
   * have them propagate to its handler); anything else aborts the run with the step named. */
  private guard(at: string, f: () => void): void {
    try {
      f();
    } catch (e) {
      this.stepFailed(at, e);
    }
  }

  /** {@linkcode guard}, resumable. */
  private *guardG(at: string, f: () => Resumable<void>): Resumable<void> {
    try {
      yield* f();
    } catch (e) {
      this.stepFailed(at, e);
    }
  }

  /** What {@linkcode guard} does with what step `at` threw. */
  private stepFailed(at: string, e: unknown): void {
    if (e instanceof ThreadExit) {
      // Thread.exit unwinds the thread; its top level ends it.
      const t = this.cur.current;
      this.log.line(`[${at}] thread ${this.threadName(t)} exits`);
      if (t.alive && t !== this.cur.threads[0]) t.exit();
      return;
    }
    // Failure / Invalid_argument come from the runtime refusing a call (Gc.Memprof misuse):
    // the scenario is wrong, so the run stops there.
    if (e instanceof OCamlFailure || e instanceof OCamlInvalidArgument) {
      this.fail(at, e.message);
    }
    if (e instanceof OCamlException) {
      this.exceptions++;
      if (this.tryDepth > 0) throw e; // to the enclosing attempt
      this.log.line(`[${at}] exception ${e.ocamlName} escaped`);
      this.emitException("escaped", e.ocamlName);
      return;
    }
    if (e instanceof ScenarioError) throw e;
    this.fail(at, e instanceof Error ? e.message : String(e));
  }

  private threadName(t: Thread): string {
    return this.threadNames.get(t) ?? `thread${t.id}`;
  }

  private tick(): void {
    this.clockNs += this.s.clockTickNs;
    const n = ++this.step;
    // keep.steps releases are the harness's `release_due` loop, whose back-edges are polls.
    if (this.lifetimes.tick(n) && this.cur.alive) this.cur.poll();
    if (--this.untilProgress === 0) {
      this.untilProgress = this.progressEvery;
      this.opts.onProgress?.(n, this.totalSteps);
    }
  }

  // ---- compilation ---------------------------------------------------------------------------

  private compile(steps: readonly Step[], top = false): Op {
    const ops = steps.map((st) => this.compileStep(st));
    const check = top && this.opts.checkInvariants === true;
    const n = ops.length;
    if (n === 1 && !check) return ops[0];
    return () => {
      for (let i = 0; i < n; i++) {
        ops[i]();
        if (check) this.checkInvariants(steps[i].at);
      }
    };
  }

  private checkInvariants(at: string): void {
    try {
      for (const d of this.rt.domains) checkDomainInvariants(d.memprof);
    } catch (e) {
      this.fail(at, `memprof invariant broken: ${(e as Error).message}`);
    }
  }

  private domain(name: string, at: string): Domain {
    const d = this.domains.get(name);
    if (d === undefined || !d.alive) this.fail(at, `domain "${name}" is not running`);
    return d;
  }

  private compileStep(st: Step): Op {
    const at = st.at;
    switch (st.kind) {
      case "alloc":
        return this.compileAlloc(st);
      case "allocCombined": {
        const sizes = st.sizes.map((sz) => sizeSource(sz, this.rng));
        const lens = new Array<number>(sizes.length);
        const keeps = st.lifetimes.map((l) => this.lifetimes.keeper(l));
        const anyKept = keeps.some((k) => k !== undefined);
        const frameLists = st.frames;
        const domainOf = this.domainCache(st.domain, at);
        const stacksOf = this.frameCache((t) => frameLists.map((f) => this.stackOf(t, f)));
        return () => {
          this.tick();
          const d = domainOf();
          this.cur = d;
          for (let k = 0; k < sizes.length; k++) lens[k] = sizes[k]();
          const stacks = stacksOf(d.current);
          try {
            const base = d.allocCombined(lens, stacks);
            this.allocations += lens.length;
            for (let k = 0; k < lens.length; k++) this.words += lens[k] + 1;
            if (anyKept) {
              let a = base;
              for (let k = 0; k < lens.length; k++) {
                keeps[k]?.(a, lens[k]);
                a += lens[k] + 1;
              }
            }
          } catch (e) {
            this.guard(at, () => {
              throw e;
            });
          }
        };
      }
      case "unmarshal": {
        const sizes = st.blocks.map((b) => sizeSource(b, this.rng));
        const keep = this.lifetimes.keeper(st.lifetime);
        const domainOf = this.domainCache(st.domain, at);
        const stackOf = this.frameCache((t) => this.stackOf(t, st.frames));
        const blocks = new Array<number>(sizes.length);
        return () => {
          this.tick();
          const d = domainOf();
          this.cur = d;
          d.current.callstack = stackOf(d.current);
          for (let k = 0; k < sizes.length; k++) blocks[k] = sizes[k]();
          try {
            const addrs = d.unmarshalValue(blocks);
            this.allocations += blocks.length;
            for (let k = 0; k < blocks.length; k++) {
              this.words += blocks[k] + 1;
              // The value is stored once, by its root; the other blocks hang from it.
              keep?.(addrs[k], blocks[k], k > 0);
            }
          } catch (e) {
            this.guard(at, () => {
              throw e;
            });
          }
        };
      }
      case "gc":
        return this.domainOp(st.domain, at, (d) => runGc(d, st.what));
      case "poll":
        return this.domainOp(st.domain, at, (d) => d.poll());
      case "spawn":
        return () => {
          this.tick();
          const parent = this.domain(st.domain, at);
          this.cur = parent;
          const child = this.rt.spawnDomain(parent);
          this.domains.set(st.child, child);
          this.nameThread(child.current, st.child);
          this.lifecycle(`Domain.spawn ${st.child}@${child.id}`);
          this.frames.set(child.current, {
            frames: [...this.frameStack(parent.current).frames],
            version: ++frameVersions,
          });
          // The new domain's first act (Domain.spawn's body, DLS.create_dls): `Array.make 8`.
          this.cur = child;
          child.current.callstack = this.stackOf(child.current, []);
          this.guard(at, () => child.makeArray(8));
          this.cur = parent;
        };
      case "terminate":
      case "threadSwitch":
      case "threadExit":
      case "memprofStart":
      case "memprofDiscard":
      case "join":
      case "userEvent":
        return this.domainOp(st.domain, at, this.leafBody(st));
      case "threadCreate":
        return () => {
          this.tick();
          this.createThread(this.domain(st.domain, at), st.thread);
        };
      case "blocking": {
        const body = this.compile(st.body);
        return this.domainOp(st.domain, at, (d) => d.blockingSection(body));
      }
      case "memprofStop":
        return this.domainOp(st.domain, at, (d) => {
          d.memprofStop();
          this.lifecycle("Gc.Memprof.stop");
        });
      case "threadSpawn":
      case "yieldTo":
      case "threadJoin":
      case "threadYield":
        // Validation and runScenario send these to the resumable form.
        throw new Error(`step ${at}: a ${st.kind} step in a plain run`);
      case "call": {
        const body = this.compile(st.body);
        return () => {
          const d = this.domain(st.domain, at);
          const fs = this.frameStack(d.current);
          fs.frames.push(st.frame);
          fs.version = ++frameVersions;
          try {
            body();
          } finally {
            fs.frames.pop();
            fs.version = ++frameVersions;
          }
        };
      }
      case "attempt": {
        const body = this.compile(st.body);
        return () => {
          this.tryDepth++;
          try {
            body();
          } catch (e) {
            if (!(e instanceof OCamlException)) throw e;
            this.log.line(`[${at}] exception ${e.ocamlName} caught`);
            this.emitException("caught", e.ocamlName);
          } finally {
            this.tryDepth--;
          }
        };
      }
      case "repeat": {
        const body = this.compile(st.body);
        const count = st.count;
        const domainOf = this.domainCache(st.domain, at);
        // ocamlopt's back-edge poll, unless the body allocates inline on every path.
        const polls = !allocatesOnEveryPath(st.body);
        return () => {
          const minorsBefore = this.rt.minorCollections;
          const loopDomain = domainOf();
          const loops = this.loopsOf(loopDomain);
          const depth = loops.length;
          loops.push(0);
          let left: OCamlException | undefined;
          try {
            if (!polls) {
              for (let i = 1; i <= count; i++) {
                this.iter = i;
                loops[depth] = i;
                body();
              }
            } else {
              for (let i = 1; i <= count; i++) {
                this.iter = i;
                loops[depth] = i;
                body();
                // The poll's own test first: it enters the runtime only at young_ptr <= young_limit.
                if (i < count && loopDomain.youngPtr <= loopDomain.youngLimit) {
                  left = this.backEdgePoll(loopDomain);
                  if (left !== undefined) break;
                }
              }
            }
          } finally {
            loops.length = depth;
          }
          if (left !== undefined) {
            // Outside any attempt, an exception at the back-edge leaves the loop; the step after
            // the loop runs (the export wraps such loops in a handler that logs it).
            this.exceptions++;
            this.log.line(`[${at}] exception ${left.ocamlName} escaped the loop`);
            this.emitException("escaped", left.ocamlName);
          }
          this.iter = count + 1;
          if (count >= this.mainLoop.count) {
            this.mainLoop = {
              count,
              minors: this.rt.minorCollections - minorsBefore,
              domain: loopDomain.id,
            };
          }
        };
      }
      case "when": {
        const body = this.compile(st.body);
        const domainOf = this.domainCache(st.domain, at);
        const depth = st.loop - 1, every = st.every, offset = st.offset;
        return () => {
          const i = this.loopsOf(domainOf())[depth];
          if (i % every === offset) body();
        };
      }
      case "extAlloc": {
        const ext = this.extAllocBody(st);
        return () => {
          this.tick();
          ext();
        };
      }
      case "release":
        return () => {
          this.tick();
          this.lifetimes.release(st.name);
          // The exported program's release loops: their back-edges are polls.
          this.guard(at, () => this.cur.poll());
        };
      case "eventsStart":
        return () => {
          this.tick();
          this.guard(at, () => {
            this.ring.start();
            this.cur.returnFromC(); // Runtime_events.start is a C primitive
          });
        };
      case "eventsPause":
        return () => {
          this.tick();
          this.guard(at, () => {
            this.ring.pause();
            this.cur.returnFromC(); // Runtime_events.pause is a C primitive
          });
        };
      case "eventsResume":
        return () => {
          this.tick();
          this.guard(at, () => {
            this.ring.resume();
            this.cur.returnFromC(); // Runtime_events.resume is a C primitive
          });
        };
    }
  }

  /** The work of a leaf step that runs no callback, or none that may block (the same in plain
   * and resumable runs). */
  private leafBody(
    st: Extract<
      Step,
      {
        kind:
          | "terminate"
          | "threadSwitch"
          | "threadExit"
          | "memprofStart"
          | "memprofDiscard"
          | "join"
          | "userEvent";
      }
    >,
  ): (d: Domain) => void {
    const at = st.at;
    switch (st.kind) {
      case "terminate":
        return (d) => {
          this.lifecycle("domain terminates");
          try {
            this.rt.terminateDomain(d);
          } finally {
            this.cur = this.rt.mainDomain;
          }
        };
      case "threadSwitch":
        return (d) => d.switchTo(this.liveThread(st.thread, at));
      case "threadExit":
        return () => this.liveThread(st.thread, at).exit();
      case "memprofStart":
        return (d) => {
          this.startProfile(d, st.profile);
          this.lifecycle(`Gc.Memprof.start ${[...this.profiles.keys()].at(-1)}`);
        };
      case "memprofDiscard":
        return (d) => {
          const p = this.profiles.get(st.profile)?.profile;
          if (p === undefined) this.fail(at, `profile "${st.profile}" was never started`);
          d.memprofDiscard(p);
          this.lifecycle(`Gc.Memprof.discard ${st.profile}`);
        };
      case "join":
        return (d) => {
          const target = this.domain(st.target, at);
          this.lifecycle(`Domain.join ${st.target}@${target.id}`);
          this.cur = target;
          try {
            this.rt.terminateDomain(target);
          } finally {
            this.cur = d;
          }
        };
      case "userEvent":
        return (d) => {
          this.writeUserEvent(d, st.name, st.event);
          d.returnFromC(); // Runtime_events.User.write is a C primitive
        };
    }
  }

  /** A step-level lifecycle line of the callback log: memprof and domain/thread events. */
  private lifecycle(text: string): void {
    this.log.line(`${this.where()} : ${text}`);
  }

  private *memprofStopG(d: Domain): Resumable<void> {
    yield* d.memprofStopG();
    this.lifecycle("Gc.Memprof.stop");
  }

  /** `Thread.create` of the older form: the thread starts with its creator's calls. */
  private createThread(d: Domain, name: string): void {
    const t = d.createThread(d.current.callstack);
    this.nameThread(t, name);
    this.lifecycle(`Thread.create ${name}`);
    this.frames.set(t, {
      frames: [...this.frameStack(d.current).frames],
      version: ++frameVersions,
    });
  }

  /** An external allocation, after its step's tick (`Printexc.get_callstack`'s allocation
   * runs callbacks on the plain path: one that blocks fails the run). */
  private extAllocBody(st: Extract<Step, { kind: "extAlloc" }>): () => void {
    const at = st.at;
    const bytes = sizeSource(st.bytes, this.rng);
    const lifetime = st.lifetime;
    return () => {
      const d = this.domain(st.domain, at);
      this.cur = d;
      const stack = this.stackOf(d.current, []);
      d.current.callstack = stack;
      this.guard(at, () => {
        const id = this.tracer.extAlloc(d.id, bytes(), stack, () => {
          // Printexc.get_callstack allocates the callstack array while the lock is held.
          if (stack.length > 0) d.alloc(Math.min(stack.length, 256));
          d.returnFromC();
        });
        if (id !== undefined) this.lifetimes.end(lifetime, () => this.tracer.extFree(d.id, id));
      });
    };
  }

  /** A step on one domain: ticks the clock, makes the domain current, and runs `f` under the
   * step's guard (OCaml exceptions logged or passed to an attempt; anything else fails the run
   * naming the step). */
  private domainOp(domain: string, at: string, f: (d: Domain) => void): Op {
    const domainOf = this.domainCache(domain, at);
    return () => {
      this.tick();
      const d = domainOf();
      this.cur = d;
      this.guard(at, () => f(d));
    };
  }

  private liveThread(name: string, at: string): Thread {
    const t = this.threads.get(name);
    if (t === undefined || !t.alive) this.fail(at, `thread "${name}" is not running`);
    return t;
  }

  private compileAlloc(st: Extract<Step, { kind: "alloc" }>): Op {
    const at = st.at;
    const size = sizeSource(st.size, this.rng);
    const mem = st.customMem === undefined ? undefined : sizeSource(st.customMem, this.rng);
    const keep = this.lifetimes.keeper(st.lifetime);
    const frames = st.frames;
    const source = st.source;
    const domainOf = this.domainCache(st.domain, at);
    const stackOf = this.frameCache((t) => this.stackOf(t, frames));
    return () => {
      this.tick();
      const d = domainOf();
      this.cur = d;
      d.current.callstack = stackOf(d.current);
      const n = size();
      try {
        let addr: number;
        switch (source) {
          case "caml":
            addr = d.alloc(n);
            break;
          case "runtime":
            addr = d.allocFromRuntime(n);
            d.returnFromC();
            break;
          case "array":
            addr = d.makeArray(n);
            break;
          case "major":
            addr = d.allocMajor(n);
            d.returnFromC();
            break;
          case "custom":
            addr = d.allocCustom(n, mem!());
            d.returnFromC();
            break;
          case "unmarshal":
            addr = d.unmarshal([n]);
            break;
        }
        this.allocations++;
        this.words += n + 1;
        if (keep !== undefined) keep(addr, n);
      } catch (e) {
        this.guard(at, () => {
          throw e;
        });
      }
    };
  }

  // ---- resumable runs ------------------------------------------------------------------------
  //
  // The same steps as above, compiled to generators (see the module doc): each does exactly
  // what its plain form does, with the runtime's resumable calls where a callback may run.

  private compileG(steps: readonly Step[], top = false): GOp {
    const ops = steps.map((st) => this.compileStepG(st));
    const check = top && this.opts.checkInvariants === true;
    return () => this.runOpsG(ops, steps, check);
  }

  private *runOpsG(ops: readonly GOp[], steps: readonly Step[], check: boolean): Resumable<void> {
    for (let i = 0; i < ops.length; i++) {
      yield* ops[i]();
      if (check) this.checkInvariants(steps[i].at);
    }
  }

  /** {@linkcode tick}, resumable. */
  private *tickG(): Resumable<void> {
    this.clockNs += this.s.clockTickNs;
    const n = ++this.step;
    if (this.lifetimes.tick(n) && this.cur.alive) yield* this.cur.pollG();
    if (--this.untilProgress === 0) {
      this.untilProgress = this.progressEvery;
      this.opts.onProgress?.(n, this.totalSteps);
    }
  }

  /** {@linkcode domainOp}, resumable: `f` runs no callback that may block. */
  private domainOpG(domain: string, at: string, f: (d: Domain) => void): GOp {
    const domainOf = this.domainCache(domain, at);
    return () => this.domainStepG(domainOf, at, (d) => this.plainG(() => f(d)));
  }

  /** {@linkcode domainOp}, resumable, with a resumable `f`. */
  private domainOpY(domain: string, at: string, f: (d: Domain) => Resumable<void>): GOp {
    const domainOf = this.domainCache(domain, at);
    return () => this.domainStepG(domainOf, at, f);
  }

  private *domainStepG(
    domainOf: () => Domain,
    at: string,
    f: (d: Domain) => Resumable<void>,
  ): Resumable<void> {
    yield* this.tickG();
    const d = domainOf();
    this.cur = d;
    yield* this.guardG(at, () => f(d));
  }

  /** A step's work that never yields, as a resumable computation. */
  // deno-lint-ignore require-yield
  private *plainG(f: () => void): Resumable<void> {
    f();
  }

  private compileStepG(st: Step): GOp {
    const at = st.at;
    switch (st.kind) {
      case "alloc":
        return this.compileAllocG(st);
      case "allocCombined": {
        const sizes = st.sizes.map((sz) => sizeSource(sz, this.rng));
        const keeps = st.lifetimes.map((l) => this.lifetimes.keeper(l));
        const domainOf = this.domainCache(st.domain, at);
        const frameLists = st.frames;
        const stacksOf = this.frameCache((t) => frameLists.map((f) => this.stackOf(t, f)));
        return () => this.allocCombinedG(at, domainOf, sizes, keeps, stacksOf);
      }
      case "unmarshal": {
        const sizes = st.blocks.map((b) => sizeSource(b, this.rng));
        const keep = this.lifetimes.keeper(st.lifetime);
        const domainOf = this.domainCache(st.domain, at);
        const stackOf = this.frameCache((t) => this.stackOf(t, st.frames));
        return () => this.unmarshalG(at, domainOf, sizes, keep, stackOf);
      }
      case "gc":
        return this.domainOpY(st.domain, at, (d) => runGcG(d, st.what));
      case "poll":
        return this.domainOpY(st.domain, at, (d) => d.pollG());
      case "spawn":
        return () => this.spawnG(st);
      case "terminate":
      case "threadSwitch":
      case "threadExit":
      case "memprofStart":
      case "memprofDiscard":
      case "join":
      case "userEvent":
        return this.domainOpG(st.domain, at, this.leafBody(st));
      case "threadCreate":
        return () =>
          this.plainStepG(() => this.createThread(this.domain(st.domain, at), st.thread));
      case "blocking": {
        const body = this.compileG(st.body);
        return this.domainOpY(st.domain, at, (d) => this.blockingG(d, body));
      }
      case "memprofStop":
        return this.domainOpY(st.domain, at, (d) => this.memprofStopG(d));
      case "call": {
        const body = this.compileG(st.body);
        return () => this.callG(st.domain, at, st.frame, body);
      }
      case "attempt": {
        const body = this.compileG(st.body);
        return () => this.attemptG(at, body);
      }
      case "repeat": {
        const body = this.compileG(st.body);
        const domainOf = this.domainCache(st.domain, at);
        const polls = !allocatesOnEveryPath(st.body);
        return () => this.repeatG(at, st.count, body, domainOf, polls);
      }
      case "when": {
        const body = this.compileG(st.body);
        const domainOf = this.domainCache(st.domain, at);
        const depth = st.loop - 1, every = st.every, offset = st.offset;
        return () => this.whenG(domainOf, depth, every, offset, body);
      }
      case "extAlloc": {
        const ext = this.extAllocBody(st);
        return () => this.plainStepG(ext);
      }
      case "release":
        return () => this.releaseG(at, st.name);
      case "eventsStart":
      case "eventsPause":
      case "eventsResume": {
        const kind = st.kind;
        return () =>
          this.plainStepG(() =>
            this.guard(at, () => {
              if (kind === "eventsStart") this.ring.start();
              else if (kind === "eventsPause") this.ring.pause();
              else this.ring.resume();
              this.cur.returnFromC(); // Runtime_events.start/pause/resume are C primitives
            })
          );
      }
      case "threadSpawn": {
        const program = this.compileG(st.body);
        this.ctxs.set(st.thread, newCtx(st.thread, program));
        return () => this.plainStepG(() => this.spawnThread(st.domain, at, st.thread));
      }
      case "yieldTo":
        return () => this.yieldToG(st.domain, at, st.thread);
      case "threadJoin":
        return () => this.threadJoinG(st.domain, at, st.thread);
      case "threadYield":
        return this.domainOpY(st.domain, at, (d) => this.threadYieldG(d));
    }
  }

  /** A step that ticks, then does `f` (which guards itself where it must). */
  private *plainStepG(f: () => void): Resumable<void> {
    yield* this.tickG();
    f();
  }

  private compileAllocG(st: Extract<Step, { kind: "alloc" }>): GOp {
    const at = st.at;
    const size = sizeSource(st.size, this.rng);
    const mem = st.customMem === undefined ? undefined : sizeSource(st.customMem, this.rng);
    const keep = this.lifetimes.keeper(st.lifetime);
    const frames = st.frames;
    const domainOf = this.domainCache(st.domain, at);
    const stackOf = this.frameCache((t) => this.stackOf(t, frames));
    return () => this.allocG(at, st.source, size, mem, keep, domainOf, stackOf);
  }

  private *allocG(
    at: string,
    source: Extract<Step, { kind: "alloc" }>["source"],
    size: () => number,
    mem: (() => number) | undefined,
    keep: Keeper | undefined,
    domainOf: () => Domain,
    stackOf: (t: Thread) => readonly string[],
  ): Resumable<void> {
    yield* this.tickG();
    const d = domainOf();
    this.cur = d;
    d.current.callstack = stackOf(d.current);
    const n = size();
    try {
      let addr: number;
      switch (source) {
        case "caml":
          addr = yield* d.allocG(n);
          break;
        case "runtime":
          addr = d.allocFromRuntime(n);
          d.returnFromC();
          break;
        case "array":
          addr = yield* d.makeArrayG(n);
          break;
        case "major":
          addr = d.allocMajor(n);
          d.returnFromC();
          break;
        case "custom":
          addr = d.allocCustom(n, mem!());
          d.returnFromC();
          break;
        case "unmarshal":
          addr = (yield* d.unmarshalValueG([n]))[0];
          break;
      }
      this.allocations++;
      this.words += n + 1;
      if (keep !== undefined) keep(addr, n);
    } catch (e) {
      this.stepFailed(at, e);
    }
  }

  private *allocCombinedG(
    at: string,
    domainOf: () => Domain,
    sizes: readonly (() => number)[],
    keeps: readonly (Keeper | undefined)[],
    stacksOf: (t: Thread) => readonly (readonly string[])[],
  ): Resumable<void> {
    yield* this.tickG();
    const d = domainOf();
    this.cur = d;
    const lens = sizes.map((sz) => sz());
    const stacks = stacksOf(d.current);
    try {
      const base = yield* d.allocCombinedG(lens, stacks);
      this.allocations += lens.length;
      let a = base;
      for (let k = 0; k < lens.length; k++) {
        this.words += lens[k] + 1;
        keeps[k]?.(a, lens[k]);
        a += lens[k] + 1;
      }
    } catch (e) {
      this.stepFailed(at, e);
    }
  }

  private *unmarshalG(
    at: string,
    domainOf: () => Domain,
    sizes: readonly (() => number)[],
    keep: Keeper | undefined,
    stackOf: (t: Thread) => readonly string[],
  ): Resumable<void> {
    yield* this.tickG();
    const d = domainOf();
    this.cur = d;
    d.current.callstack = stackOf(d.current);
    const blocks = sizes.map((sz) => sz());
    try {
      const addrs = yield* d.unmarshalValueG(blocks);
      this.allocations += blocks.length;
      for (let k = 0; k < blocks.length; k++) {
        this.words += blocks[k] + 1;
        // The value is stored once, by its root; the other blocks hang from it.
        keep?.(addrs[k], blocks[k], k > 0);
      }
    } catch (e) {
      this.stepFailed(at, e);
    }
  }

  private *spawnG(st: Extract<Step, { kind: "spawn" }>): Resumable<void> {
    yield* this.tickG();
    const parent = this.domain(st.domain, st.at);
    this.cur = parent;
    const child = this.rt.spawnDomain(parent);
    this.domains.set(st.child, child);
    this.nameThread(child.current, st.child);
    this.lifecycle(`Domain.spawn ${st.child}@${child.id}`);
    this.frames.set(child.current, {
      frames: [...this.frameStack(parent.current).frames],
      version: ++frameVersions,
    });
    // The new domain's first act (Domain.spawn's body, DLS.create_dls): `Array.make 8`.
    this.cur = child;
    child.current.callstack = this.stackOf(child.current, []);
    yield* this.guardG(st.at, () => this.discardG(child.makeArrayG(8)));
    this.cur = parent;
  }

  private *discardG<T>(r: Resumable<T>): Resumable<void> {
    yield* r;
  }

  /** The older form's blocking section: other threads' steps run in `body`. */
  private *blockingG(d: Domain, body: GOp): Resumable<void> {
    const me = d.current;
    yield* body();
    if (me.alive) d.switchTo(me);
  }

  private *callG(domain: string, at: string, frame: string, body: GOp): Resumable<void> {
    const d = this.domain(domain, at);
    const fs = this.frameStack(d.current);
    fs.frames.push(frame);
    fs.version = ++frameVersions;
    try {
      yield* body();
    } finally {
      fs.frames.pop();
      fs.version = ++frameVersions;
    }
  }

  private *attemptG(at: string, body: GOp): Resumable<void> {
    this.tryDepth++;
    try {
      yield* body();
    } catch (e) {
      if (!(e instanceof OCamlException)) throw e;
      this.log.line(`[${at}] exception ${e.ocamlName} caught`);
      this.emitException("caught", e.ocamlName);
    } finally {
      this.tryDepth--;
    }
  }

  private *repeatG(
    at: string,
    count: number,
    body: GOp,
    domainOf: () => Domain,
    polls: boolean,
  ): Resumable<void> {
    const minorsBefore = this.rt.minorCollections;
    const loopDomain = domainOf();
    const loops = this.loopsOf(loopDomain);
    const depth = loops.length;
    loops.push(0);
    let left: OCamlException | undefined;
    try {
      for (let i = 1; i <= count; i++) {
        this.iter = i;
        loops[depth] = i;
        yield* body();
        // The poll's own test first: it enters the runtime only at young_ptr <= young_limit.
        if (polls && i < count && loopDomain.youngPtr <= loopDomain.youngLimit) {
          left = yield* this.backEdgePollG(loopDomain);
          if (left !== undefined) break;
        }
      }
    } finally {
      loops.length = depth;
    }
    if (left !== undefined) {
      this.exceptions++;
      this.log.line(`[${at}] exception ${left.ocamlName} escaped the loop`);
      this.emitException("escaped", left.ocamlName);
    }
    this.iter = count + 1;
    if (count >= this.mainLoop.count) {
      this.mainLoop = {
        count,
        minors: this.rt.minorCollections - minorsBefore,
        domain: loopDomain.id,
      };
    }
  }

  /** {@linkcode backEdgePoll}, resumable. */
  private *backEdgePollG(d: Domain): Resumable<OCamlException | undefined> {
    this.cur = d;
    try {
      yield* d.pollG();
    } catch (e) {
      if (
        e instanceof OCamlException && !(e instanceof OCamlFailure) &&
        !(e instanceof OCamlInvalidArgument) && this.tryDepth === 0
      ) return e;
      throw e;
    }
    return undefined;
  }

  private *whenG(
    domainOf: () => Domain,
    depth: number,
    every: number,
    offset: number,
    body: GOp,
  ): Resumable<void> {
    const i = this.loopsOf(domainOf())[depth];
    if (i % every === offset) yield* body();
  }

  private *releaseG(at: string, name: string): Resumable<void> {
    yield* this.tickG();
    this.lifetimes.release(name);
    // The exported program's release loops: their back-edges are polls.
    yield* this.guardG(at, () => this.cur.pollG());
  }

  // ---- systhreads with programs: the baton ---------------------------------------------------
  //
  // One thread of the main domain runs at a time; it runs until it blocks: it passes the baton
  // (`yieldTo`, `join`, `act.yieldTo`) and waits for its turn in `Condition.wait`, as the
  // exported program does (lib/export/_prelude.ts, `th_pass`). What the runtime sees is what
  // OCaml 5.3 does there: the C calls return (`RET_FROM_C_CALL`), `Condition.wait` enters a
  // blocking section (`caml_enter_blocking_section` does the GC work due), and the thread
  // that takes the lock next leaves its own (`caml_thread_leave_blocking_section`:
  // `caml_memprof_enter_thread`, which draws a new sampling trigger).

  /** Runs the top-level program and the threads it passes the baton to, until it ends. */
  private runResumable(top: GOp): void {
    this.createProgramThreads();
    const main = newCtx("main", undefined);
    main.thread = this.rt.mainDomain.current;
    main.state = "running";
    main.gen = this.mainProgramG(top);
    this.ctxs.set("main", main);
    this.running = main;
    this.loopStacks.set(this.rt.mainDomain, main.loops);
    let cur = main;
    for (;;) {
      const r = cur.gen!.next();
      let next: ThreadCtx;
      if (r.done) {
        if (cur === main) break;
        next = r.value!;
      } else next = r.value as ThreadCtx;
      // Each thread has its own attempts, loops and iteration.
      cur.tryDepth = this.tryDepth;
      cur.iter = this.iter;
      this.tryDepth = next.tryDepth;
      this.iter = next.iter;
      this.loopStacks.set(this.rt.mainDomain, next.loops);
      this.cur = this.rt.mainDomain;
      this.running = next;
      next.gen ??= this.threadMainG(next);
      cur = next;
    }
  }

  /** The main thread's program: the top-level steps, then the final poll of each domain (see
   * {@linkcode run}), whose callbacks may pass the baton too. */
  private *mainProgramG(top: GOp): Resumable<ThreadCtx | undefined> {
    yield* top();
    for (const d of this.domains.values()) {
      if (!d.alive) continue;
      this.cur = d;
      yield* this.guardG("end", () => d.processPendingActionsG());
    }
    return undefined;
  }

  /** The `thread` step of a thread with a program: from now on the baton may pass to it. */
  private spawnThread(domain: string, at: string, name: string): void {
    this.domain(domain, at);
    this.ctxs.get(name)!.spawned = true;
  }

  /**
   * `Thread.create` of every thread with a program, before the run, in the order of their
   * `thread` steps, each then waiting for its first turn: as the exported program does (it
   * creates them during its initialisation, and then stops the tick thread; a thread created
   * during the run could take the lock at any blocking section, a race). Their memprof states
   * are empty until they run; what their existence changes is which thread the systhreads'
   * ring makes active when one ends (see {@linkcode threadMainG}).
   */
  private createProgramThreads(): void {
    const d = this.rt.mainDomain;
    for (const c of this.ctxs.values()) {
      if (c.program === undefined) continue;
      const t = d.createThread();
      this.nameThread(t, c.name);
      this.programThreads.add(t);
      c.thread = t;
    }
  }

  /** The context of thread `name`, to which the running thread may pass the baton. */
  private ctxFor(name: string, at: string): ThreadCtx {
    const c = this.ctxs.get(name);
    if (c === undefined) this.fail(at, `no thread "${name}" with a program`);
    if (!c.spawned) this.fail(at, `thread "${name}" is not created yet`);
    return c;
  }

  /**
   * The running thread passes the baton to `to` and waits for its turn: `th_pass` of the
   * exported program — `Mutex.lock`, `Condition.signal`, `Condition.wait` (a blocking section),
   * then, its turn come, `Mutex.unlock`. With `joining`, it waits for `to` to end.
   */
  private *passBatonG(to: ThreadCtx, at: string, joining = false): Resumable<void> {
    const me = this.running!;
    if (to === me) this.fail(at, `thread "${me.name}" passes the baton to itself`);
    if (to.state === "ended") this.fail(at, `thread "${to.name}" has ended`);
    if (to.state === "joining") {
      this.fail(at, `thread "${to.name}" waits in join for another thread to end`);
    }
    const d = this.rt.mainDomain;
    d.returnFromC(); // Mutex.lock
    d.returnFromC(); // Condition.signal
    d.enterBlockingSection(); // Condition.wait
    to.handedBy = me;
    me.state = joining ? "joining" : "blocked";
    yield to;
    // The baton is back.
    me.state = "running";
    this.resumeThread(me);
  }

  /** A thread's wait for its turn ends: it leaves `Condition.wait`'s blocking section, taking
   * the lock (`caml_memprof_enter_thread`), and the C calls return. */
  private resumeThread(c: ThreadCtx): void {
    const d = this.rt.mainDomain;
    d.switchTo(c.thread!);
    d.returnFromC(); // Condition.wait
    d.returnFromC(); // Mutex.unlock
  }

  private *yieldToG(domain: string, at: string, name: string): Resumable<void> {
    yield* this.tickG();
    this.cur = this.domain(domain, at);
    this.log.line(`[${at}] ${this.running!.name} yields to ${name}`);
    yield* this.passBatonG(this.ctxFor(name, at), at);
  }

  /** `Thread.join`: the thread passes the baton to `name` until it ends (unless it did), then
   * `caml_thread_join` waits for its end in a blocking section. */
  private *threadJoinG(domain: string, at: string, name: string): Resumable<void> {
    yield* this.tickG();
    const d = this.domain(domain, at);
    this.cur = d;
    const target = this.ctxFor(name, at);
    const me = this.running!;
    this.log.line(`[${at}] ${me.name} joins ${name}`);
    if (target.state !== "ended") {
      target.joiner = me;
      yield* this.passBatonG(target, at, true);
    }
    d.enterBlockingSection();
    d.switchTo(me.thread!);
    d.returnFromC();
  }

  /** `Thread.yield`: `caml_process_pending_actions`; no thread waits for the lock. */
  private *threadYieldG(d: Domain): Resumable<void> {
    yield* d.processPendingActionsG();
    d.returnFromC();
  }

  /** A thread's life: its first turn, its program, then its end (`th_end` gives the baton to
   * the thread joining it, or back to the one that last passed it; `Thread.create`'s wrapper
   * allocates a `ref ()`; the thread's memprof state goes to the domain). Returns who runs. */
  private *threadMainG(c: ThreadCtx): Resumable<ThreadCtx | undefined> {
    c.state = "running";
    this.resumeThread(c);
    yield* c.program!();
    const at = `end of thread ${c.name}`;
    const next = c.joiner ?? c.handedBy!;
    if (next.state === "ended") this.fail(at, `thread "${next.name}" to run next has ended`);
    if (next.state === "joining" && next !== c.joiner) {
      this.fail(at, `thread "${next.name}" to run next waits in join for another thread`);
    }
    this.log.line(`[${at}] the baton goes to ${next.name}`);
    const d = this.rt.mainDomain;
    const t = c.thread!;
    this.cur = d;
    d.returnFromC(); // Mutex.lock
    d.returnFromC(); // Condition.signal
    d.returnFromC(); // Mutex.unlock
    c.state = "ended";
    // Thread.create's wrapper: `check_memprof_cb ()` allocates, so that pending callbacks run.
    t.callstack = this.stackOf(t, []);
    this.guard(at, () => d.alloc(1));
    // The thread leaves the systhreads' ring (st_stubs.c, caml_thread_remove_and_free): the
    // thread after it there becomes the active one (`restore_runtime_state`, and so
    // `caml_memprof_enter_thread`, which draws a trigger) before its memprof state goes. A
    // thread is put after the one creating it, here the main thread: the ring is main, then
    // the threads from the last created to the first.
    d.switchTo(this.ringSuccessor(c));
    d.exitThread(t, { handOver: false });
    return next;
  }

  /** `act.yieldToNext`: the thread after the running one in `ring`. */
  /** `act.yieldToNext`: the first thread after the running one in `ring` that can take the
   * baton (created, not ended, not waiting in a join), or undefined when none can. */
  private nextInRing(ring: readonly string[]): string | undefined {
    const me = this.running?.name;
    const k = me === undefined ? -1 : ring.indexOf(me);
    if (k < 0) {
      throw new ScenarioError(
        this.s.name,
        "callback",
        `act.yieldToNext([${ring.join(", ")}]) in a callback of thread "${me}", not in the list`,
      );
    }
    for (let j = 1; j < ring.length; j++) {
      const c = this.ctxs.get(ring[(k + j) % ring.length]);
      if (c?.spawned && c.state !== "ended" && c.state !== "joining") return c.name;
    }
    return undefined;
  }

  /** The live thread after `c` in the systhreads' ring (see {@linkcode threadMainG}). */
  private ringSuccessor(c: ThreadCtx): Thread {
    const created = [...this.ctxs.values()].filter((x) => x.name !== "main");
    for (let k = created.indexOf(c) - 1; k >= 0; k--) {
      const x = created[k];
      if (x.state !== "ended") return x.thread!;
    }
    return this.rt.mainDomain.threads[0];
  }

  /** `act.yieldTo`: the thread running the callback blocks inside it. */
  private *yieldInCallbackG(name: string, head: string): Resumable<void> {
    if (this.cur !== this.rt.mainDomain || this.running === undefined) {
      throw new ScenarioError(
        this.s.name,
        "callback",
        `act.yieldTo("${name}") in a callback running on domain ${this.cur.id}: threads with ` +
          "programs are the main domain's",
      );
    }
    if (this.running.state === "ended") {
      // Thread.create's wrapper allocates after the program: the baton went on already.
      this.log.line(`${head} : no yield to ${name} (thread ${this.running.name} has ended)`);
      return;
    }
    this.log.line(`${head} : yield to ${name}`);
    yield* this.passBatonG(this.ctxFor(name, "callback"), "callback");
  }

  /** The domain named `name`, looked up once and again only after it stopped running. */
  private domainCache(name: string, at: string): () => Domain {
    let d: Domain | undefined;
    return () => {
      if (d === undefined || !d.alive) d = this.domain(name, at);
      return d;
    };
  }

  /** `build(t)` for thread `t`, computed again only when the thread or its enclosing calls
   * changed since the last time (allocation steps build their callstacks with this). */
  private frameCache<T>(build: (t: Thread) => T): (t: Thread) => T {
    let lastThread: Thread | undefined;
    let lastFs: FrameStack | undefined;
    let version = -1;
    let value!: T;
    return (t) => {
      if (t !== lastThread) {
        lastThread = t;
        lastFs = this.frameStack(t);
        version = -1;
      }
      if (lastFs!.version !== version) {
        version = lastFs!.version;
        value = build(t);
      }
      return value;
    };
  }

  private frameStack(t: Thread): FrameStack {
    let fs = this.frames.get(t);
    if (fs === undefined) {
      fs = { frames: [], version: ++frameVersions };
      this.frames.set(t, fs);
    }
    return fs;
  }

  /** The callstack of thread `t` for an allocation with extra frames `at` (innermost first). */
  private stackOf(t: Thread, at: readonly string[]): string[] {
    const outer = this.frameStack(t).frames;
    const harness = this.programThreads.has(t)
      ? this.harnessThread
      : t.domain === this.rt.mainDomain
      ? this.harnessMain
      : this.harnessSpawned;
    const all = outer.length === 0 && harness.length === 0
      ? at.slice()
      : [...harness, ...outer, ...at];
    return all.reverse();
  }

  /** The poll at a loop's back-edge on domain `d`. An OCaml exception a callback raises there
   * goes to the enclosing attempt, or, outside any, is returned: it leaves the loop. */
  private backEdgePoll(d: Domain): OCamlException | undefined {
    this.cur = d;
    try {
      d.poll();
    } catch (e) {
      if (
        e instanceof OCamlException && !(e instanceof OCamlFailure) &&
        !(e instanceof OCamlInvalidArgument) && this.tryDepth === 0
      ) return e;
      throw e;
    }
    return undefined;
  }

  /** The loop-index stack of domain `d` (created empty on first use). */
  private loopsOf(d: Domain): number[] {
    let l = this.loopStacks.get(d);
    if (l === undefined) {
      l = [];
      this.loopStacks.set(d, l);
    }
    return l;
  }

  private emit(ev: RunEvent): void {
    this.opts.onEvent?.(ev);
  }

  /** Emits a callback's record when the callback starts (so records keep the order in which
   * callbacks begin) and returns a function that fills in its outcome when it ends. */
  private reporter(ev: Exclude<RunEvent, { kind: "escaped" | "caught" }>): (
    outcome: "some" | "none" | "unit" | { raise: string },
  ) => void {
    if (this.opts.onEvent === undefined) return ignoreOutcome;
    const rec = { ...ev };
    this.emit(rec);
    return (outcome) => {
      (rec as { outcome: unknown }).outcome = outcome;
    };
  }

  private emitException(kind: "escaped" | "caught", exn: string): void {
    if (this.opts.onEvent === undefined) return;
    const d = this.cur;
    this.emit({ kind, domain: d.id, loops: this.loopsOf(d).slice(), exn });
  }

  /** Runs the actions of a callback; an exception they raise is reported to `onEvent` with
   * the callback's record `record` (which receives the outcome) before it propagates. */
  private actionsReporting(
    p: ProfileState,
    spec: CallbackSpec,
    n: number,
    head: string,
    report: (outcome: { raise: string }) => void,
  ): void {
    try {
      this.actions(p, spec, n, head);
    } catch (e) {
      if (e instanceof OCamlException) report({ raise: e.ocamlName });
      else if (e instanceof ThreadExit) report({ raise: "Thread.Exit" });
      throw e;
    }
  }

  // ---- memprof -------------------------------------------------------------------------------

  private startProfile(d: Domain, spec: ProfileSpec): void {
    const name = spec.name ?? `p${this.profiles.size + 1}`;
    const rate = this.opts.samplingRate ?? spec.samplingRate;
    const state: ProfileState = {
      name,
      spec,
      profile: undefined,
      calls: { allocMinor: 0, allocMajor: 0, promote: 0, deallocMinor: 0, deallocMajor: 0 },
      tracked: 0,
      ended: 0,
      live: new Set(),
    };
    if (this.profiles.size === 0) this.minorsAtFirstStart = this.rt.minorCollections;
    this.profiles.set(name, state);
    state.profile = d.memprofStart({
      samplingRate: rate,
      callstackSize: spec.callstackSize,
      tracker: this.tracker(state, spec.tracker),
    });
  }

  private tracker(p: ProfileState, t: TrackerSpec): Tracker<Tracked, Tracked> {
    const spec = (k: CallbackKind): CallbackSpec =>
      t[k] ?? { result: k.startsWith("dealloc") ? "none" : "track", actions: [] };
    const am = spec("allocMinor"), aj = spec("allocMajor"), pr = spec("promote");
    const dm = spec("deallocMinor"), dj = spec("deallocMajor");
    // In resumable runs, a callback that may pass the baton (act.yieldTo) returns memprof's
    // Blocking: its body, which memprof's resumable paths run.
    const blocks = (c: CallbackSpec) =>
      this.resumable &&
      c.actions.some(({ action }) => action.kind === "yieldTo" || action.kind === "yieldToNext");
    const resumable = <R>(r: Resumable<R>): R => new Blocking(r) as unknown as R;
    return {
      allocMinor: blocks(am)
        ? (info) => resumable(this.onAllocG(p, "allocMinor", am, info))
        : (info) => this.onAlloc(p, "allocMinor", am, info),
      allocMajor: blocks(aj)
        ? (info) => resumable(this.onAllocG(p, "allocMajor", aj, info))
        : (info) => this.onAlloc(p, "allocMajor", aj, info),
      promote: blocks(pr)
        ? (v) => resumable(this.onPromoteG(p, pr, v))
        : (v) => this.onPromote(p, pr, v),
      deallocMinor: blocks(dm)
        ? (v) => resumable(this.onDeallocG(p, "deallocMinor", dm, v))
        : (v) => this.onDealloc(p, "deallocMinor", dm, v),
      deallocMajor: blocks(dj)
        ? (v) => resumable(this.onDeallocG(p, "deallocMajor", dj, v))
        : (v) => this.onDealloc(p, "deallocMajor", dj, v),
    };
  }

  /** {@linkcode actionsReporting}, resumable: `act.yieldTo` blocks the callback's thread. */
  private *actionsReportingG(
    p: ProfileState,
    spec: CallbackSpec,
    n: number,
    head: string,
    report: (outcome: { raise: string }) => void,
  ): Resumable<void> {
    try {
      for (const { when, action } of spec.actions) {
        if (!fires(when, n)) continue;
        if (action.kind === "yieldTo") yield* this.yieldInCallbackG(action.thread, head);
        else if (action.kind === "yieldToNext") {
          // After its program ended, a thread no longer holds the baton (see yieldInCallbackG).
          const me = this.running;
          if (me?.state === "ended") {
            this.log.line(`${head} : no yield (thread ${me.name} has ended)`);
            continue;
          }
          const next = this.nextInRing(action.threads);
          if (next === undefined) this.log.line(`${head} : no thread to yield to`);
          else yield* this.yieldInCallbackG(next, head);
        } else this.doAction(p, action, head);
      }
    } catch (e) {
      if (e instanceof OCamlException) report({ raise: e.ocamlName });
      else if (e instanceof ThreadExit) report({ raise: "Thread.Exit" });
      throw e;
    }
  }

  /** Runs the actions of callback `spec` due at call number `n`. */
  private actions(p: ProfileState, spec: CallbackSpec, n: number, head: string): void {
    for (const { when, action } of spec.actions) {
      if (!fires(when, n)) continue;
      this.doAction(p, action, head);
    }
  }

  private doAction(p: ProfileState, a: CallbackAction, head: string): void {
    const d = this.cur;
    switch (a.kind) {
      case "raise":
        this.log.line(`${head} -> raise ${a.exn}`);
        throw new OCamlException(a.exn, a.exn);
      case "stop":
        this.log.line(`${head} : Gc.Memprof.stop`);
        d.memprofStop();
        return;
      case "start":
        this.log.line(`${head} : Gc.Memprof.start ${a.profile.name ?? ""}`.trimEnd());
        this.startProfile(d, a.profile);
        return;
      case "discard":
        this.log.line(`${head} : Gc.Memprof.discard ${p.name}`);
        d.memprofDiscard(p.profile!);
        return;
      case "alloc": {
        this.log.line(`${head} : alloc ${a.words}`);
        const addr = d.alloc(a.words);
        this.lifetimes.keeper(a.lifetime)?.(addr, a.words);
        return;
      }
      case "gc":
        this.log.line(`${head} : Gc.${a.what}`);
        return runGc(d, a.what);
      case "switchThread": {
        const t = this.threads.get(a.thread);
        if (t === undefined || !t.alive || t.domain !== d) {
          throw new ScenarioError(this.s.name, "callback", `cannot switch to thread "${a.thread}"`);
        }
        this.log.line(`${head} : switch to ${a.thread}`);
        d.switchTo(t);
        return;
      }
      case "exitThread":
        this.log.line(`${head} -> Thread.exit`);
        throw new ThreadExit();
      case "yieldTo":
      case "yieldToNext":
        // Resumable runs run them (actionsReportingG); the plain ones never have them.
        throw new ScenarioError(this.s.name, "callback", `act.${a.kind} in a plain run`);
    }
  }

  private where(): string {
    const loops = this.loopsOf(this.cur);
    // The trace's time base: µs since the start (the trace's event times).
    return `i=${loops.length === 0 ? "-" : loops.join(".")} t=${Math.floor(this.clockNs / 1000)} ${
      this.threadName(this.cur.current)
    }@${this.cur.id}`;
  }

  private onAlloc(
    p: ProfileState,
    kind: "allocMinor" | "allocMajor",
    spec: CallbackSpec,
    info: AllocationInfo,
  ): Tracked | undefined {
    const c = this.allocBegin(p, kind, info);
    this.actionsReporting(p, spec, c.n, c.head, c.report);
    return this.allocEnd(p, kind, spec, info, c);
  }

  private *onAllocG(
    p: ProfileState,
    kind: "allocMinor" | "allocMajor",
    spec: CallbackSpec,
    info: AllocationInfo,
  ): Resumable<Tracked | undefined> {
    const c = this.allocBegin(p, kind, info);
    yield* this.actionsReportingG(p, spec, c.n, c.head, c.report);
    return this.allocEnd(p, kind, spec, info, c);
  }

  /** An allocation callback, before its actions: counts, log head, record. */
  private allocBegin(
    p: ProfileState,
    kind: "allocMinor" | "allocMajor",
    info: AllocationInfo,
  ): CallbackStart {
    const n = ++p.calls[kind];
    this.callbackCounts[kind]++;
    this.samples += info.nSamples;
    const serial = ++this.serial;
    const src = SOURCE_NAMES[info.source];
    const head = `${this.where()} ${p.name} ${LOG_NAMES[kind]} #${serial} size=${info.size} ` +
      `n=${info.nSamples} src=${src} stack=[${callerFirst(info.callstack)}]`;
    this.log.fixture(
      `${this.iter} ${
        kind === "allocMinor" ? "minor" : "major"
      } size=${info.size} n=${info.nSamples}`,
      `${this.iter} ${LOG_NAMES[kind]} id=${this.iter}`,
    );
    const report = this.reporter({
      kind,
      domain: this.cur.id,
      loops: this.loopsOf(this.cur).slice(),
      size: info.size,
      nSamples: info.nSamples,
      source: src,
      callstack: info.callstack,
      id: serial,
      outcome: "none",
    });
    return { n, head, report, serial };
  }

  /** An allocation callback, after its actions: what it returns. */
  private allocEnd(
    p: ProfileState,
    kind: "allocMinor" | "allocMajor",
    spec: CallbackSpec,
    info: AllocationInfo,
    { head, report, serial }: CallbackStart,
  ): Tracked | undefined {
    if (spec.result === "none") {
      this.log.line(`${head} -> None`);
      report("none");
      return undefined;
    }
    const obj = this.tracer.alloc(this.cur.id, info, kind === "allocMajor");
    if (obj === undefined && this.tracer.busy) {
      this.log.line(`${head} -> None (tracer busy)`);
      report("none");
      return undefined;
    }
    report("some");
    const v: Tracked = { obj, domain: this.cur.id, iter: this.iter, serial, profile: p };
    this.cur.alloc(1); // the `Some v` the callback returns
    p.tracked++;
    p.live.add(v);
    this.log.line(`${head} -> Some #${serial}${obj === undefined ? "" : ` id=${obj}`}`);
    return v;
  }

  private onPromote(p: ProfileState, spec: CallbackSpec, v: Tracked): Tracked | undefined {
    const c = this.promoteBegin(p, v);
    this.actionsReporting(p, spec, c.n, c.head, c.report);
    return this.promoteEnd(spec, v, c);
  }

  private *onPromoteG(
    p: ProfileState,
    spec: CallbackSpec,
    v: Tracked,
  ): Resumable<Tracked | undefined> {
    const c = this.promoteBegin(p, v);
    yield* this.actionsReportingG(p, spec, c.n, c.head, c.report);
    return this.promoteEnd(spec, v, c);
  }

  private promoteBegin(p: ProfileState, v: Tracked): CallbackStart {
    const n = ++p.calls.promote;
    this.callbackCounts.promote++;
    const head = `${this.where()} ${p.name} promote #${v.serial}`;
    this.log.fixture(undefined, `${this.iter} promote id=${v.iter}`);
    const report = this.reporter({
      kind: "promote",
      domain: this.cur.id,
      loops: this.loopsOf(this.cur).slice(),
      id: v.serial,
      outcome: "none",
    });
    return { n, head, report, serial: v.serial };
  }

  private promoteEnd(spec: CallbackSpec, v: Tracked, { head, report }: CallbackStart) {
    if (v.obj !== undefined) this.tracer.promote(v.domain, v.obj);
    if (spec.result === "none") {
      v.profile.ended++;
      v.profile.live.delete(v);
      this.log.line(`${head} -> None`);
      report("none");
      return undefined;
    }
    report("some");
    this.cur.alloc(1); // `Some v`
    this.log.line(`${head} -> Some #${v.serial}`);
    return v;
  }

  private onDealloc(p: ProfileState, kind: CallbackKind, spec: CallbackSpec, v: Tracked): void {
    const c = this.deallocBegin(p, kind, v);
    this.actionsReporting(p, spec, c.n, c.head, c.report);
    this.deallocEnd(v, c);
  }

  private *onDeallocG(
    p: ProfileState,
    kind: CallbackKind,
    spec: CallbackSpec,
    v: Tracked,
  ): Resumable<void> {
    const c = this.deallocBegin(p, kind, v);
    yield* this.actionsReportingG(p, spec, c.n, c.head, c.report);
    this.deallocEnd(v, c);
  }

  private deallocBegin(p: ProfileState, kind: CallbackKind, v: Tracked): CallbackStart {
    const n = ++p.calls[kind];
    this.callbackCounts[kind]++;
    const head = `${this.where()} ${p.name} ${LOG_NAMES[kind]} #${v.serial}`;
    this.log.fixture(undefined, `${this.iter} ${LOG_NAMES[kind]} id=${v.iter}`);
    // The block's tracking ends here whatever the callback does.
    v.profile.ended++;
    v.profile.live.delete(v);
    // Like the other callbacks: the scenario's actions first, then the tracer's write.
    const report = this.reporter({
      kind: kind as "deallocMinor" | "deallocMajor",
      domain: this.cur.id,
      loops: this.loopsOf(this.cur).slice(),
      id: v.serial,
      outcome: "unit",
    });
    return { n, head, report, serial: v.serial };
  }

  private deallocEnd(v: Tracked, { head, report }: CallbackStart): void {
    report("unit");
    if (v.obj !== undefined) this.tracer.collect(v.domain, v.obj);
    this.log.line(head);
  }

  // ---- runtime events ------------------------------------------------------------------------

  private writeUserEvent(d: Domain, name: string, ev: UserEventSpec): void {
    let e = this.userEvents.get(name);
    if (e === undefined) {
      const type = ev.type === "unit"
        ? Type.unit
        : ev.type === "int"
        ? Type.int
        : ev.type === "span"
        ? Type.span
        : bytesType();
      e = this.ring.registerUserEvent(name, type as never) as UserEvent<unknown>;
      this.userEvents.set(name, e);
    }
    switch (ev.type) {
      case "unit":
        return this.ring.writeUser(d.id, e as UserEvent<void>);
      case "int":
        return this.ring.writeUser(d.id, e, ev.value);
      case "span":
        return this.ring.writeUser(d.id, e, ev.phase);
      case "custom":
        return this.ring.writeUser(d.id, e, Uint8Array.from(ev.bytes));
    }
  }

  // ---- outputs -------------------------------------------------------------------------------

  private logFacts(): LogHeaderFacts {
    return {
      samplingRate: this.traceRate,
      iterations: this.mainLoop.count,
      loopDomain: this.mainLoop.domain,
      minorsDuringLoop: this.mainLoop.minors,
      minorsDuringProfile: this.rt.minorCollections - this.minorsAtFirstStart,
    };
  }

  private minorsAtFirstStart = 0;

  private summary(traceEvents: number, traceBytes: number, ringBytes: number): Summary {
    const balance = [...this.profiles.values()].map((p) => ({
      profile: p.name,
      tracked: p.tracked,
      ended: p.ended,
      live: p.live.size,
      ok: p.tracked === p.ended + p.live.size,
    }));
    return {
      scenario: this.s.name,
      seed: this.seed,
      steps: this.step,
      allocations: this.allocations,
      wordsAllocated: this.words,
      minorCollections: this.rt.minorCollections,
      majorCycles: this.rt.majorCycles,
      callbacks: { ...this.callbackCounts },
      samples: this.samples,
      exceptions: this.exceptions,
      balance,
      orphansAdopted: {
        tables: this.rt.memprofShared.stats.orphanTablesAdopted,
        entries: this.rt.memprofShared.stats.orphanEntriesAdopted,
      },
      trace: { events: traceEvents, bytes: traceBytes },
      ring: { bytes: ringBytes, lostWords: this.lostWords },
      tracer: { ...this.tracer.stats },
    };
  }
}

/** A thread of a resumable run, before it runs. */
function newCtx(name: string, program: GOp | undefined): ThreadCtx {
  return {
    name,
    thread: undefined,
    spawned: program === undefined,
    program,
    gen: undefined,
    state: "new",
    loops: [],
    tryDepth: 0,
    iter: 0,
    handedBy: undefined,
    joiner: undefined,
  };
}

/** {@linkcode runGc}, resumable. */
function runGcG(d: Domain, what: GcKind): Resumable<void> {
  switch (what) {
    case "minor":
      return d.minorGcG();
    case "majorSlice":
      return d.majorSliceG();
    case "major":
      return d.majorGcG();
    case "fullMajor":
      return d.fullMajorG();
    case "compact":
      return d.fullMajorG(true);
  }
}

/** The collection `what` on domain `d`, as the `Gc` module function of that name. */
function runGc(d: Domain, what: GcKind): void {
  switch (what) {
    case "minor":
      return d.minorGc();
    case "majorSlice":
      return d.majorSlice();
    case "major":
      return d.majorGc();
    case "fullMajor":
      return d.fullMajor();
    case "compact":
      return d.compact();
  }
}

function fires(t: Trigger, n: number): boolean {
  switch (t.kind) {
    case "always":
      return true;
    case "nth":
      return n === t.n;
    case "every":
      return n >= t.offset && (n - t.offset) % t.period === 0;
  }
}

function firstProfileRate(steps: readonly Step[]): number | undefined {
  for (const st of steps) {
    if (st.kind === "memprofStart") return st.profile.samplingRate;
    if (
      st.kind === "repeat" || st.kind === "call" || st.kind === "blocking" ||
      st.kind === "attempt" || st.kind === "threadSpawn"
    ) {
      const r = firstProfileRate(st.body);
      if (r !== undefined) return r;
    }
  }
  return undefined;
}

/** Leaf steps the scenario will execute (for progress). */
export function countLeafSteps(steps: readonly Step[]): number {
  let n = 0;
  for (const st of steps) {
    if (st.kind === "repeat") n += st.count * countLeafSteps(st.body);
    else if (st.kind === "call" || st.kind === "attempt" || st.kind === "when") {
      n += countLeafSteps(st.body);
    } else if (st.kind === "blocking" || st.kind === "threadSpawn") {
      n += 1 + countLeafSteps(st.body); // a thread's program: its steps run too
    } else n += 1;
  }
  return n;
}

/** The `events dump` text of `image` (as `dumpImage` makes it) handed to `write` in chunks of
 * about 64 Ki characters. */
function writeImageDump(image: Uint8Array, write: (chunk: string) => void): void {
  let parts: string[] = [];
  let size = 0;
  new RuntimeEventsCursor(image).readAll(dumpCallbacks((line) => {
    parts.push(line, "\n");
    size += line.length + 1;
    if (size >= 1 << 16) {
      write(parts.join(""));
      parts = [];
      size = 0;
    }
  }));
  if (parts.length > 0) write(parts.join(""));
}

/** A callstack as the trace shows it: the outermost frame first. */
function callerFirst(frames: readonly string[]): string {
  let out = "";
  for (let k = frames.length - 1; k >= 0; k--) {
    out += k === frames.length - 1 ? frames[k] : " " + frames[k];
  }
  return out;
}
