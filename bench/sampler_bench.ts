/**
 * Sampler benchmarks. Run: deno bench bench/sampler_bench.ts
 *
 * Group "memprof alloc": simulated allocation throughput of lib/runtime + lib/memprof — one
 * million OCaml allocations of 1–6 words (4.5 M words with headers) per iteration on one domain,
 * under a profile whose tracker returns a value for every callback, at λ = 1e-5, 1e-4 and 1e-2,
 * and with no profile. allocations/s = 1e6 / time per iteration; words/s = 4.5e6 / time.
 *
 * Group "rng: geom variates": each iteration draws 1,000,000 geometric variates, so the reported
 * time per iteration in ms is the time per variate in ns (variates/s = 1e9 / ns). Reference:
 * memprof.c's C draws one in 1.9 ns at -O2 on the reference machine.
 *
 * Measured here (2-core VM shared with other jobs, 2026-11-21): wasm-simd 3.4 ms/iter at best,
 * 3.6–5 ms on average depending on load (≈ 3.4–5 ns per variate, 200–290 M variates/s; a bare
 * loop outside the bench harness gives 3.0 ns), of which the batch refill is about 1.1 ns and the
 * per-call bookkeeping the rest; the TypeScript fallback kernel about 20 ms/iter (≈ 20 ns per
 * variate, 50 M/s).
 */

import { MemprofRng, oneLog1mLambda, type RngBackend } from "../lib/memprof/rng.ts";
import { allocWorkload } from "./_alloc_workload.ts";

const DRAWS = 1_000_000;
let sink = 0; // keeps results alive so the loops are not optimised away

function geomBench(backend: Exclude<RngBackend, "auto">, lambda: number, baseline = false) {
  const o = oneLog1mLambda(lambda);
  const rng = new MemprofRng(1, o, { backend });
  Deno.bench({
    name: `geom ×1e6, λ=${lambda}, ${backend}`,
    group: "rng: geom variates",
    baseline,
    fn() {
      const r = rng, oo = o; // locals, so the loop does not reload closure slots
      let s = 0;
      for (let i = 0; i < DRAWS; i++) s += r.geom(oo);
      sink += s;
    },
  });
}

geomBench("wasm-simd", 1e-4, true);
geomBench("ts", 1e-4);
geomBench("wasm-simd", 0.5);
geomBench("ts", 0.5);

// rand_binom over typical block sizes: 1e6 blocks of 1..16 words (~8.5 words each) at λ = 1e-4.
{
  const o = oneLog1mLambda(1e-4);
  const rng = new MemprofRng(2, o);
  Deno.bench({
    name: "binom ×1e6 blocks of 1–16 words, λ=1e-4",
    group: "rng: binom",
    fn() {
      const r = rng, oo = o;
      let s = 0;
      for (let i = 0; i < DRAWS; i++) s += r.binom((i & 15) + 1, oo);
      sink += s;
    },
  });
}

// ---- simulated allocation throughput ----

for (const lambda of [null, 1e-5, 1e-4, 1e-2]) {
  const run = allocWorkload(lambda);
  Deno.bench({
    name: lambda === null
      ? "no profile: 1M allocations, 4.5M words"
      : `lambda ${lambda}: 1M allocations, 4.5M words`,
    group: "memprof alloc",
    baseline: lambda === null,
    fn: run,
  });
}

// Keep `sink` observable.
globalThis.addEventListener("unload", () => {
  if (sink === -1) console.log(sink);
});
