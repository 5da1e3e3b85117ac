/**
 * fixtures/memprof_exact/ref_0.01.txt: `sink := ref i` for i = 1..20,000 at rate 0.01 after a
 * minor collection. The callback log, in the fixture's format, must equal the real runtime's.
 */
import { scenario } from "../lib/scenario/mod.ts";
import { exactLoop } from "./_memprof_exact.ts";

export default scenario({
  name: "ref_loop",
  description: "fixtures/memprof_exact ref loop: one 1-word block per iteration, rate 0.01",
  log: { format: "memprof_exact", program: "ref" },
}, (s) => exactLoop(s, () => s.main.alloc(1, { at: "Exact.ref_loop@exact.ml:24:30-53" })));
