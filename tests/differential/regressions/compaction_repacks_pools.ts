/**
 * Pacing: `Gc.compact`'s last cycle compacts the heap (shared_heap.c, `caml_compact_heap`, right
 * after `caml_cycle_heap`): size class by size class, the partially filled pools are kept from
 * the head of their list until their free slots can hold the live blocks of the pools after
 * them, whose live blocks are copied into the head pool and which are then released. The
 * simulation kept every pool, so after each compaction its heap had pools more than OCaml's to
 * sweep, and its cycles ended later: 41 minor collections against OCaml 5.3's 42 (and before
 * moved blocks were swept, `compacted_blocks_swept`, 41 and 20 major cycles against 21). The
 * heap now compacts its pools as OCaml 5.3 does (`MajorHeap.compact`).
 */
import { cb, keep, scenario } from "../../../lib/scenario/mod.ts";

export default scenario(
  { name: "compaction_repacks_pools", seed: 1, minorHeapWords: 8192 },
  (s) => {
    const m = s.main;
    m.memprof.start({
      name: "p",
      samplingRate: 0.001,
      callstackSize: 4,
      tracker: { allocMajor: cb.track(), deallocMajor: cb.track() },
    });
    m.repeat(3, () => {
      m.repeat(400, () => {
        m.alloc(40, { lifetime: keep.ring(300) });
        m.alloc(40);
      });
      m.compact();
      m.repeat(150, () => {
        m.alloc(2000, { source: "runtime" });
        m.alloc(40, { lifetime: keep.ring(300) });
      });
    });
    m.memprof.stop();
  },
);
