/**
 * External allocations (issue 24): where the emulated slow path runs the callbacks its callstack
 * array made ready, it calls `process_pending` (`Weak.get`, whose C code runs
 * `caml_process_pending_actions`). memprof's callbacks end with `caml_reset_young_limit`, which
 * flags an action pending, so the primitive's return (`RET_FROM_C_CALL`) sets young_limit and
 * the next allocation or poll enters the runtime: here the loop's back-edge poll (its body only
 * calls), which collects when the array and its callback left fewer than 257 words free. The
 * simulation did not return from that C call, collected at the next array, and differed at
 * callback 331 (every external allocation sampled: rate 0.3).
 */
import { type DomainBuilder, keep, scenario } from "../../../lib/scenario/mod.ts";

/** Runs `body` nested in `depth` calls. */
function nested(d: DomainBuilder, depth: number, body: () => void): void {
  if (depth === 0) body();
  else {d.call(`Reentrancy.rec${depth}@reentrancy.ml:${depth}:2-20`, () =>
      nested(d, depth - 1, body));}
}

export default scenario({
  name: "external_return_from_c",
  minorHeapWords: 4_096,
  externalSamplingRate: 0.3,
}, (s) => {
  const main = s.main;
  main.memprof.start({ samplingRate: 0.05, callstackSize: 4 });
  nested(main, 60, () =>
    main.repeat(1_000, () => {
      main.alloc(5, { lifetime: keep.steps(30), at: "Reentrancy.work@reentrancy.ml:80:4-30" });
      main.extAlloc(800, keep.steps(50));
    }));
  main.memprof.stop();
  main.fullMajor();
});
