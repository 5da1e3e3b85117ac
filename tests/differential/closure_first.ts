// Shrunk from scenario 85 of `deno task diff --random 1000 --seed 37` (rnd-37-85): a worker ends
// while the main domain, sampling, has callbacks pending from a collection a callback started.
// Judge it over real runs: deno task diff --runs 30 tests/differential/closure_first.ts
import { act, cb, keep, scenario, sizes } from "../../lib/scenario/mod.ts";

export default scenario({ "name": "rnd-37-85", "seed": 1, "minorHeapWords": 4096 }, (s) => {
  const m = s.main;
  s.events.start();
  m.memprof.start({
    name: "p1",
    samplingRate: 0.1,
    callstackSize: 0,
    tracker: {
      allocMajor: cb.track().always(act.alloc(2)),
      deallocMajor: cb.track().on(1, act.gc("major")),
    },
  });
  m.call("Gen.f6@gen.ml:6:2-14", () => {
    m.alloc(8, { at: "Gen.site4@gen.ml:24:4-20" });
    m.alloc(176, { source: "unmarshal" });
  });
  m.minorGc();
  m.repeat(81, () => {
    m.call("Gen.f7@gen.ml:7:2-14", () => {
      s.release("c");
      m.call("Gen.f4@gen.ml:4:2-14", () => {
        m.allocCombined([3, 11, 12], {
          lifetime: [keep.list("a"), keep.drop, keep.drop],
          at: "Gen.site8@gen.ml:28:4-20",
        });
        m.userEvent("gen.tick", { "type": "unit" });
      });
    });
  });
  m.poll();
  m.memprof.stop();
  m.memprof.start({
    name: "p2",
    samplingRate: 0.1,
    callstackSize: 2,
    tracker: {
      allocMinor: cb.track().on(12, act.gc("major")),
      deallocMinor: cb.track(),
    },
  });
  m.alloc(261, {
    source: "major",
    lifetime: keep.cycle(keep.ring(51, "a")),
    at: "Gen.site1@gen.ml:21:4-20",
  });
  m.alloc(18, { source: "custom", at: "Gen.site1@gen.ml:21:4-20", customMem: sizes.uniform(3, 6) });
  m.call("Gen.f6@gen.ml:6:2-14", () => {
    m.call("Gen.f4@gen.ml:4:2-14", () => {
      m.userEvent("gen.tick", { "type": "unit" });
      m.unmarshal([198, 211, 13, 88, 129], { lifetime: keep.until("b") });
    });
  });
  m.alloc(2, { lifetime: keep.list("a"), at: "Gen.site7@gen.ml:27:4-20" });
  m.alloc(65536, { source: "major", lifetime: keep.forever });
  m.fullMajor();
  const w1 = m.spawn("w1");
  w1.repeat(3, () => {
    w1.repeat(5, () => {
      w1.alloc(62, { at: "Gen.site4@gen.ml:24:4-20" });
      w1.alloc(1, { at: "Gen.site7@gen.ml:27:4-20" });
    });
  });
  w1.terminate();
  m.poll();
  m.memprof.stop();
  s.release("a");
  s.release("b");
});
