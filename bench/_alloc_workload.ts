/**
 * The simulated allocation workload of sampler_bench.ts's "memprof alloc" group (whose OCaml
 * anchor, anchors/alloc.ml's `alloc`, allocates the same): one million
 * blocks of 1 to 6 words on one domain, every 1,024th kept in a 64-slot table, under a profile
 * whose tracker returns a value for every callback (or none).
 * @module
 */
import { type Domain, type Root, Runtime } from "../lib/runtime/mod.ts";

/** Allocations per round. */
export const ALLOCATIONS = 1_000_000;
const SIZES = [1, 2, 3, 4, 5, 6];

/** A fresh runtime profiling at `lambda` (null: no profile); returns one round of the workload. */
export function allocWorkload(lambda: number | null): () => void {
  const rt = new Runtime();
  const d = rt.mainDomain;
  const keep = Array.from({ length: 64 }, () => rt.root());
  if (lambda !== null) {
    d.memprofStart({
      samplingRate: lambda,
      callstackSize: 16,
      tracker: {
        allocMinor: (info) => info.size,
        allocMajor: (info) => info.size,
        promote: (x) => x,
        deallocMinor: () => {},
        deallocMajor: () => {},
      },
    });
  }
  return () => {
    for (let i = 0; i < ALLOCATIONS; i += CHUNK) allocRange(d, keep, i, i + CHUNK);
  };
}

/** Allocations per call of {@linkcode allocRange} (a divisor of {@linkcode ALLOCATIONS}). */
const CHUNK = 10_000;

/**
 * Allocations `from` to `to` of a round. The loop is a small top-level function called many
 * times per round, so V8 optimises it as a whole function: a million-iteration loop in the
 * round's closure would run in on-stack-replaced code whose tier (Maglev or Turbofan) varies
 * from run to run, which made the no-profile figure swing between about 2.7 and 4.4 ns.
 */
function allocRange(d: Domain, keep: readonly Root[], from: number, to: number): void {
  for (let i = from; i < to; i++) {
    const sz = SIZES[i % 6];
    const a = d.alloc(sz);
    if ((i & 1023) === 0) keep[(i >> 10) & 63].set(a, sz);
  }
}
