/**
 * External allocations where a callback raises (issue 24: a refusal lifted). A runtime
 * allocation (`Bytes.create`) sampled just before a sampled external allocation leaves its
 * callback pending; memtrace's slow path runs it at its sampling loop's poll, under the lock.
 * When that callback raises, memtrace's `ext_alloc_slowpath` catches the exception and marks the
 * tracer failed (`mark_failed`): `External.alloc` returns no token, and from then on, as
 * memtrace's `Is_stopped`, an allocation callback does not track its block and a promotion ends
 * its block's tracking. The simulation let the exception escape the step. Raises outside the
 * lock (caught by an `attempt`, or escaping a step) go on as usual, before and after.
 */
import { act, cb, keep, scenario, sizes } from "../../../lib/scenario/mod.ts";

export default scenario({
  name: "external_raise_under_lock",
  seed: 77,
  minorHeapWords: 4096,
  externalSamplingRate: 0.05,
}, (s) => {
  const m = s.main;
  m.memprof.start({
    name: "p",
    samplingRate: 0.1,
    callstackSize: 3,
    tracker: {
      allocMinor: cb.track().on(3, act.raise("Early")).on(7, act.raise("Boom"))
        .on(15, act.raise("Boom")),
      allocMajor: cb.track(),
      promote: cb.track(),
    },
  });
  m.call("Ext.outer@ext.ml:1:0-10", () =>
    m.repeat(200, (i) => {
      m.alloc(3, { lifetime: keep.steps(10) });
      m.attempt(() => m.extAlloc(sizes.uniform(100, 5000), keep.until("x")));
      m.alloc(5, { source: "runtime", lifetime: keep.steps(3) });
      m.attempt(() => m.extAlloc(3000, keep.forever));
      i.every(50, () => s.release("x"), 7);
    }));
  m.memprof.stop();
  m.fullMajor();
});
