/**
 * Major-heavy loop, small arrays: after a `Gc.minor ()`, `sink := Array.make 300 i` 2,000 times
 * at rate 0.01. Every array is above the 256-word limit, so each goes straight to the major heap
 * (`caml_alloc_shr`, binomial samples over its 301 words: nearly every array is sampled) and the
 * previous one dies when `sink` is overwritten. Nothing in the program asks for a collection
 * until the final `Gc.full_major`: in OCaml 5.3 the major work these allocations schedule ends
 * whole cycles inside the loop (and every cycle empties the minor heap), so this stresses when
 * the dead arrays' dealloc_major callbacks and the loop's minor collections happen.
 *
 * OCaml program:
 *   let sink = ref [||]
 *   let fill () = for i = 1 to 2000 do sink := Array.make 300 i done
 *   let () = Gc.Memprof.start ~sampling_rate:0.01 ~callstack_size:8 tracker;
 *            Gc.minor (); fill (); sink := [||]; Gc.full_major (); Gc.Memprof.stop ()
 */
import { keep, scenario } from "../lib/scenario/mod.ts";

export default scenario({
  name: "array_loop_300",
  description: "sink := Array.make 300 i in a loop at rate 0.01: major cycles inside the loop",
}, (s) => {
  const main = s.main;
  main.memprof.start({ samplingRate: 0.01, callstackSize: 8 });
  main.minorGc();
  main.call(
    "Array_loop_300.fill@array_loop_300.ml:2:10-70",
    () =>
      main.repeat(2_000, () =>
        main.alloc(300, {
          source: "array",
          lifetime: keep.steps(1), // sink := …: the old array dies at the next assignment
          at: "Array_loop_300.fill@array_loop_300.ml:2:45-64",
        })),
  );
  main.fullMajor();
  main.memprof.stop();
});
