/**
 * Callbacks that collect, inside loops: every 20th alloc_minor callback runs `Gc.minor ()`,
 * every 4th alloc_major callback runs `Gc.full_major ()`, and every 25th dealloc_minor callback
 * runs `Gc.minor ()` again. The collections a callback runs promote or free blocks whose own
 * callbacks are queued behind it (memprof runs one callback at a time per thread), and a
 * full_major inside a callback ends three cycles while the loop's blocks are still young.
 *
 * OCaml program:
 *   tracker = { alloc_minor = (fun i -> if nth mod 20 = 0 then Gc.minor (); Some …);
 *               alloc_major = (fun i -> if nth mod 4 = 0 then Gc.full_major (); Some …);
 *               dealloc_minor = (fun _ -> if nth mod 25 = 0 then Gc.minor ()); … }
 *   let () = Gc.Memprof.start ~sampling_rate:0.02 ~callstack_size:10 tracker;
 *            for i = 1 to 400 do for j = 1 to 20 do cell := (…) done;
 *                                arr := Array.make 300 i done;
 *            Gc.full_major (); Gc.Memprof.stop ()
 */
import { act, cb, keep, scenario, sizes } from "../lib/scenario/mod.ts";

export default scenario({
  name: "gc_in_callbacks",
  description: "callbacks running Gc.minor and Gc.full_major inside allocation loops",
  seed: 3,
  minorHeapWords: 32_768,
}, (s) => {
  const main = s.main;
  main.memprof.start({
    samplingRate: 0.02,
    callstackSize: 10,
    tracker: {
      allocMinor: cb.track().every(20, act.gc("minor")),
      allocMajor: cb.track().every(4, act.gc("fullMajor")),
      deallocMinor: cb.none().every(25, act.gc("minor")),
    },
  });
  main.call("Gc_in_callbacks.main@gc_in_callbacks.ml:40:2-40", () =>
    main.repeat(400, () => {
      main.repeat(20, () =>
        main.alloc(sizes.uniform(2, 6), {
          lifetime: keep.cycle(keep.drop, keep.drop, keep.steps(30)),
          at: "Gc_in_callbacks.cell@gc_in_callbacks.ml:20:13-40",
        }));
      main.alloc(300, {
        source: "array",
        lifetime: keep.steps(21),
        at: "Gc_in_callbacks.arr@gc_in_callbacks.ml:22:12-28",
      });
    }));
  main.fullMajor();
  main.memprof.stop();
});
