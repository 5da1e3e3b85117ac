// Issue 22 (seed 5, scenario 54): a callback of a combined allocation hands the baton to another
// thread, whose own allocation is sampled. OCaml 5.3 captures each sampled component's callstack
// before any callback runs (memprof.c, `caml_memprof_sample_young`), so the other thread's block
// gets its own thread's callstack. The simulation gave it the combined allocation's component
// stack, still set while the callbacks ran.
import { act, cb, keep, scenario } from "../../../lib/scenario/mod.ts";

export default scenario({ name: "comballoc_switch_callstack", seed: 16 }, (s) => {
  const m = s.main;
  const t1 = m.thread("t1", (t) => {
    t.alloc(7, { lifetime: keep.steps(17, "b"), at: "Gen.site8@gen.ml:28:4-20" });
  });
  m.yield();
  m.memprof.start({
    name: "p1",
    samplingRate: 0.5,
    callstackSize: 3,
    tracker: { allocMinor: cb.none().on(3, act.yieldToNext(["main", "t1"])) },
  });
  m.repeat(3, () => {
    m.allocCombined([9, 11, 2], { at: "Gen.site5@gen.ml:25:4-20" });
  });
  m.memprof.stop();
  m.join(t1);
  s.release("b");
});
