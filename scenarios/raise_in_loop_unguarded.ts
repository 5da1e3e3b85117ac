/**
 * Raising allocation callbacks inside a loop with no handler in the scenario: every 4th
 * alloc_minor and every 3rd alloc_major callback raises `E`. Outside an `attempt`, the exception
 * escapes the allocation that ran the callback and the next step runs (the exported program
 * catches it around that one statement and logs it). Promotion and deallocation callbacks do not
 * raise, so no callback is left pending behind an exception (see raise_pending_unguarded for
 * that). The 8,192-word minor heap fills every few iterations, so the raising allocations also
 * run the promote and dealloc callbacks queued by the collections they trigger; callstacks are
 * empty (`callstack_size` 0).
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
  name: "raise_in_loop_unguarded",
  description:
    "allocation callbacks raising inside a loop, no try: each step's exception is logged",
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
