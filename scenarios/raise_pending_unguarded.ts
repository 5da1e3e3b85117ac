/**
 * Raising promotion and deallocation callbacks inside a loop with no handler in the scenario:
 * every 6th promote and every 7th dealloc_minor callback raises `E`, besides every 4th
 * alloc_minor and every 3rd alloc_major. When a callback raises, the callbacks queued behind it
 * stay pending (memprof stops at the first exception) and run at a later runtime entry, where
 * they may raise again. Stresses where those pending callbacks run: in the simulation at the next
 * allocation or primitive that enters the runtime; in OCaml 5.3 also inside `caml_raise` (which
 * processes pending actions before raising from C) and at any poll point, including the loop's
 * own back-edge.
 *
 * OCaml program:
 *   for i = 1 to 30 do
 *     for j = 1 to 50 do (try cell := node () with e -> log e) done;
 *     (try big := Array.make 280 i with e -> log e)
 *   done
 *   (run with OCAMLRUNPARAM=s=8192)
 */
import { act, cb, keep, scenario, sizes } from "../lib/scenario/mod.ts";

export default scenario({
  name: "raise_pending_unguarded",
  description: "promote and dealloc callbacks raising in a loop, no try: pending callbacks",
  seed: 9,
  minorHeapWords: 8_192,
}, (s) => {
  const main = s.main;
  main.memprof.start({
    samplingRate: 0.01,
    callstackSize: 0,
    tracker: {
      allocMinor: cb.track().every(4, act.raise("E")),
      allocMajor: cb.track().every(3, act.raise("E")),
      promote: cb.track().every(6, act.raise("E")),
      deallocMinor: cb.none().every(7, act.raise("E")),
    },
  });
  main.repeat(30, () => {
    main.repeat(50, () =>
      main.alloc(sizes.uniform(2, 8), {
        lifetime: keep.cycle(keep.drop, keep.steps(100)),
      }));
    main.alloc(280, { source: "array", lifetime: keep.steps(60) });
  });
  main.minorGc();
  main.memprof.stop();
  main.fullMajor();
});
