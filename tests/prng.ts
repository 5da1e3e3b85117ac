/**
 * mulberry32: a small seeded generator of uniform floats in [0, 1), shared by the tests that
 * need reproducible random inputs (fuzzing, wrap-around, properties) and by the benches'
 * synthetic traces (bench/_big_trace.ts, bench/_codec_trace.ts); and the fuzzers' choices drawn
 * from it ({@linkcode Rng}, {@linkcode seedByWeight}).
 * @module
 */

/** A generator seeded with `seed`; each call gives the next float in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A seeded generator with the helpers the fuzzers' mutators need (tests/memtrace,
 * tests/runtime_events and tests/export's fuzz_harness.ts). */
export class Rng {
  readonly #next: () => number;
  constructor(seed: number) {
    this.#next = mulberry32(seed);
  }
  /** Integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.#next() * n);
  }
  /** Integer in [lo, hi]. */
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }
  /** One of `xs`, each as likely. */
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)];
  }
  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.#next() < p;
  }
  /** One of `entries`, each `[weight, …]` with a whole weight: drawn with probability
   * weight / `total`, `total` being the sum of the weights. */
  weighted<E extends readonly [number, ...unknown[]]>(entries: readonly E[], total: number): E {
    let r = this.int(total);
    for (const entry of entries) {
      if (r < entry[0]) return entry;
      r -= entry[0];
    }
    return entries[0];
  }
}

/** The seed of a fuzzing campaign's case `index`: one of `seeds`, drawn by weight (to a
 * thousandth), determined by (`campaignSeed`, `index`). */
export function seedByWeight<S extends { readonly weight: number }>(
  seeds: readonly S[],
  campaignSeed: number,
  index: number,
): S {
  const total = seeds.reduce((n, s) => n + s.weight, 0);
  let r = new Rng((campaignSeed + Math.imul(index, 0x85ebca6b)) >>> 0).int(total * 1000) / 1000;
  for (const s of seeds) {
    if (r < s.weight) return s;
    r -= s.weight;
  }
  return seeds[0];
}
