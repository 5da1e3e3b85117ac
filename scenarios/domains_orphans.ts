/**
 * Domains that die holding tracked blocks. The main domain starts a profile; two spawned domains
 * inherit it, allocate blocks kept past their own end, and terminate: their tracked blocks go to
 * the global orphans, which the main domain adopts at its next collection, running the blocks'
 * promotion and deallocation callbacks there. Every sampled block gets balanced callbacks.
 */
import { keep, scenario, sizes } from "../lib/scenario/mod.ts";

export default scenario({
  name: "domains_orphans",
  description: "domains terminating with tracked blocks; orphans adopted by the main domain",
  seed: 11,
  minorHeapWords: 32_768,
}, (s) => {
  const main = s.main;
  main.memprof.start({ samplingRate: 0.01, callstackSize: 8 });
  const workers = [main.spawn("worker1"), main.spawn("worker2")];
  for (const [k, w] of workers.entries()) {
    w.call(
      `Domains.work@domains.ml:${20 + k}:4-40`,
      () =>
        w.repeat(3_000, () =>
          w.alloc(sizes.uniform(1, 12), {
            lifetime: keep.cycle(keep.drop, keep.drop, keep.until("shared")),
            at: "Domains.make_node@domains.ml:12:14-40",
          })),
    );
    w.minorGc(); // some tracked blocks promoted by their own domain
    w.repeat(
      500,
      () => w.alloc(4, { lifetime: keep.until("shared"), at: "Domains.tail@domains.ml:30:4-20" }),
    );
  }
  workers[0].terminate(); // young tracked blocks of worker1 become orphans
  main.repeat(100, () => main.alloc(2, { at: "Domains.main_loop@domains.ml:40:4-20" }));
  main.minorGc(); // main adopts and promotes the orphans
  workers[1].terminate();
  s.release("shared");
  main.fullMajor(); // the orphans' blocks die: dealloc callbacks on main
  main.memprof.stop();
});
