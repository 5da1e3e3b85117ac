/**
 * Issue 22, bug 3 (named releases): the allocation callback of a runtime allocation
 * (`Bytes.create`) waits for the next poll, which is the poll of the `release` step that
 * follows; the callback raises there. The exception is the release step's, logged as escaped,
 * and the next allocation is sampled as usual. The program's release once had no poll for a
 * single slot (a `for` loop polls only between iterations) and no handler: the callback ran at
 * the next allocation, which its exception cancelled.
 */
import { cb, keep, scenario } from "../../../lib/scenario/mod.ts";

export default scenario({
  name: "release_poll_raise",
  description: "an allocation callback raises in the poll of a named release",
  minorHeapWords: 4_096,
}, (s) => {
  const main = s.main;
  main.memprof.start({
    samplingRate: 1,
    callstackSize: 4,
    tracker: { allocMinor: cb.track().always({ kind: "raise", exn: "AtRelease" }) },
  });
  main.alloc(2, { source: "runtime", lifetime: keep.until("r") });
  s.release("r");
  main.alloc(3);
  main.memprof.stop();
});
