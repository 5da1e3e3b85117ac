/**
 * Major-heavy loop, large arrays: `Array.make 5000 i` 300 times at rate 0.01, every tenth kept in
 * a global list, the others dropped at once; `callstack_size` 0, so every callstack is empty.
 * 1.5 million words go straight to the major heap (about fifty samples per array) while the live
 * major heap keeps growing by 30 arrays: OCaml 5.3's major work, paced by these direct major
 * allocations, completes cycles inside the loop and the dropped arrays' dealloc_major callbacks
 * come there, not at the final collection.
 *
 * OCaml program:
 *   let kept = ref []
 *   let () = Gc.Memprof.start ~sampling_rate:0.01 ~callstack_size:0 tracker; Gc.minor ();
 *            for i = 1 to 300 do
 *              let a = Array.make 5000 i in if i mod 10 = 0 then kept := a :: !kept done;
 *            Gc.full_major (); kept := []; Gc.full_major (); Gc.Memprof.stop ()
 */
import { keep, scenario } from "../lib/scenario/mod.ts";

const every10th = keep.cycle(...Array(9).fill(keep.drop), keep.until("kept"));

export default scenario({
  name: "array_loop_5000",
  description: "Array.make 5000 i in a loop at rate 0.01, every tenth kept",
}, (s) => {
  const main = s.main;
  main.memprof.start({ samplingRate: 0.01, callstackSize: 0 });
  main.minorGc();
  main.repeat(300, () => main.alloc(5_000, { source: "array", lifetime: every10th }));
  main.fullMajor();
  s.release("kept");
  main.fullMajor();
  main.memprof.stop();
});
