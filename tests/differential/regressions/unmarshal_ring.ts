/**
 * Keep sites (found with random scenario rnd-4-49 of seed 4): unmarshalled values of three
 * blocks kept in a 13-slot keep.ring. The exported program stores a value's root block in one
 * slot (`keep_ring`); the value's other blocks live as long as it does, reached through its first
 * field. The simulation gave each block a slot of its own, so its ring turned three times as fast,
 * and `Gc.full_major` reported dead blocks of values that OCaml 5.3 still held.
 */
import { cb, keep, scenario } from "../../../lib/scenario/mod.ts";

export default scenario({ name: "unmarshal_ring", seed: 7, minorHeapWords: 16_384 }, (s) => {
  const m = s.main;
  m.memprof.start({
    name: "p1",
    samplingRate: 0.01,
    tracker: { allocMajor: cb.track(), deallocMajor: cb.track() },
  });
  m.repeat(20, () => m.unmarshal([255, 159, 86], { lifetime: keep.ring(13) }));
  m.fullMajor();
  m.memprof.stop();
});
