/**
 * Raising promotion and deallocation callbacks inside a loop with no handler in the scenario:
 * every 6th promote and every 7th dealloc_minor callback raises `E`, besides every 4th
 * alloc_minor and every 3rd alloc_major. When a callback raises, the callbacks queued behind it
 * stay pending (memprof stops at the first exception) and run at a later runtime entry, where
 * they may raise again. Stresses where those pending callbacks run: in the simulation at the next
 * allocation or primitive that enters the runtime; in OCaml 5.3 also inside `caml_raise` (which
 * processes pending actions before raising from C) and at any poll point, including the loop's
 * own back-edge. The loop and its OCaml program: scenarios/_raising_loop.ts (the same as
 * raise_in_loop_unguarded's).
 */
import { act, cb, scenario } from "../lib/scenario/mod.ts";
import { RAISING_LOOP_SETTINGS, raisingLoop } from "./_raising_loop.ts";

export default scenario({
  name: "raise_pending_unguarded",
  description: "promote and dealloc callbacks raising in a loop, no try: pending callbacks",
  ...RAISING_LOOP_SETTINGS,
}, (s) =>
  raisingLoop(s, {
    allocMinor: cb.track().every(4, act.raise("E")),
    allocMajor: cb.track().every(3, act.raise("E")),
    promote: cb.track().every(6, act.raise("E")),
    deallocMinor: cb.none().every(7, act.raise("E")),
  }));
