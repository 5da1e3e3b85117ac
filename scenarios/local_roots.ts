/**
 * Runtime allocations hold their result in a local root while their callbacks run:
 * `Array.make` (caml_uniform_array_make) and unmarshalling (intern_end) end with
 * caml_process_pending_actions while the new value is a CAMLlocal/CAMLparam. An allocation
 * callback that runs `Gc.minor ()` therefore promotes the value it was called for (its promote
 * callback follows), and the program receives a live block.
 *
 * The OCaml program: `let a = Array.make n 0 in keep a` for arrays the callback collects
 * under, and `Marshal.from_string s 0` of small values, at rate 0.05.
 */
import { act, cb, keep, scenario } from "../lib/scenario/mod.ts";

export default scenario({
  name: "local_roots",
  description: "a Gc.minor inside Array.make's and unmarshal's own callbacks keeps the value",
  minorHeapWords: 32_768,
}, (s) => {
  const main = s.main;
  main.memprof.start({
    samplingRate: 0.05,
    callstackSize: 4,
    tracker: { allocMinor: cb.track().always(act.gc("minor")) },
  });
  main.call("Roots.arrays@roots.ml:10:2-40", () =>
    main.repeat(300, () => {
      main.alloc(20, { source: "array", lifetime: keep.steps(4), at: "Roots.mk@roots.ml:4:10-30" });
      main.alloc(8, { source: "array", at: "Roots.mk@roots.ml:4:10-30" });
    }));
  main.call("Roots.values@roots.ml:20:2-40", () =>
    main.repeat(200, () => {
      main.unmarshal([3, 2, 2], { lifetime: keep.steps(3), at: "Roots.read@roots.ml:15:4-30" });
      main.alloc(5, { source: "unmarshal" });
    }));
  main.memprof.stop();
  main.minorGc();
  main.fullMajor();
});
