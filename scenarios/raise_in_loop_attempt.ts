/**
 * Raising callbacks inside a loop, each iteration under `try … with _ -> ()`: every 3rd
 * alloc_minor callback raises `E` out of the allocation (the rest of the iteration is skipped),
 * every 2nd alloc_major callback raises out of `Array.make`, and every 5th promote callback
 * raises out of the `Gc.minor ()` that ends every tenth iteration. Stresses where the runtime
 * delivers each exception, which later callbacks still run, and that a block whose allocation
 * callback raised is never tracked (no promote or dealloc for it).
 *
 * OCaml program:
 *   for i = 1 to 60 do for j = 1 to 10 do
 *     try let a = node () in let b = Array.make 300 j in keep a b; … with _ -> ()
 *   done; (try Gc.minor () with _ -> ()) done
 */
import { act, cb, keep, scenario } from "../lib/scenario/mod.ts";

export default scenario({
  name: "raise_in_loop_attempt",
  description: "callbacks raising inside a loop, each iteration in try … with _ -> ()",
  minorHeapWords: 16_384,
}, (s) => {
  const main = s.main;
  main.memprof.start({
    samplingRate: 0.02,
    callstackSize: 6,
    tracker: {
      allocMinor: cb.track().every(3, act.raise("E")),
      allocMajor: cb.track().every(2, act.raise("E")),
      promote: cb.track().every(5, act.raise("E")),
    },
  });
  main.call("Raise_attempt.main@raise_attempt.ml:30:2-40", () =>
    main.repeat(60, () => {
      main.repeat(10, () =>
        main.attempt(() =>
          main.call("Raise_attempt.step@raise_attempt.ml:20:8-60", () => {
            main.alloc(4, {
              lifetime: keep.steps(40),
              at: "Raise_attempt.node@raise_attempt.ml:10:12-30",
            });
            main.alloc(300, {
              source: "array",
              lifetime: keep.steps(20),
              at: "Raise_attempt.arr@raise_attempt.ml:12:12-28",
            });
            main.repeat(20, () =>
              main.alloc(3, {
                lifetime: keep.until("roots"),
                at: "Raise_attempt.leaf@raise_attempt.ml:14:12-30",
              }));
          })
        ));
      main.attempt(() =>
        main.minorGc()
      );
    }));
  main.memprof.stop();
  s.release("roots");
  main.fullMajor();
});
