/**
 * Issue 22, bug 3, in a systhread's program (the simulation's resumable steps): the promotion
 * callback raising in the poll of a `keep.steps` release, as in promote_raise_in_release, but
 * in the program of a second systhread of the main domain, which the main thread joins.
 */
import { cb, keep, scenario } from "../../../lib/scenario/mod.ts";

export default scenario({
  name: "promote_raise_in_release_thread",
  description: "a promotion callback raises in a keep.steps release's poll, in a systhread",
  minorHeapWords: 4_096,
}, (s) => {
  const main = s.main;
  const worker = main.thread("worker", (t) => {
    t.repeat(2_000, () => t.alloc(2, { lifetime: keep.steps(1) }));
    t.attempt(() => t.repeat(2_000, () => t.alloc(2, { lifetime: keep.steps(1) })));
    t.repeat(500, () => t.alloc(2, { lifetime: keep.steps(1) }));
  });
  main.memprof.start({
    samplingRate: 1,
    callstackSize: 4,
    tracker: { promote: cb.track().always({ kind: "raise", exn: "Promoted" }) },
  });
  main.join(worker);
  main.memprof.stop();
});
