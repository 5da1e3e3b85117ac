/**
 * Pacing (shrunk from random scenario rnd-10-103 of seed 10): `keep.forever` is one value, and
 * here two steps keep with it: a systhread's, declared first, 8 pairs, and the main program's,
 * 400 strings of 158 words. The exported program has a keep site per keep statement, numbered
 * in the program's order (the main program's first); the simulation gave each step's keeper the
 * lifetime's next site in the order it compiles steps (the thread's body first). So the strings
 * went to the thread's 8-slot site: marking, which reads a keep site's slots, found 8 of them,
 * where OCaml 5.3's mark loop drains hundreds of strings from the prefetch buffer in one slice
 * (major_gc.c, `do_some_marking`), and the simulation ended a major cycle dozens of slices
 * early. The sites are now recorded per step (`KeepSiteOf.owner`).
 */
import { cb, keep, scenario } from "../../../lib/scenario/mod.ts";

export default scenario(
  { name: "forever_shared_sites", seed: 424393, minorHeapWords: 4096 },
  (s) => {
    const m = s.main;
    const t1 = m.thread("t1", (th1) => {
      th1.repeat(8, () => {
        th1.alloc(2, { lifetime: keep.forever });
      });
    });
    m.yieldTo(t1);
    m.memprof.start({
      name: "p1",
      samplingRate: 0.0005,
      tracker: { allocMajor: cb.track(), deallocMajor: cb.track() },
    });
    m.repeat(400, () => {
      m.alloc(158, { source: "runtime", lifetime: keep.forever });
    });
    m.repeat(300, () => {
      m.alloc(1000, { source: "major" });
      m.alloc(40, {});
    });
    m.join(t1);
    m.memprof.stop();
  },
);
