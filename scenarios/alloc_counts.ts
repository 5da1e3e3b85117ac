/**
 * OCaml's statmemprof/alloc_counts: at rate 1 every word is a sample, so the samples reported
 * equal the words allocated, for small blocks, short and long arrays, closures and
 * unmarshalled values.
 */
import { cb, scenario } from "../lib/scenario/mod.ts";

export default scenario({
  name: "alloc_counts",
  description: "statmemprof/alloc_counts: at rate 1, samples equal words allocated",
}, (s) => {
  const main = s.main;
  main.memprof.start({
    samplingRate: 1,
    callstackSize: 0,
    tracker: { allocMinor: cb.none(), allocMajor: cb.none() },
  });
  main.repeat(10, () => main.allocCombined([1, 1, 1])); // ref (ref (ref 42))
  main.repeat(10, () => main.alloc(10, { source: "array" })); // Array.make 10 'a'
  main.repeat(10, () => main.alloc(1000, { source: "array" })); // Array.make 1000 'a'
  main.repeat(10, () => main.alloc(3)); // fun a b -> a + b
  // Marshal.from_string (Marshal.to_string (ref (ref (ref 42))) []): three 1-word blocks
  main.repeat(10, () => main.unmarshal([1, 1, 1]));
  main.memprof.stop();
});
