/**
 * Major-heavy loop, medium arrays: `sink := Array.make 1000 i` 1,000 times at rate 0.01 after a
 * `Gc.minor ()`, with a 16-word callstack and no named frames (the callstack is the harness's
 * own). One million words go straight to the major heap between two explicit collections; every
 * array is sampled (about ten samples each, `n` of the alloc_major callback). What it stresses:
 * OCaml 5.3 completes major cycles (and empties the minor heap) from the work these allocations
 * schedule, which decides when each dead array's dealloc_major callback comes.
 *
 * OCaml program:
 *   let sink = ref [||]
 *   let () = Gc.Memprof.start ~sampling_rate:0.01 ~callstack_size:16 tracker; Gc.minor ();
 *            for i = 1 to 1000 do sink := Array.make 1000 i done;
 *            Gc.major (); Gc.Memprof.stop (); Gc.full_major ()
 */
import { keep, scenario } from "../lib/scenario/mod.ts";

export default scenario({
  name: "array_loop_1000",
  description: "sink := Array.make 1000 i in a loop at rate 0.01",
}, (s) => {
  const main = s.main;
  main.memprof.start({ samplingRate: 0.01, callstackSize: 16 });
  main.minorGc();
  main.repeat(1_000, () => main.alloc(1_000, { source: "array", lifetime: keep.steps(1) }));
  main.majorGc();
  main.memprof.stop();
  main.fullMajor(); // the stopped profile still gets the last array's dealloc_major
});
