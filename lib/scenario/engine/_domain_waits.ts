/**
 * The domains' waits for the baton, where memprof sees them: in a program that links the
 * systhreads library and runs several domains (with the export's harness).
 *
 * With the threads library, leaving any blocking section, on any domain, runs
 * `caml_thread_leave_blocking_section`, whose `restore_runtime_state` calls
 * `caml_memprof_enter_thread` (otherlibs/systhreads/st_stubs.c): a new sampling trigger is
 * drawn. So the number of blocking sections a domain passes through decides its later samples.
 * The exported program makes that number one per wait, whatever the timing
 * (lib/export/_prelude.ts, `countedWaitsPrelude`): the baton's mutex is taken by spinning on
 * `Mutex.try_lock` (a contended `Mutex.lock` would enter a blocking section); each waiting
 * domain has a condition of its own, signalled only for what it waits for; a wait whose event
 * came already goes through `Unix.sleepf 0.` instead (one blocking section too); and
 * `Domain.join` is called only once the joined domain has finished (its `term_sync` holds
 * `Finished` and its mutex is free), so that it never waits.
 *
 * A wait begins where the domain's segment ends (`caml_enter_blocking_section`: the GC work
 * due) and ends where its next turn comes (the leave, and the C calls returning).
 * @module
 */
import type { Domain } from "../../runtime/mod.ts";
import type { RunContext } from "./_context.ts";
import { linksThreads } from "./_spawn_threads_library.ts";
import { segmentStarts } from "../walk.ts";

/** Whether `run`'s domains wait in counted blocking sections (see the module doc). */
export function countedWaits(run: RunContext): boolean {
  return run.opts.exportHarness === true && run.sc.domains.length > 1 && linksThreads(run);
}

/** Domain `d` begins to wait (`Condition.wait` or `Unix.sleepf`: a blocking section). */
export function waitBegins(run: RunContext, d: Domain): void {
  if (!countedWaits(run) || !d.alive) return;
  d.returnFromC();
  d.enterBlockingSection();
}

/** Domain `d`'s wait ends: it leaves the blocking section (`caml_memprof_enter_thread`), and
 * the C calls return. */
export function waitEnds(run: RunContext, d: Domain): void {
  if (!countedWaits(run) || !d.alive) return;
  d.switchTo(d.current);
  d.returnFromC();
}

/** After the last segment, its domain begins to wait for its final poll's turn (each domain's
 * final poll then ends its wait: {@linkcode waitEnds}). */
export function finalTurnsBegin(run: RunContext): void {
  if (!countedWaits(run)) return;
  const last = segmentStarts(run.sc).last;
  const d = last === undefined ? undefined : run.names.domains.get(last);
  if (d !== undefined) waitBegins(run, d);
}
