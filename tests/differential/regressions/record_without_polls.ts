// Issue 22 (polls): the exported program's recording code polled. memprof runs an allocation
// callback with an action pending (caml_reset_young_limit sets the flag when it suspends
// sampling), which caml_callback turns into an interrupt: the callback's first poll or
// allocation enters the runtime and does the GC work due. The program recorded a callstack of
// two frames or more, and the loop indices of nested loops, with `for` loops, whose back-edges
// poll: a callback returning None (no allocation of its own) did the minor collection due
// inside the callback, before memprof drew its next trigger, where the simulation had it at
// the program's next allocation, after (the unmarshalled block's callback at 147 here; OCaml
// then sampled the next allocation, the simulation not). The records are now written by
// recursions, and a profile's start resets its counters without a loop.
import { cb, keep, scenario } from "../../../lib/scenario/mod.ts";

export default scenario({ name: "record_without_polls", seed: 5, minorHeapWords: 4096 }, (s) => {
  const m = s.main;
  m.memprof.start({
    name: "p",
    samplingRate: 0.1,
    callstackSize: 4,
    tracker: { allocMinor: cb.none(), promote: cb.track(), deallocMinor: cb.track() },
  });
  m.repeat(150, () => {
    m.alloc(4, { source: "unmarshal" });
    m.alloc(5, { lifetime: keep.steps(3) });
    m.alloc(3);
  });
  m.memprof.stop();
});
