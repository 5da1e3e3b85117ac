/**
 * A callback that stops the profile and starts a new one in the middle of a combined allocation:
 * the components after it are sampled by the new profile, at its own rate, and both profiles'
 * blocks still get their promotion and deallocation callbacks.
 */
import { act, cb, keep, scenario } from "../lib/scenario/mod.ts";

export default scenario({
  name: "restart_mid_comballoc",
  description: "a callback stops and restarts the profile in the middle of a combined allocation",
}, (s) => {
  const main = s.main;
  const second = {
    name: "second",
    samplingRate: 0.5,
    callstackSize: 6,
    tracker: {},
  };
  main.memprof.start({
    name: "first",
    samplingRate: 1,
    callstackSize: 6,
    tracker: { allocMinor: cb.track().on(2, act.stop(), act.start(second)) },
  });
  main.repeat(50, () =>
    main.allocCombined([2, 3, 4, 5], {
      lifetime: keep.cycle(keep.until("live"), keep.drop),
      at: [
        ["Restart.f@restart.ml:10:10-20"],
        ["Restart.f@restart.ml:10:22-34"],
        ["Restart.f@restart.ml:10:36-50"],
        ["Restart.f@restart.ml:10:52-68"],
      ],
    }));
  main.minorGc();
  s.release("live");
  main.fullMajor();
  main.memprof.stop();
});
