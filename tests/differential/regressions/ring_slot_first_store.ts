/**
 * Promotion order: a ring's slot stored again and again, from rnd-15-31 of `deno task diff
 * --random 2000 --seed 15`. A systhread keeps 89-word blocks in an 18-slot ring, 45 stores per
 * minor collection. OCaml 5.3.0's remembered set gets a slot's entry at its first store after a
 * minor collection (a later store finds a young block there), and promotion takes the entries in
 * that order: the ring's newer half first, from the slot the ring had reached at the last
 * collection. The simulation recorded an entry only when a slot's root was created, so that the
 * slots stored again were promoted in their creation order: other blocks than OCaml's filled
 * the end of a pool, a sweep emptied and released it where OCaml kept two blocks there, and a
 * major cycle ended two iterations early (lib/runtime/runtime.ts, `slotStored`, called by
 * lib/runtime/roots.ts, `Root.set`).
 */
import { act, cb, keep, scenario, sizes } from "../../../lib/scenario/mod.ts";

export default scenario(
  { "name": "ring_slot_first_store", "seed": 344868, "minorHeapWords": 4096 },
  (s) => {
    const m = s.main;
    const t1 = m.thread("t1", (th1) => {
      th1.repeat(452, () => {
        th1.alloc(89, { lifetime: keep.ring(18), at: "Gen.site6@gen.ml:26:4-20" });
      });
      th1.yieldTo(m);
    });
    m.memprof.start({
      name: "p1",
      samplingRate: 0.001,
      callstackSize: 64,
      tracker: {
        promote: cb.track().every(10, act.alloc(68, keep.steps(50, "a")), 8),
      },
    });
    m.yieldTo(t1);
    m.alloc(sizes.uniform(6, 9), { at: "Gen.site5@gen.ml:25:4-20" });
    m.yieldTo(t1);
    m.poll();
    m.memprof.stop();
    m.memprof.start({
      name: "p2",
      samplingRate: 0.001,
      callstackSize: 1,
      tracker: {
        allocMinor: cb.track().on(26, act.stop()).on(
          26,
          act.start({
            name: "p2r",
            samplingRate: 0.001,
            callstackSize: 4,
            tracker: {},
          }),
        ),
        promote: cb.track(),
      },
    });
    m.poll();
    s.release("c");
    m.yield();
    m.alloc(22, { source: "unmarshal", at: "Gen.site8@gen.ml:28:4-20" });
    m.poll();
    m.poll();
    m.memprof.stop();
    m.memprof.discard("p2");
    m.memprof.start({
      name: "p3",
      samplingRate: 0.0001,
      callstackSize: 7,
      tracker: {
        allocMinor: cb.track().always(act.gc("minor")),
        promote: cb.track().on(28, act.alloc(39)),
        deallocMajor: cb.track(),
      },
    });
    s.release("b");
    m.minorGc();
    m.repeat(607, () => {
      m.poll();
      m.unmarshal([97, 209, 20], { at: "Gen.site8@gen.ml:28:4-20" });
      m.alloc(12, {
        source: "custom",
        lifetime: keep.cycle(keep.drop, keep.drop, keep.ring(41)),
        at: "Gen.site6@gen.ml:26:4-20",
        customMem: sizes.uniform(1648, 3296),
      });
    });
    m.alloc(5);
    s.release("c");
    m.minorGc();
    m.poll();
    m.memprof.stop();
    m.memprof.discard("p3");
    m.join(t1);
    s.release("a");
  },
);
