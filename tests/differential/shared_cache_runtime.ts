// The shared cache (shared_cache.ts) with a runtime allocation (`Array.make`, from C) kept at the
// end of each domain's turn: its allocation callback waits for the domain's next poll, and the
// other domain's collection may come first. Such a block, promoted through the shared remembered
// set, is a promotion race point before it has a number: whether memprof found it dead is
// decided once its allocation callback runs (then `dealloc_minor` follows that callback at once).
import { cb, keep, scenario, sizes } from "../../lib/scenario/mod.ts";

export default scenario({ name: "shared_cache_runtime", seed: 3, minorHeapWords: 65536 }, (s) => {
  const m = s.main;
  const w = m.spawn("w");
  const tracker = { allocMinor: cb.track(), promote: cb.track(), deallocMinor: cb.track() };
  m.memprof.start({ name: "pm", samplingRate: 0.5, callstackSize: 4, tracker });
  w.memprof.start({ name: "pw", samplingRate: 0.5, callstackSize: 4, tracker });
  for (let k = 0; k < 6; k++) {
    m.repeat(20, () => m.alloc(sizes.uniform(2, 8), { lifetime: keep.ring(32, "cache") }));
    m.alloc(6, { source: "runtime", lifetime: keep.ring(32, "cache") });
    w.repeat(20, () => w.alloc(sizes.uniform(2, 8), { lifetime: keep.ring(32, "cache") }));
    w.alloc(6, { source: "runtime", lifetime: keep.ring(32, "cache") });
    (k % 2 === 0 ? m : w).minorGc();
  }
  w.memprof.stop();
  m.memprof.stop();
  w.terminate();
  s.release("cache");
});
