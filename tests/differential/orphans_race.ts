// A domain ends with its profile running while another spawned domain runs: its tracked blocks
// become orphans, and the next collection's participants race to adopt them (memprof.c,
// orphans_adopt); their callbacks run on the adopter. A race point (docs/differential.md, "Race
// points"; docs/findings.md, 2).
import { cb, scenario, sizes } from "../../lib/scenario/mod.ts";

export default scenario({ name: "orphans_race", seed: 11, minorHeapWords: 65536 }, (s) => {
  const m = s.main;
  const a = m.spawn("a");
  const b = m.spawn("b");
  const tracker = { allocMinor: cb.track(), promote: cb.track(), deallocMinor: cb.track() };
  a.memprof.start({ name: "pa", samplingRate: 0.1, callstackSize: 2, tracker });
  a.repeat(200, () => a.alloc(sizes.uniform(2, 6)));
  a.terminate();
  b.repeat(100, () => b.alloc(sizes.uniform(2, 6)));
  m.minorGc();
  b.repeat(100, () => b.alloc(sizes.uniform(2, 6)));
  b.terminate();
});
