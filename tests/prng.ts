/**
 * mulberry32: a small seeded generator of uniform floats in [0, 1), shared by the tests that
 * need reproducible random inputs (fuzzing, wrap-around, properties) and by the benches'
 * synthetic traces (bench/_big_trace.ts, bench/_codec_trace.ts).
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
