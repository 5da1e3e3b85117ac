/**
 * Pacing: the minor heap filling at the program's initialisation, from rnd-14-691 of `deno task
 * diff --random 2000 --seed 14`. With a 4,096-word minor heap, the harness's young blocks reach
 * the middle of the minor heap just before `Gc.full_major ()` when the program registers a user
 * event (13 words more: the event's record, its `Some` tag, the constructor and the runtime's
 * list cell). OCaml 5.3.0 then runs a slice at that allocation, which ends the first cycle, and
 * the full major's three cycles start from a fresh one: the scenario starts with one cycle's
 * work more done ahead (93,664 words here). The model of the program's heap
 * (lib/export/_harness_heap.ts) filled no minor heap; it now counts every young block of the
 * initialisation, the marshalled values' `sizes` arrays and `build` closures and Thread.create's
 * wrapper closures too, and runs the middle's slice and the end's minor collection where
 * caml_poll_gc_work does (its count equals the debug runtime's young pointer at
 * `Gc.full_major ()` on six programs: plain, systhreads, domains, unmarshalling).
 */
import { act, cb, keep, scenario, sizes } from "../../../lib/scenario/mod.ts";

export default scenario({
  "name": "young_midpoint_at_init",
  "seed": 569163,
  "minorHeapWords": 4096,
}, (s) => {
  const m = s.main;
  s.events.start();
  m.memprof.start({
    name: "p1",
    samplingRate: 0.001,
    callstackSize: 64,
    tracker: {
      deallocMajor: cb.track().every(6, act.raise("Boom"), 1),
    },
  });
  m.poll();
  m.alloc(8, { lifetime: keep.until("a"), at: "Gen.site7@gen.ml:27:4-20" });
  m.alloc(1774, { source: "major" });
  m.alloc(980, { source: "runtime", at: "Gen.site7@gen.ml:27:4-20" });
  m.poll();
  m.memprof.stop();
  m.memprof.discard("p1");
  m.memprof.start({
    name: "p2",
    samplingRate: 0.00025,
    callstackSize: 64,
    tracker: {
      allocMinor: cb.track(),
      allocMajor: cb.track().always(act.raise("Exit")).on(13, act.alloc(4, keep.ring(61, "c"))),
      promote: cb.none().on(3, act.raise("Boom")),
    },
  });
  m.call("Gen.f3@gen.ml:3:2-14", () => {
    m.alloc(4440, { source: "major", at: "Gen.site1@gen.ml:21:4-20" });
    m.alloc(243, { source: "unmarshal" });
    m.alloc(sizes.uniform(1, 17), { lifetime: keep.ring(6, "b"), at: "Gen.site8@gen.ml:28:4-20" });
  });
  m.repeat(12, (i1) => {
    i1.every(9, () => {
      m.repeat(44, () => {
        m.alloc(2, { lifetime: keep.until("c"), at: "Gen.site6@gen.ml:26:4-20" });
      });
      m.poll();
      m.minorGc();
    }, 8);
    m.userEvent("gen.tick", { "type": "unit" });
  });
  m.alloc(246, { at: "Gen.site4@gen.ml:24:4-20" });
  m.alloc(3897, { source: "major", lifetime: keep.ring(60, "c"), at: "Gen.site8@gen.ml:28:4-20" });
  m.poll();
  m.memprof.stop();
  m.memprof.discard("p2");
  m.memprof.start({
    name: "p3",
    samplingRate: 0.001,
    callstackSize: 16,
    tracker: {
      allocMinor: cb.track().on(9, act.alloc(9)),
      allocMajor: cb.track(),
      promote: cb.track().on(30, act.gc("major")).on(4, act.raise("Boom")),
      deallocMinor: cb.track().on(3, act.alloc(52, keep.cycle(keep.drop, keep.steps(40, "a"))))
        .always(act.raise("Exit")),
    },
  });
  m.userEvent("gen.tick", { "type": "unit" });
  m.userEvent("gen.tick", { "type": "unit" });
  m.alloc(2, { source: "array", at: "Gen.site5@gen.ml:25:4-20" });
  m.repeat(21, () => {
    m.repeat(16, (i2) => {
      i2.every(10, () => {
        m.userEvent("gen.count", { "type": "int", "value": 427620 });
        m.poll();
        m.alloc(38, { source: "runtime", at: "Gen.site5@gen.ml:25:4-20" });
      }, 3);
      m.alloc(3843, { source: "major", lifetime: keep.ring(56, "b") });
    });
    m.alloc(sizes.uniform(286, 386), {
      source: "array",
      lifetime: keep.until("c"),
      at: "Gen.site3@gen.ml:23:4-20",
    });
    m.poll();
  });
  m.alloc(2299, { source: "array", at: "Gen.site8@gen.ml:28:4-20" });
  m.alloc(sizes.uniform(2, 29), { lifetime: keep.steps(55, "b"), at: "Gen.site1@gen.ml:21:4-20" });
  m.alloc(56, { lifetime: keep.ring(26, "b"), at: "Gen.site7@gen.ml:27:4-20" });
  m.repeat(42, () => {
    m.alloc(sizes.geometric(14, 99), { lifetime: keep.until("b"), at: "Gen.site5@gen.ml:25:4-20" });
    m.call("Gen.f3@gen.ml:3:2-14", () => {
      m.alloc(sizes.choice(18, 4), { at: "Gen.site5@gen.ml:25:4-20" });
      m.call("Gen.f6@gen.ml:6:2-14", () => {
        m.alloc(2672, { source: "major", at: "Gen.site2@gen.ml:22:4-20" });
      });
      m.repeat(24, () => {
        m.alloc(sizes.choice(32, 8, 13, 7, 6));
        m.unmarshal([110, 143, 235]);
      });
    });
  });
  m.alloc(7, { lifetime: keep.until("b") });
  m.repeat(25, (i1) => {
    m.userEvent("gen.tick", { "type": "unit" });
    i1.every(2, () => {
      m.repeat(28, () => {
        m.poll();
        m.alloc(2480, { source: "major", lifetime: keep.steps(40, "a") });
        m.alloc(50, { source: "array", at: "Gen.site4@gen.ml:24:4-20" });
      });
      m.attempt(() => {
        m.userEvent("gen.tick", { "type": "unit" });
        m.majorGc();
      });
    }, 1);
  });
  m.alloc(sizes.uniform(286, 386), { source: "runtime", at: "Gen.site8@gen.ml:28:4-20" });
  m.call("Gen.f3@gen.ml:3:2-14", () => {
    m.userEvent("gen.tick", { "type": "unit" });
  });
  m.poll();
  m.memprof.stop();
  s.release("a");
  s.release("b");
  s.release("c");
});
