/**
 * External allocations (issue 24): memtrace's `External.alloc`, emulated in the exported program,
 * with what its slow path makes the runtime do under the tracer's lock. A runtime allocation
 * (`Bytes.create`) sampled just before an external allocation leaves its callback pending; the
 * slow path's sampling loop polls at its back-edge, so the callback runs there, under the lock,
 * and does not track its block. Without that poll in the simulation the callback ran after the
 * callstack's allocation, and the log differed at callback 6. Also: drawn sizes, `until`,
 * `forever` and `steps` lifetimes of the tokens, a callback's own allocations.
 */
import { act, cb, keep, scenario, sizes } from "../../../lib/scenario/mod.ts";

export default scenario({
  name: "external_alloc_polls",
  seed: 4242,
  minorHeapWords: 4096,
  externalSamplingRate: 0.02,
}, (s) => {
  const m = s.main;
  m.memprof.start({
    name: "p",
    samplingRate: 0.1,
    callstackSize: 3,
    tracker: {
      allocMinor: cb.track().every(4, act.alloc(3, keep.steps(5))),
      allocMajor: cb.track(),
      promote: cb.track(),
    },
  });
  m.call("Ext.outer@ext.ml:1:0-10", () =>
    m.repeat(300, (i) => {
      m.alloc(3, { lifetime: keep.steps(10) });
      m.extAlloc(sizes.uniform(100, 5000), keep.until("x"));
      m.alloc(5, { source: "runtime", lifetime: keep.steps(3) });
      m.extAlloc(3000, keep.forever);
      m.alloc(300, { source: "major", lifetime: keep.steps(20) });
      m.extAlloc(40, keep.steps(4));
      i.every(50, () => s.release("x"), 7);
    }));
  m.memprof.stop();
  m.fullMajor();
});
