// Issue 22: Sys.poll_actions is `%poll`, an Ipoll, which ocamlopt's polling analysis
// (asmcomp/polling.ml) counts as a poll on every path through a loop body: a loop whose body
// polls (a `poll` step, or one in an `attempt` written without a handler when no callback
// raises) gets no poll at its back-edge. The simulation put one there, and ran a major
// allocation's callback at the end of its iteration instead of at the next iteration's poll.
// (The fix is lib/scenario/polling.ts's analysis.)
import { cb, scenario } from "../../../lib/scenario/mod.ts";

export default scenario({ name: "poll_step_in_loop", seed: 999990, minorHeapWords: 4096 }, (s) => {
  const m = s.main;
  m.memprof.start({
    name: "p",
    samplingRate: 0.0001,
    callstackSize: 0,
    tracker: { allocMinor: cb.track(), allocMajor: cb.track() },
  });
  m.repeat(3, () =>
    m.repeat(23, () => {
      m.attempt(() => m.poll());
      m.alloc(774, { source: "major" });
    }));
  m.repeat(3, () =>
    m.repeat(23, () => {
      m.poll();
      m.alloc(774, { source: "major" });
    }));
  m.memprof.stop();
});
