/**
 * Pacing (rnd-9-56 and rnd-9-31 of seed 9, whose `Gc.compact` calls this reduces): a block that
 * `Gc.compact` moved was swept never again. Compaction gave each live block a new address and
 * the major GC a copy of it under that address, while the heap's lists (its large allocations,
 * its pools) still held the original, whose colour no cycle rotated any more: the strings the
 * keep ring held at each compaction stayed in the heap for good, 36,000 words more to sweep each
 * time, and every later cycle ended later than OCaml 5.3's (33 minor collections and 21 major
 * cycles against OCaml's 36 and 24). A moved block is now the same block under its new address
 * (`MajorGc.move`; OCaml 5.3 moves only blocks of pools, shared_heap.c `caml_compact_heap`, and
 * the simulation's addresses are names only).
 */
import { cb, keep, scenario } from "../../../lib/scenario/mod.ts";

export default scenario(
  { name: "compacted_blocks_swept", seed: 1, minorHeapWords: 8192 },
  (s) => {
    const m = s.main;
    m.memprof.start({
      name: "p",
      samplingRate: 0.001,
      callstackSize: 4,
      tracker: { allocMajor: cb.track(), deallocMajor: cb.track() },
    });
    m.repeat(4, () => {
      m.repeat(12, () => {
        m.alloc(3000, { source: "runtime", lifetime: keep.ring(12) });
      });
      m.compact();
      m.repeat(150, () => {
        m.alloc(2000, { source: "runtime" });
      });
    });
    m.memprof.stop();
  },
);
