/**
 * Domain steps (`Domain.spawn`, a domain's end, `Domain.join`) and the older form of systhreads
 * (`Thread.create` without a program, `switchTo`, `Thread.exit`).
 * @module
 */
import { comballocBlock, type Domain, type Root } from "../../runtime/mod.ts";
import { type Resumable, runToEnd } from "../../memprof/mod.ts";
import { findStep, segmentStarts, someAction, type StepOf } from "../walk.ts";
import type { JoinOutcome } from "../result.ts";
import type { Rest, RunContext } from "./_context.ts";
import { stdlibFrames } from "./_frames.ts";
import { countedWaits, finalTurnsBegin, waitBegins, waitEnds } from "./_domain_waits.ts";
import {
  linksThreads,
  randomSplitG,
  randomStateInherited,
  threadHook,
} from "./_spawn_threads_library.ts";
import {
  domainOp,
  type DomainWork,
  firstOf,
  guardedG,
  restG,
  type Steps,
  thenG,
  tickedOp,
} from "./_step.ts";

/** The step kinds compiled here. */
export type DomainKind =
  | "spawn"
  | "terminate"
  | "join"
  | "threadCreate"
  | "threadSwitch"
  | "threadExit";

/** The compilers of domain steps and of the older form of systhreads. */
export function domainSteps(run: RunContext): Steps<DomainKind> {
  return {
    spawn: (st) => () => firstOf(spawnG(run, st)),
    terminate: (st) => domainOp(run, st, (d) => firstOf(terminateG(run, st, d))),
    join: (st) => {
      const work = joinWork(run, st);
      if (run.opts.exportHarness !== true) return domainOp(run, st, work);
      return domainOp(run, st, (d) => {
        work(d);
        return firstOf(run.drainG(d, st.at));
      });
    },
    threadCreate: (st) => tickedOp(run, st.at, threadCreateWork(run, st)),
    threadSwitch: (st) => domainOp(run, st, threadSwitchWork(run, st)),
    threadExit: (st) => domainOp(run, st, threadExitWork(run, st)),
  };
}

/**
 * What `Domain.spawn` allocates in the parent before the new domain starts (stdlib/domain.ml and
 * its compiled code in OCaml 5.3.0): `Condition.create` and `Mutex.create` (C primitives, custom
 * blocks of 2 words, right to left as OCaml evaluates a record's fields: their callbacks wait for
 * the next poll), then one combined allocation of the body's closure (5 words) and `term_sync`
 * (3 words), whose slow path runs those callbacks first. The callstacks have `Domain.spawn`'s
 * frame (a `<harness>` one with the export's harness) on top of the step's. term_sync (with its mutex and condition) lives
 * as long as the program holds the domain's handle, which the exported program does to its end;
 * the closure until the new domain's body returns ({@linkcode SpawnKept}).
 */
function* spawnParentAllocationsG(run: RunContext, parent: Domain): Resumable<SpawnKept> {
  const kept: SpawnKept = { forever: [], untilEnd: [], withState: [] };
  if (linksThreads(run)) {
    const random = yield* randomSplitG(run, parent);
    kept.forever.push(...random.forever);
    kept.untilEnd.push(...random.untilEnd);
    kept.withState.push(...random.withState);
  }
  const t = parent.current;
  t.callstack = run.frames.stackOf(t, stdlibFrame(run));
  // Each a C primitive: its return, with an action pending (a sample's callback), sets
  // young_limit, so that the combined allocation below enters the runtime and runs it.
  kept.forever.push(run.rt.root(parent.allocFromRuntime(2), 2)); // Condition.create
  parent.returnFromC();
  kept.forever.push(run.rt.root(parent.allocFromRuntime(2), 2)); // Mutex.create
  parent.returnFromC();
  const lens = SPAWN_COMBINED;
  const base = yield* parent.allocCombinedG(lens);
  kept.untilEnd.push(run.rt.root(comballocBlock(base, lens, 0), lens[0]));
  kept.forever.push(run.rt.root(comballocBlock(base, lens, 1), lens[1]));
  return kept;
}

/** `Domain.spawn`'s combined allocation, lowest address first: the body's closure (code
 * pointer, arity, and the three values it closes over), then `term_sync`. */
const SPAWN_COMBINED: readonly number[] = [5, 3];

/** Blocks a spawn keeps: for the program's whole run; until the new domain's body returns
 * (Domain.spawn's closure; what only the closure or the domain's main systhread holds); and as
 * long as the domain's state (its DLS array and what it holds: the runtime removes the
 * `dls_root` only after the domain's last collection, runtime/domain.c `domain_terminate`). */
interface SpawnKept {
  readonly forever: Root[];
  readonly untilEnd: Root[];
  readonly withState: Root[];
}

/** What each live spawned domain keeps ({@linkcode SpawnKept}), keyed by the domain (a run's
 * own objects). */
const keptUntilEnd = new WeakMap<Domain, SpawnKept>();

/** `Domain.spawn`'s last allocation, in the parent once the new domain runs: its result record
 * `{ domain; term_sync }` (2 words), held by the program's handle. */
function* spawnResultG(run: RunContext, parent: Domain, at: string): Resumable<void> {
  run.cur = parent;
  const t = parent.current;
  yield* guardedG(run, at, function* () {
    t.callstack = run.frames.stackOf(t, stdlibFrame(run));
    run.rt.root(yield* parent.allocG(2), 2);
  });
}

/** `Domain.spawn` up to the new domain's first act: returns the parent and the child, which is
 * current, its callstack set. */
function spawnBegin(run: RunContext, st: StepOf<"spawn">): { parent: Domain; child: Domain } {
  const parent = run.domain(st.domain, st.at);
  run.cur = parent;
  const child = run.rt.spawnDomain(parent);
  run.names.domains.set(st.child, child);
  run.nameThread(child.current, st.child, parent.current);
  run.lifecycle(`Domain.spawn ${st.child}@${child.id}`);
  // The new domain's first act (Domain.spawn's body, DLS.create_dls): `Array.make 8`.
  run.cur = child;
  child.current.callstack = run.frames.stackOf(child.current, []);
  return { parent, child };
}

/** With the export's harness (`RunOptions.exportHarness`): the exported program's
 * `Gc.minor ()` before `Domain.spawn`, then the parent drains what callbacks it made ready. */
function* emptyBeforeSpawnG(run: RunContext, st: StepOf<"spawn">): Resumable<void> {
  if (run.opts.exportHarness !== true) return;
  const parent = run.domain(st.domain, st.at);
  run.cur = parent;
  yield* guardedG(run, st.at, () => parent.minorGcG());
  yield* run.drainG(parent, st.at);
}

/** `Domain.spawn`. */
function* spawnG(run: RunContext, st: StepOf<"spawn">): Resumable<void> {
  yield* restG(run.tick(st.at));
  yield* emptyBeforeSpawnG(run, st);
  const parent = run.domain(st.domain, st.at);
  run.cur = parent;
  let kept: SpawnKept = { forever: [], untilEnd: [], withState: [] };
  yield* guardedG(run, st.at, function* () {
    kept = yield* spawnParentAllocationsG(run, parent);
  });
  const { child } = spawnBegin(run, st);
  const race = spawnRace(run, parent);
  if (race.before === 0) yield* spawnResultG(run, parent, st.at);
  // The parent's result between the new domain's callbacks (the callbacks of its first
  // allocations run together, at its first poll).
  let resultDone = race.before === 0;
  if (race.before > 0 && race.before !== Infinity) {
    run.spawnWindow = {
      child,
      before: race.before,
      seen: 0,
      parentTurn: () => {
        resultDone = true;
        runToEnd(spawnResultG(run, parent, st.at), st.at);
        run.cur = child;
      },
    };
  } else if (race.point !== undefined) {
    run.spawnWindow = { child, before: Infinity, seen: 0 };
  }
  run.cur = child;
  if (linksThreads(run)) {
    kept.untilEnd.push(...threadHook(run, child));
    randomStateInherited(run, child);
  }
  child.current.callstack = run.frames.stackOf(child.current, []);
  try {
    yield* guardedG(run, st.at, function* () {
      kept.withState.push(run.rt.root(yield* child.makeArrayG(8), 8));
    });
  } finally {
    if (race.point !== undefined) race.point.childCallbacks = run.spawnWindow?.seen ?? 0;
    run.spawnWindow = undefined;
  }
  keptUntilEnd.set(child, kept);
  if (!resultDone) yield* spawnResultG(run, parent, st.at);
  run.rt.domainHandleStored(run.sc.domains.indexOf(st.child), child);
  // The new domain waits for its first turn; the parent, for the new domain to start
  // (wait_started).
  waitBegins(run, child);
  waitBegins(run, parent);
  waitEnds(run, parent);
  run.cur = parent;
}

/** The spawn race point (`RacePoint`'s `spawn`): met when the parent samples (its profile is
 * running); returns how many of the new domain's first allocation callbacks run before the
 * parent allocates Domain.spawn's result in this run (0: the parent first, as 43 of 50 real runs
 * of a scenario sampling every word had it, tests/differential/races_test.ts; Infinity: all of
 * them, `childFirst`), and the race point, whose `childCallbacks` the spawn fills in. */
function spawnRace(
  run: RunContext,
  parent: Domain,
): { before: number; point?: { childCallbacks: number } } {
  const spawn = ++run.spawns;
  if (!parent.memprof.sampling()) return { before: 0 };
  const races = run.opts.races;
  const childFirst = races?.childFirst?.has(spawn) ?? false;
  const before = childFirst ? Infinity : races?.childBefore?.get(spawn) ?? 0;
  const point = { kind: "spawn" as const, spawn, childFirst, childCallbacks: 0 };
  if (before !== 0 && before !== Infinity) Object.assign(point, { childBefore: before });
  run.racePoints.push(point);
  return { before, point };
}

/**
 * A spawned domain's end, after its function returned and `do_at_exit` polled: the runtime
 * stores its result in `term_sync` (runtime/domain.c, `make_finished`: `Ok ()` then `Finished`,
 * two `caml_alloc_1` from C with no OCaml frame left, sampled with their callbacks waiting: the
 * domain never polls again, so they are orphaned at its termination), and what only its body
 * held dies (Domain.spawn's closure, the body's argument). Its DLS array lives on through the
 * domain's last collection ({@linkcode domainStateFreed}).
 */
function domainEndAllocations(run: RunContext, d: Domain): void {
  const kept = keptUntilEnd.get(d);
  if (kept === undefined) return; // the main domain, or a domain not spawned by a step
  d.current.callstack = [];
  // `Ok ()`, held in a local root while `Finished` is allocated, which then holds it; both
  // are reached from term_sync for the rest of the run.
  run.rt.root(d.allocFromRuntime(1, false), 1);
  run.rt.root(d.allocFromRuntime(1, false), 1);
  for (const [name, dom] of run.names.domains) {
    if (dom === d) run.rt.domainResultStored(run.sc.domains.indexOf(name));
  }
  for (const r of kept.untilEnd) r.release();
}

/** After a domain's last collection, `domain_terminate` removes its `dls_root`: its DLS array
 * and what that holds die. */
function domainStateFreed(d: Domain): void {
  const kept = keptUntilEnd.get(d);
  if (kept === undefined) return;
  keptUntilEnd.delete(d);
  for (const r of kept.withState) r.release();
}

/** `Domain.join`'s own allocation, on the joining domain: the closure of its wait loop (3
 * words, stdlib/domain.ml), dead once the join returns. Its callstack has `Domain.join`'s
 * frame on the step's; with the export's harness, the exported program's `join_dom` too when
 * a callback may raise (it then catches and retries, so its call is not a tail call). */
function joinAllocation(run: RunContext, d: Domain): number {
  const t = d.current;
  t.callstack = run.frames.stackOf(t, joinFrames(run));
  return d.alloc(3);
}

/** The frame `Domain.spawn` (the standard library's) puts on the step's callstack. */
function stdlibFrame(run: RunContext): readonly string[] {
  return stdlibFrames(run.opts.exportHarness, 1);
}

/** The frames {@linkcode joinAllocation} puts on the joining step's callstack. */
function joinFrames(run: RunContext): readonly string[] {
  if (run.opts.exportHarness !== true) return stdlibFrames(false, 0);
  let raises = joinRaises.get(run);
  if (raises === undefined) {
    raises = findStep(run.sc.steps, (st) =>
      st.kind === "memprofStart" && someAction(st.profile.tracker, (a) =>
        a.kind === "raise")) !== undefined;
    joinRaises.set(run, raises);
  }
  return stdlibFrames(true, raises ? 2 : 1);
}
const joinRaises = new WeakMap<RunContext, boolean>();

/** With the export's harness, a domain resuming first joins the domains that ended since its
 * previous turn (the exported program's `join_dom` at the start of a segment): only the
 * joining domain's {@linkcode joinAllocation} remains to do, the domains having ended. */
export function harnessJoin(run: RunContext, d: Domain, ended: string, at: string): void {
  // Allocated already, before the ended domain's last collection (the join race's
  // `closureFirst`).
  if (closureAllocated.get(run)?.delete(ended) === true) return;
  const prev = run.cur;
  closureAfterWait(run, d, at);
  run.cur = prev;
}

/** `Domain.join`'s closure, allocated by `d` once its wait for its turn returned (the harness's
 * `Condition.wait` and `Mutex.unlock`, C calls): with an action pending (callbacks a
 * collection made ready while it waited), the allocation enters the runtime and runs them
 * before it allocates. Returns the closure's address. */
function closureAfterWait(run: RunContext, d: Domain, at: string): number {
  let addr = -1;
  run.cur = d;
  d.returnFromC();
  run.guard(at, () => {
    addr = joinAllocation(run, d);
  });
  return addr;
}

/** The run's end: callbacks of the last steps run at a final poll of each domain (with the
 * export's harness and several domains, each resumes first: {@linkcode RunContext.drain}; the
 * first to resume joins the domain that ended the last segment). As far as it runs as plain
 * code: null when it ran to its end, else what is left of it. */
export function finalPolls(run: RunContext): Rest {
  const multi = run.opts.exportHarness === true && run.sc.domains.length > 1;
  const end: FinalPolls = {
    domains: run.names.domains.values(),
    multi,
    trailing: multi ? segmentStarts(run.sc).trailingJoins : [],
  };
  finalTurnsBegin(run);
  return finalPollsOn(run, end);
}

/** The run's end ({@linkcode finalPolls}) on its way: the domains still to poll, and the ended
 * domains the next one joins first. */
interface FinalPolls {
  readonly domains: Iterator<Domain>;
  readonly multi: boolean;
  trailing: readonly string[];
}

/** The final polls of the domains `end.domains` has yet to give. */
function finalPollsOn(run: RunContext, end: FinalPolls): Rest {
  for (let r = end.domains.next(); r.done !== true; r = end.domains.next()) {
    const d = r.value;
    if (!d.alive) continue;
    waitEnds(run, d);
    for (const ended of end.trailing) harnessJoin(run, d, ended, "end");
    end.trailing = [];
    if (end.multi) {
      const drained = firstOf(run.drainG(d, "end"));
      if (drained !== null) {
        return thenG(drained, () => finalPoll(run, d, end) ?? finalPollsOn(run, end));
      }
    }
    const rest = finalPoll(run, d, end);
    if (rest !== null) return rest;
  }
  return null;
}

/** The final poll of domain `d`, under the guard of the run's end, after which it waits: null
 * when that ran to its end, else what is left of it and then of the other domains' polls. */
function finalPoll(run: RunContext, d: Domain, end: FinalPolls): Rest {
  run.cur = d;
  const rest = run.guard("end", () => d.pendingActionsFirst());
  if (rest !== null) {
    return thenG(rest, () => {
      waitBegins(run, d);
      return finalPollsOn(run, end);
    });
  }
  waitBegins(run, d);
  return null;
}

/**
 * A domain's end: its function returns into `Domain.spawn`'s body, which calls `do_at_exit`
 * (stdlib/domain.ml), whose prologue polls (it tail-calls the at-exit closure, so ocamlopt's
 * polling analysis gives it a poll): callbacks still pending on the domain (of a C allocation,
 * a collection) run there, on the domain. What one raises would end the domain with that
 * exception, which `Domain.join` raises again: the exported program drains them at its
 * `terminate` step (`resume_dom`), each raise logged as the step's, and so does this.
 */
function* terminateG(run: RunContext, st: StepOf<"terminate">, d: Domain): Resumable<void> {
  run.threadsOfEndingDomain?.(st.domain, st.at);
  try {
    yield* run.drainG(d, st.at);
  } finally {
    endDomain(run, d, st);
  }
}

function endDomain(run: RunContext, d: Domain, st: StepOf<"terminate">): void {
  run.lifecycle("domain terminates");
  const joiner = joinerOf(run, st.domain);
  const outcome = joinRace(run, d, joiner);
  let closure: Root | undefined;
  let ended = false;
  const end = () => {
    ended = true;
    lastCollection(run, d, joiner, outcome, st.at);
  };
  try {
    if (outcome === "closureDuring") {
      closure = withEndInCallback(
        run,
        { joiner: joiner!, at: "allocEnd" },
        end,
        () => earlyJoinAllocation(run, joiner!, st),
      );
    } else if (outcome === "callbacksDuring") {
      withEndInCallback(
        run,
        { joiner: joiner!, at: "batch" },
        end,
        () => run.drain(joiner!, st.at),
      );
    } else if (outcome === "closureFirst") closure = earlyJoinAllocation(run, joiner!, st);
    if (!ended) end();
  } finally {
    closure?.release();
    run.cur = run.rt.mainDomain;
  }
}

/** Domain `ending`'s end once its function returned: what the runtime allocates then, its last
 * collection and orphaning (the joiner draining between the two for the join race's
 * `callbacksFirst`), then its state freed (its DLS array dies once `domain_terminate` removed
 * its root). */
function lastCollection(
  run: RunContext,
  ending: Domain,
  joiner: Domain | undefined,
  outcome: JoinOutcome,
  at: string,
): void {
  run.cur = ending;
  domainEndAllocations(run, ending);
  run.rt.terminateDomain(ending, {
    afterCollection: outcome === "callbacksFirst"
      ? () => {
        run.drain(joiner!, at);
        run.cur = ending;
      }
      : undefined,
  });
  domainStateFreed(ending);
}

/** The join race's `closureDuring` and `callbacksDuring`: `body` runs with `end` (the ending
 * domain's last collection) inside a callback of the joiner (RunContext.joinWindow): for
 * `closureDuring`, `body` allocates `Domain.join`'s closure and `end` runs inside its allocation
 * callback when the closure is sampled; for `callbacksDuring`, `body` runs the joiner's pending
 * callbacks and `end` runs as the first begins. `end` does not run when no such callback
 * does. */
function withEndInCallback<T>(
  run: RunContext,
  { joiner, at }: { readonly joiner: Domain; readonly at: "allocEnd" | "batch" },
  end: () => void,
  body: () => T,
): T {
  run.joinWindow = {
    joiner,
    at,
    during: () => {
      const cur = run.cur;
      end();
      run.cur = cur;
    },
  };
  try {
    return body();
  } finally {
    run.joinWindow = undefined;
  }
}

/** Ended domains (by name) whose joiner allocated `Domain.join`'s closure before their last
 * collection (the join race's `closureFirst`): the segment that joins them does not again. */
const closureAllocated = new WeakMap<RunContext, Set<string>>();

/** The joiners of each ending domain with the export's harness, per run (ended domain's name →
 * joiner's name): the domain of the next segment, or the main domain at the run's end. */
const joinerNames = new WeakMap<RunContext, ReadonlyMap<string, string>>();

/** The domain that joins domain `ended` with the export's harness (the next segment's domain);
 * undefined without the harness. */
function joinerOf(run: RunContext, ended: string): Domain | undefined {
  if (run.opts.exportHarness !== true) return undefined;
  let names = joinerNames.get(run);
  if (names === undefined) {
    const m = new Map<string, string>();
    const { starts, trailingJoins } = segmentStarts(run.sc);
    for (const s of starts.values()) for (const j of s.joins) m.set(j, s.domain);
    for (const j of trailingJoins) m.set(j, "main");
    joinerNames.set(run, names = m);
  }
  const name = names.get(ended);
  const d = name === undefined ? undefined : run.names.domains.get(name);
  return d !== undefined && d.alive ? d : undefined;
}

/**
 * The join race point (`RacePoint`'s `join`): met when a domain ends while its joiner samples, or
 * while both hold tracked blocks (the orphans' adopter may change). Returns where the joiner
 * was in this run (`RunOptions.races.join`, default `usual`: `late` for a `terminate`, whose
 * joiner is woken as the domain ends; `closureFirst` for a `join` step, whose joiner releases
 * the domain and joins at once).
 */
function joinRace(
  run: RunContext,
  ending: Domain,
  joiner: Domain | undefined,
  usual: JoinOutcome = "late",
): JoinOutcome {
  const join = ++run.domainEnds;
  if (joiner === undefined) return usual;
  // The joiner calls Domain.join once the domain has finished (counted waits).
  if (countedWaits(run)) return "late";
  const relevant = joiner.memprof.sampling() ||
    (joiner.memprof.entryCount() > 0 && ending.memprof.entryCount() > 0);
  if (!relevant) return usual;
  const outcome = run.opts.races?.join?.get(join) ?? usual;
  run.racePoints.push({ kind: "join", join, outcome });
  return outcome;
}

/** The join race's `closureFirst`: the joiner allocates `Domain.join`'s closure before the
 * ending domain's last collection, and holds it (the join's frame) until it is released. */
function earlyJoinAllocation(
  run: RunContext,
  joiner: Domain,
  st: StepOf<"terminate">,
): Root | undefined {
  const addr = closureAfterWait(run, joiner, st.at);
  const closure = addr < 0 ? undefined : run.rt.root(addr, 3);
  let done = closureAllocated.get(run);
  if (done === undefined) closureAllocated.set(run, done = new Set());
  done.add(st.domain);
  return closure;
}

/** `Domain.join` of a domain that has not ended: it ends (its collection runs); the joiner then
 * drains what callbacks that made ready on it (the program's `join_g`, retried until it returns,
 * then `resume_g`: Domain.join's own poll runs them, and a raise aborts the join). */
function joinWork(run: RunContext, st: StepOf<"join">): DomainWork {
  const harness = run.opts.exportHarness === true;
  return (d) => {
    const target = run.domain(st.target, st.at);
    run.lifecycle(`Domain.join ${st.target}@${target.id}`);
    // The joiner releases the domain and joins at once: its closure comes first unless the
    // ending domain was quicker (the join race point, with the export's harness).
    const outcome = harness ? joinRace(run, target, d, "closureFirst") : "closureFirst";
    let closure: Root | undefined;
    let ended = false;
    // (issue 22, polls) Released, the target's function returns: do_at_exit's poll, drained
    // as at a `terminate` step (terminateG); then its last collection.
    const end = () => {
      ended = true;
      waitEnds(run, target);
      run.drain(target, st.at);
      lastCollection(run, target, d, outcome, st.at);
    };
    // Held by the join's frame through the collection (which promotes it); without the
    // harness, as the goldens were made, not.
    const allocate = () =>
      run.guard(st.at, () => {
        const addr = joinAllocation(run, d);
        if (harness) closure = run.rt.root(addr, 3);
      });
    try {
      if (outcome === "closureDuring") {
        withEndInCallback(run, { joiner: d, at: "allocEnd" }, end, allocate);
      } else if (outcome === "callbacksDuring") {
        withEndInCallback(run, { joiner: d, at: "batch" }, end, () => run.drain(d, st.at));
      } else if (outcome === "closureFirst") allocate();
      if (!ended) end();
    } finally {
      closure?.release();
      run.cur = d;
    }
    // late: the target's last collection came while the joiner ran OCaml code (between its
    // release and Domain.join), so the joiner took part at its next poll, the closure's
    // allocation, which runs the callbacks made ready (adopting the orphans) before it
    // allocates: the closure is drawn from the countdown their batch's end placed.
    if (outcome === "late") d.interrupt();
    if (outcome === "late" || outcome === "callbacksFirst" || outcome === "callbacksDuring") {
      run.guard(st.at, () => {
        joinAllocation(run, d);
      });
    }
  };
}

/** `Thread.create` of the older form: the thread starts with its creator's calls. */
function threadCreateWork(run: RunContext, st: StepOf<"threadCreate">): () => void {
  return () => {
    const d = run.domain(st.domain, st.at);
    const t = d.createThread(d.current.callstack);
    run.nameThread(t, st.thread, d.current);
    run.lifecycle(`Thread.create ${st.thread}`);
  };
}

function threadSwitchWork(run: RunContext, st: StepOf<"threadSwitch">): DomainWork {
  return (d) => d.switchTo(run.liveThread(st.thread, st.at));
}

function threadExitWork(run: RunContext, st: StepOf<"threadExit">): DomainWork {
  return () => run.liveThread(st.thread, st.at).exit();
}
