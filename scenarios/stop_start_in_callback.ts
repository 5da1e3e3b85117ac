/**
 * OCaml's statmemprof/stop_start_in_callback: profile k (rate 1) stops itself in its k-th
 * allocation callback and starts profile k+1 — in the middle of a combined allocation, whose
 * remaining components are then sampled by the new profile.
 */
import { act, cb, keep, type ProfileSpec, scenario } from "../lib/scenario/mod.ts";

const F33 = [2, 3, 4, 5, 3, 4, 5];

/** Profile k stops at its k-th allocation and starts profile k+1 (up to 5). */
function profile(k: number): ProfileSpec {
  const alloc = k < 5
    ? cb.track().on(k, act.stop(), act.start(profile(k + 1)))
    : cb.track().on(k, act.stop());
  return { name: `p${k}`, samplingRate: 1, callstackSize: 10, tracker: { allocMinor: alloc } };
}

export default scenario({
  name: "stop_start_in_callback",
  description: "statmemprof/stop_start_in_callback: a callback stops and restarts the profile",
}, (s) => {
  const main = s.main;
  const p = profile(1);
  main.memprof.start(p);
  main.repeat(4, () => {
    main.allocCombined(F33, {
      lifetime: keep.until("arr"),
      at: "Stop_start_in_callback.f33@stop_start_in_callback.ml:20:2-60",
    });
    main.alloc(2, {
      lifetime: keep.until("arr"),
      at: "Stop_start_in_callback.test@stop_start_in_callback.ml:44:6-30",
    });
  });
  main.minorGc();
  s.release("arr");
  main.fullMajor();
});
