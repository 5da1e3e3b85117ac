/**
 * Pacing (found with random scenario rnd-4-51 of seed 4, shrunk statement by statement; the keep
 * statements at the end only lay out keep sites): a program writing runtime_events user events
 * links runtime_events.cmxa, whose data every cycle marks (a capture of its own,
 * lib/runtime/_mark_fixed.ts), and each user event adds to the program's globals its
 * `Runtime_events.User.tag` constructor and the event `Runtime_events.User.register` returns.
 * Marked as a program linking the standard library alone, the first major cycle ended elsewhere,
 * and so did the minor collection ending it, which places memprof's next trigger: the samples of
 * the custom blocks at iteration 2.1.1 differed from OCaml 5.3's.
 */
import { act, cb, keep, scenario, sizes } from "../../../lib/scenario/mod.ts";

export default scenario({
  name: "events_harness_marking",
  seed: 694531,
  minorHeapWords: 16_384,
}, (s) => {
  const m = s.main;
  m.call("Gen.f4@gen.ml:4:2-14", () => {
    m.call("Gen.f8@gen.ml:8:2-14", () => {
      m.call("Gen.f8@gen.ml:8:2-14", () => {
        m.alloc(4092, { source: "array", lifetime: keep.until("c") });
        m.alloc(4, { at: "Gen.site5@gen.ml:25:4-20" });
      });
    });
    m.call("Gen.f5@gen.ml:5:2-14", () => {
      m.alloc(5, { at: "Gen.site2@gen.ml:22:4-20" });
      m.userEvent("gen.tick", { "type": "unit" });
    });
    s.release("a");
  });
  m.memprof.start({
    name: "p1",
    samplingRate: 0.001,
    callstackSize: 64,
    tracker: {
      allocMinor: cb.track(),
      allocMajor: cb.none().always(act.gc("minor")),
      deallocMajor: cb.none().every(10, act.raise("Exit"), 3).on(
        27,
        act.alloc(7),
      ),
    },
  });
  m.repeat(4, () => {
    m.repeat(3, (i2) => {
      m.alloc(8, { lifetime: keep.until("c"), at: "Gen.site8@gen.ml:28:4-20" });
      i2.every(9, () => {
        m.alloc(7, { lifetime: keep.ring(37, "b") });
      }, 0);
    });
  });
  m.repeat(3, () => {
    m.call("Gen.f4@gen.ml:4:2-14", () => {
      m.call("Gen.f2@gen.ml:2:2-14", () => {
        m.alloc(4, {
          lifetime: keep.until("b"),
          at: "Gen.site5@gen.ml:25:4-20",
        });
      });
      m.alloc(26, { at: "Gen.site5@gen.ml:25:4-20" });
    });
    m.repeat(4, () => {
      m.repeat(4, () => {
        m.alloc(13, {
          source: "custom",
          at: "Gen.site3@gen.ml:23:4-20",
          customMem: 31491,
        });
        m.alloc(sizes.uniform(5, 34));
        m.alloc(228, { at: "Gen.site4@gen.ml:24:4-20" });
      });
      m.call("Gen.f8@gen.ml:8:2-14", () => {
        m.compact();
      });
      m.repeat(5, () => {
        m.userEvent("gen.tick", { "type": "unit" });
      });
    });
    m.userEvent("gen.tick", { "type": "unit" });
  });
  s.release("b");
  m.alloc(44, { lifetime: keep.ring(9, "a"), at: "Gen.site2@gen.ml:22:4-20" });
  m.allocCombined([3, 11, 10], {
    lifetime: [keep.until("c"), keep.list("c"), keep.list("b")],
  });
  m.repeat(4, () => {
    m.allocCombined([11, 8], {
      lifetime: [keep.drop, keep.list("b")],
      at: "Gen.site1@gen.ml:21:4-20",
    });
    m.alloc(54, {
      source: "runtime",
      lifetime: keep.steps(55, "a"),
      at: "Gen.site8@gen.ml:28:4-20",
    });
  });
  m.alloc(141, { lifetime: keep.steps(10), at: "Gen.site4@gen.ml:24:4-20" });
  s.release("c");
});
