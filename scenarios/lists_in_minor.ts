/**
 * OCaml's statmemprof/lists_in_minor: lists of `len` cells built and dropped `cnt` times; every
 * sample is a 2-word cons cell from OCaml code, and the number of samples follows a binomial law
 * over the words allocated (3 per cell, header included).
 */
import { cb, keep, scenario } from "../lib/scenario/mod.ts";

export default scenario({
  name: "lists_in_minor",
  description: "statmemprof/lists_in_minor: list cells sampled at the sampling rate",
}, (s) => {
  const main = s.main;
  main.memprof.start({
    samplingRate: 0.001,
    callstackSize: 10,
    tracker: { allocMinor: cb.none(), allocMajor: cb.none() },
  });
  main.call(
    "Lists_in_minor.allocate_lists@lists_in_minor.ml:12:2-60",
    () =>
      main.repeat(100, () => {
        main.repeat(1_000, () =>
          main.alloc(2, {
            // allocate_list (n :: accu): the cells link each other.
            lifetime: keep.list("list"),
            at: "Lists_in_minor.allocate_list@lists_in_minor.ml:8:9-26",
          }));
        s.release("list");
      }),
  );
  main.memprof.stop();
});
