/**
 * A callback returning None versus Some, with an 8,192-word minor heap so that many minor
 * collections happen. Three phases over the same loop (blocks of 2 to 6 words, every third kept
 * for 300 steps): alloc_minor returning None (the block is not tracked: no promote or dealloc
 * callback, and no 2-word `Some` block allocated); alloc_minor returning Some but promote
 * returning None (tracking ends at promotion: no dealloc_major); and Some everywhere. Each
 * returned `Some v` is itself a minor allocation, which shifts where the small minor heap
 * fills; callstacks are empty (`callstack_size` 0).
 *
 * OCaml program:
 *   let phase tracker = let p = Gc.Memprof.start ~sampling_rate:0.02 ~callstack_size:0 tracker in
 *                       for i = 1 to 4000 do … done; Gc.Memprof.stop (); Gc.minor (); p
 *   let () = ignore (phase none); ignore (phase some_then_none); ignore (phase some);
 *            Gc.full_major ()   (run with OCAMLRUNPARAM=s=8192)
 */
import { cb, keep, type ProfileSpec, scenario, sizes } from "../lib/scenario/mod.ts";

const kept = keep.cycle(keep.drop, keep.drop, keep.steps(300));

export default scenario({
  name: "none_vs_some_small_heap",
  description: "callbacks returning None vs Some with an 8k-word minor heap",
  seed: 4,
  minorHeapWords: 8_192,
}, (s) => {
  const main = s.main;
  const phases: ProfileSpec["tracker"][] = [
    { allocMinor: cb.none(), allocMajor: cb.none() },
    { promote: cb.none() },
    {},
  ];
  for (const [k, tracker] of phases.entries()) {
    main.memprof.start({ name: `phase${k + 1}`, samplingRate: 0.02, callstackSize: 0, tracker });
    main.repeat(4_000, () => main.alloc(sizes.uniform(2, 6), { lifetime: kept }));
    main.memprof.stop();
    main.minorGc();
  }
  main.fullMajor();
});
