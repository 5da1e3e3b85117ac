/**
 * Systhreads with programs of their own, in resumable runs: the baton. One thread of the main
 * domain runs at a time; it runs until it blocks: it passes the baton (`yieldTo`, `join`,
 * `act.yieldTo`) and waits for its turn in `Condition.wait`, as the exported program does
 * (lib/export/_prelude.ts, `th_pass`). What the runtime sees is what OCaml 5.3 does there: the C
 * calls return (`RET_FROM_C_CALL`), `Condition.wait` enters a blocking section
 * (`caml_enter_blocking_section` does the GC work due), and the thread that takes the lock next
 * leaves its own (`caml_thread_leave_blocking_section`: `caml_memprof_enter_thread`, which draws
 * a new sampling trigger).
 *
 * Each thread's program is compiled as any step is: run as plain code as far as it can, it
 * leaves a generator where it blocks (`Op`, lib/scenario/engine/_context.ts), so that a thread
 * that blocks, however deep in the runtime, is suspended where it is, and {@linkcode Baton.run}
 * resumes it when the baton comes back.
 * @module
 */
import { type Domain, RuntimePhase, type Thread } from "../../runtime/mod.ts";
import { stdlibFrames } from "./_frames.ts";
import {
  OCamlException,
  OCamlFailure,
  OCamlInvalidArgument,
  type Resumable,
} from "../../memprof/mod.ts";
import type { StepOf } from "../walk.ts";
import { finalPolls } from "./_compile_domains.ts";
import { ActionError } from "./_action_error.ts";
import type { Op, Rest, RunContext } from "./_context.ts";
import {
  type BodyCompiler,
  domainOp,
  firstOf,
  restG,
  type Steps,
  thenG,
  tickedOp,
} from "./_step.ts";

/** Marking work a systhread's end adds to every later major cycle of the exported program
 * (see the end of `Baton`'s thread lives). */
const ENDED_THREAD_MARK = 6;

/** The step kinds compiled here. */
export type ThreadProgramKind = "threadSpawn" | "yieldTo" | "threadJoin" | "threadYield";

/** A thread of a resumable run: the main thread (whose program is the scenario's top-level
 * steps) or a systhread with a program of its own, and what the engine keeps per thread. */
interface ThreadCtx {
  readonly name: string;
  /** The domain whose thread it is. */
  readonly domain: string;
  /** The runtime's thread (created before the run for the main domain's, at their `thread`
   * step for a spawned domain's). */
  thread: Thread | undefined;
  /** Its `thread` step ran: the baton may pass to it. */
  spawned: boolean;
  /** Its compiled program (none for the main thread: the top-level steps). */
  readonly program: Op | undefined;
  /** Where its program stands, once it started. */
  gen: Resumable<ThreadCtx | undefined> | undefined;
  /** `blocked`: waits for its turn; `joining`: waits for `Thread.join` to return. */
  state: "new" | "running" | "blocked" | "joining" | "ended";
  /** Its loop indices (the running thread's are its domain's, see `RunContext.loopsOf`). */
  loops: number[];
  /** `attempt`s open around its current step. */
  tryDepth: number;
  /** Its current loop iteration (fixture logs). */
  iter: number;
  /** The thread that last passed it the baton (its program's end gives it back). */
  handedBy: ThreadCtx | undefined;
  /** The thread waiting in `join` for its end. */
  joiner: ThreadCtx | undefined;
}

/** The compilers of the steps of thread programs; `body` compiles a program, which goes to
 * `baton`. Plain runs have none (no baton): validation and `runScenario` send them to the
 * resumable form. */
export function threadProgramSteps(
  run: RunContext,
  baton: Baton | undefined,
  body: BodyCompiler,
): Steps<ThreadProgramKind> {
  if (baton === undefined) {
    const refuse = (st: StepOf<ThreadProgramKind>): Op => {
      throw new Error(`step ${st.at}: a ${st.kind} step in a plain run`);
    };
    return { threadSpawn: refuse, yieldTo: refuse, threadJoin: refuse, threadYield: refuse };
  }
  return {
    threadSpawn: (st) => {
      baton.add(st.thread, st.domain, body(st.body));
      return st.domain === "main"
        ? tickedOp(run, st.at, () => baton.spawn(st))
        : domainOp(run, st, (d) => firstOf(baton.createOnDomainG(st, d)));
    },
    yieldTo: (st) => () => firstOf(baton.yieldToG(st)),
    threadJoin: (st) => () => firstOf(baton.threadJoinG(st)),
    threadYield: (st) => domainOp(run, st, (d) => firstOf(threadYieldG(d))),
  };
}

/** The main thread's program: the top-level steps `top`, then the final poll of each domain
 * ({@linkcode finalPolls}), whose callbacks may pass the baton too; as far as it runs as plain
 * code (a plain run drives what is left to its end at once). */
export function mainProgram(run: RunContext, top: Op): Rest {
  const rest = top();
  return rest === null ? finalPolls(run) : thenG(rest, () => finalPolls(run));
}

/** `Thread.yield`: `caml_process_pending_actions`; no thread waits for the lock. */
function* threadYieldG(d: Domain): Resumable<void> {
  yield* d.processPendingActionsG();
  d.returnFromC();
}

/** The threads of a resumable run and the batons they pass: one per domain, passed between the
 * domain's main thread (which runs the domain's top-level steps) and its threads with programs.
 * One generator runs at a time: the top-level steps (every domain's, in order), or the program
 * of the thread holding its domain's baton, while the top level waits in the step that passed
 * it. */
export class Baton {
  readonly #run: RunContext;
  /** The threads, by name: those with programs in the order of their `thread` steps, then
   * each domain's main thread (named after the domain) once it took part. */
  readonly #ctxs = new Map<string, ThreadCtx>();
  /** The thread with a program running, or undefined while the top-level steps run (then each
   * domain's baton is with its main thread). */
  #current: ThreadCtx | undefined;
  /** The thread that passed its baton on, or whose program ended, last. */
  #from: ThreadCtx | undefined;

  /** The baton of resumable run `run`. */
  constructor(run: RunContext) {
    this.#run = run;
  }

  /** Thread `name` of domain `domain` runs `program` (compiled from its `thread` step). */
  add(name: string, domain: string, program: Op): void {
    this.#ctxs.set(name, newCtx(name, domain, program));
  }

  /** Runs the top-level program and the threads it passes the baton to, until it ends. */
  run(top: Op): void {
    const run = this.#run;
    this.#createProgramThreads();
    const md = run.rt.mainDomain;
    const main = this.#top("main");
    main.thread = md.current;
    run.loopStacks.set(md, main.loops);
    run.threadsOfEndingDomain = (name, at) => this.#checkEnded(name, at);
    const topGen = this.#mainProgramG(top);
    let gen = topGen;
    for (;;) {
      const r = gen.next();
      let next: ThreadCtx;
      if (r.done) {
        if (gen === topGen) break;
        next = r.value!;
      } else next = r.value as ThreadCtx;
      // Each thread has its own attempts, loops and iteration.
      const from = this.#from!;
      const fromDomain = this.#domainOf(from);
      from.tryDepth = run.tryDepth;
      from.iter = run.iter;
      from.loops = run.loopsOf(fromDomain);
      const nd = this.#domainOf(next);
      run.tryDepth = next.tryDepth;
      run.iter = next.iter;
      run.loopStacks.set(nd, next.loops);
      run.cur = nd;
      if (next.program === undefined) {
        this.#current = undefined;
        gen = topGen;
      } else {
        this.#current = next;
        gen = next.gen ??= this.#threadMainG(next);
      }
    }
    // A spawned domain still running at the end is joined there: its threads too.
    for (const [name, d] of run.names.domains) {
      if (name !== "main" && d.alive) this.#checkEnded(name, "end");
    }
  }

  /** The main thread's program ({@linkcode mainProgram}): its end ends the run. */
  *#mainProgramG(top: Op): Resumable<ThreadCtx | undefined> {
    yield* restG(mainProgram(this.#run, top));
    return undefined;
  }

  /** The context of domain `name`'s main thread (made at its first use). */
  #top(name: string): ThreadCtx {
    let c = this.#ctxs.get(name);
    if (c === undefined) {
      c = newCtx(name, name, undefined);
      c.state = "running";
      this.#ctxs.set(name, c);
    }
    c.thread ??= this.#run.names.threads.get(name);
    return c;
  }

  /** The thread holding domain `domain`'s baton. */
  #me(domain: string): ThreadCtx {
    const c = this.#current;
    return c !== undefined && c.domain === domain ? c : this.#top(domain);
  }

  /** The runtime's domain of thread `c`. */
  #domainOf(c: ThreadCtx): Domain {
    return this.#run.names.domains.get(c.domain)!;
  }

  /** The scenario's name of domain `d`. */
  #nameOf(d: Domain): string {
    for (const [name, x] of this.#run.names.domains) if (x === d) return name;
    throw new Error(`internal error: domain ${d.id} has no name`);
  }

  /** The `thread` step of a thread with a program of the main domain (created before the run):
   * from now on the baton may pass to it. */
  spawn(st: StepOf<"threadSpawn">): void {
    this.#run.domain(st.domain, st.at);
    this.#ctxs.get(st.thread)!.spawned = true;
  }

  /**
   * `Thread.create` of every thread with a program of the main domain, before the run, in the
   * order of their `thread` steps, each then waiting for its first turn: as the exported
   * program does (it creates them during its initialisation, and then stops the tick thread; a
   * thread created during the run could take the lock at any blocking section, a race). Their
   * memprof states are empty until they run; what their existence changes is which thread the
   * systhreads' ring makes active when one ends (see {@linkcode #threadMainG}).
   */
  #createProgramThreads(): void {
    const run = this.#run;
    const d = run.rt.mainDomain;
    for (const c of this.#ctxs.values()) {
      if (c.program === undefined || c.domain !== "main") continue;
      const t = d.createThread();
      run.nameThread(t, c.name);
      run.frames.markProgram(t);
      c.thread = t;
    }
  }

  /**
   * The `thread` step of a thread with a program of spawned domain `d`: what the exported
   * program's `th_create` does there, sampling as the domain's profile does (the frames and
   * sizes are what OCaml 5.3.0 showed, docs/probes/thread_on_spawned_domain.ml):
   *
   * - `Thread.create`'s closure `[code; info; fn; arg]`, 4 words, allocated in OCaml code (its
   *   callback runs at once); `caml_thread_new` (C, the closure its local root) links the new
   *   thread into the domain's ring after the running one, starts the tick thread, and makes
   *   the descriptor: the status (`caml_threadstatus_new`, a custom block of 2 words), then
   *   `caml_alloc_3`'s `[id; closure; status]`, both allocated from C (their callbacks wait for
   *   a poll). The harness keeps the descriptor (`th_handle`) for the rest of the run.
   * - The wait for the thread to park: the domain's mutex, then `Condition.wait` (a blocking
   *   section). The new thread takes the lock (`caml_memprof_enter_thread`), runs
   *   `th_start_spawned` (C calls only) and waits for its first turn in `Condition.wait` of its
   *   own: the baton may pass to it from then on. The creator takes the lock back, releases
   *   the mutex, `caml_thread_cleanup` stops the tick thread (C calls), and it polls: the
   *   callbacks of the two blocks from C run there.
   *
   * A callback raising at that poll leaves the thread parked, and the exception goes to the
   * step.
   */
  *createOnDomainG(st: StepOf<"threadSpawn">, d: Domain): Resumable<void> {
    const run = this.#run;
    const c = this.#ctxs.get(st.thread)!;
    const creator = d.current;
    const harness = run.opts.exportHarness;
    // Thread.create (its closure), then caml_thread_new, called from Thread.create, itself
    // called from the harness's th_create.
    creator.callstack = run.frames.stackOf(creator, stdlibFrames(harness, CREATE_FRAMES));
    const closure = run.rt.root(yield* d.allocG(4), 4, { local: true });
    let t: Thread;
    try {
      creator.callstack = run.frames.stackOf(creator, stdlibFrames(harness, CREATE_FRAMES));
      t = d.createThread();
      run.nameThread(t, c.name);
      run.frames.markProgram(t);
      c.thread = t;
      // Both kept for the rest of the run (th_handle holds the descriptor): roots never
      // released.
      run.rt.root(d.allocFromRuntime(2), 2); // caml_threadstatus_new
      run.rt.root(d.allocFromRuntime(3, false), 3); // caml_alloc_3
    } finally {
      closure.release();
    }
    d.returnFromC(); // Thread.create
    d.returnFromC(); // Mutex.lock
    // Condition.wait th_parked_cond: the new thread runs to its park.
    run.rt.events.beginPhase(d.id, RuntimePhase.EV_DOMAIN_CONDITION_WAIT);
    d.enterBlockingSection();
    d.switchTo(t); // caml_thread_start: thread_init_current
    d.returnFromC(); // th_start: Mutex.lock
    d.returnFromC(); // Condition.broadcast
    run.rt.events.beginPhase(d.id, RuntimePhase.EV_DOMAIN_CONDITION_WAIT);
    d.enterBlockingSection(); // th_wait: Condition.wait of its own
    c.spawned = true;
    d.switchTo(creator);
    run.rt.events.endPhase(d.id, RuntimePhase.EV_DOMAIN_CONDITION_WAIT);
    d.returnFromC(); // Condition.wait
    d.returnFromC(); // Mutex.unlock
    d.returnFromC(); // thread_cleanup
    yield* d.pollG(); // Sys.poll_actions
  }

  /** A domain ends at step `at`: each of its threads with a program must have ended (OCaml's
   * `caml_thread_domain_stop_hook` joins those still in the domain's ring, and a thread
   * waiting for its turn would be waited for forever). */
  #checkEnded(domain: string, at: string): void {
    for (const c of this.#ctxs.values()) {
      if (c.program === undefined || c.domain !== domain || !c.spawned) continue;
      if (c.state !== "ended") {
        this.#run.fail(
          at,
          `thread "${c.name}" of domain "${domain}" has not ended when its domain ends: ` +
            "OCaml joins a domain's threads then (caml_thread_domain_stop_hook), and this one " +
            "would wait for its turn for ever; join it, or pass it the baton until its program " +
            "ends",
        );
      }
    }
  }

  /** The context of thread `name`, to which a thread of domain `domain` may pass the baton
   * (`at`: the step passing it; undefined inside a callback). */
  #ctxFor(name: string, domain: string, at: string | undefined): ThreadCtx {
    const c = this.#ctxs.get(name) ??
      (this.#run.names.domains.has(name) ? this.#top(name) : undefined);
    if (c === undefined) this.#fail(at, `no thread "${name}" with a program`);
    if (c.domain !== domain) {
      this.#fail(
        at,
        `"${name}" is a thread of domain "${c.domain}": the baton passes between the threads ` +
          `of one domain ("${domain}" here)`,
      );
    }
    if (!c.spawned) this.#fail(at, `thread "${name}" is not created yet`);
    return c;
  }

  /** Fails step `at`, or the callback action running (`at` undefined). */
  #fail(at: string | undefined, problem: string): never {
    if (at === undefined) throw new ActionError(problem);
    this.#run.fail(at, problem);
  }

  /**
   * Thread `me` passes its domain's baton to `to` and waits for its turn: `th_pass` of the
   * exported program — `Mutex.lock`, `Condition.signal`, `Condition.wait` (a blocking section),
   * then, its turn come, `Mutex.unlock`. With `joining`, it waits for `to` to end.
   */
  *#passBatonG(
    me: ThreadCtx,
    to: ThreadCtx,
    { at, joining }: { readonly at: string | undefined; readonly joining: boolean },
  ): Resumable<void> {
    if (to === me) this.#fail(at, `thread "${me.name}" passes the baton to itself`);
    if (to.state === "ended") this.#fail(at, `thread "${to.name}" has ended`);
    if (to.state === "joining") {
      this.#fail(at, `thread "${to.name}" waits in join for another thread to end`);
    }
    const d = this.#domainOf(me);
    d.returnFromC(); // Mutex.lock
    d.returnFromC(); // Condition.signal
    // caml_ml_condition_wait (runtime/sync.c): EV_DOMAIN_CONDITION_WAIT around the blocking
    // section, ended by the thread when it wakes up (resumeThread).
    this.#run.rt.events.beginPhase(d.id, RuntimePhase.EV_DOMAIN_CONDITION_WAIT);
    d.enterBlockingSection(); // Condition.wait
    to.handedBy = me;
    me.state = joining ? "joining" : "blocked";
    this.#from = me;
    yield to;
    // The baton is back.
    me.state = "running";
    this.#resumeThread(me);
  }

  /** A thread's wait for its turn ends: it leaves `Condition.wait`'s blocking section, taking
   * the lock (`caml_memprof_enter_thread`), and the C calls return. */
  #resumeThread(c: ThreadCtx): void {
    const d = this.#domainOf(c);
    d.switchTo(c.thread!);
    this.#run.rt.events.endPhase(d.id, RuntimePhase.EV_DOMAIN_CONDITION_WAIT);
    d.returnFromC(); // Condition.wait
    d.returnFromC(); // Mutex.unlock
  }

  /** The `yieldTo` step. */
  *yieldToG(st: StepOf<"yieldTo">): Resumable<void> {
    const run = this.#run;
    yield* restG(run.tick(st.at));
    run.cur = run.domain(st.domain, st.at);
    const me = this.#me(st.domain);
    run.log.line(`[${st.at}] ${me.name} yields to ${st.thread}`);
    const to = this.#ctxFor(st.thread, st.domain, st.at);
    yield* this.#passBatonG(me, to, { at: st.at, joining: false });
  }

  /** `Thread.join`: the thread passes the baton to `name` until it ends (unless it did), then
   * `caml_thread_join` waits for its end in a blocking section. */
  *threadJoinG(st: StepOf<"threadJoin">): Resumable<void> {
    const run = this.#run;
    yield* restG(run.tick(st.at));
    const d = run.domain(st.domain, st.at);
    run.cur = d;
    const target = this.#ctxFor(st.thread, st.domain, st.at);
    const me = this.#me(st.domain);
    run.log.line(`[${st.at}] ${me.name} joins ${st.thread}`);
    if (target.state !== "ended") {
      target.joiner = me;
      yield* this.#passBatonG(me, target, { at: st.at, joining: true });
    }
    d.enterBlockingSection();
    d.switchTo(me.thread!);
    d.returnFromC();
  }

  /** A thread's life: its first turn, its program, then its end (`th_end` gives the baton to
   * the thread joining it, or back to the one that last passed it; `Thread.create`'s wrapper
   * allocates a `ref ()`; the thread's memprof state goes to the domain). Returns who runs. */
  *#threadMainG(c: ThreadCtx): Resumable<ThreadCtx | undefined> {
    const run = this.#run;
    c.state = "running";
    this.#resumeThread(c);
    yield* restG(c.program!());
    const at = `end of thread ${c.name}`;
    const d = this.#domainOf(c);
    // (issue 22, polls) The program's thread drains the callbacks still pending, each raise
    // logged (lib/export: `resume_dom` before `th_end`): in OCaml they would run in
    // Thread.create's wrapper, whose handler swallows what they raise.
    run.cur = d;
    yield* run.drainG(d, at);
    const next = c.joiner ?? c.handedBy!;
    if (next.state === "ended") run.fail(at, `thread "${next.name}" to run next has ended`);
    if (next.state === "joining" && next !== c.joiner) {
      run.fail(at, `thread "${next.name}" to run next waits in join for another thread`);
    }
    run.log.line(`[${at}] the baton goes to ${next.name}`);
    const t = c.thread!;
    run.cur = d;
    d.returnFromC(); // Mutex.lock
    d.returnFromC(); // Condition.signal
    d.returnFromC(); // Mutex.unlock
    c.state = "ended";
    // Thread.create's wrapper: `check_memprof_cb ()` allocates, so that pending callbacks run.
    // What a callback raises there goes to the wrapper's handler (thread.ml, `create`), which
    // prints it on stderr and ends the thread: the program logs no escape.
    t.callstack = run.frames.stackOf(t, []);
    try {
      d.alloc(1);
    } catch (e) {
      if (
        !(e instanceof OCamlException) || e instanceof OCamlFailure ||
        e instanceof OCamlInvalidArgument
      ) run.stepFailed(at, e);
      else {run.log.line(
          `[${at}] exception ${e.ocamlName} ends the thread (Thread.create's handler)`,
        );}
    }
    // The thread leaves the systhreads' ring (st_stubs.c, caml_thread_remove_and_free): the
    // thread after it there becomes the active one (`restore_runtime_state`, and so
    // `caml_memprof_enter_thread`, which draws a trigger) before its memprof state goes. A
    // thread is put after the one creating it, here the domain's main thread: the ring is the
    // main thread, then the threads from the last created to the first.
    d.switchTo(this.#ringSuccessor(c));
    d.exitThread(t, { handOver: false });
    if (c.domain === "main") {
      // Off the ring, its descriptor is no longer darkened by the systhreads' roots hook (1
      // word: the status field), nor its condition with its stack (nothing to scan): marking
      // reaches both by scanning the harness's th_handle and th_cond, 4 and 3 words in every
      // cycle (lib/export/_harness_heap.ts). The marking by layout of an exported program finds
      // this itself (lib/runtime/_mark.ts, the thread no longer alive); this is the amount for
      // the other model. A spawned domain's thread made its descriptor during the run: the
      // simulation holds it, and marks it, in every cycle.
      run.rt.majorGc.addFixedMark(ENDED_THREAD_MARK);
    }
    this.#from = c;
    return next;
  }

  /** The first thread after the running one in `ring` that can take the baton (of its domain,
   * created, not ended, not waiting in a join), or undefined when none can. */
  #nextInRing(me: ThreadCtx, ring: readonly string[]): string | undefined {
    const k = ring.indexOf(me.name);
    if (k < 0) {
      throw new ActionError(
        `act.yieldToNext([${ring.join(", ")}]) in a callback of thread "${me.name}", not in the ` +
          "list",
      );
    }
    for (let j = 1; j < ring.length; j++) {
      const name = ring[(k + j) % ring.length];
      const c = this.#ctxs.get(name) ??
        (this.#run.names.domains.has(name) ? this.#top(name) : undefined);
      if (c?.spawned && c.domain === me.domain && c.state !== "ended" && c.state !== "joining") {
        return c.name;
      }
    }
    return undefined;
  }

  /** The live thread after `c` in its domain's systhreads' ring (see
   * {@linkcode #threadMainG}). */
  #ringSuccessor(c: ThreadCtx): Thread {
    const created = [...this.#ctxs.values()].filter((x) =>
      x.program !== undefined && x.domain === c.domain && x.thread !== undefined
    );
    for (let k = created.indexOf(c) - 1; k >= 0; k--) {
      const x = created[k];
      if (x.state !== "ended") return x.thread!;
    }
    return this.#domainOf(c).threads[0];
  }

  /** `act.yieldTo`: the thread running the callback blocks inside it. */
  *yieldInCallbackG(name: string, head: string): Resumable<void> {
    const run = this.#run;
    const domain = this.#nameOf(run.cur);
    const me = this.#me(domain);
    if (me.state === "ended") {
      // Thread.create's wrapper allocates after the program: the baton went on already.
      run.log.line(`${head} : no yield to ${name} (thread ${me.name} has ended)`);
      return;
    }
    run.log.line(`${head} : yield to ${name}`);
    const to = this.#ctxFor(name, domain, undefined);
    yield* this.#passBatonG(me, to, { at: undefined, joining: false });
  }

  /** `act.yieldToNext`: {@linkcode yieldInCallbackG} to the next thread of `ring` that can take
   * the baton. */
  *yieldToNextInCallbackG(ring: readonly string[], head: string): Resumable<void> {
    // After its program ended, a thread no longer holds the baton (see yieldInCallbackG).
    const me = this.#me(this.#nameOf(this.#run.cur));
    if (me.state === "ended") {
      this.#run.log.line(`${head} : no yield (thread ${me.name} has ended)`);
      return;
    }
    const next = this.#nextInRing(me, ring);
    if (next === undefined) this.#run.log.line(`${head} : no thread to yield to`);
    else yield* this.yieldInCallbackG(next, head);
  }
}

/** Frames above the step's for `Thread.create`'s allocations on a spawned domain: the
 * closure's (in `Thread.create`) and the descriptor's, from C (`caml_thread_new` called from
 * `Thread.create`), each below the harness's `th_create`. */
const CREATE_FRAMES = 2;

/** A thread of a resumable run, before it runs. */
function newCtx(name: string, domain: string, program: Op | undefined): ThreadCtx {
  return {
    name,
    domain,
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
