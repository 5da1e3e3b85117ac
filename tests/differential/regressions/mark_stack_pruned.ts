/**
 * Marking: a mark stack full past a 32nd of the heap is compressed, from rnd-17-1220 of `deno
 * task diff --random 2000 --seed 17`. Releasing a keep site while a cycle marks makes the write
 * barrier darken each block the site loses, and each of 16 words pushes its fields from the
 * ninth: 12,000 entries on the mark stack. OCaml 5.3.0 grows the stack (4,096 entries) only
 * while it stays under a 32nd of the domain's heap; then it moves every entry of at most 64
 * fields to a compressed stack, whose fields it darkens once the stack is empty — charging
 * nothing for an immediate, where scanning charges each field. The simulation's stack grew
 * without bound: it marked 61,305 words more than OCaml in a cycle of rnd-17-1220 (65,476 here), so
 * that its cycles ended slices later. lib/runtime/_mark.ts now prunes the stack as
 * `realloc_mark_stack` and `mark_stack_prune` do.
 */
import { cb, keep, scenario } from "../../../lib/scenario/mod.ts";

export default scenario(
  { "name": "mark_stack_pruned", "seed": 7, "minorHeapWords": 16384 },
  (s) => {
    const m = s.main;
    m.memprof.start({
      name: "p1",
      samplingRate: 0.001,
      callstackSize: 8,
      tracker: { allocMinor: cb.track(), promote: cb.track(), deallocMajor: cb.track() },
    });
    m.repeat(60, () => {
      m.majorSlice();
      m.repeat(200, () => {
        m.alloc(16, { lifetime: keep.until("b") });
        m.alloc(4, { lifetime: keep.forever });
      });
    });
    s.release("b");
    m.repeat(40, () => {
      m.repeat(20, () => m.alloc(1000, { source: "major" }));
    });
    m.memprof.stop();
  },
);
