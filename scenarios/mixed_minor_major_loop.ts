/**
 * Mixed minor and major allocation in one loop, with a 16,384-word minor heap: each of 300
 * iterations builds ten small records (2 to 8 words, every other one kept for 50 steps), one
 * 100-word `Array.make` (minor heap, a runtime allocation whose callback runs before it returns)
 * and one 400-word `Array.make` (major heap) kept for three iterations. Stresses the interleaving
 * of alloc_minor and alloc_major callbacks with the minor collections the small heap forces and
 * the promotions and deaths they report, all at rate 0.01 with 8-frame callstacks.
 *
 * OCaml program:
 *   let step i = for j = 1 to 10 do small := Some (record_of_size (2..8)) … done;
 *                medium := Array.make 100 i; big.(i mod 3) <- Array.make 400 i
 *   let () = Gc.Memprof.start ~sampling_rate:0.01 ~callstack_size:8 tracker;
 *            for i = 1 to 300 do step i done; Gc.full_major (); Gc.Memprof.stop ()
 *   (run with OCAMLRUNPARAM=s=16384)
 */
import { keep, scenario, sizes } from "../lib/scenario/mod.ts";

export default scenario({
  name: "mixed_minor_major_loop",
  description: "small records, minor and major Array.make in one loop, 16k-word minor heap",
  seed: 31,
  minorHeapWords: 16_384,
}, (s) => {
  const main = s.main;
  main.memprof.start({ samplingRate: 0.01, callstackSize: 8 });
  main.call(
    "Mixed.main@mixed.ml:40:2-40",
    () =>
      main.repeat(300, () =>
        main.call("Mixed.step@mixed.ml:30:4-30", () => {
          main.repeat(10, () =>
            main.alloc(sizes.choice(2, 3, 5, 8), {
              lifetime: keep.cycle(keep.drop, keep.steps(50)),
              at: "Mixed.record@mixed.ml:12:10-40",
            }));
          main.alloc(100, {
            source: "array",
            lifetime: keep.steps(12),
            at: "Mixed.medium@mixed.ml:20:14-32",
          });
          main.alloc(400, {
            source: "array",
            lifetime: keep.steps(36),
            at: "Mixed.big@mixed.ml:22:21-39",
          });
        })),
  );
  main.fullMajor();
  main.memprof.stop();
});
