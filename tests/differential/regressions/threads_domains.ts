/**
 * Threads with programs while two spawned domains run (issue 24: a refusal lifted). With the
 * threads library, leaving any blocking section draws a new sampling trigger
 * (`caml_thread_leave_blocking_section` → `caml_memprof_enter_thread`), so the exported program
 * makes each wait of a domain one blocking section, whatever the timing (counted waits,
 * lib/scenario/engine/_domain_waits.ts), and the simulation draws there too. The main thread
 * passes the baton to its systhread between domain turns; a worker is joined by a `join` step,
 * the other terminates.
 */
import { keep, scenario, sizes } from "../../../lib/scenario/mod.ts";

export default scenario({ name: "threads_domains", seed: 11, minorHeapWords: 4_096 }, (s) => {
  const main = s.main;
  main.memprof.start({ samplingRate: 0.1, callstackSize: 8 });
  const a = main.thread("a", (t) => {
    t.repeat(200, () => t.alloc(sizes.uniform(1, 12), { lifetime: keep.steps(40) }));
    t.yieldTo("main");
    t.repeat(100, () => t.alloc(3, { lifetime: keep.steps(10) }));
  });
  main.repeat(200, () => main.alloc(4, { lifetime: keep.steps(30) }));
  const w = main.spawn("w");
  w.repeat(300, () => w.alloc(sizes.uniform(1, 20), { lifetime: keep.steps(60) }));
  main.yieldTo(a);
  main.repeat(200, () => main.alloc(5, { lifetime: keep.steps(20) }));
  const v = main.spawn("v");
  v.repeat(300, () => v.alloc(2, { lifetime: keep.steps(100) }));
  w.repeat(300, () => w.alloc(3));
  v.minorGc();
  main.join(w);
  main.yieldTo(a);
  main.join(a);
  v.terminate();
  main.minorGc();
  main.memprof.stop();
});
