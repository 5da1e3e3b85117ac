/**
 * The scenario's own seeded generator (sizes drawn from distributions). memprof's sampling
 * generator is separate and seeded by domain id, as in OCaml.
 * @module
 */
import type { SizeSpec } from "./spec.ts";

/** splitmix32-style generator: small, fast, and the same on every platform. */
export class ScenarioRng {
  /** The state, in a typed array: stored as a 32-bit word, never boxed as a number. */
  readonly #state = new Uint32Array(1);

  constructor(seed: number) {
    this.#state[0] = seed >>> 0;
  }

  /** A uniform 32-bit unsigned integer. */
  next(): number {
    const st = this.#state;
    st[0] += 0x9e3779b9; // mod 2^32
    let z = st[0];
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  }

  /** A uniform float in [0, 1). */
  float(): number {
    return this.next() / 4294967296;
  }

  /** A uniform integer in [min, max]: `min + floor(float() * (max - min + 1))`, with the draw
   * written out so that the hot size sources make one call per block. */
  int(min: number, max: number): number {
    const st = this.#state;
    st[0] += 0x9e3779b9; // mod 2^32
    let z = st[0];
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return min + Math.floor(((z ^ (z >>> 16)) >>> 0) / 4294967296 * (max - min + 1));
  }
}

/** A function giving the next size of a spec: constant sizes cost nothing. */
export function sizeSource(spec: SizeSpec, rng: ScenarioRng): () => number {
  if (typeof spec === "number") return () => spec;
  if ("uniform" in spec) {
    const [a, b] = spec.uniform;
    return () => rng.int(a, b);
  }
  if ("choice" in spec) {
    const c = spec.choice;
    return () => c[Math.floor(rng.float() * c.length)];
  }
  const { mean, max } = spec.geometric;
  const p = 1 / mean;
  const cap = max ?? Number.MAX_SAFE_INTEGER;
  return () => {
    if (p >= 1) return 1;
    const u = 1 - rng.float(); // (0, 1]
    return Math.min(cap, 1 + Math.floor(Math.log(u) / Math.log1p(-p)));
  };
}
