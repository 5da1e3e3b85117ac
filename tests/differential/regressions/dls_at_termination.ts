/**
 * A spawned domain's DLS array lives through the domain's last collection: OCaml 5.3 removes the
 * domain's `dls_root` only after `domain_terminate`'s `caml_empty_minor_heaps_once`
 * (runtime/domain.c), so a young DLS array is promoted there, as the state it holds. The
 * simulation let it die with the domain's body, before that collection. Every word is sampled,
 * so the array's callbacks show it: `promote`, not `dealloc_minor`. (The systhread makes the
 * program's domain waits counted, and its join deterministic; without it, the spawn, promotion
 * and join races all show: tests/differential/terminate_sampling.ts.)
 */
import { scenario } from "../../../lib/scenario/mod.ts";

export default scenario({ name: "dls_at_termination", seed: 5, minorHeapWords: 8_192 }, (s) => {
  const main = s.main;
  main.memprof.start({ samplingRate: 1, callstackSize: 12 });
  const t = main.thread("t", (t) => t.alloc(1));
  main.alloc(4);
  const w = main.spawn("w");
  w.repeat(3, () => w.alloc(5));
  main.alloc(6);
  w.terminate();
  main.join(t);
  main.memprof.stop();
});
