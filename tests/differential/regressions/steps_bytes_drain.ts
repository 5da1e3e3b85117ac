/**
 * Pacing (shrunk from random scenario rnd-3-60 of seed 3): 600 strings of 2,218 words, each
 * kept for 49 steps (a keep.steps site of 50 slots), and a deallocation callback keeping a small
 * block in a 29-slot ring. When marking scans the steps site, its strings go into the prefetch
 * buffer; with the slice's budget spent, OCaml 5.3's mark loop still marks every one of them
 * (major_gc.c, `do_some_marking`'s drain mode): a single slice marks the whole site, tens of
 * thousands of words past its budget. The simulation's marking spread that work over several
 * slices and ended a cycle at iteration 471, OCaml 5.3 at iteration 468.
 */
import { act, cb, keep, scenario } from "../../../lib/scenario/mod.ts";

export default scenario(
  { name: "steps_bytes_drain", seed: 973665, minorHeapWords: 32_768 },
  (s) => {
    const m = s.main;
    m.memprof.start({
      name: "p1",
      samplingRate: 0.001,
      tracker: {
        allocMajor: cb.track(),
        deallocMajor: cb.none().always(act.alloc(3, keep.ring(29, "b"))),
      },
    });
    m.repeat(600, () => {
      m.alloc(2218, { source: "major", lifetime: keep.steps(49) });
    });
    m.memprof.stop();
  },
);
