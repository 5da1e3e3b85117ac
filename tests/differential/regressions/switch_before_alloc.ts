// Issue 22 (polls): a `match` that ocamlopt compiles to a jump table (an Iswitch) counts as
// "unsafe" in its polling analysis whatever follows it (asmcomp/dataflow.ml folds a switch's arms
// from the bottom value), so a loop whose body starts with one polls at its back-edge even if an
// allocation follows. The program draws a size among four in a row (1–4) with such a match, and
// keeps with keep.cycle through a match on the cycle's position (three arms or more in a row:
// a table too). The simulation counted the allocation after them and gave both loops no poll:
// the callback of each iteration's C allocation ran at the next iteration's first allocation
// instead of at the back-edge.
import { keep, scenario, sizes } from "../../../lib/scenario/mod.ts";

export default scenario({ name: "switch_before_alloc", seed: 7, minorHeapWords: 8192 }, (s) => {
  const m = s.main;
  m.memprof.start({ samplingRate: 0.05, callstackSize: 4 });
  m.repeat(60, () => {
    m.alloc(sizes.choice(1, 2, 3, 4));
    m.alloc(2);
    m.alloc(3, { source: "runtime" });
  });
  m.repeat(60, () => {
    m.alloc(3, {
      source: "array",
      lifetime: keep.cycle(keep.ring(2), keep.ring(3), keep.ring(4), keep.ring(5)),
    });
    m.alloc(2);
    m.alloc(4, { source: "runtime" });
  });
  m.memprof.stop();
});
