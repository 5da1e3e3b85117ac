/**
 * Issue 22, bug 2: a profile stopped but not discarded keeps its tracked blocks, whose
 * callbacks OCaml still runs after the run, when the exported program prints its log (its
 * allocations fill the minor heap). The 500 blocks sampled here are young and dead when the
 * run ends; the collection that printing the log causes would run their deallocation
 * callbacks, the first of which raises. The run ends at its final poll, in the simulation and in
 * the program: those callbacks must do nothing.
 */
import { cb, scenario } from "../../../lib/scenario/mod.ts";

export default scenario({
  name: "callbacks_after_run",
  description: "a stopped profile's callbacks after the run, while the program prints its log",
  minorHeapWords: 16_384,
}, (s) => {
  const main = s.main;
  main.memprof.start({
    samplingRate: 1,
    callstackSize: 4,
    tracker: { deallocMinor: cb.none().on(1, { kind: "raise", exn: "AfterRun" }) },
  });
  main.repeat(500, () => main.alloc(2));
  main.memprof.stop();
});
