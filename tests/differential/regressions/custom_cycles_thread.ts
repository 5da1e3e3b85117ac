// Random campaign seed 3 (rnd-3-73, rnd-3-80): out-of-heap memory of custom blocks (here 23,977
// words each, allocated in the major heap) asks for a whole major cycle's work at almost every
// allocation, so any error in the marking work the simulation gives the program's own data adds
// up over a hundred cycles, until a cycle ends at another allocation than in OCaml and the
// samples' counts differ. With a systhread waiting for its turn, the model of the exported
// program's harness marked 8 words a cycle fewer than OCaml 5.3 (the threads library's data is
// 255 words, not 236; a waiting thread costs 6: its descriptor darkened by the systhreads'
// roots hook, 1, its status block, 3, and its slots in th_cond and th_handle, where its
// condition, on its stack, costs nothing and Thread.create's closure is dead), and started 8
// words behind it.
import { keep, scenario } from "../../../lib/scenario/mod.ts";

export default scenario({ name: "custom_cycles_thread", seed: 1, minorHeapWords: 4096 }, (s) => {
  const m = s.main;
  const t1 = m.thread("t1", () => {});
  m.memprof.start({ name: "p", samplingRate: 0.0001, callstackSize: 0, tracker: {} });
  m.repeat(100, () => {
    m.alloc(14, { source: "custom", lifetime: keep.until("c"), customMem: 23977 });
  });
  m.memprof.stop();
  m.join(t1);
  s.release("c");
});
