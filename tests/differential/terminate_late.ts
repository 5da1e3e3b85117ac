// Shrunk from scenario 190 of `deno task diff --random 1000 --seed 35` (rnd-35-190): domains
// that end while the main domain samples, its callbacks pending from their last collections.
// Judge it over real runs: deno task diff --runs 30 tests/differential/terminate_late.ts
import { act, cb, keep, scenario, sizes } from "../../lib/scenario/mod.ts";

export default scenario({ "name": "rnd-35-190", "seed": 332251, "minorHeapWords": 16384 }, (s) => {
  const m = s.main;
  m.minorGc();
  m.alloc(8, { lifetime: keep.forever });
  m.minorGc();
  m.memprof.start({
    name: "p1",
    samplingRate: 0.1,
    callstackSize: 12,
    tracker: {
      allocMinor: cb.track(),
      deallocMajor: cb.track(),
    },
  });
  m.repeat(4, () => {
    m.repeat(5, () => {
      m.minorGc();
    });
    m.call("Gen.f3@gen.ml:3:2-14", () => {
      m.attempt(() => {
        m.alloc(44);
      });
      m.repeat(5, () => {
        m.majorGc();
        m.alloc(104, {
          source: "unmarshal",
          lifetime: keep.until("c"),
          at: "Gen.site1@gen.ml:21:4-20",
        });
      });
    });
  });
  m.poll();
  m.alloc(4, { source: "array", lifetime: keep.ring(15, "b") });
  m.alloc(7, { lifetime: keep.ring(60, "b"), at: "Gen.site2@gen.ml:22:4-20" });
  m.alloc(7, { at: "Gen.site4@gen.ml:24:4-20" });
  m.poll();
  m.memprof.stop();
  m.memprof.start({
    name: "p2",
    samplingRate: 0.001,
    callstackSize: 0,
    tracker: {
      allocMajor: cb.track().on(11, act.alloc(5)),
      deallocMinor: cb.track(),
      deallocMajor: cb.track(),
    },
  });
  m.fullMajor();
  m.allocCombined([4, 8, 2, 4], {
    lifetime: [keep.until("c"), keep.until("a"), keep.drop, keep.steps(40, "c")],
    at: "Gen.site1@gen.ml:21:4-20",
  });
  m.poll();
  m.memprof.stop();
  m.memprof.discard("p2");
  m.memprof.start({
    name: "p3",
    samplingRate: 0.05,
    callstackSize: 64,
    tracker: {
      allocMajor: cb.track(),
    },
  });
  m.unmarshal([129, 139, 57, 78], { at: "Gen.site5@gen.ml:25:4-20" });
  m.poll();
  m.alloc(1448, { source: "major", lifetime: keep.steps(13, "c") });
  m.alloc(65536, { source: "major", lifetime: keep.forever });
  m.fullMajor();
  const w1 = m.spawn("w1");
  w1.repeat(1, (i1) => {
    w1.alloc(5, { at: "Gen.site1@gen.ml:21:4-20" });
    w1.call("Gen.f2@gen.ml:2:2-14", () => {
      w1.extAlloc(15);
      w1.poll();
      w1.alloc(4, { at: "Gen.site1@gen.ml:21:4-20" });
    });
    i1.every(3, () => {
      w1.extAlloc(70);
    }, 2);
  });
  w1.call("Gen.f5@gen.ml:5:2-14", () => {
    w1.alloc(sizes.choice(173), { at: "Gen.site6@gen.ml:26:4-20" });
  });
  w1.terminate();
  m.fullMajor();
  const w2 = m.spawn("w2");
  w2.alloc(sizes.geometric(10, 221), { lifetime: keep.list("a") });
  w2.alloc(3, { at: "Gen.site1@gen.ml:21:4-20" });
  w2.terminate();
  m.fullMajor();
  const w3 = m.spawn("w3");
  w3.extAlloc(13);
  w3.call("Gen.f3@gen.ml:3:2-14", () => {
    w3.extAlloc(1098);
  });
  w3.alloc(47, { lifetime: keep.until("c"), at: "Gen.site2@gen.ml:22:4-20" });
  w3.terminate();
  m.poll();
  m.memprof.stop();
  m.memprof.discard("p3");
  s.release("a");
  s.release("b");
  s.release("c");
});
