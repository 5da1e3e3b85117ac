/**
 * OCaml's statmemprof/exception_callback: exceptions raised by each kind of callback propagate
 * to the code that ran it — `Array.make` for an allocation callback, the minor or major
 * collection for promotion and deallocation callbacks.
 */
import { cb, keep, scenario } from "../lib/scenario/mod.ts";

export default scenario({
  name: "exception_callback",
  description: "statmemprof/exception_callback: exceptions from every kind of callback",
}, (s) => {
  const main = s.main;
  // Array.make 200 0 at rate 0.5: the callback of the sampled array raises out of Array.make.
  main.memprof.start({
    name: "alloc",
    samplingRate: 0.5,
    callstackSize: 10,
    tracker: { allocMinor: cb.track().always({ kind: "raise", exn: "MyExc" }) },
  });
  main.attempt(() =>
    main.alloc(200, { source: "array", at: "Exception_callback@exception_callback.ml:18:10-30" })
  );
  main.memprof.stop();
  // A promotion callback raising out of Gc.minor.
  main.memprof.start({
    name: "promote",
    samplingRate: 1,
    callstackSize: 10,
    tracker: { promote: cb.track().raiseOn(1, "MyExc") },
  });
  main.alloc(3, {
    lifetime: keep.until("kept"),
    at: "Exception_callback@exception_callback.ml:30:10-25",
  });
  main.attempt(() => main.minorGc());
  main.memprof.stop();
  // Deallocation callbacks raising out of the collections that find the blocks dead.
  main.memprof.start({
    name: "dealloc",
    samplingRate: 1,
    callstackSize: 10,
    tracker: {
      deallocMinor: cb.none().raiseOn(1, "MyExc"),
      deallocMajor: cb.none().raiseOn(1, "MyExc"),
    },
  });
  main.alloc(4, { at: "Exception_callback@exception_callback.ml:40:10-25" });
  main.attempt(() => main.minorGc());
  main.alloc(300, {
    source: "array",
    lifetime: keep.until("big"),
    at: "Exception_callback@exception_callback.ml:45:10-30",
  });
  s.release("big");
  main.attempt(() => main.fullMajor());
  main.memprof.stop();
  s.release("kept");
  main.fullMajor();
});
