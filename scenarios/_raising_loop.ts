/**
 * The loop of the unguarded raising scenarios (raise_in_loop_unguarded, raise_pending_unguarded):
 * 30 rounds of 50 small blocks (every other one kept 100 steps) and a 280-word `Array.make`
 * (kept 60 steps), with an 8,192-word minor heap filling every few iterations, no handler, a
 * profile at rate 0.01 with no callstacks and the given tracker; then a minor collection, the
 * profile's stop and a full major collection.
 *
 * OCaml program:
 *   for i = 1 to 30 do
 *     for j = 1 to 50 do (try cell := node () with e -> log e) done;
 *     (try big := Array.make 280 i with e -> log e)
 *   done
 *   (run with OCAMLRUNPARAM=s=8192)
 * @module
 */
import { keep, type ScenarioBuilder, sizes, type TrackerSpec } from "../lib/scenario/mod.ts";

/** The settings the loop runs with (its minor heap fills every few iterations). */
export const RAISING_LOOP_SETTINGS = { seed: 9, minorHeapWords: 8_192 } as const;

/** The loop, profiled by a tracker with callbacks `tracker`. */
export function raisingLoop(s: ScenarioBuilder, tracker: TrackerSpec): void {
  const main = s.main;
  main.memprof.start({ samplingRate: 0.01, callstackSize: 0, tracker });
  main.repeat(30, () => {
    main.repeat(50, () =>
      main.alloc(sizes.uniform(2, 8), {
        lifetime: keep.cycle(keep.drop, keep.steps(100)),
      }));
    main.alloc(280, { source: "array", lifetime: keep.steps(60) });
  });
  main.minorGc();
  main.memprof.stop();
  main.fullMajor();
}
