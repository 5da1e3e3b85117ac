// As custom_cycles_thread, in a program that unmarshals a block of more than 256 words: the
// program builds the value to marshal at its initialisation, that block in the major heap
// (Obj.new_block's caml_alloc_shr), and drops it. The model of its initial heap lacked that
// direct allocation, and the scenario started 798 words of work ahead of OCaml's.
import { keep, scenario } from "../../../lib/scenario/mod.ts";

export default scenario(
  { name: "custom_cycles_marshal_build", seed: 1, minorHeapWords: 4096 },
  (s) => {
    const m = s.main;
    m.alloc(300, { source: "unmarshal" });
    m.memprof.start({ name: "p", samplingRate: 0.0001, callstackSize: 0, tracker: {} });
    m.repeat(150, () => {
      m.alloc(14, { source: "custom", lifetime: keep.until("c"), customMem: 23977 });
    });
    m.memprof.stop();
    s.release("c");
  },
);
