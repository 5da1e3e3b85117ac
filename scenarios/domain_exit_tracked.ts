/**
 * A domain terminating while holding tracked blocks, the only spawned domain alive at that
 * moment. The worker inherits the main domain's profile and allocates small blocks (some dying
 * at its own `Gc.minor`, the last ones still young when it ends) and 400-word arrays in the
 * major heap, tracked until a major cycle finds them dead. It terminates: its minor heap is
 * emptied and its tracked entries become global orphans. The main domain collects at once
 * (adopting the orphans: their dealloc_minor callbacks run on the main domain), allocates and
 * keeps blocks of its own, collects again, and runs a full major collection (the worker's
 * arrays: dealloc_major on the main domain). Nothing is kept while both domains run (the
 * export refuses that).
 *
 * OCaml program:
 *   let () = ignore (Gc.Memprof.start ~sampling_rate:0.02 ~callstack_size:10 tracker);
 *            let d = Domain.spawn (fun () -> Gc.minor (); build (); Gc.minor (); more ()) in
 *            Domain.join d; Gc.minor (); main_loop (); Gc.minor (); shared := []; Gc.full_major ();
 *            Gc.Memprof.stop ()
 */
import { keep, scenario, sizes } from "../lib/scenario/mod.ts";

export default scenario({
  name: "domain_exit_tracked",
  description: "one domain terminates holding tracked blocks; the main domain collects them",
  seed: 13,
  minorHeapWords: 32_768,
}, (s) => {
  const main = s.main;
  main.memprof.start({ samplingRate: 0.02, callstackSize: 10 });
  const w = main.spawn("worker");
  // The worker starts from an empty minor heap: `Domain.spawn` allocates on the new domain (its
  // domain-local state, …) before the worker's function runs, which the simulation does not.
  w.minorGc();
  w.call("Exit_tracked.build@exit_tracked.ml:20:4-40", () => {
    w.repeat(
      2_500,
      () => w.alloc(sizes.uniform(1, 12), { at: "Exit_tracked.node@exit_tracked.ml:12:14-40" }),
    );
    w.repeat(
      20,
      () => w.alloc(400, { source: "array", at: "Exit_tracked.table@exit_tracked.ml:15:16-34" }),
    );
  });
  w.minorGc();
  w.call(
    "Exit_tracked.more@exit_tracked.ml:30:4-40",
    () => w.repeat(1_000, () => w.alloc(4, { at: "Exit_tracked.tail@exit_tracked.ml:28:14-30" })),
  );
  w.terminate(); // tracked young blocks and arrays: orphans, adopted at main's next collection
  // The main domain collects at once: it adopts the orphans (their dealloc_minor callbacks run
  // here) and samples on from an empty minor heap. (Without it, the main domain's first samples
  // after the join came one iteration apart in about one real run in seven: its minor heap is
  // not left in the same state by the worker's end from one run to the next.)
  main.minorGc();
  main.call(
    "Exit_tracked.main_loop@exit_tracked.ml:40:2-40",
    () =>
      main.repeat(500, () =>
        main.alloc(2, {
          lifetime: keep.cycle(keep.drop, keep.until("shared")),
          at: "Exit_tracked.tick@exit_tracked.ml:38:4-20",
        })),
  );
  main.minorGc();
  s.release("shared");
  main.fullMajor();
  main.memprof.stop();
});
