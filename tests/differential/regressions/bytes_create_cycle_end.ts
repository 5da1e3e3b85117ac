/**
 * Issue 22: 200 `Bytes.create` of 2,048 words with the default minor heap. Every 26th string
 * asks for a slice (`caml_alloc_shr`: a fifth of the minor heap's words allocated directly),
 * which `caml_check_urgent_gc` runs inside `Bytes.create` (alloc.c, `caml_alloc_string`), with
 * the new string held as a local root (`CAMLparam1`). When that slice ends the major cycle, the
 * next cycle's root scan darkens the string (`caml_darken`, no marking work for a block without
 * fields to scan): it survives one more cycle, and the heap holds one string more from then
 * on. The simulation ran the slice at the next poll, when the string was garbage already: 14
 * major cycles where OCaml 5.3 runs 13 (the real log differed from callback 68). See also
 * bytes_create_urgent_gc.
 */
import { scenario } from "../../../lib/scenario/mod.ts";

export default scenario({ name: "bytes_create_cycle_end" }, (s) => {
  const m = s.main;
  m.memprof.start({ samplingRate: 0.001, callstackSize: 4 });
  m.repeat(200, () => m.alloc(2048, { source: "major" }));
  m.memprof.stop();
});
