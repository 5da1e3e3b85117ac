/**
 * memtrace's `Geometric_sampler`: the sampler of external allocations. It mirrors memprof's
 * geometric draws, but in double precision and on OCaml's `Random` (not memprof's xoshiro), so its
 * numbers differ from memprof's; they match memtrace's.
 * @module
 */
import { OCamlRandomState } from "./ocaml_random.ts";
import { log1p } from "../memprof/rng.ts";

/** The seed of memtrace's default generator. */
export const MEMTRACE_SAMPLER_SEED: readonly number[] = [
  0x52b87efb,
  0x332235ea,
  0x5f813723,
  0x057b9dff,
];

const f64 = new Float64Array(1);
const u32 = new Uint32Array(f64.buffer);

/** memtrace's double-precision `log_approx` of a 30-bit uniform draw `n`. */
export function logApproxDouble(n: number): number {
  f64[0] = 2 * n + 1; // exact: 2n+1 < 2^31
  const hi = u32[1];
  const exp = (hi >>> 20) + (127 - 1023 + 1);
  u32[1] = (hi & 0xfffff) | 0x3ff00000; // mantissa in [1, 2)
  const x = f64[0];
  return x * (2.104659476859 + x * (-0.720478916626 + x * 0.107132064797)) +
    (-111.701724334061 + 0.6931471805 * exp);
}

/** Draws geometric gaps (≥ 1) with mean 1/rate. */
export class GeometricSampler {
  readonly #oneLog1mLambda: number;
  readonly #rand: OCamlRandomState;

  /** A sampler at `samplingRate`, drawing from `rand` (default: memtrace's seeded state). */
  constructor(
    readonly samplingRate: number,
    rand: OCamlRandomState = OCamlRandomState.make(MEMTRACE_SAMPLER_SEED),
  ) {
    this.#rand = rand;
    this.#oneLog1mLambda = samplingRate >= 1 ? 0 : 1 / log1p(-samplingRate);
  }

  /** The next gap. */
  draw(): number {
    const expRand = logApproxDouble(this.#rand.bits());
    return 1 + Math.trunc(expRand * this.#oneLog1mLambda);
  }
}
