/**
 * Three systhreads of the main domain, each running a program of its own, pass the baton round
 * a ring from inside their callbacks: every third allocation callback blocks its thread (as a
 * callback waiting on a mutex or a pipe does) and the next thread of the ring runs — until it
 * blocks in turn inside one of its own callbacks, so that two threads are often inside
 * callbacks at once. A thread resumes where it blocked: inside its callback, then inside its
 * allocation, which OCaml code redoes at wherever the shared minor heap's pointer is by then.
 * Blocks are kept for a while, so minor collections promote some; their promotion and
 * deallocation callbacks run on whichever thread polls first, skipping the entries whose
 * callback is running in a blocked thread; every fifth deallocation callback blocks too. The
 * threads also call `Thread.yield` (no other thread waits for the lock: nothing switches). The
 * main thread joins the two others (each hands the baton back at its end) and collects.
 *
 * Every baton pass is a blocking section in OCaml: the GC work due is done on the way in, and
 * the thread taking the lock draws a new sampling trigger (`caml_memprof_enter_thread`), so the
 * samples depend on every switch.
 */
import { act, cb, keep, scenario, sizes } from "../lib/scenario/mod.ts";

export default scenario({
  name: "threads_in_callbacks",
  description: "three systhreads in a ring, each blocking inside its own callbacks in turn",
  seed: 17,
  minorHeapWords: 8_192,
}, (s) => {
  const main = s.main;
  const ring = ["main", "reader", "writer"];
  const worker = (name: string, line: number) =>
    main.thread(name, (t) => {
      t.call(`Ring.${name}@ring.ml:${line}:2-40`, () =>
        t.repeat(1_500, (i) => {
          t.alloc(sizes.uniform(1, 12), {
            lifetime: keep.cycle(keep.drop, keep.drop, keep.steps(300)),
            at: `Ring.${name}_step@ring.ml:${line + 4}:6-30`,
          });
          i.every(200, () => t.yield());
        }));
    });
  main.memprof.start({
    samplingRate: 0.02,
    callstackSize: 8,
    tracker: {
      allocMinor: cb.track().every(3, act.yieldToNext(ring), 1),
      deallocMinor: cb.none().every(5, act.yieldToNext(ring), 5),
    },
  });
  const reader = worker("reader", 10);
  const writer = worker("writer", 30);
  main.call(
    "Ring.main@ring.ml:50:2-40",
    () =>
      main.repeat(1_500, () =>
        main.alloc(sizes.uniform(1, 12), {
          lifetime: keep.cycle(keep.drop, keep.steps(200)),
          at: "Ring.main_step@ring.ml:54:6-30",
        })),
  );
  main.join(reader);
  main.join(writer);
  main.minorGc();
  main.memprof.stop();
});
