// Issue 22 (rnd-5-228, shrunk): a minor collection promotes the remembered set first, entry by
// entry, and a keep site's slot stored twice since the last collection (a keep.steps FIFO that
// wraps within a minor cycle) has its first entry promote the block it holds now: the blocks go
// to the pools in that order, not in allocation order. Which pool holds which 63-word block
// decides which pools a later sweep finds with a free slot or empties; the simulation promoted in
// allocation order, took a pool one cycle earlier than OCaml 5.3 and, from there, ended major
// cycles at other allocations (151 minor and 46 major collections against OCaml's 154 and 47).
import { cb, keep, scenario } from "../../../lib/scenario/mod.ts";

export default scenario(
  { name: "remembered_set_order", seed: 963958, minorHeapWords: 4096 },
  (s) => {
    const m = s.main;
    m.repeat(470, () => {
      m.poll();
      m.repeat(14, () => {
        m.alloc(6, { lifetime: keep.steps(53, "a") });
      });
    });
    m.memprof.start({
      name: "p",
      samplingRate: 0.0002,
      callstackSize: 4,
      tracker: { allocMajor: cb.track(), deallocMajor: cb.track() },
    });
    m.repeat(393, () => {
      m.alloc(3, { source: "array", lifetime: keep.forever });
      m.alloc(3967, { source: "array", at: "Gen.site7@gen.ml:27:4-20" });
      m.repeat(18, () => {
        m.alloc(63, { lifetime: keep.steps(40), at: "Gen.site3@gen.ml:23:4-20" });
      });
    });
    s.release("a");
  },
);
