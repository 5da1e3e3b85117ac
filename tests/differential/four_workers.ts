// Shrunk from scenario 385 of `deno task diff --random 1000 --seed 35` (rnd-35-385): four
// workers spawned and ended while the main domain samples, whose real outcomes combine a spawn
// race and two join races.
// Judge it over real runs: deno task diff --runs 30 tests/differential/four_workers.ts
import { act, cb, keep, scenario, sizes } from "../../lib/scenario/mod.ts";

export default scenario({ "name": "rnd-35-385", "seed": 188561, "minorHeapWords": 65536 }, (s) => {
  const m = s.main;
  m.repeat(3, () => {
    m.call("Gen.f6@gen.ml:6:2-14", () => {
      m.attempt(() => {
        m.extAlloc(5707);
        m.alloc(sizes.uniform(303, 403), { source: "array", lifetime: keep.ring(58, "b") });
      });
      m.repeat(2, () => {
        m.alloc(38, {
          source: "runtime",
          lifetime: keep.ring(10, "b"),
          at: "Gen.site1@gen.ml:21:4-20",
        });
      });
    });
    m.repeat(3, () => {
      m.call("Gen.f6@gen.ml:6:2-14", () => {
        m.alloc(sizes.choice(1, 7, 12, 5));
      });
      m.repeat(2, () => {
        m.fullMajor();
        m.alloc(7, { at: "Gen.site1@gen.ml:21:4-20" });
        m.alloc(8, { lifetime: keep.ring(10, "a") });
      });
    });
    m.extAlloc(16);
  });
  m.repeat(3, () => {
    m.repeat(1, () => {
      m.repeat(3, () => {
        m.alloc(sizes.geometric(16, 84), {
          lifetime: keep.cycle(keep.drop),
          at: "Gen.site1@gen.ml:21:4-20",
        });
        m.extAlloc(sizes.uniform(401, 802), keep.forever);
        m.allocCombined([9, 1, 12], {
          lifetime: [
            keep.drop,
            keep.cycle(keep.forever, keep.ring(54, "a"), keep.drop, keep.list("b")),
            keep.drop,
          ],
          at: "Gen.site2@gen.ml:22:4-20",
        });
      });
    });
    m.repeat(3, () => {
      m.alloc(3, { lifetime: keep.steps(1, "a"), at: "Gen.site2@gen.ml:22:4-20" });
    });
    m.alloc(62, { at: "Gen.site4@gen.ml:24:4-20" });
  });
  m.extAlloc(77);
  m.alloc(38, { lifetime: keep.ring(26), at: "Gen.site5@gen.ml:25:4-20" });
  m.memprof.start({
    name: "p1",
    samplingRate: 0.00001,
    callstackSize: 1,
    tracker: {
      allocMinor: cb.none(),
      promote: cb.track(),
      deallocMinor: cb.track(),
      deallocMajor: cb.track().on(13, act.gc("majorSlice")),
    },
  });
  m.attempt(() => {
    s.release("a");
    m.attempt(() => {
      m.minorGc();
      m.repeat(3, () => {
        m.extAlloc(sizes.uniform(2163, 4326));
      });
      m.alloc(4727, {
        source: "major",
        lifetime: keep.ring(36, "c"),
        at: "Gen.site1@gen.ml:21:4-20",
      });
    });
  });
  m.alloc(35, { at: "Gen.site4@gen.ml:24:4-20" });
  m.poll();
  m.memprof.stop();
  m.memprof.discard("p1");
  m.memprof.start({
    name: "p2",
    samplingRate: 0.05,
    callstackSize: 5,
    tracker: {
      allocMajor: cb.track(),
    },
  });
  m.repeat(3, (i1) => {
    s.release("c");
    i1.every(4, () => {
      m.repeat(4, () => {
        s.release("b");
        m.alloc(46, { at: "Gen.site7@gen.ml:27:4-20" });
      });
    }, 0);
    m.allocCombined([6, 10, 1], {
      lifetime: [keep.drop, keep.drop, keep.drop],
      at: "Gen.site4@gen.ml:24:4-20",
    });
  });
  m.poll();
  m.memprof.stop();
  m.memprof.start({
    name: "p3",
    samplingRate: 0.1,
    callstackSize: 64,
    tracker: {
      allocMinor: cb.track().on(18, act.gc("minor")),
      promote: cb.none(),
    },
  });
  m.alloc(267, { source: "array", at: "Gen.site7@gen.ml:27:4-20" });
  m.alloc(3703, {
    source: "runtime",
    lifetime: keep.steps(51, "c"),
    at: "Gen.site5@gen.ml:25:4-20",
  });
  m.alloc(65536, { source: "major", lifetime: keep.forever });
  m.fullMajor();
  const w1 = m.spawn("w1");
  w1.extAlloc(37, keep.until("b"));
  w1.alloc(12, { at: "Gen.site4@gen.ml:24:4-20" });
  m.join(w1);
  m.fullMajor();
  const w2 = m.spawn("w2");
  w2.alloc(39, { lifetime: keep.until("b"), at: "Gen.site3@gen.ml:23:4-20" });
  w2.alloc(1, { lifetime: keep.list("a"), at: "Gen.site6@gen.ml:26:4-20" });
  w2.alloc(sizes.geometric(15, 113), { at: "Gen.site1@gen.ml:21:4-20" });
  w2.alloc(6, { at: "Gen.site7@gen.ml:27:4-20" });
  w2.terminate();
  m.fullMajor();
  const w3 = m.spawn("w3");
  w3.repeat(3, () => {
    w3.call("Gen.f1@gen.ml:1:2-14", () => {
      w3.alloc(sizes.uniform(3, 16), { at: "Gen.site3@gen.ml:23:4-20" });
      w3.alloc(4, { lifetime: keep.ring(37, "b") });
    });
    w3.alloc(3, { lifetime: keep.ring(10, "c"), at: "Gen.site8@gen.ml:28:4-20" });
  });
  w3.terminate();
  m.fullMajor();
  const w4 = m.spawn("w4");
  m.join(w4);
  m.poll();
  m.memprof.stop();
  s.release("a");
  s.release("b");
  s.release("c");
});
