/**
 * A terminated domain's DLS array dies with the domain's state (issue 24, random campaign seed 28,
 * rnd-28-324): `domain_terminate` removes the `dls_root` after the domain's last collection, which
 * promotes a young DLS array; the next major cycle finds it dead. The simulation released it only
 * at a `join` step, so after a `terminate` the array lived on, and its `dealloc_major` never came.
 * A systhread makes the program's domain waits counted, and its join deterministic.
 */
import { act, cb, keep, scenario, sizes } from "../../../lib/scenario/mod.ts";

export default scenario(
  { name: "dls_freed_at_terminate", seed: 481845, minorHeapWords: 32768 },
  (s) => {
    const m = s.main;
    const t1 = m.thread("t1", () => {});
    m.yieldTo(t1);
    m.memprof.start({
      name: "p2",
      samplingRate: 0.1,
      callstackSize: 2,
      tracker: {
        allocMajor: cb.track().every(11, act.alloc(7), 5).on(26, act.alloc(6)),
        promote: cb.track(),
        deallocMajor: cb.track(),
      },
    });
    m.alloc(31, { lifetime: keep.until("c") });
    m.alloc(65536, { source: "major", lifetime: keep.forever });
    m.fullMajor();
    const w1 = m.spawn("w1");
    w1.alloc(sizes.uniform(16, 42), { at: "Gen.site7@gen.ml:27:4-20" });
    w1.alloc(3, { at: "Gen.site7@gen.ml:27:4-20" });
    w1.terminate();
    m.poll();
    m.memprof.stop();
    m.fullMajor(); // the worker's DLS array, promoted at its end, dies here
    m.join(t1);
    s.release("c");
  },
);
