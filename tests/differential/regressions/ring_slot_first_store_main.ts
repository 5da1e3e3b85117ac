/**
 * Promotion order, the same cause as ring_slot_first_store on the main program, from rnd-14-12
 * of `deno task diff --random 2000 --seed 14`: a 45-slot ring kept every third 45-word block
 * of a loop; after eight cycles its blocks lived in other pools than OCaml 5.3.0's (as many
 * allocations in each pool, other blocks), and a dealloc callback came a cycle apart.
 */
import { cb, keep, scenario } from "../../../lib/scenario/mod.ts";

export default scenario({
  "name": "ring_slot_first_store_main",
  "seed": 907995,
  "minorHeapWords": 8192,
}, (s) => {
  const m = s.main;
  const t1 = m.thread("t1", (th1) => {
    th1.alloc(6);
    th1.yieldTo(m);
    th1.yield();
    th1.alloc(2, { at: "Gen.site6@gen.ml:26:4-20" });
  });
  m.memprof.start({
    name: "p1",
    samplingRate: 0.001,
    callstackSize: 7,
    tracker: {
      deallocMajor: cb.track(),
    },
  });
  m.yield();
  m.minorGc();
  m.yieldTo(t1);
  m.call("Gen.f3@gen.ml:3:2-14", () => {
    m.call("Gen.f5@gen.ml:5:2-14", () => {
      m.poll();
    });
    m.repeat(1066, () => {
      m.repeat(12, () => {
        m.alloc(45, {
          lifetime: keep.cycle(keep.drop, keep.drop, keep.ring(45, "a")),
          at: "Gen.site2@gen.ml:22:4-20",
        });
      });
      m.poll();
      m.attempt(() => {
        m.alloc(343, { source: "major", lifetime: keep.steps(45, "b") });
        m.alloc(220, { source: "runtime", at: "Gen.site8@gen.ml:28:4-20" });
      });
    });
  });
  m.repeat(3801, () => {
    m.alloc(13, { at: "Gen.site7@gen.ml:27:4-20" });
  });
  m.call("Gen.f8@gen.ml:8:2-14", () => {
    m.majorSlice();
  });
  m.minorGc();
  m.yieldTo(t1);
  m.poll();
  m.memprof.stop();
  m.join(t1);
  s.release("a");
  s.release("b");
});
