/**
 * External allocations with spawned domains and a systhread (issue 24: a refusal lifted).
 * memtrace samples external allocations on the main domain only: on another domain
 * `ext_alloc` returns at once, its sampler untouched (the simulation's tracer sampled every
 * domain's, under one lock). A systhread of the main domain shares the main thread's sampler and
 * lock; its slow path's callstack, and the array `Printexc.get_callstack` allocates for it, are
 * the thread's own.
 */
import { keep, scenario, sizes } from "../../../lib/scenario/mod.ts";

export default scenario({
  name: "external_domains_threads",
  seed: 5,
  minorHeapWords: 4096,
  externalSamplingRate: 0.02,
}, (s) => {
  const main = s.main;
  main.memprof.start({ samplingRate: 0.05, callstackSize: 16 });
  const t = main.thread("t", (th) => {
    th.repeat(100, () => {
      th.alloc(4, { lifetime: keep.steps(20) });
      th.extAlloc(sizes.uniform(200, 4000), keep.steps(5));
    });
    th.yieldTo("main");
    th.repeat(50, () => th.extAlloc(2000, keep.until("t")));
  });
  main.repeat(100, () => {
    main.alloc(3, { lifetime: keep.steps(10) });
    main.extAlloc(sizes.uniform(100, 3000), keep.steps(8));
  });
  const w = main.spawn("w");
  w.repeat(200, () => {
    w.alloc(2, { lifetime: keep.steps(30) });
    w.extAlloc(sizes.uniform(100, 3000), keep.steps(3));
  });
  main.yieldTo(t);
  main.repeat(100, () => main.extAlloc(1500, keep.forever));
  w.terminate();
  main.yieldTo(t);
  main.join(t);
  s.release("t");
  main.minorGc();
  main.memprof.stop();
});
