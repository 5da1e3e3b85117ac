// Issue 22 (polls): a systhread's program that ends with callbacks pending (here the
// deallocations its last step, a collection, made ready) ran them in Thread.create's wrapper,
// at its `check_memprof_cb ()` allocation: the first raising one left the wrapper's `try`, whose
// handler swallowed the exception (no record) and ran more of them in its own allocations. The
// simulation logged each as escaped from the thread's end. The program's thread now drains
// them before its end (`resume_dom`), each raise logged, as the simulation does.
import { act, cb, scenario } from "../../../lib/scenario/mod.ts";

export default scenario({ name: "thread_end_pending", minorHeapWords: 4096 }, (s) => {
  const m = s.main;
  const t1 = m.thread("t1", (t) => {
    t.repeat(6, () => t.alloc(3));
    t.minorGc();
  });
  m.memprof.start({
    name: "p",
    samplingRate: 1,
    callstackSize: 4,
    tracker: { deallocMinor: cb.track().always(act.raise("Exit")) },
  });
  m.yieldTo(t1);
  m.alloc(2);
  m.memprof.stop();
  m.join(t1);
});
