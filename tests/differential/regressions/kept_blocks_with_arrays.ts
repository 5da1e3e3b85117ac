/**
 * Issue 22: blocks kept 1,000 steps, with a dropped `Array.make 600` every 100 of them, in a
 * 4,096-word minor heap. As in kept_blocks_write_barrier, a kept block has left its slot before
 * marking reaches the slot array, and the slot's `caml_modify` darkened it for nothing; the
 * simulation charged its size, and ended the fourth major cycle in the `Array.make` of iteration
 * 110 where OCaml 5.3 ends it in that of iteration 107.
 */
import { keep, scenario } from "../../../lib/scenario/mod.ts";

export default scenario({ name: "kept_blocks_with_arrays", minorHeapWords: 4_096 }, (s) => {
  const m = s.main;
  m.memprof.start({ samplingRate: 0.001, callstackSize: 4 });
  m.repeat(200, () => {
    m.repeat(100, () => m.alloc(3, { lifetime: keep.steps(1_000) }));
    m.alloc(600, { source: "array" });
  });
  m.memprof.stop();
});
