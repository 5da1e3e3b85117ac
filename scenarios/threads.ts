/**
 * Systhreads with programs of their own (`Thread.create`): two threads pass the baton to each
 * other and back to the main thread inside their loops; each samples its own allocations, with
 * its own callstack; blocks a thread keeps outlive its switches and its end (`b_data`, released
 * by the main thread once both threads are joined); then a spawned domain runs beside the main
 * domain's systhreads.
 *
 * Until issue 24 this scenario used the DSL's older form of systhreads (a thread without a
 * program, `switchTo`, `blocking`, `exit`, and a thread on the spawned domain), which has no
 * OCaml counterpart and is not exported (docs/differential.md, "What is refused, and why"); the
 * form here is what an OCaml program does, and the real runtime judges it.
 */
import { keep, scenario } from "../lib/scenario/mod.ts";

export default scenario({
  name: "threads",
  description:
    "systhreads with programs: the baton passed in loops, blocks kept past a thread's end",
  minorHeapWords: 8_192,
}, (s) => {
  const main = s.main;
  main.memprof.start({ samplingRate: 0.02, callstackSize: 6 });
  const a = main.thread("a", (t) => {
    t.repeat(3, () => {
      t.call("Threads.worker_a@threads.ml:10:2-30", () =>
        t.repeat(
          300,
          () => t.alloc(2, { lifetime: keep.steps(100), at: "Threads.step@threads.ml:5:4-20" }),
        ));
      t.yieldTo("b"); // b runs its worker, then gives the baton back
      t.repeat(100, () => t.alloc(3, { at: "Threads.io@threads.ml:30:4-20" }));
      t.yieldTo("main");
    });
  });
  const b = main.thread("b", (t) => {
    t.repeat(3, () => {
      t.call("Threads.worker_b@threads.ml:20:2-30", () =>
        t.repeat(
          300,
          () =>
            t.alloc(6, { lifetime: keep.until("b_data"), at: "Threads.step@threads.ml:5:4-20" }),
        ));
      t.yieldTo("a");
    });
  });
  main.repeat(3, () => main.yieldTo(a));
  main.join(a);
  main.join(b); // b's blocks outlive it
  const d = main.spawn("other");
  d.repeat(
    500,
    () => d.alloc(4, { lifetime: keep.steps(50), at: "Threads.remote@threads.ml:40:4-20" }),
  );
  d.minorGc();
  s.release("b_data");
  main.fullMajor();
  d.terminate();
  main.memprof.stop();
  main.minorGc();
});
