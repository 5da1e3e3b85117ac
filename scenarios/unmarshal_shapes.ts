/**
 * Unmarshalling values of several shapes at rate 0.02: a record holding a short list
 * (`[3; 2; 2; 2]`), two values on either side of the limit of intern.c's single minor-heap
 * allocation (blocks of 100 + 100 + 54 words: 257 words with their headers, laid out in one
 * 256-word minor block; 100 + 100 + 55: 258 words, too many, so each block is allocated in the
 * major heap), a 30-word and a 300-word one-block value, and a wide tree of 40 small blocks.
 * Each block is sampled on its own with source `Marshal` and its callback runs before
 * `Marshal.from_string` returns; the values live for different spans: a few steps, until the
 * end, or not at all. Stresses the bulk-versus-major split and the alloc_minor/alloc_major
 * choice per block, then promotions and deaths of marshalled blocks, with 12-frame callstacks.
 *
 * OCaml program:
 *   let values = ref []
 *   let () = Gc.Memprof.start ~sampling_rate:0.02 ~callstack_size:12 tracker;
 *            for i = 1 to 100 do read_all i done  (* each read: Marshal.from_string s 0,
 *              the result stored in a slot overwritten later, in a global list, or dropped *)
 *            Gc.minor (); values := []; Gc.full_major (); Gc.Memprof.stop ()
 */
import { keep, scenario } from "../lib/scenario/mod.ts";

const kept = keep.cycle(keep.drop, keep.until("values"));

export default scenario({
  name: "unmarshal_shapes",
  description: "Marshal.from_string of several block shapes, in and out of the minor heap",
  minorHeapWords: 65_536,
}, (s) => {
  const main = s.main;
  main.memprof.start({ samplingRate: 0.02, callstackSize: 12 });
  main.call(
    "Unmarshal_shapes.main@unmarshal_shapes.ml:50:2-40",
    () =>
      main.repeat(
        100,
        () =>
          main.call("Unmarshal_shapes.read_all@unmarshal_shapes.ml:40:4-60", () => {
            main.unmarshal([3, 2, 2, 2], {
              lifetime: keep.steps(3),
              at: "Unmarshal_shapes.record_list@unmarshal_shapes.ml:10:10-40",
            });
            main.unmarshal([100, 100, 54], {
              lifetime: keep.until("values"),
              at: "Unmarshal_shapes.fits@unmarshal_shapes.ml:14:10-40",
            });
            main.unmarshal([100, 100, 55], {
              lifetime: keep.steps(6),
              at: "Unmarshal_shapes.too_big@unmarshal_shapes.ml:18:10-40",
            });
            main.alloc(30, {
              source: "unmarshal",
              lifetime: kept,
              at: "Unmarshal_shapes.small_array@unmarshal_shapes.ml:22:10-40",
            });
            main.alloc(300, {
              source: "unmarshal",
              lifetime: kept,
              at: "Unmarshal_shapes.big_array@unmarshal_shapes.ml:26:10-40",
            });
            main.unmarshal(Array(40).fill(4), {
              at: "Unmarshal_shapes.tree@unmarshal_shapes.ml:30:10-40",
            });
          }),
      ),
  );
  main.minorGc();
  s.release("values");
  main.fullMajor();
  main.memprof.stop();
});
