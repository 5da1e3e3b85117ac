/**
 * Raising allocation callbacks inside a loop with no handler in the scenario: every 4th
 * alloc_minor and every 3rd alloc_major callback raises `E`. Outside an `attempt`, the exception
 * escapes the allocation that ran the callback and the next step runs (the exported program
 * catches it around that one statement and logs it). Promotion and deallocation callbacks do not
 * raise, so no callback is left pending behind an exception (see raise_pending_unguarded for
 * that). The 8,192-word minor heap fills every few iterations, so the raising allocations also
 * run the promote and dealloc callbacks queued by the collections they trigger; callstacks are
 * empty (`callstack_size` 0). The loop and its OCaml program: scenarios/_raising_loop.ts.
 */
import { act, cb, scenario } from "../lib/scenario/mod.ts";
import { RAISING_LOOP_SETTINGS, raisingLoop } from "./_raising_loop.ts";

export default scenario({
  name: "raise_in_loop_unguarded",
  description:
    "allocation callbacks raising inside a loop, no try: each step's exception is logged",
  ...RAISING_LOOP_SETTINGS,
}, (s) =>
  raisingLoop(s, {
    allocMinor: cb.track().every(4, act.raise("E")),
    allocMajor: cb.track().every(3, act.raise("E")),
  }));
