/**
 * Pacing at initialisation: a slice asked of every domain runs at the next poll, from rnd-19-301
 * of `deno task diff --random 2000 --seed 19`. The program's keep sites have 4,096 and 35,784
 * slots: `ks`'s second array (a direct allocation past a fifth of the minor heap) asks for a
 * global slice, which ends a cycle before its work is done, so `caml_poll_gc_work` asks every
 * domain for one more (`stw_global_major_slice`); that one runs at the next poll, after `kd`'s
 * first array, 4,097 words later: 17,495 words of work where the model of the program's heap
 * (lib/export/_harness_heap.ts) ran it at once, owing 1,107. The scenario started 137,821 words
 * of work behind OCaml 5.3.0's, and its samples parted from OCaml's at the 139th callback. The
 * model's slices now equal the debug runtime's from the tables to the scenario's start.
 */
import { act, cb, keep, scenario } from "../../../lib/scenario/mod.ts";

export default scenario(
  { "name": "slice_due_next_poll", "seed": 20, "minorHeapWords": 32768 },
  (s) => {
    const m = s.main;
    m.memprof.start({
      name: "p1",
      samplingRate: 0.001,
      callstackSize: 0,
      tracker: {
        deallocMinor: cb.track().every(2, act.alloc(2, keep.cycle(keep.steps(51, "c"))), 2)
          .every(10, act.raise("Not_found"), 2),
      },
    });
    m.repeat(168, (i1) => {
      i1.every(9, () => {
        m.repeat(213, () => {
          m.alloc(551, { source: "runtime", lifetime: keep.until("b") });
        });
      }, 3);
    });
    s.release("c");
    s.release("b");
  },
);
