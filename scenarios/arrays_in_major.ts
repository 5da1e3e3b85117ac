/**
 * OCaml's statmemprof/arrays_in_major: `Array.make i 0` for i in 250..350, some kept in a list,
 * at rate 0.01: arrays above 256 words go straight to the major heap (alloc_major, binomial
 * samples over their words), smaller ones to the minor heap; kept arrays die when the list is
 * dropped, and their dealloc_major callbacks come at the next full major collection.
 */
import { keep, scenario, sizes } from "../lib/scenario/mod.ts";

export default scenario({
  name: "arrays_in_major",
  description: "statmemprof/arrays_in_major: arrays allocated directly in the major heap",
  seed: 7,
}, (s) => {
  const main = s.main;
  main.memprof.start({ samplingRate: 0.01, callstackSize: 10 });
  main.call(
    "Arrays_in_major.allocate_arrays@arrays_in_major.ml:10:2-70",
    () =>
      main.repeat(300, () =>
        main.alloc(sizes.uniform(250, 350), {
          source: "array",
          lifetime: keep.cycle(keep.drop, keep.until("root")),
          at: "Arrays_in_major.allocate_arrays@arrays_in_major.ml:12:26-42",
        })),
  );
  main.fullMajor();
  s.release("root");
  main.fullMajor();
  main.memprof.stop();
});
