/**
 * A long-running, service-like program with runtime_events enabled: each request allocates many
 * short-lived objects of assorted sizes, a few of which join a slowly growing long-lived cache;
 * requests are marked with user span events and counted with an int event. The minor heap is
 * small, so collections are frequent; the ring is small, so it wraps (see the events dump's
 * lost_events lines).
 */
import { keep, scenario, sizes } from "../lib/scenario/mod.ts";

export default scenario({
  name: "service",
  description: "request loop: short-lived garbage, a growing cache, runtime_events on",
  seed: 2024,
  minorHeapWords: 16_384,
  ringLog2: 9,
}, (s) => {
  const main = s.main;
  s.events.start();
  main.memprof.start({ samplingRate: 1e-3, callstackSize: 16 });
  main.call("Service.main@service.ml:80:2-30", () =>
    main.repeat(400, () => {
      main.userEvent("service.request", { type: "span", phase: "begin" });
      main.call("Service.handle@service.ml:42:4-40", () => {
        main.repeat(200, () =>
          main.alloc(sizes.geometric(6, 200), { at: "Service.parse@service.ml:20:10-40" }));
        main.allocCombined([2, 4], { at: "Service.respond@service.ml:30:6-30" });
        main.alloc(sizes.uniform(4, 32), {
          lifetime: keep.cycle(keep.forever, keep.steps(5_000)),
          at: "Service.cache_add@service.ml:35:6-50",
        });
      });
      main.userEvent("service.request", { type: "span", phase: "end" });
      main.userEvent("service.requests_done", { type: "int", value: 1 });
    }));
  main.majorSlice();
  main.memprof.stop();
  main.fullMajor();
});
