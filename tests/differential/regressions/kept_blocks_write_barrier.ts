/**
 * Issue 22: 29,000 three-field blocks, each kept 1,000 steps, with a 4,096-word minor heap. A
 * cycle is much longer than 1,000 steps, so every block kept when a cycle starts has left its
 * slot before marking (which waits for sweeping to end) scans the slot array: the slot's
 * `caml_modify` darkens it (memory.c, `write_barrier` calls `caml_darken`), and a block of at
 * most eight immediate fields is marked without any marking work (major_gc.c,
 * `mark_stack_push_block` pushes nothing). The simulation charged every block kept at the
 * cycle's start its size, 4,000 words more marking per cycle, and ended the cycle at iteration
 * 28,188 where OCaml 5.3 ends it at 27,677.
 */
import { keep, scenario } from "../../../lib/scenario/mod.ts";

export default scenario({ name: "kept_blocks_write_barrier", minorHeapWords: 4_096 }, (s) => {
  const m = s.main;
  m.memprof.start({ samplingRate: 0.001, callstackSize: 4 });
  m.repeat(29_000, () => m.alloc(3, { lifetime: keep.steps(1_000) }));
  m.memprof.stop();
});
