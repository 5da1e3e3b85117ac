// Issue 22: the callbacks that a spawned domain's end makes ready on the main domain (its
// stopped profile's blocks die in the collection of Domain.join / the domain's termination) ran
// inside the program's unguarded Domain.join, and one raising killed the program.
import { act, cb, scenario } from "../../../lib/scenario/mod.ts";

export default scenario({ name: "domain_join_raise", minorHeapWords: 4096 }, (s) => {
  const m = s.main;
  const profile = (name: string) => ({
    name,
    samplingRate: 1,
    callstackSize: 4,
    tracker: {
      allocMinor: cb.track(),
      promote: cb.track(),
      deallocMinor: cb.track().every(3, act.raise("Boom")),
    },
  });
  // A domain that terminates: the main domain joins it before its next step.
  const w1 = m.spawn("w1");
  m.memprof.start(profile("p1"));
  m.repeat(20, () => m.alloc(2));
  m.memprof.stop();
  w1.repeat(100, () => w1.alloc(3));
  w1.terminate();
  m.alloc(4);
  // A domain the main domain joins.
  const w2 = m.spawn("w2");
  m.memprof.start(profile("p2"));
  m.repeat(20, () => m.alloc(2));
  m.memprof.stop();
  w2.repeat(100, () => w2.alloc(3));
  m.join(w2);
  m.alloc(4);
});
