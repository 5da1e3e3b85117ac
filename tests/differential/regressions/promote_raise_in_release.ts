/**
 * Issue 22, bug 3: a promotion callback raising in the poll of a `keep.steps` release. Blocks
 * kept for one step fill the remembered set (minor heap / 8 entries) and request a minor
 * collection; the release that empties the slot of the block due at the next step's start
 * polls, the collection runs there, and the promotion callback raises out of the release. The
 * exception is the step's: logged as escaped (the step then runs), or, inside an attempt,
 * caught by it. The simulation once failed with the exception uncaught; the program let it
 * leave the loop, in the middle of its releases.
 */
import { cb, keep, scenario } from "../../../lib/scenario/mod.ts";

export default scenario({
  name: "promote_raise_in_release",
  description: "a promotion callback raises in the poll of a keep.steps release",
  minorHeapWords: 4_096,
}, (s) => {
  const main = s.main;
  main.memprof.start({
    samplingRate: 1,
    callstackSize: 4,
    tracker: { promote: cb.track().always({ kind: "raise", exn: "Promoted" }) },
  });
  main.repeat(3_000, () => main.alloc(2, { lifetime: keep.steps(1) }));
  main.attempt(() => main.repeat(3_000, () => main.alloc(2, { lifetime: keep.steps(1) })));
  main.repeat(1_000, () => main.alloc(2, { lifetime: keep.steps(1) }));
  main.memprof.stop();
});
