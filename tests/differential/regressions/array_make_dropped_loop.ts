/**
 * Issue 22: 3,000 dropped `Array.make 1556` with the default minor heap: 161 major cycles. As in
 * no_keep_site_harness, the program's harness (no keep site, `Sys.argv` holding the program's
 * path, the `Gc.quick_stat ()` record on its stack) put the simulation behind OCaml 5.3 from
 * the start, and the array whose `Array.make` ends a cycle costs the next cycle's marking 1,548
 * words (a local root, darkened), not 1,557; after 18 cycles the simulation ended a cycle at
 * iteration 408, OCaml 5.3 one iteration later.
 */
import { scenario } from "../../../lib/scenario/mod.ts";

export default scenario({ name: "array_make_dropped_loop" }, (s) => {
  const m = s.main;
  m.memprof.start({ samplingRate: 0.01, callstackSize: 4 });
  m.repeat(3_000, () => m.alloc(1_556, { source: "array" }));
  m.memprof.stop();
});
