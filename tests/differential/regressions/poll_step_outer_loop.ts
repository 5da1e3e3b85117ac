// Issue 22 (polls): Sys.poll_actions is `%poll`, an Ipoll, which ocamlopt's polling analysis
// (asmcomp/polling.ml, polled_loops_analysis) counts like an allocation: the outer loop, whose body
// starts with a `poll` step, gets no poll at its back-edge (its inner loop of Bigarray creations,
// C calls, does). The simulation polled there, so the callback of a custom block sampled in the
// inner loop's last iterations ran at the end of outer iteration 8 (`i=8`) instead of at the
// next iteration's poll step (`i=9`), as OCaml 5.3 does. Reduced from rnd-1-6 of
// `deno task diff --random 30 --seed 1`.
import { act, cb, keep, scenario } from "../../../lib/scenario/mod.ts";

export default scenario({ name: "poll_step_outer_loop", seed: 1, minorHeapWords: 4096 }, (s) => {
  const m = s.main;
  m.memprof.start({
    name: "p2",
    samplingRate: 0.001,
    callstackSize: 15,
    tracker: {
      allocMinor: cb.track().always(act.alloc(2, keep.until("c"))),
      allocMajor: cb.track(),
    },
  });
  m.repeat(20, () => {
    m.poll();
    m.repeat(454, () => {
      m.alloc(17, { source: "custom", customMem: 11 });
    });
  });
  m.memprof.stop();
  s.release("c");
});
