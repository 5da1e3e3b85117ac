/**
 * fixtures/memprof_exact/ref_0.01.txt: `sink := ref i` for i = 1..20,000 at rate 0.01 after a
 * minor collection. The callback log, in the fixture's format, must equal the real runtime's.
 */
import { cb, scenario } from "../lib/scenario/mod.ts";

export default scenario({
  name: "ref_loop",
  description: "fixtures/memprof_exact ref loop: one 1-word block per iteration, rate 0.01",
  log: { format: "memprof_exact", program: "ref" },
}, (s) => {
  const main = s.main;
  main.minorGc();
  const p = main.memprof.start({
    samplingRate: 0.01,
    callstackSize: 0,
    // The fixture's tracker logs into preallocated arrays and returns None: it allocates nothing.
    tracker: { allocMinor: cb.none(), allocMajor: cb.none() },
  });
  main.repeat(20_000, () => main.alloc(1, { at: "Exact.ref_loop@exact.ml:24:30-53" }));
  main.memprof.stop();
  main.memprof.discard(p);
});
