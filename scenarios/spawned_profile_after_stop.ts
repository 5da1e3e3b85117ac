/**
 * A spawned domain starting its own profile after the main domain stopped its one. The main
 * domain profiles a loop at rate 0.01, keeping every other block, and stops (its blocks keep
 * their callbacks). A worker spawned then inherits no running profile; it starts its own (rate
 * 0.05, a tracker returning None from promote), allocates small blocks and 300-word arrays,
 * runs a minor collection, stops its profile and ends while its last young blocks and its
 * arrays are still tracked. The main domain's next collections adopt the worker's orphaned
 * entries and run their callbacks for the worker's profile; then both profiles are discarded.
 * While both domains run, nothing is kept (the export refuses that: a kept block's promotion
 * would race between the domains). Stresses per-domain profiles, the worker's own generator
 * (seeded by its domain id) and orphan adoption of a stopped profile's entries.
 *
 * OCaml program:
 *   let () = let p = Gc.Memprof.start ~sampling_rate:0.01 ~callstack_size:8 t_main in
 *            main_loop (); Gc.Memprof.stop (); Gc.minor ();
 *            let d = Domain.spawn (fun () ->
 *              let q = Gc.Memprof.start ~sampling_rate:0.05 ~callstack_size:8 t_worker in
 *              worker_loop (); Gc.minor (); tail (); Gc.Memprof.stop (); q) in
 *            let q = Domain.join d in Gc.minor (); release (); Gc.full_major ();
 *            Gc.Memprof.discard p; Gc.Memprof.discard q
 */
import { cb, keep, scenario, sizes } from "../lib/scenario/mod.ts";

export default scenario({
  name: "spawned_profile_after_stop",
  description: "a spawned domain starts its own profile after the main domain stopped its one",
  seed: 21,
  minorHeapWords: 32_768,
}, (s) => {
  const main = s.main;
  const p = main.memprof.start({ name: "main_p", samplingRate: 0.01, callstackSize: 8 });
  main.call(
    "Spawned.main_loop@spawned.ml:10:2-40",
    () =>
      main.repeat(2_000, () =>
        main.alloc(sizes.uniform(2, 6), {
          lifetime: keep.cycle(keep.drop, keep.until("main_data")),
          at: "Spawned.main_node@spawned.ml:8:14-40",
        })),
  );
  main.memprof.stop();
  // Promote the main domain's kept blocks before a second domain exists: a young kept block
  // would be promoted by whichever domain gets to it first in the worker's Gc.minor, and
  // memprof may then report it promoted or deallocated from one run to the next.
  main.minorGc();
  const w = main.spawn("worker");
  const q = w.memprof.start({
    name: "worker_p",
    samplingRate: 0.05,
    callstackSize: 8,
    tracker: { promote: cb.none() },
  });
  w.call("Spawned.worker_loop@spawned.ml:20:4-40", () =>
    // Few major arrays while two domains run (see spawned_profile_only).
    w.repeat(10, () => {
      w.repeat(300, () =>
        w.alloc(sizes.choice(2, 4, 8), { at: "Spawned.worker_node@spawned.ml:18:16-40" }));
      w.alloc(300, { source: "array", at: "Spawned.worker_table@spawned.ml:19:16-34" });
    }));
  w.minorGc();
  w.repeat(200, () => w.alloc(3, { at: "Spawned.tail@spawned.ml:24:4-20" }));
  w.memprof.stop();
  w.terminate();
  main.minorGc();
  s.release("main_data");
  main.fullMajor();
  main.memprof.discard(p);
  main.memprof.discard(q);
});
