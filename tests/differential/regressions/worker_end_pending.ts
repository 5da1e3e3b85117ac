// Issue 22 (polls): a spawned domain's function returns into Domain.spawn's body, which calls
// do_at_exit (stdlib/domain.ml), whose prologue polls (it tail-calls the at-exit closure): the
// callbacks of the domain's last C allocations, still pending, run there, on that domain. The
// simulation ended the domain without running them. One raising there would end the domain
// with the exception, which Domain.join raises again: the program drains them at the domain's
// end (a `terminate` step, or after a joined domain is released), each raise logged as
// escaped, and the simulation does the same.
import { act, cb, scenario } from "../../../lib/scenario/mod.ts";

export default scenario({ name: "worker_end_pending", minorHeapWords: 4096 }, (s) => {
  const m = s.main;
  m.alloc(3);
  const w1 = m.spawn("w1");
  w1.memprof.start({
    name: "q1",
    samplingRate: 1,
    callstackSize: 8,
    tracker: { allocMinor: cb.track().on(3, act.raise("Boom")) },
  });
  w1.alloc(5);
  w1.alloc(4, { source: "runtime" });
  w1.alloc(6, { source: "runtime" });
  w1.alloc(7, { source: "array" });
  w1.terminate();
  m.alloc(3);
  const w2 = m.spawn("w2");
  w2.memprof.start({
    name: "q2",
    samplingRate: 1,
    callstackSize: 8,
    tracker: { allocMinor: cb.track().on(2, act.raise("Boom")) },
  });
  w2.alloc(4, { source: "runtime" });
  w2.alloc(5, { source: "array" });
  w2.alloc(6, { source: "runtime" });
  m.alloc(2);
  m.join(w2);
  m.alloc(3);
  m.memprof.start({ name: "p", samplingRate: 1, callstackSize: 8 });
  m.alloc(6);
  m.memprof.stop();
});
