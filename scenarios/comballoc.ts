/**
 * OCaml's statmemprof/comballoc: `f n = (n, (n, n, f4 n))` with `f4` inlined, so each call is one
 * combined allocation of a pair, a triple and a 4-tuple, each component sampled on its own and
 * reported with its own callstack. The 4-tuples are kept in an array, so only they are promoted.
 */
import { keep, scenario } from "../lib/scenario/mod.ts";

export default scenario({
  name: "comballoc",
  description:
    "statmemprof/comballoc: per-component samples and callstacks of a combined allocation",
  seed: 3,
}, (s) => {
  const main = s.main;
  main.memprof.start({ samplingRate: 0.01, callstackSize: 10 });
  main.call(
    "Comballoc.test@comballoc.ml:52:2-30",
    () =>
      main.repeat(4_000, () =>
        main.allocCombined([2, 3, 4], {
          lifetime: [keep.drop, keep.drop, keep.until("arr")],
          at: [
            ["Comballoc.f@comballoc.ml:35:13-29"],
            ["Comballoc.f@comballoc.ml:35:17-28"],
            ["Comballoc.f@comballoc.ml:35:24-28", "Comballoc.f4@comballoc.ml:32:13-25"],
          ],
        })),
  );
  main.minorGc();
  main.memprof.stop();
  s.release("arr");
  main.fullMajor();
});
