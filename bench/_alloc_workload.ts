/**
 * The simulated allocation workload of sampler_bench.ts's "memprof alloc" group and of
 * anchors_bench.ts (whose OCaml anchor, anchors/alloc.ml, allocates the same): one million
 * blocks of 1 to 6 words on one domain, every 1,024th kept in a 64-slot table, under a profile
 * whose tracker returns a value for every callback (or none).
 * @module
 */
import { Runtime } from "../lib/runtime/mod.ts";

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
    for (let i = 0; i < ALLOCATIONS; i++) {
      const sz = SIZES[i % 6];
      const a = d.alloc(sz);
      if ((i & 1023) === 0) keep[(i >> 10) & 63].set(a, sz);
    }
  };
}
