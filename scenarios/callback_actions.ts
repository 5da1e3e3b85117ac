/**
 * What else a callback may do: allocate (a block kept for a while), run a collection, and switch
 * to another thread — each inside the callback, on the domain that runs it. Sizes are drawn from
 * a fixed set; a second thread keeps allocating after the switch.
 */
import { act, cb, keep, scenario, sizes } from "../lib/scenario/mod.ts";

export default scenario({
  name: "callback_actions",
  description: "callbacks that allocate, collect and switch threads",
  seed: 5,
  minorHeapWords: 16_384,
}, (s) => {
  const main = s.main;
  const helper = main.thread("helper");
  main.memprof.start({
    samplingRate: 0.01,
    callstackSize: 8,
    tracker: {
      allocMinor: cb.track()
        .every(7, act.alloc(12, keep.steps(40)))
        .on(15, act.gc("minor"))
        .on(30, act.switchThread("helper")),
      promote: cb.track().every(5, act.alloc(3)),
      deallocMinor: cb.none().on(20, act.gc("majorSlice")),
      allocMajor: cb.track().always(act.alloc(2)),
    },
  });
  main.call(
    "Actions.main@actions.ml:50:2-30",
    () =>
      main.repeat(6_000, () =>
        main.alloc(sizes.choice(2, 3, 5, 8), {
          lifetime: keep.cycle(keep.drop, keep.steps(200)),
          at: "Actions.step@actions.ml:20:6-40",
        })),
  );
  main.alloc(400, { source: "major", lifetime: keep.until("big") });
  main.poll();
  main.majorGc();
  s.release("big");
  main.majorGc();
  main.memprof.stop();
  main.minorGc();
  helper.exit();
});
