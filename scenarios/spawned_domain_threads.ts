/**
 * Systhreads with programs on spawned domains. A first worker starts a profile of its own and
 * creates two threads at their steps, sampled as OCaml 5.3 samples `Thread.create` there (its
 * closure; then, from C, the thread's status and descriptor, whose callbacks run once the new
 * thread waits for its first turn). Its threads and its main thread pass the domain's baton in
 * a ring from inside their allocation callbacks (and at a `yieldTo` step), keep blocks across
 * minor collections and a full major cycle, and end before their domain does (OCaml joins a
 * domain's threads when it ends). A second worker, spawned while the main domain samples,
 * takes its parent's profile and runs one thread of its own, joined at once.
 *
 * Each domain's threads pass a baton of their own: the exported program gives each spawned
 * domain a mutex of its own, which no other domain takes (docs/differential.md).
 *
 * OCaml program (outline):
 *   let w = Domain.spawn (fun () ->
 *     ignore (Gc.Memprof.start ~sampling_rate:0.1 ~callstack_size:8 ring_tracker);
 *     let a = Thread.create reader () and b = Thread.create writer () in
 *     … (* the baton passes round w, a, b *); Thread.join b; Thread.join a;
 *     Gc.Memprof.stop ()) in Domain.join w; …
 */
import { act, cb, keep, scenario, sizes } from "../lib/scenario/mod.ts";

export default scenario({
  name: "spawned_domain_threads",
  description: "spawned domains' own systhreads passing their domain's baton, in callbacks too",
  seed: 29,
  minorHeapWords: 8_192,
}, (s) => {
  const main = s.main;
  main.repeat(200, () => main.alloc(sizes.uniform(1, 8)));
  const w = main.spawn("w");
  // "main" too: the ring's blocks outlive the worker, and their callbacks run on the main domain
  // (the ring skips the worker's threads there).
  const ring = ["main", "w", "reader", "writer"];
  w.memprof.start({
    name: "ring",
    samplingRate: 0.1,
    callstackSize: 8,
    tracker: {
      allocMinor: cb.track().every(5, act.yieldToNext(ring), 2),
      promote: cb.track(),
      deallocMinor: cb.none().every(7, act.yieldToNext(ring), 3),
    },
  });
  const worker = (name: string, line: number) =>
    w.thread(name, (t) => {
      t.call(`Pipe.${name}@pipe.ml:${line}:2-40`, () =>
        t.repeat(500, (i) => {
          t.alloc(sizes.uniform(1, 16), {
            lifetime: keep.cycle(keep.drop, keep.steps(120)),
            at: `Pipe.${name}_step@pipe.ml:${line + 3}:6-30`,
          });
          i.every(125, () => t.yield());
        }));
      t.repeat(100, () => t.alloc(3, { lifetime: keep.steps(40) }));
    });
  const reader = worker("reader", 10);
  const writer = worker("writer", 30);
  w.call("Pipe.main@pipe.ml:50:2-40", () =>
    w.repeat(500, () =>
      w.alloc(sizes.uniform(1, 16), {
        lifetime: keep.steps(90),
        at: "Pipe.main_step@pipe.ml:52:6-30",
      })));
  w.yieldTo(reader);
  w.fullMajor();
  w.join(writer);
  w.join(reader);
  w.memprof.stop();
  w.terminate();
  main.memprof.start({ name: "main", samplingRate: 0.05, callstackSize: 4 });
  const v = main.spawn("v");
  const helper = v.thread("helper", (t) => {
    t.repeat(300, () => t.alloc(sizes.uniform(1, 6)));
  });
  v.join(helper);
  v.terminate();
  main.repeat(200, () => main.alloc(sizes.uniform(1, 8)));
  main.memprof.stop();
});
