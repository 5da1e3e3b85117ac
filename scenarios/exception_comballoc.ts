/**
 * OCaml's statmemprof/exception_comballoc: profile i (rate 1) raises in its i-th allocation
 * callback, inside a combined allocation of 7 blocks (f33) followed by a cons cell. A raise
 * cancels the whole combined allocation: the components whose callbacks already ran get their
 * deallocation callbacks, and nothing of it is allocated.
 */
import { cb, keep, scenario } from "../lib/scenario/mod.ts";

/** f33's blocks in the compiler's layout order (memprof walks 6, 5, 4, 6, 5, 4, 3 words). */
const F33 = [2, 3, 4, 5, 3, 4, 5];

export default scenario({
  name: "exception_comballoc",
  description: "statmemprof/exception_comballoc: a raising callback cancels a combined allocation",
}, (s) => {
  const main = s.main;
  for (let i = 1; i <= 10; i++) {
    main.memprof.start({
      samplingRate: 1,
      callstackSize: 10,
      tracker: { allocMinor: cb.track().raiseOn(i, "MyExc") },
    });
    main.attempt(() => {
      main.allocCombined(F33, {
        lifetime: keep.until("arr"),
        at: "Exception_comballoc.f33@exception_comballoc.ml:20:2-60",
      });
      main.alloc(2, {
        lifetime: keep.until("arr"),
        at: "Exception_comballoc.test@exception_comballoc.ml:41:6-40",
      });
    });
    main.memprof.stop();
    main.minorGc();
  }
  s.release("arr");
  main.fullMajor();
});
