/**
 * Issue 22, bug 4: the exporter looped for ever computing the program's own heap
 * (lib/export/_harness_heap.ts) for a small minor heap and a keep site of more than a fifth of
 * its words. The site's slot arrays are allocated directly in the major heap at initialisation,
 * and each asks for a global slice; the first slice swept a whole pool, ahead of the second
 * array's target, so the second slice had no work to do, committed none, and the request was
 * never cleared. OCaml 5.3 runs one slice, then one more on every domain, and goes on. Here the
 * site holds 857 slots: 858 words, past 4,096 / 5; the first slice swept 4,092 words of a pool
 * for a target of 3,431, and the second array's target (6,862) was already behind the work done.
 * (The rings are small, so that no major cycle ends during the run: with small minor heaps and
 * much major allocation the simulation's pacing is known to drift from OCaml's, unrelated.)
 */
import { keep, scenario } from "../../../lib/scenario/mod.ts";

export default scenario({
  name: "harness_heap_slices",
  description: "a keep site of over a fifth of a small minor heap's words",
  minorHeapWords: 4_096,
}, (s) => {
  const main = s.main;
  main.memprof.start({ samplingRate: 0.01, callstackSize: 4 });
  main.repeat(857, () => main.alloc(3, { lifetime: keep.until("kept") }));
  main.repeat(40_000, () => main.alloc(4, { lifetime: keep.ring(64) }));
  s.release("kept");
  main.repeat(40_000, () => main.alloc(4, { lifetime: keep.ring(64) }));
  main.memprof.stop();
});
