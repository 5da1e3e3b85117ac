/**
 * OCaml's statmemprof/thread_exit_in_callback: the alloc_minor callback of a thread other than
 * the main one calls `Thread.exit`; the thread ends inside the callback, and sampling goes on in
 * the other threads of the domain.
 */
import { act, cb, scenario } from "../lib/scenario/mod.ts";

export default scenario({
  name: "thread_exit_in_callback",
  description: "statmemprof/thread_exit_in_callback: Thread.exit inside an allocation callback",
}, (s) => {
  const main = s.main;
  main.memprof.start({
    samplingRate: 1,
    callstackSize: 10,
    tracker: { allocMinor: cb.none().on(1, act.exitThread()) },
  });
  const t = main.thread("worker");
  t.switchTo();
  main.alloc(1, { at: "Thread_exit_in_callback.worker@thread_exit_in_callback.ml:20:23-50" });
  // The worker is gone; the main thread runs again and still samples.
  main.alloc(1, { at: "Thread_exit_in_callback@thread_exit_in_callback.ml:25:2-30" });
  main.memprof.stop();
});
