// Issue 22: blocks the main domain keeps (in the program's global slots, so in its remembered
// set) were still young when a spawned domain's end collected both domains' minor heaps; OCaml
// 5.3 shares the remembered sets' promotion among the domains of the collection, and memprof
// tested some kept blocks before the other domain had promoted them: the real program reported
// them dead in some runs and promoted in others. The program now empties the spawning domain's
// minor heap before Domain.spawn, as the simulation does for it.
import { cb, keep, scenario } from "../../../lib/scenario/mod.ts";

export default scenario({ name: "kept_young_at_spawn", minorHeapWords: 4096 }, (s) => {
  const m = s.main;
  m.memprof.start({
    name: "p",
    samplingRate: 1,
    callstackSize: 4,
    tracker: { allocMinor: cb.track(), promote: cb.track(), deallocMinor: cb.track() },
  });
  m.repeat(40, () => m.alloc(13, { lifetime: keep.ring(15, "r") }));
  m.memprof.stop();
  const w = m.spawn("w");
  w.alloc(8);
  m.join(w);
  s.release("r");
});
