// As custom_cycles_thread, with profiles stopped before the one running: the config block of a
// profile is darkened by memprof's roots (caml_memprof_scan_roots) only while a table of
// entries holds it, not discarded; once another profile started, the harness's `prof` array
// still holds it and marking reaches it by scanning, its header and 9 fields: 10 words where
// the simulation counted 8, and the array's fields were counted per profile started, not from
// its first slot holding one.
import { keep, scenario } from "../../../lib/scenario/mod.ts";

export default scenario({
  name: "custom_cycles_stopped_profiles",
  seed: 1,
  minorHeapWords: 4096,
}, (s) => {
  const m = s.main;
  for (const name of ["q1", "q2", "q3"]) {
    m.memprof.start({ name, samplingRate: 0.001, callstackSize: 0, tracker: {} });
    m.memprof.stop();
  }
  m.memprof.start({ name: "p", samplingRate: 0.0001, callstackSize: 0, tracker: {} });
  m.repeat(150, () => {
    m.alloc(14, { source: "custom", lifetime: keep.until("c"), customMem: 23977 });
  });
  m.memprof.stop();
  s.release("c");
});
