/**
 * Every allocation source memprof distinguishes, and the tracer's external allocations: blocks
 * from OCaml code, from the runtime (whose callbacks wait for the next poll point), Array.make,
 * direct major allocations, custom blocks with out-of-heap memory, unmarshalled values, and
 * `Memtrace.External.alloc/free` sampled by memtrace's own geometric sampler. Also user events of
 * all four types, a ring pause/resume, and a compaction.
 */
import { keep, scenario } from "../lib/scenario/mod.ts";

export default scenario({
  name: "sources",
  description: "allocation sources, external allocations, user events, pause/resume, compaction",
  externalSamplingRate: 1e-4,
}, (s) => {
  const main = s.main;
  s.events.start();
  main.memprof.start({ samplingRate: 0.05, callstackSize: 8 });
  main.call("Sources.run@sources.ml:60:2-20", () => {
    main.repeat(40, () => {
      main.alloc(3, { at: "Sources.caml@sources.ml:10:10-20" });
      main.alloc(5, { source: "runtime", at: "Sources.prim@sources.ml:12:10-40" });
      main.poll();
      main.alloc(40, {
        source: "array",
        lifetime: keep.steps(20),
        at: "Sources.arr@sources.ml:14:10-30",
      });
      main.alloc(600, {
        source: "major",
        lifetime: keep.steps(30),
        at: "Sources.big@sources.ml:16:10-30",
      });
      main.alloc(2, {
        source: "custom",
        customMem: 1_000,
        lifetime: keep.steps(50),
        at: "Sources.bigarray@sources.ml:18:10-50",
      });
      main.alloc(30, {
        source: "unmarshal",
        lifetime: keep.until("values"),
        at: "Sources.unmarshal@sources.ml:20:10-50",
      });
      // A record holding a list: each block sampled on its own, callbacks before it returns.
      main.unmarshal([3, 2, 2, 2], {
        lifetime: keep.until("values"),
        at: "Sources.unmarshal_list@sources.ml:22:10-60",
      });
      main.extAlloc(40_000, keep.steps(25));
    });
  });
  main.userEvent("sources.unit", { type: "unit" });
  main.userEvent("sources.int", { type: "int", value: -7 });
  main.userEvent("sources.int", { type: "int", value: 2 ** 40 + 5 }); // stored as a C int: 5
  main.userEvent("sources.custom", { type: "custom", bytes: [1, 2, 3, 250] });
  s.events.pause();
  main.userEvent("sources.unit", { type: "unit" }); // not recorded while paused
  s.events.resume();
  s.release("values");
  main.compact();
  main.memprof.stop();
  main.fullMajor();
});
