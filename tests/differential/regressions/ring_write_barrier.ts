/**
 * Issue 22 (shrunk from random scenario rnd-1-11): 13 × 198 blocks of 47 fields kept in a
 * 31-slot ring, a `Gc.minor ()` every 8 iterations, a 16,384-word minor heap, promotion
 * callbacks that collect. A block in the ring when a cycle starts is overwritten 31 iterations
 * later, before marking reaches the ring: `caml_modify` darkens it (memory.c, `write_barrier`),
 * which pushes only its fields past the eighth (major_gc.c, `mark_stack_push_block`): 39 words
 * of marking, not 48. The simulation charged the whole block and ended the third major cycle
 * at iteration 13.192, OCaml 5.3 at 13.184.
 */
import { act, cb, keep, scenario } from "../../../lib/scenario/mod.ts";

export default scenario(
  { name: "ring_write_barrier", seed: 568620, minorHeapWords: 16_384 },
  (s) => {
    const m = s.main;
    m.memprof.start({
      name: "p1",
      samplingRate: 0.001,
      callstackSize: 11,
      tracker: {
        allocMajor: cb.none().on(
          21,
          act.start({ name: "p1r", samplingRate: 0.00025, callstackSize: 4, tracker: {} }),
        ),
        promote: cb.track().every(3, act.gc("minor"), 2).on(3, act.gc("majorSlice")),
      },
    });
    m.repeat(13, () => {
      m.repeat(198, (i2) => {
        i2.every(8, () => m.minorGc(), 0);
        m.alloc(47, { lifetime: keep.ring(31, "c"), at: "Gen.site3@gen.ml:23:4-20" });
      });
    });
  },
);
