/**
 * OCaml's statmemprof/discard_in_callback: a callback stops and discards its own profile; the
 * blocks it tracked get no more callbacks (not even deallocation). The program then starts a
 * new profile, which does the same one allocation later.
 */
import { act, cb, keep, scenario } from "../lib/scenario/mod.ts";

const F33 = [2, 3, 4, 5, 3, 4, 5];

export default scenario({
  name: "discard_in_callback",
  description: "statmemprof/discard_in_callback: a callback discards its own profile",
}, (s) => {
  const main = s.main;
  for (let k = 1; k <= 4; k++) {
    main.memprof.start({
      name: `p${k}`,
      samplingRate: 1,
      callstackSize: 10,
      tracker: {
        allocMinor: cb.track().on(k, act.stop(), act.discard()),
      },
    });
    main.allocCombined(F33, {
      lifetime: keep.until("res"),
      at: "Discard_in_callback.f33@discard_in_callback.ml:20:2-60",
    });
    main.alloc(2, {
      lifetime: keep.until("res"),
      at: "Discard_in_callback.test@discard_in_callback.ml:40:6-30",
    });
  }
  main.minorGc();
  s.release("res");
  main.fullMajor();
});
