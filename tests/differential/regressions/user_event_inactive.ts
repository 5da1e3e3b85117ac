// Issue 22: Runtime_events.User.write calls its C primitive only while the ring is active
// (started and not paused); otherwise it returns from a [@@noalloc] test, without passing through
// caml_c_call. The simulation made every write return from C, so with an action pending the
// next allocation entered the runtime, and with under Max_young_whsize words left it asked for
// the minor collection one iteration early.
import { scenario } from "../../../lib/scenario/mod.ts";

export default scenario(
  { name: "user_event_inactive", seed: 498704, minorHeapWords: 4096 },
  (s) => {
    const m = s.main;
    m.memprof.start({ name: "p", samplingRate: 0.01, callstackSize: 4, tracker: {} });
    const writes = () =>
      m.repeat(24, () => {
        m.userEvent("gen.count", { type: "int", value: 892407 });
        m.alloc(229);
      });
    writes(); // runtime_events not started
    s.events.start();
    writes();
    s.events.pause();
    writes();
    m.memprof.stop();
  },
);
