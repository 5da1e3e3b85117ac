// Issue 22 (seed 3, scenario 227): a systhread's end allocates in Thread.create's wrapper
// (`check_memprof_cb ()`, a `ref ()`); at a high rate that block is sampled, and a raising
// allocation callback's exception goes to the wrapper's handler, which prints it on stderr and
// ends the thread. The program logs no escape; the simulation logged one.
import { act, cb, scenario } from "../../../lib/scenario/mod.ts";

export default scenario({ name: "thread_wrapper_raise", minorHeapWords: 4096 }, (s) => {
  const m = s.main;
  const t1 = m.thread("t1", (t) => {
    t.alloc(3);
  });
  m.memprof.start({
    name: "p",
    samplingRate: 1,
    callstackSize: 4,
    tracker: { allocMinor: cb.track().always(act.raise("Boom")) },
  });
  m.yieldTo(t1);
  m.memprof.stop();
  m.join(t1);
});
