/**
 * A long-lived set growing over many major cycles: 80 rounds each add 250 small nodes (every
 * fifth kept for ever, the rest garbage) and one 300-word bucket array kept for ever, then run a
 * major slice; every tenth round also runs `Gc.major`. At rate 0.01, the kept nodes are promoted
 * at minor collections (promote callbacks) and survive every cycle, while the garbage dies in
 * the minor heap; the final `Gc.full_major` reports only the dropped blocks of the major heap.
 * Stresses promotions into an ever-larger major heap and tracked blocks that outlive many
 * cycles, with a 32,768-word minor heap.
 *
 * OCaml program:
 *   let set = ref [] and buckets = ref []
 *   let add_round () = for j = 1 to 250 do let n = node () in if j mod 5 = 0 then set := n :: !set
 *                      done; buckets := Array.make 300 0 :: !buckets; Gc.major_slice 0 |> ignore
 *   let () = Gc.Memprof.start ~sampling_rate:0.01 ~callstack_size:6 tracker;
 *            for r = 1 to 8 do for k = 1 to 10 do add_round () done; Gc.major () done;
 *            Gc.full_major (); Gc.Memprof.stop ()
 */
import { keep, scenario, sizes } from "../lib/scenario/mod.ts";

export default scenario({
  name: "growing_set",
  description: "a set kept for ever grows over many major cycles (slices and Gc.major)",
  seed: 17,
  minorHeapWords: 32_768,
}, (s) => {
  const main = s.main;
  main.memprof.start({ samplingRate: 0.01, callstackSize: 6 });
  main.call("Growing_set.main@growing_set.ml:30:2-50", () =>
    main.repeat(8, () => {
      main.repeat(10, () =>
        main.call("Growing_set.add_round@growing_set.ml:20:4-60", () => {
          main.repeat(250, () =>
            main.alloc(sizes.uniform(3, 9), {
              lifetime: keep.cycle(keep.drop, keep.drop, keep.drop, keep.drop, keep.forever),
              at: "Growing_set.node@growing_set.ml:10:14-40",
            }));
          main.alloc(300, {
            source: "array",
            lifetime: keep.forever,
            at: "Growing_set.bucket@growing_set.ml:14:16-32",
          });
          main.majorSlice();
        }));
      main.majorGc();
    }));
  main.fullMajor();
  main.memprof.stop();
});
