// Shrunk from scenario 91 of `deno task diff --random 150 --seed 33` (rnd-33-91): a join step
// whose worker sometimes ends before the main domain calls Domain.join (the join race's `late`).
// Judge it over real runs: deno task diff --runs 100 tests/differential/join_late.ts
import { act, cb, keep, scenario, sizes } from "../../lib/scenario/mod.ts";

export default scenario({ "name": "rnd-33-91", "seed": 795087, "minorHeapWords": 4096 }, (s) => {
  const m = s.main;
  m.alloc(2, {
    lifetime: keep.cycle(keep.drop, keep.drop, keep.steps(43, "a"), keep.drop),
    at: "Gen.site8@gen.ml:28:4-20",
  });
  m.repeat(4547, () => {
    m.alloc(3, { source: "runtime" });
  });
  m.memprof.start({
    name: "p1",
    samplingRate: 0.05,
    callstackSize: 64,
    tracker: {
      allocMinor: cb.track().on(12, act.alloc(31)),
      deallocMajor: cb.none(),
    },
  });
  m.alloc(36);
  m.poll();
  m.alloc(9, { at: "Gen.site1@gen.ml:21:4-20" });
  m.alloc(sizes.choice(51), { lifetime: keep.until("a"), at: "Gen.site3@gen.ml:23:4-20" });
  m.alloc(65536, { source: "major", lifetime: keep.forever });
  m.fullMajor();
  const w1 = m.spawn("w1");
  w1.attempt(() => {
    w1.alloc(16);
  });
  m.join(w1);
  m.fullMajor();
  const w2 = m.spawn("w2");
  w2.alloc(4);
  w2.alloc(6, { at: "Gen.site6@gen.ml:26:4-20" });
  w2.alloc(1);
  w2.alloc(3, { at: "Gen.site5@gen.ml:25:4-20" });
  w2.terminate();
  m.poll();
  m.memprof.stop();
  m.memprof.discard("p1");
  s.release("a");
});
