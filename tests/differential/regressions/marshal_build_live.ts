/**
 * Pacing: a marshalled value's making at initialisation, from rnd-17-1264 of `deno task diff
 * --random 2000 --seed 17`. The program builds each value to marshal by a recursion that holds
 * every block made so far on its stack, with the `sizes` array its closure holds, until
 * `Marshal.to_string` is done. Here two of the value's blocks are over 256 words, made in the
 * major heap; the slice after the second ended a cycle, whose minor collection promoted the
 * young blocks already made (248 words) and whose new cycle darkened all of them from the stack
 * (755 words of marking: their fields past the eighth, the closure's environment, the array):
 * they outlived that cycle, and a pool of their size class was freed a cycle later. The model of
 * the program's heap (lib/export/_harness_heap.ts, `HarnessBlock.group`) let them die young
 * and marked nothing for them: the scenario started 13,176 words of work behind OCaml 5.3.0's.
 * Its slices now equal the debug runtime's, from the tables to the scenario's start.
 */
import { act, cb, keep, scenario, sizes } from "../../../lib/scenario/mod.ts";

export default scenario(
  { "name": "marshal_build_live", "seed": 358076, "minorHeapWords": 4096 },
  (s) => {
    const m = s.main;
    s.release("b");
    m.memprof.start({
      name: "p1",
      samplingRate: 0.00001,
      callstackSize: 12,
      tracker: {
        allocMajor: cb.track().always(act.gc("major")),
        promote: cb.none().on(19, act.alloc(5, keep.forever)).every(11, act.alloc(8), 1),
        deallocMinor: cb.track().every(4, act.alloc(78, keep.cycle(keep.drop)), 1),
      },
    });
    m.repeat(7, () => {
      m.call("Gen.f6@gen.ml:6:2-14", () => {
        m.alloc(14, { source: "custom", customMem: sizes.uniform(1042, 2084) });
      });
      m.repeat(7, () => {
        m.alloc(12, {
          source: "custom",
          lifetime: keep.cycle(keep.forever),
          at: "Gen.site6@gen.ml:26:4-20",
          customMem: 27,
        });
        m.unmarshal([23, 213, 261, 283, 206], { at: "Gen.site8@gen.ml:28:4-20" });
        m.alloc(156, { at: "Gen.site6@gen.ml:26:4-20" });
      });
    });
    m.alloc(23, { lifetime: keep.forever, at: "Gen.site7@gen.ml:27:4-20" });
    m.alloc(45, { lifetime: keep.list("b"), at: "Gen.site8@gen.ml:28:4-20" });
    m.poll();
    m.repeat(10, () => {
      m.repeat(6, () => {
        m.repeat(7, () => {
          m.alloc(1453, {
            source: "major",
            lifetime: keep.steps(34, "a"),
            at: "Gen.site7@gen.ml:27:4-20",
          });
          s.release("b");
        });
        m.repeat(6, () => {
          m.alloc(1187, {
            source: "runtime",
            lifetime: keep.until("b"),
            at: "Gen.site1@gen.ml:21:4-20",
          });
          m.alloc(3);
          m.minorGc();
        });
        m.call("Gen.f1@gen.ml:1:2-14", () => {
          m.minorGc();
          m.alloc(sizes.uniform(11, 17), { lifetime: keep.until("b") });
          m.alloc(3, {
            source: "array",
            lifetime: keep.cycle(keep.steps(47, "a"), keep.steps(27)),
            at: "Gen.site4@gen.ml:24:4-20",
          });
        });
      });
    });
    m.alloc(1, { lifetime: keep.list("c") });
    m.repeat(8, () => {
      m.poll();
    });
    m.alloc(sizes.geometric(15, 172), { lifetime: keep.ring(50) });
    s.release("a");
    s.release("b");
    s.release("c");
  },
);
