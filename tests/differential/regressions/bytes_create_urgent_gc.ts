// Issue 22: Bytes.create of a block over Max_young_wosize (caml_alloc_string) calls
// caml_check_urgent_gc right after caml_alloc_shr, so the slice that the allocation asks for —
// and the minor collection ending its major cycle — runs inside Bytes.create. The simulation
// ran it at the next poll, after the next step's keep.steps releases: a kept block was reported
// dead (dealloc_minor) where OCaml promoted it.
import { cb, keep, scenario, sizes } from "../../../lib/scenario/mod.ts";

export default scenario({ name: "bytes_create_urgent_gc", seed: 9, minorHeapWords: 8192 }, (s) => {
  const m = s.main;
  m.memprof.start({
    name: "p",
    samplingRate: 0.1,
    callstackSize: 0,
    tracker: { allocMinor: cb.track(), promote: cb.track(), deallocMinor: cb.track() },
  });
  m.repeat(69, (i) => {
    i.every(5, () => m.alloc(4160, { source: "major" }), 4);
    m.alloc(sizes.geometric(15, 87), { lifetime: keep.steps(50) });
  });
  m.memprof.stop();
});
