/**
 * Bulk runs of a loop whose body only allocates (OCaml code's inline allocations, all on one
 * domain): the iterations from now up to the next point where something can happen run in one
 * tight loop, or at once when nothing in them is drawn or kept.
 *
 * What can happen in an iteration, besides counting: an allocation leaving the inline path
 * (`youngPtr` going below `youngLimit`: memprof's trigger, the minor heap's, or an interrupt's
 * Infinity), a progress report, the loop's back-edge poll, a keeper's store filling the
 * remembered set (which interrupts the domain), and releases due at a step's start (then the
 * exported program's release loop polls). A bulk run takes k iterations such that the young
 * pointer stays strictly above `youngLimit` whatever the sizes drawn (so that neither an
 * allocation nor a poll enters the runtime) and no progress report falls in them. In those
 * iterations, each step does what the compiled step does on its inline path, in the same order:
 * tick (step number; releases due, run with the clock and counts up to date), draw its sizes,
 * move the young pointer, count, keep. A step whose releases or keeper changed the domain's
 * state (its poll would enter the runtime, `youngLimit` moved) ends the run: the step is
 * finished as the compiled step would finish it, and the loop goes on from there. The clock,
 * the progress countdown and the domain's callstack are brought up to date when the run ends.
 * @module
 */
import type { Domain } from "../../runtime/mod.ts";
import type { Op, Rest, RunContext } from "./_context.ts";
import { type BulkUnit, bulkUnitOf } from "./_compile_alloc.ts";
import { thenG } from "./_step.ts";

/** A loop body every step of which is a {@linkcode BulkUnit} on one domain. */
export interface BulkBody {
  readonly units: readonly BulkUnit[];
  /** The body's domain, or undefined when it is not running (its steps fail as usual). */
  readonly domainOf: () => Domain | undefined;
  /** The most words, headers included, one iteration can allocate. */
  readonly maxWords: number;
  /** The words of an iteration when every size is fixed and nothing is kept (then k iterations
   * run at once), else undefined. */
  readonly fixedWords: number | undefined;
  /** Blocks of an iteration. */
  readonly blocks: number;
  /** Scratch: the sizes a step drew. */
  readonly lens: number[];
  /** Where the last run stopped inside an iteration: the number of its steps done (0: none). */
  partial: number;
  /** The last run stopped at step `partial` of an iteration after its tick (whose releases
   * changed the domain's state): the step's release poll, when `pollAfterTick`, and its work
   * are left to the caller (see {@linkcode finishTicked}). */
  ticked: boolean;
  /** With `ticked`: the release loop's poll is due (on the domain the last step ran on). */
  pollAfterTick: boolean;
}

/** The {@linkcode BulkBody} of a loop body compiled step by step into `ops`, or undefined. */
export function bulkBody(run: RunContext, ops: readonly Op[]): BulkBody | undefined {
  const units: BulkUnit[] = [];
  for (const op of ops) {
    const u = bulkUnitOf(op);
    if (u === undefined || (units.length > 0 && u.domain !== units[0].domain)) return undefined;
    units.push(u);
  }
  if (units.length === 0) return undefined;
  const name = units[0].domain;
  let maxWords = 0, blocks = 0, most = 1;
  let fixedWords: number | undefined = 0;
  for (const u of units) {
    maxWords += u.maxWords;
    blocks += u.sizes.length;
    if (u.sizes.length > most) most = u.sizes.length;
    if (u.fixedWords === 0 || u.keeps.length > 0) fixedWords = undefined;
    else if (fixedWords !== undefined) fixedWords += u.fixedWords;
  }
  if (!Number.isFinite(maxWords)) return undefined;
  let d: Domain | undefined;
  return {
    units,
    domainOf: () => {
      if (d === undefined || !d.alive) d = run.names.domains.get(name);
      return d?.alive ? d : undefined;
    },
    maxWords,
    fixedWords,
    blocks,
    lens: new Array<number>(most).fill(0),
    partial: 0,
    ticked: false,
    pollAfterTick: false,
  };
}

/**
 * Runs a bulk run of at most `left` iterations of `body`, from the loop's current iteration;
 * returns how many iterations it completed. When it stopped inside an iteration, `body.partial`
 * says how many of that iteration's steps are done (all of them possibly: its back-edge is left
 * to the caller), and `body.ticked` that the next one is half done (its tick); else 0. `polls`:
 * the loop polls at its back-edge on `loopDomain`. Nothing here runs a callback.
 */
export function bulkIterations(
  run: RunContext,
  body: BulkBody,
  { left, polls, loopDomain }: {
    readonly left: number;
    readonly polls: boolean;
    readonly loopDomain: Domain;
  },
): number {
  body.partial = 0;
  body.ticked = false;
  const d = body.domainOf();
  if (d === undefined || (polls && d !== loopDomain)) return 0;
  const limit = d.youngLimit;
  const units = body.units, m = units.length;
  // Strictly above the limit after the last of k iterations: no allocation, poll at a release
  // or back-edge enters the runtime. An interrupt's youngLimit (Infinity) gives none.
  let k = Math.floor((d.youngPtr - limit - 1) / body.maxWords);
  if (!(k > 0)) return 0;
  if (k > left) k = left;
  const fixedWords = body.fixedWords;
  // The closed form cannot run releases: it stops before the next one; the loop, before the
  // next progress report.
  const quiet = fixedWords !== undefined ? run.quietSteps() : run.stepsBeforeProgress();
  const bySteps = Math.floor(quiet / m);
  if (bySteps < k) k = bySteps;
  if (k <= 0) return 0;
  if (fixedWords !== undefined) {
    run.cur = d;
    d.advanceYoung(k * fixedWords);
    run.skipSteps(k * m);
    run.counts.allocations += k * body.blocks;
    run.counts.words += k * fixedWords;
    settle(d, units, { last: m - 1, executed: k * m });
    return k;
  }
  const lens = body.lens, lifetimes = run.lifetimes;
  // The state not yet written back: steps since `run.step`, young pointer (`written`: as the
  // domain has it), counts.
  const step0 = run.step;
  let step = step0, flushedStep = step0, ptr = d.youngPtr, flushedPtr = ptr, allocations = 0;
  let written = ptr;
  let due = lifetimes.nextDue;
  /** The allocations so far, made on the domain (before a keeper's store, which may move the
   * limit: the allocations came first). */
  const writePtr = () => {
    if (ptr !== written) {
      d.advanceYoung(written - ptr);
      written = ptr;
    }
  };
  const flush = () => {
    writePtr();
    run.step = step;
    run.elapse(step - flushedStep);
    run.counts.allocations += allocations;
    run.counts.words += flushedPtr - ptr;
    flushedStep = step;
    flushedPtr = ptr;
    allocations = 0;
  };
  for (let it = 0; it < k; it++) {
    for (let u = 0; u < m; u++) {
      const unit = units[u];
      step++;
      if (step >= due) {
        // The tick's releases, with the clock and counts as the compiled steps leave them.
        flush();
        const before = run.cur;
        settle(d, units, { last: u - 1, executed: step - step0 - 1 });
        lifetimes.tick(step);
        if (
          before !== d || d.youngLimit !== limit || d.youngPtr !== ptr || d.youngPtr <= limit
        ) {
          // The release loop's poll (on the domain the last step ran on) may enter the runtime:
          // this step ends as the compiled one does (its poll and work left to the caller), and
          // so does the run.
          body.partial = u;
          body.ticked = true;
          body.pollAfterTick = before.alive;
          return it;
        }
        due = lifetimes.nextDue;
      }
      if (run.cur !== d) run.cur = d;
      const sizes = unit.sizes, keeps = unit.keeps, blocks = sizes.length;
      allocations += blocks;
      if (unit.fixedWords !== 0) {
        ptr -= unit.fixedWords;
        if (keeps.length === 0) continue;
        const fixed = unit.fixed!;
        for (let j = 0; j < blocks; j++) lens[j] = fixed[j];
      } else if (keeps.length === 0) {
        for (let j = 0; j < blocks; j++) ptr -= sizes[j]() + 1;
        continue;
      } else {
        for (let j = 0; j < blocks; j++) {
          const n = sizes[j]();
          lens[j] = n;
          ptr -= n + 1;
        }
      }
      // What a keeper looks at: the step number (its release's step) and the current domain.
      run.step = step;
      writePtr();
      // Block j of the step at ptr + Σ_{i<j} (lens[i] + 1), kept in order.
      let a = ptr;
      for (let j = 0; j < blocks; j++) {
        keeps[j]?.(a, lens[j]);
        a += lens[j] + 1;
      }
      if (d.youngLimit !== limit) {
        // A store filled the remembered set: the next allocation enters the runtime.
        flush();
        settle(d, units, { last: u, executed: step - step0 });
        body.partial = u + 1;
        return it;
      }
      due = lifetimes.nextDue;
    }
  }
  flush();
  settle(d, units, { last: m - 1, executed: k * m });
  return k;
}

/** Leaves the callstack of `d`'s thread as the last `executed` steps, up to unit `last` of an
 * iteration (-1: the previous iteration's last), leave it: that of the last `alloc` among them
 * (unchanged if there is none). */
function settle(
  d: Domain,
  units: readonly BulkUnit[],
  { last, executed }: { readonly last: number; readonly executed: number },
): void {
  const m = units.length;
  const n = executed < m ? executed : m;
  for (let back = 0; back < n; back++) {
    const stackOf = units[(last - back + 2 * m) % m].stackOf;
    if (stackOf !== undefined) {
      const t = d.current;
      const stack = stackOf(t);
      if (t.callstack !== stack) t.callstack = stack;
      return;
    }
  }
}

/** The step a bulk run stopped in after its tick (`body.ticked`), finished as the compiled step
 * finishes it: its release poll (when due), then its work; null when that ran to its end, else
 * what is left of it. Either way, the iteration's steps done then are `body.partial + 1`. */
export function finishTicked(run: RunContext, body: BulkBody): Rest {
  const unit = body.units[body.partial];
  if (body.pollAfterTick) {
    const rest = run.releasePoll(unit.at);
    if (rest !== null) return thenG(rest, unit.work);
  }
  return unit.work();
}
