// Random campaign seed 3 (rnd-3-60): as custom_cycles_marshal_build, with a value whose first
// block, of more than 256 words, is built in the major heap and links a young one: Obj.set_field
// puts that field in the remembered set, so the next minor collection promotes the young block
// (and what it links) although the value is garbage once marshalled. The model of the program's
// initial heap let it die young, and the scenario started 7,591 words of work behind OCaml's.
import { keep, scenario } from "../../../lib/scenario/mod.ts";

export default scenario(
  { name: "custom_cycles_marshal_promoted", seed: 1, minorHeapWords: 4096 },
  (s) => {
    const m = s.main;
    m.unmarshal([294, 99]);
    m.memprof.start({ name: "p", samplingRate: 0.0001, callstackSize: 0, tracker: {} });
    m.repeat(150, () => {
      m.alloc(14, { source: "custom", lifetime: keep.until("c"), customMem: 23977 });
    });
    m.memprof.stop();
    s.release("c");
  },
);
