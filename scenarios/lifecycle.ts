/**
 * The program of ../shared/fixtures/memprof_lifecycle: every third `ref i` is kept in a slot of a
 * 1,000-slot array until the slot is overwritten 3,000 iterations later; callbacks return
 * `Some i` (the engine allocates that 2-word block, as OCaml does). Its callback log, in the
 * fixture's format, must equal lifecycle_0.001_600000_1000.txt line for line.
 */
import { keep, scenario } from "../lib/scenario/mod.ts";

const N = 600_000, K = 1000;

export default scenario({
  name: "lifecycle",
  description: "fixtures/memprof_lifecycle: alloc, promote and dealloc callbacks across GCs",
  log: { format: "memprof_lifecycle", program: "lifecycle", keep: K },
}, (s) => {
  const main = s.main;
  // `keep` (K slots) is allocated and promoted before the profile starts.
  main.alloc(K, { source: "array", lifetime: keep.forever });
  main.fullMajor();
  main.minorGc();
  // Gc.quick_stat allocates a 17-field record and three boxed floats.
  main.alloc(17, { source: "runtime" });
  main.repeat(3, () => main.alloc(1, { source: "runtime" }));
  const p = main.memprof.start({ samplingRate: 0.001, callstackSize: 0 });
  main.repeat(N, () => {
    // let r = ref i in if i mod 3 = 0 then keep.((i / 3) mod K) <- r
    main.alloc(1, { lifetime: keep.cycle(keep.drop, keep.drop, keep.ring(K, "keep")) });
  });
  main.alloc(1, { lifetime: keep.forever }); // ref 0, stored in every slot (Array.fill)
  s.release("keep");
  main.fullMajor();
  main.memprof.stop();
  main.memprof.discard(p);
});
