/**
 * The engine: runs a scenario through the simulated runtime (lib/runtime) and memprof
 * (lib/memprof), records runtime_events in a ring image (lib/runtime_events), and traces every
 * domain into a memtrace `.ctf` (lib/tracer). Everything runs on a virtual clock with seeded
 * generators: the same scenario and seed give byte-identical outputs.
 *
 * Steps are compiled once into closures; a `repeat` runs its body's closures in a plain loop, so
 * a loop of small allocations costs little more than the runtime's own allocation path.
 * @module
 */
import { type Domain, Runtime, type Thread } from "../runtime/mod.ts";
import {
  type AllocationInfo,
  checkDomainInvariants,
  OCamlException,
  OCamlFailure,
  OCamlInvalidArgument,
  type Profile,
  ThreadExit,
  type Tracker,
} from "../memprof/mod.ts";
import {
  bytesType,
  dumpImage,
  RuntimeEventsCursor,
  RuntimeEventsProducer,
  Type,
  type UserEvent,
} from "../runtime_events/mod.ts";
import { dumpTrace, MemorySink, Reader } from "../memtrace/mod.ts";
import { Tracer } from "../tracer/mod.ts";
import { CallbackLog } from "./callback_log.ts";
import type { CallbackKind, RunEvent, RunOptions, RunResult, Summary } from "./result.ts";
import { ScenarioError } from "./errors.ts";
import { ScenarioRng, sizeSource } from "./rng.ts";
import { Lifetimes } from "./lifetimes.ts";
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

/** The frames of a thread's enclosing `call` steps, outermost first. `version` changes at every
 * push and pop, so that allocation steps can reuse the callstack they built last time. */
interface FrameStack {
  frames: string[];
  version: number;
}

let frameVersions = 0;

/** Runs a (validated) scenario. Throws {@linkcode ScenarioError} when a step fails. */
export function runScenario(sc: Scenario, options: RunOptions = {}): RunResult {
  return new Engine(sc, options).run();
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

  constructor(private readonly sc: Scenario, private readonly opts: RunOptions) {
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
      gcTime: this.opts.gcTime,
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
    const program = this.compile(this.sc.steps, true);
    program();
    // Leave nothing pending: callbacks of the last steps run at a final poll of each domain.
    for (const d of this.domains.values()) {
      if (!d.alive) continue;
      this.cur = d;
      this.guard("end", () => d.processPendingActions());
    }
    this.tracer.close();
    this.opts.onProgress?.(this.step, this.totalSteps);
    const ctf = this.traceSink.bytes().slice();
    // One read of the trace gives both its dump and its event count.
    const dumpLines: string[] = [];
    const traceEvents = dumpTrace(Reader.fromBytes(ctf), (line) => dumpLines.push(line));
    const traceDump = dumpLines.join("\n") + "\n";
    // Without events.start() there is no ring file, as in OCaml without OCAML_RUNTIME_EVENTS_START.
    const eventsImage = this.ring.started ? this.ring.bytes.slice() : new Uint8Array(0);
    const eventsDump = this.ring.started ? dumpImage(eventsImage) : "";
    if (this.ring.started) {
      new RuntimeEventsCursor(eventsImage).readPoll({
        lostEvents: (_d, words) => {
          this.lostWords += words;
        },
      });
    }
    return {
      scenario: this.sc,
      ctf,
      traceDump,
      eventsImage,
      eventsDump,
      callbackLog: this.formatLog(),
      summary: this.summary(traceEvents, ctf.length, eventsImage.length),
    };
  }

  /** Runs `f` for step `at`: OCaml exceptions escaping it are logged (the OCaml program would
   * have them propagate to its handler); anything else aborts the run with the step named. */
  private guard(at: string, f: () => void): void {
    try {
      f();
    } catch (e) {
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
        return this.domainOp(st.domain, at, (d) => {
          try {
            this.rt.terminateDomain(d);
          } finally {
            this.cur = this.rt.mainDomain;
          }
        });
      case "threadCreate":
        return () => {
          this.tick();
          const d = this.domain(st.domain, at);
          const t = d.createThread(d.current.callstack);
          this.nameThread(t, st.thread);
          this.frames.set(t, {
            frames: [...this.frameStack(d.current).frames],
            version: ++frameVersions,
          });
        };
      case "threadSwitch":
        return this.domainOp(st.domain, at, (d) => d.switchTo(this.liveThread(st.thread, at)));
      case "threadExit":
        return this.domainOp(st.domain, at, () => this.liveThread(st.thread, at).exit());
      case "blocking": {
        const body = this.compile(st.body);
        return this.domainOp(st.domain, at, (d) => d.blockingSection(body));
      }
      case "memprofStart":
        return this.domainOp(st.domain, at, (d) => this.startProfile(d, st.profile));
      case "memprofStop":
        return this.domainOp(st.domain, at, (d) => d.memprofStop());
      case "memprofDiscard":
        return this.domainOp(st.domain, at, (d) => {
          const p = this.profiles.get(st.profile)?.profile;
          if (p === undefined) this.fail(at, `profile "${st.profile}" was never started`);
          d.memprofDiscard(p);
        });
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
      case "join":
        return this.domainOp(st.domain, at, (d) => {
          const target = this.domain(st.target, at);
          this.cur = target;
          try {
            this.rt.terminateDomain(target);
          } finally {
            this.cur = d;
          }
        });
      case "extAlloc": {
        const bytes = sizeSource(st.bytes, this.rng);
        const lifetime = st.lifetime;
        return () => {
          this.tick();
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
      case "userEvent":
        return this.domainOp(st.domain, at, (d) => {
          this.writeUserEvent(d, st.name, st.event);
          d.returnFromC(); // Runtime_events.User.write is a C primitive
        });
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
    const harness = t.domain === this.rt.mainDomain ? this.harnessMain : this.harnessSpawned;
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
    return {
      allocMinor: (info) => this.onAlloc(p, "allocMinor", am, info),
      allocMajor: (info) => this.onAlloc(p, "allocMajor", aj, info),
      promote: (v) => this.onPromote(p, pr, v),
      deallocMinor: (v) => this.onDealloc(p, "deallocMinor", dm, v),
      deallocMajor: (v) => this.onDealloc(p, "deallocMajor", dj, v),
    };
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
    }
  }

  private where(): string {
    const loops = this.loopsOf(this.cur);
    return `i=${loops.length === 0 ? "-" : loops.join(".")} ${
      this.threadName(this.cur.current)
    }@${this.cur.id}`;
  }

  private onAlloc(
    p: ProfileState,
    kind: "allocMinor" | "allocMajor",
    spec: CallbackSpec,
    info: AllocationInfo,
  ): Tracked | undefined {
    const n = ++p.calls[kind];
    this.callbackCounts[kind]++;
    this.samples += info.nSamples;
    const serial = ++this.serial;
    const src = SOURCE_NAMES[info.source];
    const head = `${this.where()} ${p.name} ${LOG_NAMES[kind]} #${serial} size=${info.size} ` +
      `n=${info.nSamples} src=${src} stack=[${info.callstack.join(" ")}]`;
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
    this.actionsReporting(p, spec, n, head, report);
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
    this.actionsReporting(p, spec, n, head, report);
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
    this.actionsReporting(p, spec, n, head, report);
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

  private formatLog(): string {
    return this.log.text({
      samplingRate: this.traceRate,
      iterations: this.mainLoop.count,
      loopDomain: this.mainLoop.domain,
      minorsDuringLoop: this.mainLoop.minors,
      minorsDuringProfile: this.rt.minorCollections - this.minorsAtFirstStart,
    });
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
      st.kind === "repeat" || st.kind === "call" || st.kind === "blocking" || st.kind === "attempt"
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
    } else if (st.kind === "blocking") n += 1 + countLeafSteps(st.body);
    else n += 1;
  }
  return n;
}
