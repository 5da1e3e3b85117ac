/**
 * OCaml's statmemprof/blocking_in_callback, with systhreads running programs of their own: the
 * main thread and another each allocate arrays (`Array.make`) of random sizes — even on the main
 * thread, odd on the other — at sampling rate 1, and every allocation callback blocks inside:
 * it hands the baton to the other thread and waits for its turn (the OCaml test writes to a pipe
 * and reads from the other's). So one thread is always blocked inside its own callback while the
 * other runs, returns from its own blocked callback, allocates and blocks in the next one. Arrays
 * over 256 words go to the major heap (`alloc_major`), the others to the minor heap
 * (`alloc_minor`); every thread's callbacks run inside its own `Array.make`. At the end each
 * thread collects (`Gc.minor ()`, as the test does), the main thread joins the other, and the
 * deallocation callbacks of the arrays run on whichever thread polls.
 *
 * OCaml program (the test, with a baton instead of pipes):
 *   let rec go n tid = if n < count then begin
 *       ignore (Sys.opaque_identity (Array.make (2 * (Random.int 200 + 1) + tid) 0));
 *       go (n + 1) tid end else Gc.minor ()
 *   tracker: alloc_minor = alloc_major = (fun _ -> pass the baton; wait for it; Some ())
 *   let () = let t = Thread.create (fun () -> go 0 1) () in
 *            Gc.Memprof.start ~sampling_rate:1. ~callstack_size:10 tracker;
 *            go 0 0; Thread.join t; Gc.Memprof.stop ()
 */
import { act, cb, scenario, sizes } from "../lib/scenario/mod.ts";

/** Allocations per thread (the OCaml test makes 50,000). */
const COUNT = 1_000;

const range = (from: number, step: number, n: number) =>
  Array.from({ length: n }, (_, k) => from + step * k);

export default scenario({
  name: "blocking_in_callback",
  description: "statmemprof/blocking_in_callback: two systhreads, each blocking inside its own " +
    "allocation callbacks while the other runs",
  seed: 9,
  minorHeapWords: 32_768,
}, (s) => {
  const main = s.main;
  const other = main.thread("other", (t) => {
    t.call("Blocking_in_callback.go@blocking_in_callback.ml:58:4-40", () => {
      t.repeat(COUNT, () =>
        t.alloc(sizes.choice(...range(3, 2, 200)), {
          source: "array",
          at: "Blocking_in_callback.go@blocking_in_callback.ml:55:4-41",
        }));
      t.minorGc();
    });
  });
  const handOver = act.yieldToNext([main, other]);
  main.memprof.start({
    samplingRate: 1,
    callstackSize: 10,
    tracker: { allocMinor: cb.track().always(handOver), allocMajor: cb.track().always(handOver) },
  });
  main.call("Blocking_in_callback.go@blocking_in_callback.ml:58:4-40", () => {
    main.repeat(COUNT, () =>
      main.alloc(sizes.choice(...range(2, 2, 200)), {
        source: "array",
        at: "Blocking_in_callback.go@blocking_in_callback.ml:55:4-41",
      }));
    main.minorGc();
  });
  main.join(other);
  main.memprof.stop();
});
