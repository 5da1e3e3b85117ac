// Random campaign seed 3 (rnd-3-4): a program that links runtime_events.cmxa and registers user
// events. The library's initialisation allocates before the harness's tables and its data is
// marked in every cycle (16 words), and each user event registered at the program's
// initialisation allocates and keeps its extension constructor, its `Some tag`, its record and a
// cell of the runtime's list of user events: the model of the program's initial heap had none of
// it, and the scenario started 116 words of work, and 32 more per user event, ahead of OCaml's,
// which moved the end of the first major cycle here by one allocation.
import { cb, keep, scenario } from "../../../lib/scenario/mod.ts";

export default scenario({ name: "user_events_init_work", seed: 1, minorHeapWords: 4096 }, (s) => {
  const m = s.main;
  s.events.start();
  m.userEvent("gen.tick", { type: "unit" });
  m.userEvent("gen.count", { type: "int", value: 306062 });
  m.memprof.start({
    name: "p",
    samplingRate: 0.01,
    callstackSize: 0,
    tracker: { allocMajor: cb.track(), deallocMajor: cb.track() },
  });
  m.repeat(400, () => {
    m.alloc(300, { source: "major", lifetime: keep.steps(3) });
  });
  m.memprof.stop();
});
