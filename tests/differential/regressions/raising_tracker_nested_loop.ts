// Issue 22 (polls): with a callback that may raise, the program gives its loops (outside attempts)
// exception handlers that go on after the loop, and ocamlopt's polling analysis follows the paths
// through them: every bound check and call may raise (asmcomp/polling.ml: `operation_can_raise`
// joins the handler's verdict). The inner loop's handler leads to the outer loop's back-edge,
// where nothing allocates, so the inner loop polls at its back-edge although it allocates on
// every path; it notices the full minor heap at that poll, one allocation earlier (the first
// deallocation at 122.109, not 122.110). The simulation gave it no poll.
import { act, cb, scenario } from "../../../lib/scenario/mod.ts";

export default scenario(
  { name: "raising_tracker_nested_loop", seed: 2024, minorHeapWords: 16_384 },
  (s) => {
    const m = s.main;
    m.memprof.start({
      samplingRate: 1e-3,
      callstackSize: 0,
      tracker: { allocMinor: cb.track().on(1_000_000, act.raise("Never")) },
    });
    m.repeat(400, () => m.repeat(200, () => m.alloc(1)));
    m.memprof.stop();
  },
);
