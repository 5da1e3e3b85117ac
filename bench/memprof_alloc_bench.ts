/**
 * Simulated allocation throughput of lib/runtime + lib/memprof: one million OCaml allocations
 * of 1–6 words (4.5 words each with headers, 4.5 M words per iteration) on one domain, under a
 * profile whose tracker returns a value for every callback, at three sampling rates; plus the
 * same loop with no profile. Divide 1e6 allocations / 4.5e6 words by the time per iteration for
 * allocations/s and words/s.
 */
import { Runtime } from "../lib/runtime/mod.ts";

const N = 1_000_000;
const SIZES = [1, 2, 3, 4, 5, 6];

function setup(lambda: number | null) {
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
    for (let i = 0; i < N; i++) {
      const sz = SIZES[i % 6];
      const a = d.alloc(sz);
      if ((i & 1023) === 0) keep[(i >> 10) & 63].set(a, sz);
    }
  };
}

for (const lambda of [null, 1e-5, 1e-4, 1e-2]) {
  const run = setup(lambda);
  Deno.bench({
    name: lambda === null
      ? "no profile: 1M allocations, 4.5M words"
      : `lambda ${lambda}: 1M allocations, 4.5M words`,
    group: "memprof alloc",
    baseline: lambda === null,
    fn: run,
  });
}
