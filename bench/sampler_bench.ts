/**
 * Sampler benchmarks. Run: deno bench bench/sampler_bench.ts
 *
 * Group "memprof alloc": simulated allocation throughput of lib/runtime + lib/memprof — one
 * million OCaml allocations of 1–6 words (4.5 M words with headers) per iteration on one domain,
 * under a profile whose tracker returns a value for every callback, at λ = 1e-5, 1e-4 and 1e-2,
 * and with no profile. allocations/s = 1e6 / time per iteration; words/s = 4.5e6 / time.
 *
 * Group "rng: geom variates": each iteration draws 1,000,000 geometric variates, so the reported
 * time per iteration in ms is the time per variate in ns (variates/s = 1e9 / ns): through
 * `geom()`, one call per variate, and through `binom()`, which reads the batch in place as the
 * runtime's sampling loops do (about 1,000,000 variates per iteration: rand_binom over the sum
 * of the first million draws). bench/anchors_bench.ts compares both with memprof.c at -O2.
 *
 * On this 2-core shared VM the batch refill (wasm-simd) costs about 1.35 ns per variate; a call
 * to `geom()` per variate adds about 1.7 ns (the position is a field, stored and reloaded every
 * draw), the in-place consumption of `binom()` about 0.35 ns (gaps summed four at a time). The
 * TypeScript fallback kernel takes about 18 ns per variate.
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

// The runtime's consumption: rand_binom over the sum of the first million draws, i.e. about a
// million variates read from the batch in place per iteration.
{
  const o = oneLog1mLambda(1e-4);
  const first = new MemprofRng(1, o);
  let total = 0;
  for (let i = 0; i < DRAWS; i++) total += first.geom(o);
  const rng = new MemprofRng(1, o);
  Deno.bench({
    name: "≈1e6 variates through binom (in place), λ=1e-4, wasm-simd",
    group: "rng: geom variates",
    fn() {
      sink += rng.binom(total, o);
    },
  });
}

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
