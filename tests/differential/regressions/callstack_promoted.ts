/**
 * Pacing (shrunk from random scenario rnd-9-162 of seed 9): memprof's callstack arrays are
 * blocks of the minor heap, held by the entry (`user_data`) from their capture
 * (`capture_callstack_GC`) or unstashing (`unstash_callstack`) until the allocation callback
 * starts. When the `sample_info` record that memprof.c's `run_alloc_callback_res` allocates
 * next (`caml_alloc_small(4, 0)`) fills the minor heap, the minor collection promotes the
 * callstack array through memprof's roots (`caml_memprof_scan_roots` from the table's young
 * cursor, in EV_MINOR_MEMPROF_ROOTS): here 5 frames, 6 words in the major heap, garbage at once.
 * The simulation allocated the arrays but promoted nothing: twice in the first loop OCaml 5.3
 * promoted 902 words where the simulation promoted 896, a pool of 6-word blocks filled later,
 * and the fourth major cycle ended at iteration 11.1075 in OCaml, later in the simulation.
 */
import { act, cb, keep, scenario, sizes } from "../../../lib/scenario/mod.ts";

export default scenario({ name: "callstack_promoted", seed: 572892, minorHeapWords: 4096 }, (s) => {
  const m = s.main;
  m.memprof.start({
    name: "p1",
    samplingRate: 0.01,
    callstackSize: 15,
    tracker: {
      promote: cb.track().on(4, act.alloc(59, keep.steps(18, "b"))),
    },
  });
  m.repeat(12, () => {
    m.call("Gen.f2@gen.ml:2:2-14", () => {
      m.alloc(4);
      m.minorGc();
    });
    m.call("Gen.f4@gen.ml:4:2-14", () => {
      m.repeat(16, () => {
        m.alloc(1, { lifetime: keep.list("c"), at: "Gen.site5@gen.ml:25:4-20" });
        m.alloc(2021, { source: "array", at: "Gen.site8@gen.ml:28:4-20" });
      });
      m.poll();
      m.repeat(2146, () => {
        m.allocCombined([2, 7, 10, 7], {
          lifetime: [keep.drop, keep.drop, keep.drop, keep.until("a")],
          at: "Gen.site6@gen.ml:26:4-20",
        });
      });
    });
    m.alloc(2, { at: "Gen.site6@gen.ml:26:4-20" });
  });
  m.alloc(3540, { source: "runtime", lifetime: keep.until("c") });
  m.poll();
  m.memprof.stop();
  m.memprof.start({
    name: "p2",
    samplingRate: 0.01,
    callstackSize: 64,
    tracker: {
      promote: cb.track().every(9, act.raise("Not_found"), 8),
    },
  });
  m.allocCombined([8, 4, 6, 1], {
    lifetime: [keep.drop, keep.drop, keep.drop, keep.drop],
    at: "Gen.site2@gen.ml:22:4-20",
  });
  m.attempt(() => {
    m.alloc(sizes.geometric(1, 62), { lifetime: keep.until("a") });
    m.alloc(1, { at: "Gen.site2@gen.ml:22:4-20" });
    m.alloc(sizes.uniform(12, 31));
  });
  m.call("Gen.f1@gen.ml:1:2-14", () => {
    m.poll();
    m.alloc(134, { source: "unmarshal", at: "Gen.site1@gen.ml:21:4-20" });
    m.alloc(138, { at: "Gen.site4@gen.ml:24:4-20" });
  });
  m.alloc(sizes.geometric(8, 204), {
    lifetime: keep.steps(56, "b"),
    at: "Gen.site7@gen.ml:27:4-20",
  });
  m.alloc(2);
  m.alloc(sizes.choice(8), { lifetime: keep.forever, at: "Gen.site6@gen.ml:26:4-20" });
  m.minorGc();
  m.repeat(5, (i1) => {
    m.alloc(3, { at: "Gen.site4@gen.ml:24:4-20" });
    m.poll();
    m.attempt(() => {
      s.release("b");
      i1.every(9, () => {
        m.alloc(47);
        m.alloc(5, { at: "Gen.site5@gen.ml:25:4-20" });
      }, 3);
      m.majorSlice();
    });
  });
  s.release("a");
  s.release("c");
});
