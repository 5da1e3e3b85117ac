/**
 * Spawned domains profiling while the main domain never starts a profile. A first worker starts
 * a profile, allocates small blocks and 500-word arrays, and terminates with the profile still
 * running and its last blocks still tracked; the main domain (not sampling) then allocates and
 * keeps blocks of its own, and its collections adopt the worker's entries and run their
 * dealloc callbacks on the main domain. A second worker, spawned after the first ended, starts
 * another profile and stops it before ending. Nothing is kept while two domains run (the export
 * refuses that). Callstacks are empty (`callstack_size` 0). Stresses callbacks of a profile
 * running on a domain that never sampled, and a second worker reusing the first one's domain
 * id, hence its generator seed.
 *
 * OCaml program:
 *   let () = let d1 = Domain.spawn (fun () ->
 *              ignore (Gc.Memprof.start ~sampling_rate:0.02 ~callstack_size:0 t1);
 *              for i = 1 to 200 do … done) in Domain.join d1;
 *            for i = 1 to 3000 do … done; Gc.minor ();
 *            let d2 = Domain.spawn (fun () -> ignore (Gc.Memprof.start … t2); …;
 *              Gc.Memprof.stop ()) in Domain.join d2;
 *            release (); Gc.full_major ()
 */
import { keep, scenario, sizes } from "../lib/scenario/mod.ts";

export default scenario({
  name: "spawned_profile_only",
  description: "only spawned domains profile; the main domain adopts their tracked blocks",
  seed: 5,
  minorHeapWords: 16_384,
}, (s) => {
  const main = s.main;
  const w1 = main.spawn("worker1");
  w1.memprof.start({ name: "w1", samplingRate: 0.02, callstackSize: 0 });
  // Little major-heap allocation while two domains run: with more, a major cycle may end then,
  // and the real runtime's cycle ends are not reproducible with a domain blocked.
  w1.repeat(4, () => {
    w1.repeat(1_000, () => w1.alloc(sizes.uniform(1, 10)));
    w1.alloc(500, { source: "array" });
  });
  w1.terminate(); // profile w1 still running: its tracked blocks become orphans
  main.repeat(
    3_000,
    () => main.alloc(sizes.uniform(2, 5), { lifetime: keep.cycle(keep.drop, keep.until("mine")) }),
  );
  main.minorGc(); // main adopts w1's orphans: their callbacks run here
  const w2 = main.spawn("worker2");
  w2.memprof.start({ name: "w2", samplingRate: 0.02, callstackSize: 0 });
  w2.repeat(2_000, () => w2.alloc(sizes.choice(3, 6)));
  w2.repeat(3, () => w2.alloc(400, { source: "array" }));
  w2.memprof.stop();
  w2.terminate();
  s.release("mine");
  main.fullMajor();
});
