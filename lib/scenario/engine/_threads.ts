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
  /** The runtime's thread (created before the run). */
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
      baton.add(st.thread, body(st.body));
      return tickedOp(run, st.at, () => baton.spawn(st));
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

/** The threads of a resumable run and the baton they pass. */
export class Baton {
  readonly #run: RunContext;
  /** The threads, by name: those with programs in the order of their `thread` steps, then
   * "main". */
  readonly #ctxs = new Map<string, ThreadCtx>();
  /** The thread running. */
  #running: ThreadCtx | undefined;

  /** The baton of resumable run `run`. */
  constructor(run: RunContext) {
    this.#run = run;
  }

  /** Thread `name` runs `program` (compiled from its `thread` step). */
  add(name: string, program: Op): void {
    this.#ctxs.set(name, newCtx(name, program));
  }

  /** Runs the top-level program and the threads it passes the baton to, until it ends. */
  run(top: Op): void {
    const run = this.#run;
    this.#createProgramThreads();
    const md = run.rt.mainDomain;
    const main = newCtx("main", undefined);
    main.thread = md.current;
    main.state = "running";
    main.gen = this.#mainProgramG(top);
    this.#ctxs.set("main", main);
    this.#running = main;
    run.loopStacks.set(md, main.loops);
    let cur = main;
    for (;;) {
      const r = cur.gen!.next();
      let next: ThreadCtx;
      if (r.done) {
        if (cur === main) break;
        next = r.value!;
      } else next = r.value as ThreadCtx;
      // Each thread has its own attempts, loops and iteration.
      cur.tryDepth = run.tryDepth;
      cur.iter = run.iter;
      run.tryDepth = next.tryDepth;
      run.iter = next.iter;
      run.loopStacks.set(md, next.loops);
      run.cur = md;
      this.#running = next;
      next.gen ??= this.#threadMainG(next);
      cur = next;
    }
  }

  /** The main thread's program ({@linkcode mainProgram}): its end ends the run. */
  *#mainProgramG(top: Op): Resumable<ThreadCtx | undefined> {
    yield* restG(mainProgram(this.#run, top));
    return undefined;
  }

  /** The `thread` step of a thread with a program: from now on the baton may pass to it. */
  spawn(st: StepOf<"threadSpawn">): void {
    this.#run.domain(st.domain, st.at);
    this.#ctxs.get(st.thread)!.spawned = true;
  }

  /**
   * `Thread.create` of every thread with a program, before the run, in the order of their
   * `thread` steps, each then waiting for its first turn: as the exported program does (it
   * creates them during its initialisation, and then stops the tick thread; a thread created
   * during the run could take the lock at any blocking section, a race). Their memprof states
   * are empty until they run; what their existence changes is which thread the systhreads'
   * ring makes active when one ends (see {@linkcode #threadMainG}).
   */
  #createProgramThreads(): void {
    const run = this.#run;
    const d = run.rt.mainDomain;
    for (const c of this.#ctxs.values()) {
      if (c.program === undefined) continue;
      const t = d.createThread();
      run.nameThread(t, c.name);
      run.frames.markProgram(t);
      c.thread = t;
    }
  }

  /** The context of thread `name`, to which the running thread may pass the baton (`at`: the
   * step passing it; undefined inside a callback). */
  #ctxFor(name: string, at: string | undefined): ThreadCtx {
    const c = this.#ctxs.get(name);
    if (c === undefined) this.#fail(at, `no thread "${name}" with a program`);
    if (!c.spawned) this.#fail(at, `thread "${name}" is not created yet`);
    return c;
  }

  /** Fails step `at`, or the callback action running (`at` undefined). */
  #fail(at: string | undefined, problem: string): never {
    if (at === undefined) throw new ActionError(problem);
    this.#run.fail(at, problem);
  }

  /**
   * The running thread passes the baton to `to` and waits for its turn: `th_pass` of the
   * exported program — `Mutex.lock`, `Condition.signal`, `Condition.wait` (a blocking section),
   * then, its turn come, `Mutex.unlock`. With `joining`, it waits for `to` to end.
   */
  *#passBatonG(
    to: ThreadCtx,
    { at, joining }: { readonly at: string | undefined; readonly joining: boolean },
  ): Resumable<void> {
    const me = this.#running!;
    if (to === me) this.#fail(at, `thread "${me.name}" passes the baton to itself`);
    if (to.state === "ended") this.#fail(at, `thread "${to.name}" has ended`);
    if (to.state === "joining") {
      this.#fail(at, `thread "${to.name}" waits in join for another thread to end`);
    }
    const d = this.#run.rt.mainDomain;
    d.returnFromC(); // Mutex.lock
    d.returnFromC(); // Condition.signal
    // caml_ml_condition_wait (runtime/sync.c): EV_DOMAIN_CONDITION_WAIT around the blocking
    // section, ended by the thread when it wakes up (resumeThread).
    this.#run.rt.events.beginPhase(d.id, RuntimePhase.EV_DOMAIN_CONDITION_WAIT);
    d.enterBlockingSection(); // Condition.wait
    to.handedBy = me;
    me.state = joining ? "joining" : "blocked";
    yield to;
    // The baton is back.
    me.state = "running";
    this.#resumeThread(me);
  }

  /** A thread's wait for its turn ends: it leaves `Condition.wait`'s blocking section, taking
   * the lock (`caml_memprof_enter_thread`), and the C calls return. */
  #resumeThread(c: ThreadCtx): void {
    const d = this.#run.rt.mainDomain;
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
    run.log.line(`[${st.at}] ${this.#running!.name} yields to ${st.thread}`);
    yield* this.#passBatonG(this.#ctxFor(st.thread, st.at), { at: st.at, joining: false });
  }

  /** `Thread.join`: the thread passes the baton to `name` until it ends (unless it did), then
   * `caml_thread_join` waits for its end in a blocking section. */
  *threadJoinG(st: StepOf<"threadJoin">): Resumable<void> {
    const run = this.#run;
    yield* restG(run.tick(st.at));
    const d = run.domain(st.domain, st.at);
    run.cur = d;
    const target = this.#ctxFor(st.thread, st.at);
    const me = this.#running!;
    run.log.line(`[${st.at}] ${me.name} joins ${st.thread}`);
    if (target.state !== "ended") {
      target.joiner = me;
      yield* this.#passBatonG(target, { at: st.at, joining: true });
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
    // (issue 22, polls) The program's thread drains the callbacks still pending, each raise
    // logged (lib/export: `resume_dom` before `th_end`): in OCaml they would run in
    // Thread.create's wrapper, whose handler swallows what they raise.
    run.cur = run.rt.mainDomain;
    yield* run.drainG(run.rt.mainDomain, at);
    const next = c.joiner ?? c.handedBy!;
    if (next.state === "ended") run.fail(at, `thread "${next.name}" to run next has ended`);
    if (next.state === "joining" && next !== c.joiner) {
      run.fail(at, `thread "${next.name}" to run next waits in join for another thread`);
    }
    run.log.line(`[${at}] the baton goes to ${next.name}`);
    const d = run.rt.mainDomain;
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
    // thread is put after the one creating it, here the main thread: the ring is main, then
    // the threads from the last created to the first.
    d.switchTo(this.#ringSuccessor(c));
    d.exitThread(t, { handOver: false });
    // Off the ring, its descriptor is no longer darkened by the systhreads' roots hook (1 word:
    // the status field), nor its condition with its stack (nothing to scan): marking reaches
    // both by scanning the harness's th_handle and th_cond, 4 and 3 words in every cycle
    // (lib/export/_harness_heap.ts). The marking by layout of an exported program finds this
    // itself (lib/runtime/_mark.ts, the thread no longer alive); this is the amount for the
    // other model.
    run.rt.majorGc.addFixedMark(ENDED_THREAD_MARK);
    return next;
  }

  /** The first thread after the running one in `ring` that can take the baton (created, not
   * ended, not waiting in a join), or undefined when none can. */
  #nextInRing(ring: readonly string[]): string | undefined {
    const me = this.#running?.name;
    const k = me === undefined ? -1 : ring.indexOf(me);
    if (k < 0) {
      throw new ActionError(
        `act.yieldToNext([${ring.join(", ")}]) in a callback of thread "${me}", not in the list`,
      );
    }
    for (let j = 1; j < ring.length; j++) {
      const c = this.#ctxs.get(ring[(k + j) % ring.length]);
      if (c?.spawned && c.state !== "ended" && c.state !== "joining") return c.name;
    }
    return undefined;
  }

  /** The live thread after `c` in the systhreads' ring (see {@linkcode #threadMainG}). */
  #ringSuccessor(c: ThreadCtx): Thread {
    const created = [...this.#ctxs.values()].filter((x) => x.name !== "main");
    for (let k = created.indexOf(c) - 1; k >= 0; k--) {
      const x = created[k];
      if (x.state !== "ended") return x.thread!;
    }
    return this.#run.rt.mainDomain.threads[0];
  }

  /** `act.yieldTo`: the thread running the callback blocks inside it. */
  *yieldInCallbackG(name: string, head: string): Resumable<void> {
    const run = this.#run;
    if (run.cur !== run.rt.mainDomain || this.#running === undefined) {
      throw new ActionError(
        `act.yieldTo("${name}") in a callback running on domain ${run.cur.id}: threads with ` +
          "programs are the main domain's",
      );
    }
    if (this.#running.state === "ended") {
      // Thread.create's wrapper allocates after the program: the baton went on already.
      run.log.line(`${head} : no yield to ${name} (thread ${this.#running.name} has ended)`);
      return;
    }
    run.log.line(`${head} : yield to ${name}`);
    yield* this.#passBatonG(this.#ctxFor(name, undefined), { at: undefined, joining: false });
  }

  /** `act.yieldToNext`: {@linkcode yieldInCallbackG} to the next thread of `ring` that can take
   * the baton. */
  *yieldToNextInCallbackG(ring: readonly string[], head: string): Resumable<void> {
    // After its program ended, a thread no longer holds the baton (see yieldInCallbackG).
    const me = this.#running;
    if (me?.state === "ended") {
      this.#run.log.line(`${head} : no yield (thread ${me.name} has ended)`);
      return;
    }
    const next = this.#nextInRing(ring);
    if (next === undefined) this.#run.log.line(`${head} : no thread to yield to`);
    else yield* this.yieldInCallbackG(next, head);
  }
}

/** A thread of a resumable run, before it runs. */
function newCtx(name: string, program: Op | undefined): ThreadCtx {
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
