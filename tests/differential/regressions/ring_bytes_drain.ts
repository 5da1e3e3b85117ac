/**
 * Pacing (shrunk from random scenario rnd-3-17 of seed 3): 3,380-word strings kept in a 19-slot
 * ring, a `Gc.major_slice 0` before each, and a keep.steps site of 4,096 slots (a deallocation
 * callback's). Marking runs over several slices; in the one that scans the ring, the ring's
 * strings go into the prefetch buffer, and once the slice's budget is spent OCaml 5.3's mark
 * loop still takes every one of them out and marks it (major_gc.c, `do_some_marking`'s drain
 * mode): thousands of words past the budget, so marking ends a slice earlier. A string that the
 * ring loses before marking scans it is darkened by the write barrier, at no cost. The
 * simulation's marking (min(budget, left) a slice, every slot taken as scanned once marking
 * began) ended a cycle at iteration 44, OCaml 5.3 at iteration 43.
 */
import { act, cb, keep, scenario } from "../../../lib/scenario/mod.ts";

export default scenario({ name: "ring_bytes_drain", seed: 12, minorHeapWords: 65_536 }, (s) => {
  const m = s.main;
  m.memprof.start({
    name: "p1",
    samplingRate: 0.0001,
    tracker: {
      allocMajor: cb.track(),
      deallocMajor: cb.track().every(2, act.alloc(1, keep.steps(39, "a")), 2),
    },
  });
  m.repeat(60, () => {
    m.majorSlice();
    m.alloc(3380, { source: "major", lifetime: keep.ring(19) });
  });
  m.memprof.stop();
  s.release("a");
});
