/**
 * Loops as OCaml writes them: `if i mod 10 = 0 then …` inside nested `for` loops (`i.every`),
 * with an offset (`i mod 7 = 3`), the callback log giving every enclosing loop index, and a
 * worker domain joined by the main domain (`Domain.join`) after its loop.
 *
 * The OCaml program:
 *   for i = 1 to 200 do
 *     for j = 1 to 50 do
 *       sink := (j, j, j); if j mod 10 = 0 then keep_for_30_steps (Array.make 20 0)
 *     done;
 *     if i mod 50 = 0 then Gc.minor ();
 *     if i mod 7 = 3 then ring.(k mod 16) <- (i, i, i, i, i, i, i, i)
 *   done;
 *   Gc.minor ();
 *   let w = Domain.spawn (fun () -> for k = 1 to 1000 do sink := (k, k); if k mod 100 = 0 then
 *     Sys.poll_actions () done) in
 *   Domain.join w; …
 */
import { keep, scenario } from "../lib/scenario/mod.ts";

export default scenario({
  name: "loop_indices",
  description: "if i mod n = k in nested loops (every), all loop indices logged, Domain.join",
  minorHeapWords: 16_384,
}, (s) => {
  const main = s.main;
  main.memprof.start({ samplingRate: 0.01, callstackSize: 4 });
  main.call("Loops.main@loops.ml:3:2-40", () =>
    main.repeat(200, (i) => {
      main.repeat(50, (j) => {
        main.alloc(3);
        j.every(10, () => main.alloc(20, { source: "array", lifetime: keep.steps(30) }));
      });
      i.every(50, () => main.minorGc());
      i.every(7, () => main.alloc(8, { lifetime: keep.ring(16) }), 3);
    }));
  // Nothing young stays kept once a second domain runs (docs/differential.md, races).
  main.minorGc();
  const w = main.spawn("w");
  w.repeat(1_000, (k) => {
    w.alloc(2);
    k.every(100, () => w.poll());
  });
  main.join(w);
  main.repeat(100, () => main.alloc(4));
  main.memprof.stop();
});
