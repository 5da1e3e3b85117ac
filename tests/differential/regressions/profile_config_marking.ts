/**
 * Pacing (shrunk from random scenario rnd-3-107 of seed 3): a profile stopped in one of its
 * callbacks, which starts another; strings of 2,400 words, custom blocks, a compaction. From then
 * on the stopped profile's config block (memprof.c's 9 fields, holding the boxed sampling rate)
 * is no longer one of memprof's roots (`entries_finish_scan` darkens the config of each entries
 * table, now the new profile's): marking reaches it through the program's profile slot, its
 * header and fields and the float, 12 words, every cycle. The simulation charged 2 words less a
 * cycle; after some sixty cycles that moved a cycle's end across an allocation, and it reported
 * a block dead a cycle late (at iteration 86; OCaml 5.3 at 85).
 */
import { act, cb, scenario } from "../../../lib/scenario/mod.ts";

export default scenario({
  "name": "profile_config_marking",
  "seed": 577654,
  "minorHeapWords": 32768,
}, (s) => {
  const m = s.main;
  m.memprof.start({
    name: "p1",
    samplingRate: 0.001,
    tracker: {
      allocMajor: cb.track().on(16, act.gc("compact")).on(18, act.stop()).on(
        18,
        act.start({
          name: "p1r",
          samplingRate: 0.001,
          callstackSize: 4,
          tracker: {},
        }),
      ),
    },
  });
  m.repeat(128, () => {
    m.repeat(3, () => {
      m.alloc(2400, { source: "major" });
    });
    m.alloc(9, { source: "custom", customMem: 9154 });
  });
  m.memprof.stop();
});
