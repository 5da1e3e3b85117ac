/**
 * Threads with programs and a spawned domain, every word sampled: what `Domain.spawn` does more
 * when the threads library is linked (lib/scenario/engine/_spawn_threads_library.ts). The
 * parent's `Random` state is made (`mk_default`) and split for the new domain
 * (`DLS.get_initial_keys`): a Bigarray, boxed int64s, the `KV` pair and `List.map`'s cell; the
 * new domain allocates its systhread's descriptor before its body (`caml_thread_domain_
 * initialize_hook`, which then draws a sampling trigger). The parent's result comes before,
 * between or after the new domain's first callbacks (the `spawn` race point, `childBefore`).
 */
import { scenario } from "../../../lib/scenario/mod.ts";

export default scenario({ name: "threads_domains_spawn", seed: 5, minorHeapWords: 8_192 }, (s) => {
  const main = s.main;
  main.memprof.start({ samplingRate: 1, callstackSize: 12 });
  const a = main.thread("a", (t) => {
    t.alloc(3);
  });
  main.alloc(4);
  const w = main.spawn("w");
  w.repeat(3, () => w.alloc(5));
  main.yieldTo(a);
  main.alloc(6);
  w.terminate();
  main.memprof.stop();
});
