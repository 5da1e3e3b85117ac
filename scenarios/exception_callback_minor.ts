/**
 * OCaml's statmemprof/exception_callback_minor: `ref (ref 42)` at rate 1 with an alloc_minor
 * callback that raises: the exception reaches the top level, where the program stops the
 * profile. Then the same with raises on every other call, to show the profile keeps working.
 */
import { cb, scenario } from "../lib/scenario/mod.ts";

export default scenario({
  name: "exception_callback_minor",
  description: "statmemprof/exception_callback_minor: alloc_minor raising to the top level",
}, (s) => {
  const main = s.main;
  main.memprof.start({
    samplingRate: 1,
    callstackSize: 10,
    tracker: { allocMinor: cb.track().always({ kind: "raise", exn: "MyExc" }) },
  });
  main.attempt(() => {
    main.allocCombined([1, 1], {
      at: "Exception_callback_minor@exception_callback_minor.ml:17:23-46",
    });
    main.memprof.stop(); // not reached: the exception skips it
  });
  main.memprof.stop();
  main.memprof.start({
    samplingRate: 1,
    callstackSize: 10,
    tracker: { allocMinor: cb.track().every(2, { kind: "raise", exn: "MyExc" }) },
  });
  main.repeat(
    20,
    () =>
      main.attempt(() =>
        main.alloc(1, { at: "Exception_callback_minor.loop@exception_callback_minor.ml:30:4-20" })
      ),
  );
  main.memprof.stop();
  main.minorGc();
});
