// As custom_cycles_thread, after a systhread's end: off the systhreads' ring, its descriptor is
// reached by scanning the harness's th_handle (4 words, not 1) and its condition by scanning
// th_cond (3, not 0: no stack holds it any more), 6 words a cycle more than while it waited.
import { keep, scenario } from "../../../lib/scenario/mod.ts";

export default scenario(
  { name: "custom_cycles_thread_end", seed: 1, minorHeapWords: 4096 },
  (s) => {
    const m = s.main;
    const t1 = m.thread("t1", () => {});
    m.join(t1);
    m.memprof.start({ name: "p", samplingRate: 0.0001, callstackSize: 0, tracker: {} });
    m.repeat(150, () => {
      m.alloc(14, { source: "custom", lifetime: keep.until("c"), customMem: 23977 });
    });
    m.memprof.stop();
    s.release("c");
  },
);
