/**
 * Systhreads on two domains: threads created with their parent's callstack, switched to, run
 * inside another thread's blocking section, and exited normally. Each thread samples its own
 * allocations; a thread's tracked blocks outlive it (they go to its domain when it exits).
 */
import { keep, scenario } from "../lib/scenario/mod.ts";

export default scenario({
  name: "threads",
  description: "systhreads: create, switch, blocking sections, exit with tracked blocks",
  minorHeapWords: 8_192,
}, (s) => {
  const main = s.main;
  main.memprof.start({ samplingRate: 0.02, callstackSize: 6 });
  const a = main.thread("a");
  const b = main.thread("b");
  main.repeat(3, () => {
    a.switchTo();
    main.call(
      "Threads.worker_a@threads.ml:10:2-30",
      () =>
        main.repeat(
          300,
          () => main.alloc(2, { lifetime: keep.steps(100), at: "Threads.step@threads.ml:5:4-20" }),
        ),
    );
    b.switchTo();
    main.call(
      "Threads.worker_b@threads.ml:20:2-30",
      () =>
        main.repeat(
          300,
          () =>
            main.alloc(6, { lifetime: keep.until("b_data"), at: "Threads.step@threads.ml:5:4-20" }),
        ),
    );
    main.blocking(() => {
      a.switchTo(); // a runs while b is blocked
      main.repeat(100, () => main.alloc(3, { at: "Threads.io@threads.ml:30:4-20" }));
    });
  });
  b.exit();
  const d = main.spawn("other");
  const c = d.thread("c");
  c.switchTo();
  d.repeat(
    500,
    () => d.alloc(4, { lifetime: keep.steps(50), at: "Threads.remote@threads.ml:40:4-20" }),
  );
  c.exit();
  d.minorGc();
  s.release("b_data");
  main.fullMajor();
  d.terminate();
  main.memprof.stop();
  main.minorGc();
});
