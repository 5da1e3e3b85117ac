/**
 * Issue 22: 1,000 Bigarrays (6-word custom blocks holding 4,096 words outside the heap) kept in a
 * 10-slot ring, with a 16,384-word minor heap: their memory asks for a minor collection every
 * few arrays, the survivors are promoted, and out-of-heap memory paces the major GC. A promoted
 * array still in the ring when a cycle starts is overwritten before marking reaches the ring
 * (memory.c, `write_barrier` darkens it: a custom block has no fields to scan, no marking work),
 * and from the fifth cycle on marking visits the harness's `Gc.quick_stat ()` record and
 * memprof's configuration; the program's harness has no keep site but the ring (see
 * no_keep_site_harness). Without these, the simulation ended a second major cycle in the poll
 * of iteration 276, where OCaml 5.3 only collected the minor heap.
 */
import { keep, scenario } from "../../../lib/scenario/mod.ts";

export default scenario({ name: "bigarray_ring_barrier", minorHeapWords: 16_384 }, (s) => {
  const m = s.main;
  m.memprof.start({ samplingRate: 0.001, callstackSize: 4 });
  m.repeat(1_000, () => {
    m.alloc(6, { source: "custom", customMem: 4_096, lifetime: keep.ring(10) });
  });
  m.memprof.stop();
});
