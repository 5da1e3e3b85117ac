/**
 * Pacing: the exported program's initial heap (lib/export/_harness_heap.ts, from the tables of
 * lib/export/_harness_tables.ts), from rnd-13-560 of `deno task diff --random 2000 --seed 13`.
 * Its 4,539-slot keep site makes `ks` and `kd` direct allocations that end a cycle while the
 * harness's tables are built. The model had the prelude's references, the baton's mutex and
 * condition and the empty weak array as 25 words of young blocks allocated before the tables;
 * OCaml 5.3.0 allocates them in the program's order (four references before the tables, the
 * rest after), the mutex and the condition are 3-word custom blocks, and `Weak.create 1` is a
 * 4-word ephemeron that caml_alloc_shr puts straight into the major heap (swept, not marked, in
 * the cycle that made it). `Array.map` makes its result array after its first element (so before
 * a large second one), and each later store overwrites that first element, which the write
 * barrier darkens once a cycle began: it then costs its fields past the eighth, not its size.
 * The simulation started with 18 words more of work done than OCaml's, and a major cycle ended
 * one iteration late after 7 cycles.
 */
import { cb, keep, scenario, sizes } from "../../../lib/scenario/mod.ts";

export default scenario({
  "name": "harness_tables_in_order",
  "seed": 815559,
  "minorHeapWords": 4096,
}, (s) => {
  const m = s.main;
  m.memprof.start({
    name: "p1",
    samplingRate: 0.01,
    callstackSize: 0,
    tracker: {
      allocMajor: cb.track(),
      promote: cb.track(),
    },
  });
  m.alloc(148, { source: "array", lifetime: keep.steps(34, "a"), at: "Gen.site2@gen.ml:22:4-20" });
  m.alloc(11, {
    source: "custom",
    lifetime: keep.cycle(keep.until("b"), keep.drop, keep.drop, keep.drop),
    at: "Gen.site7@gen.ml:27:4-20",
    customMem: 27473,
  });
  m.alloc(sizes.geometric(14, 148), { lifetime: keep.steps(43) });
  m.attempt(() => {
    m.repeat(11, () => {
      m.call("Gen.f8@gen.ml:8:2-14", () => {
        m.alloc(45);
        m.alloc(342, { source: "unmarshal", at: "Gen.site1@gen.ml:21:4-20" });
        m.alloc(6, { source: "array", lifetime: keep.ring(46, "b") });
      });
    });
    m.repeat(4539, () => {
      m.allocCombined([9, 11, 8, 2], {
        lifetime: [keep.drop, keep.forever, keep.steps(53), keep.drop],
        at: "Gen.site6@gen.ml:26:4-20",
      });
      s.release("c");
      m.alloc(6, { source: "array", lifetime: keep.ring(48, "b"), at: "Gen.site3@gen.ml:23:4-20" });
    });
    m.alloc(sizes.choice(225, 6, 15), { at: "Gen.site3@gen.ml:23:4-20" });
  });
  m.attempt(() => {
    m.repeat(86, () => {
      m.call("Gen.f3@gen.ml:3:2-14", () => {
        m.alloc(3494, { source: "array", at: "Gen.site5@gen.ml:25:4-20" });
        m.alloc(11, {
          source: "runtime",
          lifetime: keep.ring(53, "b"),
          at: "Gen.site5@gen.ml:25:4-20",
        });
        m.minorGc();
      });
      m.alloc(1387, { source: "runtime" });
      m.repeat(9, () => {
        m.alloc(4);
        m.poll();
      });
    });
    m.poll();
  });
  m.alloc(sizes.geometric(14, 118), { at: "Gen.site5@gen.ml:25:4-20" });
  m.majorSlice();
  s.release("a");
  s.release("b");
});
