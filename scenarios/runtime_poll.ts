/**
 * Runtime allocations whose callbacks wait for a poll point: blocks allocated by C primitives
 * (`caml_alloc_small` from C: sampled, but the callback cannot run inside the primitive) at rate
 * 0.05, each group followed by explicit poll points. Three patterns per iteration: a runtime
 * allocation then a poll; three runtime allocations in a row then a poll (several callbacks
 * pending at once); and a runtime allocation followed by ordinary OCaml allocations, with no poll
 * in between. A kept runtime block may also be promoted by a `Gc.minor` before its poll (every
 * tenth iteration), so its alloc and promote callbacks both wait for the same poll.
 *
 * OCaml program:
 *   for i = 1 to 300 do
 *     r1 := prim_alloc 5;  poll ();
 *     r2 := prim_alloc 3; r3 := prim_alloc 12; r4 := prim_alloc 7; poll ();
 *     r5 := prim_alloc 9; for j = 1 to 4 do cell := (…, …) done;
 *     if i mod 10 = 0 then (r6 := prim_alloc 20; Gc.minor (); poll ())
 *   done
 *   (prim_alloc: a C primitive allocating with caml_alloc_small; poll: a loop back-edge)
 */
import { keep, scenario } from "../lib/scenario/mod.ts";

const PRIM = "Runtime_poll.prim@runtime_poll.ml:8:12-40";

export default scenario({
  name: "runtime_poll",
  description: "runtime allocations whose callbacks wait for explicit poll points",
  minorHeapWords: 16_384,
}, (s) => {
  const main = s.main;
  main.memprof.start({ samplingRate: 0.05, callstackSize: 5 });
  main.call("Runtime_poll.main@runtime_poll.ml:30:2-40", () =>
    main.repeat(30, () => {
      main.repeat(9, () => {
        main.alloc(5, { source: "runtime", lifetime: keep.steps(4), at: PRIM });
        main.poll();
        main.alloc(3, { source: "runtime", lifetime: keep.steps(10), at: PRIM });
        main.alloc(12, { source: "runtime", lifetime: keep.steps(10), at: PRIM });
        main.alloc(7, { source: "runtime", lifetime: keep.steps(10), at: PRIM });
        main.poll();
        main.alloc(9, { source: "runtime", lifetime: keep.steps(6), at: PRIM });
        main.repeat(4, () => main.alloc(3, { at: "Runtime_poll.cell@runtime_poll.ml:20:14-30" }));
      });
      main.alloc(20, { source: "runtime", lifetime: keep.steps(3), at: PRIM });
      main.minorGc();
      main.poll();
    }));
  main.memprof.stop();
  main.fullMajor();
});
