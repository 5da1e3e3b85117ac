/**
 * Custom blocks with out-of-heap memory: 100,000 one-dimensional char Bigarrays of 128 bytes
 * (6-word custom blocks, `caml_alloc_custom_mem` reporting 16 words outside the heap), every
 * tenth kept in a global table, with the default 262,144-word minor heap and rate 0.001.
 * memprof samples each block twice over: the 6-word block itself as a minor allocation from C,
 * and its 16 out-of-heap words with source `Custom`. Stresses the custom-memory accounting: in
 * OCaml 5.3 the out-of-heap bytes of young custom blocks count towards `custom_minor_ratio`
 * (100% of the minor heap by default), which forces minor collections well before the minor heap
 * is full; callstacks are empty (`callstack_size` 0). The callbacks of both samples cannot run
 * inside the primitive: they wait for the loop's back-edge poll.
 *
 * OCaml program:
 *   let table = Array.make 10_000 (Bigarray.Array1.create Bigarray.char Bigarray.c_layout 0)
 *   let () = Gc.Memprof.start ~sampling_rate:0.001 ~callstack_size:0 tracker;
 *            for i = 0 to 99_999 do
 *              let b = Bigarray.Array1.create Bigarray.char Bigarray.c_layout 128 in
 *              if i mod 10 = 9 then table.(i / 10) <- b done;
 *            Gc.full_major (); (* release the table *) …; Gc.full_major (); Gc.Memprof.stop ()
 */
import { keep, scenario } from "../lib/scenario/mod.ts";

const everyTenth = keep.cycle(...Array(9).fill(keep.drop), keep.until("table"));

export default scenario({
  name: "bigarray_custom",
  description: "100,000 Bigarray-like custom blocks with out-of-heap memory, every tenth kept",
}, (s) => {
  const main = s.main;
  main.memprof.start({ samplingRate: 0.001, callstackSize: 0 });
  main.repeat(100_000, () => {
    main.alloc(6, { source: "custom", customMem: 16, lifetime: everyTenth });
    main.poll(); // the loop's back-edge: pending callbacks of the primitive's samples run here
  });
  main.fullMajor();
  s.release("table");
  main.fullMajor();
  main.memprof.stop();
});
