/**
 * The tracer's lock: an external allocation holds it while memtrace allocates the callstack
 * array (`Printexc.get_callstack`: a word per frame, 60 here; 64 in the exported program, with
 * its harness's 3 frames and the slow path's own), and memprof callbacks that fire meanwhile find
 * it busy. With a tiny minor heap, that allocation often runs the minor collection whose
 * promotion and deallocation callbacks are then deferred until the lock is released; a sampled
 * callstack array itself is not tracked. That is memtrace's behaviour; the summary's tracer
 * counters show it, and the real OCaml 5.3 judges it (`deno task diff`, memtrace's External
 * emulated in the exported program: docs/differential.md).
 */
import { type DomainBuilder, keep, scenario } from "../lib/scenario/mod.ts";

/** Runs `body` nested in `depth` calls. */
function nested(d: DomainBuilder, depth: number, body: () => void): void {
  if (depth === 0) body();
  else {d.call(`Reentrancy.rec${depth}@reentrancy.ml:${depth}:2-20`, () =>
      nested(d, depth - 1, body));}
}

export default scenario({
  name: "tracer_reentrancy",
  description: "memprof callbacks while the tracer writes an external allocation",
  minorHeapWords: 4_096,
  externalSamplingRate: 0.01,
}, (s) => {
  const main = s.main;
  main.memprof.start({ samplingRate: 0.05, callstackSize: 4 });
  nested(main, 60, () =>
    main.repeat(1_000, () => {
      main.alloc(6, { lifetime: keep.steps(30), at: "Reentrancy.work@reentrancy.ml:80:4-30" });
      main.extAlloc(800, keep.steps(50));
    }));
  main.memprof.stop();
  main.fullMajor();
});
