// Random campaign seed 3 (rnd-3-50, rnd-3-96): blocks kept with keep.steps(n, "b") and released
// by name before their step. The program's release "b" empties their keep site but leaves
// `next_due` as it was, so `tick` runs `release_due` (and its poll) once, at the first of their
// steps, which then finds nothing kept and no poll follows; the simulation polled at each of
// their steps. Here the second block's step polled between two C allocations and Gc.minor: their
// allocation callbacks ran before the collection, where OCaml runs them after it, each followed
// by its deallocation.
import { cb, keep, scenario } from "../../../lib/scenario/mod.ts";

export default scenario({ name: "named_release_due_poll", seed: 1, minorHeapWords: 4096 }, (s) => {
  const m = s.main;
  m.memprof.start({
    name: "p",
    samplingRate: 1,
    callstackSize: 0,
    tracker: { allocMinor: cb.track(), deallocMinor: cb.track() },
  });
  m.alloc(4, { source: "array", lifetime: keep.steps(4, "b") }); // due at step 7
  m.alloc(4, { source: "array", lifetime: keep.steps(6, "b") }); // due at step 10
  s.release("b");
  m.poll();
  m.poll();
  m.poll(); // step 7: release_due polls, finds nothing; next_due becomes max_int
  m.alloc(4, { source: "runtime" });
  m.alloc(4, { source: "runtime" });
  m.minorGc(); // step 10: no poll before the collection
  m.memprof.stop();
});
