/**
 * fixtures/memprof_exact/triple_cons_0.01.txt: `acc := (i, i, i) :: !acc` for i = 1..20,000 at
 * rate 0.01. One combined allocation per iteration; ocamlopt lays out the cons cell first and
 * the tuple second, which is the order memprof walks. The list is kept, so it is live throughout.
 */
import { keep, scenario } from "../lib/scenario/mod.ts";
import { exactLoop } from "./_memprof_exact.ts";

export default scenario({
  name: "triple_cons",
  description: "fixtures/memprof_exact triple cons: a combined 2-word + 3-word allocation",
  log: { format: "memprof_exact", program: "triple_cons" },
}, (s) => {
  exactLoop(s, () =>
    s.main.allocCombined([2, 3], {
      // `acc := (i, i, i) :: !acc`: the cells link each other; only the head is stored.
      lifetime: keep.list("acc"),
      at: "Exact.triple_cons@exact.ml:31:11-30",
    }));
  s.release("acc");
});
