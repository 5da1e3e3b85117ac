// Two domains fill a shared cache (blocks kept in the program's global slots) while both profile,
// with minor collections between their turns. With several domains, OCaml 5.3 shares the
// promotion of the remembered sets among them, and each domain's memprof checks its tracked
// blocks without waiting for the others: a tracked young block the cache holds is reported
// promoted in some runs and dead in others (a race point; docs/differential.md, "Race points").
import { cb, keep, scenario, sizes } from "../../lib/scenario/mod.ts";

export default scenario({ name: "shared_cache", seed: 3, minorHeapWords: 65536 }, (s) => {
  const m = s.main;
  const w = m.spawn("w");
  const tracker = { allocMinor: cb.track(), promote: cb.track(), deallocMinor: cb.track() };
  m.memprof.start({ name: "pm", samplingRate: 0.05, callstackSize: 4, tracker });
  w.memprof.start({ name: "pw", samplingRate: 0.05, callstackSize: 4, tracker });
  for (let k = 0; k < 4; k++) {
    m.repeat(100, () => m.alloc(sizes.uniform(2, 8), { lifetime: keep.ring(32, "cache") }));
    w.repeat(100, () => w.alloc(sizes.uniform(2, 8), { lifetime: keep.ring(32, "cache") }));
    (k % 2 === 0 ? m : w).minorGc();
  }
  w.memprof.stop();
  m.memprof.stop();
  w.terminate();
  s.release("cache");
});
