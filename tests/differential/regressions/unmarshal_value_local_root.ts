/**
 * Pacing (shrunk from random scenario rnd-5-150 of seed 5): `intern_end` holds an unmarshalled
 * value in one local root, its root block, while the callbacks its sampled blocks made ready run
 * (`caml_process_pending_actions`); the value's other blocks hang from it (the program builds
 * them as a chain through first fields). The simulation held every block of the value in a
 * local root of its own, so a major cycle starting in a callback (a deallocation callback here
 * runs `Gc.major_slice`) darkened each of them as a root (`caml_darken`: no header charged, nor
 * the leading immediates `mark_stack_push_block` skips) where OCaml 5.3 darkens the root block
 * and marks the others by scanning it (header and every field). Measured in the rings, OCaml
 * 5.3 marked 44 words more a cycle from the third cycle on, and a major cycle ended at
 * iteration 4.2.3 in OCaml, 4.2.2 in the simulation.
 */
import { act, cb, keep, scenario, sizes } from "../../../lib/scenario/mod.ts";

export default scenario(
  { name: "unmarshal_value_local_root", seed: 868838, minorHeapWords: 4096 },
  (s) => {
    const m = s.main;
    m.memprof.start({
      name: "p1",
      samplingRate: 0.001,
      callstackSize: 2,
      tracker: {
        promote: cb.track().on(7, act.raise("Exit")),
        deallocMinor: cb.track().always(act.gc("majorSlice")),
        deallocMajor: cb.track().on(18, act.gc("majorSlice")).on(4, act.gc("majorSlice")),
      },
    });
    m.repeat(13, () => {
      m.unmarshal([93, 191, 192, 174, 300], { at: "Gen.site4@gen.ml:24:4-20" });
    });
    m.alloc(1, { source: "array", lifetime: keep.steps(12, "b") });
    m.alloc(sizes.uniform(14, 32), { at: "Gen.site7@gen.ml:27:4-20" });
    m.alloc(45, { at: "Gen.site8@gen.ml:28:4-20" });
    m.poll();
    m.memprof.stop();
    m.memprof.start({
      name: "p2",
      samplingRate: 0.001,
      callstackSize: 12,
      tracker: {
        allocMinor: cb.track().on(4, act.stop()).on(
          4,
          act.start({
            name: "p2r",
            samplingRate: 0.001,
            callstackSize: 4,
            tracker: {},
          }),
        ),
      },
    });
    m.call("Gen.f6@gen.ml:6:2-14", () => {
      m.allocCombined([8, 9, 1, 5], {
        lifetime: [keep.drop, keep.forever, keep.ring(57, "a"), keep.drop],
        at: "Gen.site4@gen.ml:24:4-20",
      });
    });
    m.repeat(7, () => {
      m.alloc(sizes.geometric(13, 11), {
        lifetime: keep.list("c"),
        at: "Gen.site1@gen.ml:21:4-20",
      });
      m.alloc(22, { source: "runtime", lifetime: keep.forever });
      m.repeat(12, (i2) => {
        i2.every(5, () => {
          m.alloc(1555, { source: "major" });
          m.alloc(3154, { source: "array", lifetime: keep.steps(4) });
        }, 1);
      });
    });
    m.repeat(11, () => {
      m.alloc(2, { lifetime: keep.steps(22, "a"), at: "Gen.site2@gen.ml:22:4-20" });
      m.repeat(11, () => {
        m.allocCombined([10, 7, 11], {
          lifetime: [
            keep.cycle(keep.until("a"), keep.drop, keep.until("a"), keep.drop),
            keep.ring(50, "b"),
            keep.drop,
          ],
          at: "Gen.site3@gen.ml:23:4-20",
        });
        m.repeat(14, () => {
          m.alloc(sizes.geometric(1, 53), {
            lifetime: keep.forever,
            at: "Gen.site4@gen.ml:24:4-20",
          });
          m.allocCombined([4, 10], {
            lifetime: [keep.ring(14, "a"), keep.forever],
            at: "Gen.site1@gen.ml:21:4-20",
          });
          m.unmarshal([46, 221, 191, 134, 237], {
            lifetime: keep.steps(1, "b"),
            at: "Gen.site5@gen.ml:25:4-20",
          });
        });
      });
      m.allocCombined([10, 11, 9, 8], {
        lifetime: [keep.drop, keep.ring(9, "b"), keep.until("b"), keep.until("b")],
      });
    });
    m.alloc(sizes.geometric(13, 15), { at: "Gen.site2@gen.ml:22:4-20" });
    m.repeat(8, () => {
      m.repeat(10, (i2) => {
        i2.every(3, () => {
          m.alloc(3467, { source: "runtime", at: "Gen.site5@gen.ml:25:4-20" });
        }, 0);
        m.repeat(9, () => {
          m.alloc(1709, { source: "major" });
        });
      });
    });
    m.minorGc();
    m.repeat(13, () => {
      m.alloc(237, { lifetime: keep.until("b") });
    });
    m.majorSlice();
    m.poll();
    m.unmarshal([17, 202], { at: "Gen.site3@gen.ml:23:4-20" });
    m.alloc(428, { source: "runtime", at: "Gen.site3@gen.ml:23:4-20" });
    m.poll();
    m.poll();
    m.memprof.stop();
    m.fullMajor();
    const w1 = m.spawn("w1");
    w1.call("Gen.f6@gen.ml:6:2-14", () => {
      w1.repeat(1, () => {
        w1.alloc(sizes.geometric(12, 180));
        w1.alloc(39, { at: "Gen.site3@gen.ml:23:4-20" });
        w1.alloc(sizes.choice(15, 2, 5));
      });
    });
    w1.call("Gen.f3@gen.ml:3:2-14", () => {
      w1.alloc(6, { at: "Gen.site5@gen.ml:25:4-20" });
    });
    w1.repeat(1, () => {
      w1.repeat(2, () => {
        w1.alloc(sizes.geometric(8, 101), { at: "Gen.site7@gen.ml:27:4-20" });
        w1.alloc(3, { at: "Gen.site3@gen.ml:23:4-20" });
        w1.alloc(sizes.geometric(19, 85), { at: "Gen.site5@gen.ml:25:4-20" });
      });
      w1.call("Gen.f8@gen.ml:8:2-14", () => {
        w1.poll();
      });
      w1.alloc(2, { at: "Gen.site4@gen.ml:24:4-20" });
    });
    w1.terminate();
    s.release("a");
    s.release("b");
    s.release("c");
  },
);
