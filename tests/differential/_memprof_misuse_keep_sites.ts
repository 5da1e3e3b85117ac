// rnd-19-978 of `deno task diff --random 2000 --seed 19`, shrunk to 42 steps: simulated without
// its keep sites' marking, it uses Gc.Memprof correctly; with them (as the campaign simulates it),
// `Gc.Memprof.stop` runs a pending callback that raises, the profile stays running, and the
// `discard` after fails. The generator's filter must reject it (tests/differential/random_test.ts).
import { act, cb, keep, scenario, sizes } from "../../lib/scenario/mod.ts";

export default scenario({ "name": "rnd-19-978", "seed": 17, "minorHeapWords": 32768 }, (s) => {
  const m = s.main;
  m.memprof.start({
    name: "p1",
    samplingRate: 0.001,
    callstackSize: 3,
    tracker: {
      allocMajor: cb.none(),
      deallocMinor: cb.track().on(1, act.gc("majorSlice")),
      deallocMajor: cb.track(),
    },
  });
  m.alloc(7, { lifetime: keep.ring(38, "c"), at: "Gen.site1@gen.ml:21:4-20" });
  m.alloc(1, { source: "runtime", at: "Gen.site5@gen.ml:25:4-20" });
  m.repeat(7, (i1) => {
    m.call("Gen.f6@gen.ml:6:2-14", () => {
      i1.every(9, () => {
        m.allocCombined([8, 6, 5], {
          lifetime: [keep.drop, keep.forever, keep.drop],
          at: "Gen.site7@gen.ml:27:4-20",
        });
        m.alloc(15, {
          source: "custom",
          lifetime: keep.steps(53, "c"),
          at: "Gen.site6@gen.ml:26:4-20",
          customMem: 56,
        });
        m.alloc(sizes.geometric(3, 2), { at: "Gen.site6@gen.ml:26:4-20" });
      }, 8);
    });
  });
  m.alloc(sizes.uniform(11, 17), { lifetime: keep.steps(44) });
  m.majorGc();
  m.alloc(8, { at: "Gen.site2@gen.ml:22:4-20" });
  m.poll();
  m.memprof.stop();
  m.memprof.discard("p1");
  m.memprof.start({
    name: "p2",
    samplingRate: 0.001,
    callstackSize: 0,
    tracker: {
      allocMinor: cb.track().on(7, act.raise("Not_found")),
    },
  });
  m.alloc(63, { lifetime: keep.until("c") });
  m.attempt(() => {
    m.repeat(6, () => {
      m.attempt(() => {
        s.release("c");
        m.alloc(4817, { source: "major", at: "Gen.site7@gen.ml:27:4-20" });
        m.alloc(1982, {
          source: "major",
          lifetime: keep.until("c"),
          at: "Gen.site4@gen.ml:24:4-20",
        });
      });
    });
    m.majorSlice();
  });
  m.alloc(sizes.choice(6, 7, 173, 1), { at: "Gen.site2@gen.ml:22:4-20" });
  m.poll();
  m.memprof.stop();
  m.memprof.discard("p2");
  m.memprof.start({
    name: "p3",
    samplingRate: 0.001,
    callstackSize: 16,
    tracker: {
      allocMajor: cb.track().always(act.raise("Boom")),
      promote: cb.track().on(14, act.gc("minor")).on(3, act.raise("Boom")),
    },
  });
  m.repeat(4, () => {
    m.repeat(6, () => {
      m.alloc(3478, { source: "major", at: "Gen.site1@gen.ml:21:4-20" });
      m.repeat(5, () => {
        m.alloc(9, { source: "custom", at: "Gen.site7@gen.ml:27:4-20", customMem: 18463 });
      });
      m.poll();
    });
    m.alloc(7, { at: "Gen.site8@gen.ml:28:4-20" });
  });
  m.poll();
  m.memprof.stop();
  m.memprof.discard("p3");
  m.alloc(65536, { source: "major", lifetime: keep.forever });
  m.fullMajor();
  s.release("c");
});
