/**
 * Threads blocking inside callbacks: a callback that blocks (e.g. on a mutex or a write) releases
 * the domain lock, and another systhread of the domain runs meanwhile — here, every 40th
 * alloc_minor callback switches to the `io` thread and every 40th (offset 20) switches back to
 * `worker`, so the rest of the loop continues on whichever thread took the lock. The threads
 * also enter blocking sections of their own. Stresses per-thread entry tables (a callback's
 * thread differs from the allocating thread's successor), callstacks inherited at
 * `Thread.create`, and tracked blocks of exited threads passing to the domain.
 *
 * Not exportable to the differential suite: systhread switches (and callbacks that switch
 * threads) have no one-to-one OCaml form in an exported program, which runs a domain's steps as
 * one straight-line function.
 *
 * OCaml program:
 *   let m = Mutex.create ()
 *   tracker.alloc_minor = (fun _ -> if nth mod 40 = 0 then (Mutex.lock m; Mutex.unlock m); Some …)
 *   let () = Gc.Memprof.start ~sampling_rate:0.02 ~callstack_size:6 tracker;
 *            let io = Thread.create io_loop () and w = Thread.create work_loop () in
 *            Thread.join io; Thread.join w; Gc.full_major ()
 */
import { act, cb, keep, scenario, sizes } from "../lib/scenario/mod.ts";

export default scenario({
  name: "thread_block_in_callback",
  description: "callbacks that block and let another systhread run (not exportable)",
  seed: 8,
  minorHeapWords: 16_384,
}, (s) => {
  const main = s.main;
  main.memprof.start({
    samplingRate: 0.02,
    callstackSize: 6,
    tracker: {
      allocMinor: cb.track()
        .every(40, act.switchThread("io"), 40)
        .every(40, act.switchThread("worker"), 20),
    },
  });
  const worker = main.thread("worker");
  const io = main.thread("io");
  worker.switchTo();
  main.call("Block.loop@block.ml:30:2-40", () =>
    main.repeat(40, () => {
      main.repeat(100, () =>
        main.alloc(sizes.uniform(2, 8), {
          lifetime: keep.cycle(keep.drop, keep.steps(60)),
          at: "Block.step@block.ml:20:6-30",
        }));
      main.blocking(() =>
        main.repeat(10, () => main.alloc(3, { at: "Block.in_section@block.ml:24:6-30" }))
      );
    }));
  main.minorGc();
  io.exit();
  worker.exit();
  main.fullMajor();
  main.memprof.stop();
});
