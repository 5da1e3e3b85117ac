// Issue 22/24 (rnd-5-75, shrunk): OCaml 5.3 gives each domain its own major heap. A domain
// spawned during a cycle computes its slices' work from its own heap (empty: none owed) and has
// nothing of its own to sweep or mark; the main domain's heap is swept by the main domain only.
// The simulation kept one heap for all domains: the worker's slice swept and marked the main
// domain's heap and ended a cycle there (30 major cycles against OCaml's 29, and the deallocation
// callbacks from callback 656 on one cycle early).
import { cb, keep, scenario } from "../../../lib/scenario/mod.ts";

export default scenario(
  { name: "spawned_domain_own_heap", seed: 7, minorHeapWords: 262144 },
  (s) => {
    const m = s.main;
    m.memprof.start({
      name: "p",
      samplingRate: 0.0005,
      callstackSize: 4,
      tracker: { allocMajor: cb.track(), deallocMajor: cb.track() },
    });
    m.repeat(2600, () => m.unmarshal([27, 209, 201, 74]));
    m.memprof.stop();
    const w = m.spawn("w");
    w.alloc(2);
    m.join(w);
    m.repeat(2600, () => m.alloc(300, { lifetime: keep.steps(5) }));
  },
);
