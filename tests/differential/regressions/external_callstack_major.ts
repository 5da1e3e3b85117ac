/**
 * External allocations (issue 24): `Printexc.get_callstack max_int` under memtrace's lock, 300
 * calls deep. `caml_get_current_callstack` allocates one word per frame with `caml_alloc`: past
 * 256 words, in the major heap (`caml_alloc_shr`, sampled as such, then
 * `caml_check_urgent_gc`). The simulation allocated at most 256 words, young: OCaml 5.3's log,
 * `alloc_major size=304` (300 calls, the harness's 3 frames, the slow path's own), differed at
 * callback 1.
 */
import { type DomainBuilder, keep, scenario } from "../../../lib/scenario/mod.ts";

/** Runs `body` nested in `depth` calls. */
function nested(d: DomainBuilder, depth: number, body: () => void): void {
  if (depth === 0) body();
  else d.call(`Deep.r${depth}@deep.ml:${depth}:2-20`, () => nested(d, depth - 1, body));
}

export default scenario({
  name: "external_callstack_major",
  minorHeapWords: 8192,
  externalSamplingRate: 0.01,
}, (s) => {
  const m = s.main;
  m.memprof.start({ samplingRate: 0.02, callstackSize: 2 });
  nested(m, 300, () =>
    m.repeat(400, () => {
      m.alloc(4, { lifetime: keep.steps(20) });
      m.extAlloc(800, keep.steps(30));
    }));
  m.memprof.stop();
  m.fullMajor();
});
