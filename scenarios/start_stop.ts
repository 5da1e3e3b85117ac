/**
 * OCaml's statmemprof/start_stop: profiles started and stopped repeatedly while allocating; a
 * stopped (not discarded) profile still gets the promotion and deallocation callbacks of its
 * blocks; a new profile may start while an old one is stopped; discarding ends it.
 */
import { keep, scenario } from "../lib/scenario/mod.ts";

export default scenario({
  name: "start_stop",
  description: "statmemprof/start_stop: start, stop and discard while allocating",
}, (s) => {
  const main = s.main;
  const profiles = [];
  for (let k = 0; k < 5; k++) {
    profiles.push(main.memprof.start({ samplingRate: 0.05, callstackSize: 4 }));
    main.repeat(200, () =>
      main.alloc(3, {
        lifetime: keep.cycle(keep.drop, keep.until("roots")),
        at: "Start_stop.alloc@start_stop.ml:30:4-40",
      }));
    main.memprof.stop();
    main.minorGc(); // promotions and deaths reported to the stopped profile
  }
  s.release("roots");
  main.fullMajor();
  for (const p of profiles) main.memprof.discard(p);
  // After discard, nothing more: a last profile sees only its own blocks.
  main.memprof.start({ samplingRate: 1, callstackSize: 4 });
  main.alloc(2, { at: "Start_stop.last@start_stop.ml:50:2-20" });
  main.memprof.stop();
  main.minorGc();
});
