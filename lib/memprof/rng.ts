/**
 * The sampling random-number generator of OCaml 5.3's runtime/memprof.c, bit for bit.
 *
 * Per domain, the C keeps 64 independent xoshiro128+ generators ("lanes"), seeded once at domain
 * creation by a splitmix64 stream started at the domain id. Whenever its buffer runs dry it
 * refills a batch of 64 geometric variates, one per lane, using a float32 approximation of the
 * logarithm and the profile's `one_log1m_lambda = 1/log1p(-lambda)` rounded to float32. Samples
 * per block (`rand_binom`) are counted by summing geometric gaps.
 *
 * Every float operation below is rounded to float32 exactly where the C (gcc -O2, x86-64, no
 * fused multiply-add) rounds, so the variates equal the C's. Two batch kernels are provided:
 * a WebAssembly SIMD one (see `rng_wasm.ts`, used when the engine supports it) and a typed-array
 * TypeScript one; both are checked against the reference fixtures.
 *
 * @module
 */

import { createWasmBatchKernelWith } from "./rng_wasm.ts";

/** Number of lanes, and of variates produced per refill (memprof.c's RAND_BLOCK_SIZE). */
export const RAND_BLOCK_SIZE = 64;

/** OCaml's Max_long on 64-bit (2^62 − 1): the cap `rand_geom` clips its variates to. */
export const MAX_LONG: bigint = (1n << 62n) - 1n;

/**
 * How `geom` returns Max_long as a Number: 2^62, the nearest double to 2^62 − 1. No uncapped
 * variate can equal it (anything ≥ 2^62 is capped), so the value is unambiguous; convert it with
 * {@link geomToBigInt} when the exact integer matters.
 */
export const MAX_LONG_NUMBER = 2 ** 62;

/**
 * The value memprof.c stores for `one_log1m_lambda` when it would underflow or be unusable
 * (lambda 0, or so small that 1/log1p(-lambda) overflows): sampling is then off ("min lambda").
 */
export const MIN_ONE_LOG1M_LAMBDA: number = -Infinity;

// ---------------------------------------------------------------------------------------------
// log1p as the reference computes it

const bits = new Float64Array(1);
const words = new Int32Array(bits.buffer); // little-endian: [low, high]

function hiWord(x: number): number {
  bits[0] = x;
  return words[1];
}

function withHiWord(x: number, hi: number): number {
  bits[0] = x;
  words[1] = hi;
  return bits[0];
}

function fromWords(hi: number, lo: number): number {
  words[1] = hi;
  words[0] = lo;
  return bits[0];
}

// Coefficients of the classic (SunPro) log1p, given by their bit patterns so that no decimal
// conversion is involved.
const LN2_HI = fromWords(0x3fe62e42, 0xfee00000 | 0);
const LN2_LO = fromWords(0x3dea39ef, 0x35793c76);
const LP1 = fromWords(0x3fe55555, 0x55555593);
const LP2 = fromWords(0x3fd99999, 0x9997fa04 | 0);
const LP3 = fromWords(0x3fd24924, 0x94229359 | 0);
const LP4 = fromWords(0x3fcc71c5, 0x1d8e78af);
const LP5 = fromWords(0x3fc74664, 0x96cb03de | 0);
const LP6 = fromWords(0x3fc39a09, 0xd078c69f | 0);
const LP7 = fromWords(0x3fc2f112, 0xdf3e5244 | 0);

/** A finite nonzero double as m · 2^e with m a signed integer. */
function decompose(x: number): [bigint, number] {
  bits[0] = x;
  const hi = words[1], lo = words[0];
  const biased = (hi >>> 20) & 0x7ff;
  let m = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo >>> 0);
  let e = -1074;
  if (biased !== 0) {
    m |= 1n << 52n;
    e = biased - 1075;
  }
  return [hi < 0 ? -m : m, e];
}

/** n · 2^e rounded to the nearest double, ties to even (n ≠ 0). */
function roundToDouble(n: bigint, e: number): number {
  const neg = n < 0n;
  if (neg) n = -n;
  const len = n.toString(2).length;
  // Keep 53 significant bits, or fewer where the result is subnormal (lowest bit 2^-1074).
  const shift = Math.max(len - 53, -1074 - e);
  let q = n;
  if (shift > 0) {
    const b = BigInt(shift);
    q = n >> b;
    const rem = n - (q << b);
    const half = 1n << (b - 1n);
    if (rem > half || (rem === half && (q & 1n) === 1n)) q++;
  } else if (shift < 0) {
    q = n << BigInt(-shift);
  }
  // q < 2^54 and 2^(e + shift) is a power of two: one exact (or overflowing) multiplication,
  // split in two when the power alone would overflow or underflow.
  const p = e + shift;
  const r = p > 900 || p < -900
    ? Number(q) * 2 ** (p >> 1) * 2 ** (p - (p >> 1))
    : Number(q) * 2 ** p;
  return neg ? -r : r;
}

/**
 * fma(a, b, c): a · b + c with a single rounding, as the x86 FMA instructions compute it
 * (exact BigInt arithmetic; only used to compute `one_log1m_lambda`, once per profile).
 */
export function fma(a: number, b: number, c: number): number {
  if (!Number.isFinite(a) || !Number.isFinite(b) || !Number.isFinite(c) || a === 0 || b === 0) {
    return a * b + c; // the product is exact (0, ±inf or NaN), so one rounding happens anyway
  }
  const [ma, ea] = decompose(a);
  const [mb, eb] = decompose(b);
  const mp = ma * mb;
  const ep = ea + eb;
  if (c === 0) return roundToDouble(mp, ep);
  const [mc, ec] = decompose(c);
  const e = Math.min(ep, ec);
  const sum = (mp << BigInt(ep - e)) + (mc << BigInt(ec - e));
  return sum === 0n ? 0 : roundToDouble(sum, e);
}

/**
 * log(1 + x) exactly as the reference's libm computes it: glibc 2.36's x86-64 `log1p`, which on
 * a CPU with FMA and AVX2 (the machine the fixtures were made on) resolves to its FMA build — the
 * SunPro algorithm with glibc's split polynomial evaluation, where gcc fused some multiply-adds.
 * Every operation below, fused or not, mirrors that build's machine code, so the result is equal
 * bit for bit (checked on a million arguments). `Math.log1p` is not used because V8's result
 * differs in the last bit for a few percent of arguments, which shows in `one_log1m_lambda`.
 *
 * Method: write 1 + x = 2^k · (1 + f) with √2/2 ≤ 1 + f < √2, keeping the rounding error c of
 * 1 + x when k ≠ 0; with s = f / (2 + f), log(1 + f) = f − (f²/2 − s·(f²/2 + R(s²))) where R is
 * a degree-7 polynomial in s²; finally add k·ln2 (split in two parts for exactness).
 */
export function log1p(x: number): number {
  const hx = hiWord(x);
  const ax = hx & 0x7fffffff;
  let k = 1;
  let f = 0;
  let c = 0;
  let hu = 0;
  if (hx < 0x3fda827a) { // x < 0.41422 (or negative)
    if (ax >= 0x3ff00000) return x === -1 ? -Infinity : NaN; // x ≤ −1
    if (ax < 0x3e200000) { // |x| < 2^-29: x − x²/2 is exact enough
      return ax < 0x3c900000 ? x : fma(-(x * x), 0.5, x);
    }
    if (hx > 0 || hx <= (0xbfd2bec3 | 0)) { // −0.2929 < x < 0.41422: no reduction needed
      k = 0;
      f = x;
      hu = 1;
    }
  } else if (hx >= 0x7ff00000) {
    return x + x; // +Infinity or NaN
  }
  if (k !== 0) {
    let u: number;
    if (hx < 0x43400000) {
      u = 1 + x;
      hu = hiWord(u);
      k = (hu >> 20) - 1023;
      c = k > 0 ? 1 - (u - x) : x - (u - 1); // what rounding 1 + x lost
      c /= u;
    } else {
      u = x;
      hu = hiWord(u);
      k = (hu >> 20) - 1023;
      c = 0;
    }
    hu &= 0x000fffff;
    if (hu < 0x6a09e) {
      u = withHiWord(u, hu | 0x3ff00000); // u in [1, √2)
    } else {
      k += 1;
      u = withHiWord(u, hu | 0x3fe00000); // u/2 in [√2/2, 1)
      hu = (0x00100000 - hu) >> 2;
    }
    f = u - 1;
  }
  const hfsq = 0.5 * f * f;
  if (hu === 0) { // |f| < 2^-20
    if (f === 0) {
      if (k === 0) return 0;
      return fma(k, LN2_HI, fma(k, LN2_LO, c));
    }
    const r = fma(-f, 0.66666666666666666, 1) * hfsq;
    if (k === 0) return f - r;
    return fma(k, LN2_HI, -((r - fma(k, LN2_LO, c)) - f));
  }
  const s = f / (2 + f);
  const z = s * s;
  const z2 = z * z;
  const z4 = z2 * z2;
  const z6 = z2 * z4;
  const r2 = fma(z, LP3, LP2);
  const r3 = fma(z, LP5, LP4);
  const r4 = fma(z, LP7, LP6);
  const r = fma(z6, r4, fma(z4, r3, fma(z, LP1, z2 * r2)));
  const t = (hfsq + r) * s;
  if (k === 0) return f - (hfsq - t);
  return fma(k, LN2_HI, -((hfsq - (fma(k, LN2_LO, c) + t)) - f));
}

/**
 * `1/log1p(-lambda)` with memprof.c's edge cases (`caml_memprof_start`): 0 for lambda = 1, and
 * {@link MIN_ONE_LOG1M_LAMBDA} (−Infinity) whenever the result is not ≤ 0 — which, with a correct
 * log1p, happens for lambda = 0 and for lambdas so tiny that the reciprocal overflows (about
 * lambda < 5.6e-309). Lambdas between that and about 2.9e-39 give a finite double that becomes
 * −Infinity in float32 inside the batch, so every variate is then capped at Max_long.
 *
 * log1p is {@link log1p}, a replica of glibc's, so the double equals the C's bit for bit (V8's
 * Math.log1p differs in the last bit for a few percent of lambdas).
 *
 * @throws {RangeError} if lambda is NaN or outside [0, 1] (the C rejects those before computing).
 */
export function oneLog1mLambda(lambda: number): number {
  if (!(lambda >= 0 && lambda <= 1)) {
    throw new RangeError(`memprof sampling rate must be within [0, 1], got ${lambda}`);
  }
  const o = lambda === 1 ? 0 : 1 / log1p(-lambda);
  // `!(o <= 0)` also catches NaN, as the C's test does.
  return o <= 0 ? o : MIN_ONE_LOG1M_LAMBDA;
}

/** True when `one_log1m_lambda` means "sampling off" (memprof.c's `Min_lambda`). */
export function isMinLambda(oneLog1mLambda: number): boolean {
  return oneLog1mLambda === MIN_ONE_LOG1M_LAMBDA;
}

/** The exact integer a `geom` result stands for (maps {@link MAX_LONG_NUMBER} to 2^62 − 1). */
export function geomToBigInt(g: number): bigint {
  return g === MAX_LONG_NUMBER ? MAX_LONG : BigInt(g);
}

// ---------------------------------------------------------------------------------------------
// Seeding

const MASK64 = (1n << 64n) - 1n;

/**
 * xoshiro128+ lane states for a domain, as memprof.c's `xoshiro_init(domain, id)` builds them:
 * word k of lane i is at index `k * 64 + i` (the C's `xoshiro_state[k][i]` layout).
 *
 * The seed is the domain id cast to uint64_t (so negative numbers wrap modulo 2^64).
 */
export function seedLanes(
  domainId: number | bigint,
  out: Int32Array<ArrayBufferLike> = new Int32Array(4 * RAND_BLOCK_SIZE),
): Int32Array<ArrayBufferLike> {
  let x = BigInt.asUintN(64, BigInt(domainId));
  // splitmix64: BigInt is fine here, it runs 128 times per domain creation only.
  const next = (): bigint => {
    x = (x + 0x9E3779B97F4A7C15n) & MASK64;
    let z = x;
    z = ((z ^ (z >> 30n)) * 0xBF58476D1CE4E5B9n) & MASK64;
    z = ((z ^ (z >> 27n)) * 0x94D049BB133111EBn) & MASK64;
    return z ^ (z >> 31n);
  };
  for (let i = 0; i < RAND_BLOCK_SIZE; i++) {
    let t = next();
    out[i] = Number(t & 0xFFFFFFFFn) | 0;
    out[RAND_BLOCK_SIZE + i] = Number(t >> 32n) | 0;
    t = next();
    out[2 * RAND_BLOCK_SIZE + i] = Number(t & 0xFFFFFFFFn) | 0;
    out[3 * RAND_BLOCK_SIZE + i] = Number(t >> 32n) | 0;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The batch (memprof.c's rand_batch), TypeScript version

const fround = Math.fround;

// log_approx's float32 constants. Math.fround of these decimal literals gives the same bits as the
// C's float literals (0xc2df6748, 0x4006b2be, 0xbf38714e, 0x3ddb680e, 0x3f317218); a test checks.
/** @internal */
export const LOG_APPROX_C0 = fround(-111.70172433407);
/** @internal */
export const LOG_APPROX_C1 = fround(2.104659476859);
/** @internal */
export const LOG_APPROX_C2 = fround(-0.720478916626);
/** @internal */
export const LOG_APPROX_C3 = fround(0.107132064797);
/** @internal */
export const LOG_APPROX_LN2 = fround(0.6931471805);

// `0.6931471805f * exp` for every biased exponent that y + 0.5f can have (126..159 → index k+1
// below, k = unbiased exponent in -1..32), precomputed since exp only takes 34 values.
const LN2_TIMES_EXP = new Float64Array(34);
// 2^-k for k = -1..32, to scale y + 0.5f into [1, 2) without a type pun.
const POW2_NEG = new Float64Array(34);
for (let k = -1; k <= 32; k++) {
  LN2_TIMES_EXP[k + 1] = fround(LOG_APPROX_LN2 * (k + 127));
  POW2_NEG[k + 1] = 2 ** -k;
}

/**
 * memprof.c's `log_approx(y)`: log((y + 0.5) / 2^32), approximately, in float32 arithmetic.
 * Exposed for tests; the batch kernels inline the same steps.
 */
export function logApprox(y: number): number {
  y = y >>> 0;
  // u.f = y + 0.5f: uint32 → float (rounded), then a float add (rounded).
  const v = fround(fround(y) + 0.5);
  // The C splits v's bits into exponent and mantissa. Equivalently: k = floor(log2 v) is the
  // position of y's top bit, unless rounding carried v up to the next power of two.
  let k = 31 - Math.clz32(y); // -1 for y = 0 (v = 0.5)
  let x = v * POW2_NEG[k + 1]; // exact: scaling by a power of two
  if (x >= 2) {
    x = 1;
    k++;
  }
  let p = fround(x * LOG_APPROX_C3);
  p = fround(LOG_APPROX_C2 + p);
  p = fround(x * p);
  p = fround(LOG_APPROX_C1 + p);
  p = fround(x * p);
  p = fround(LOG_APPROX_C0 + p);
  return fround(p + LN2_TIMES_EXP[k + 1]);
}

/**
 * A batch refill: advances the 64 lanes once and writes 64 floored, capped variates.
 * @internal
 */
export interface BatchKernel {
  /** Which implementation this is. */
  readonly name: "wasm-simd" | "ts";
  /** Lane states, layout as {@link seedLanes}. Writable (used to seed). */
  readonly lanes: Int32Array;
  /** The 64 variates of the last refill (float32 values; 2^62 stands for Max_long). */
  readonly out: Float32Array;
  /** memprof.c's `rand_batch` with the given one_log1m_lambda (rounded to float32 here). */
  refill(oneLog1mLambda: number): void;
}

/**
 * The typed-array TypeScript batch kernel: no allocation per refill. Like the C, it first
 * advances the lanes into a buffer of uniform integers, then converts them; the conversion is
 * written four lanes at a time, step by step, because each lane is a long chain of dependent
 * float32 roundings and interleaving independent chains lets the CPU overlap them (measured
 * 13 ns vs 17 ns per variate).
 */
class TsBatchKernel implements BatchKernel {
  readonly name = "ts" as const;
  readonly lanes: Int32Array = new Int32Array(4 * RAND_BLOCK_SIZE);
  readonly out: Float32Array = new Float32Array(RAND_BLOCK_SIZE);
  readonly #uniform = new Int32Array(RAND_BLOCK_SIZE);

  refill(oneLog1mLambda: number): void {
    const o = fround(oneLog1mLambda); // `float one_log1m_lambda = One_log1m_lambda(config)`
    const s = this.lanes;
    const u = this.#uniform;
    const out = this.out;
    const lnExp = LN2_TIMES_EXP;
    const pow2 = POW2_NEG;
    const C0 = LOG_APPROX_C0, C1 = LOG_APPROX_C1, C2 = LOG_APPROX_C2, C3 = LOG_APPROX_C3;
    for (let i = 0; i < RAND_BLOCK_SIZE; i++) {
      // xoshiro_next on lane i, in int32 arithmetic (same bits as uint32).
      const a0 = s[i], a1 = s[i + 64], a2 = s[i + 128], a3 = s[i + 192];
      u[i] = (a0 + a3) | 0;
      const n2 = a2 ^ a0;
      const n3 = a3 ^ a1;
      s[i] = a0 ^ n3;
      s[i + 64] = a1 ^ n2;
      s[i + 128] = n2 ^ (a1 << 9);
      s[i + 192] = (n3 << 11) | (n3 >>> 21);
    }
    for (let i = 0; i < RAND_BLOCK_SIZE; i += 4) {
      // log_approx(y) for lanes i..i+3, as logApprox above. y is kept as int32 bits and its
      // uint32 value formed as a double explicitly: V8 keeps re-speculating that `y >>> 0` fits
      // in int32 and deoptimizes in a loop when it does not.
      const y0 = u[i + 0];
      const y1 = u[i + 1];
      const y2 = u[i + 2];
      const y3 = u[i + 3];
      const v0 = fround(fround(y0 < 0 ? y0 + 4294967296 : y0) + 0.5);
      const v1 = fround(fround(y1 < 0 ? y1 + 4294967296 : y1) + 0.5);
      const v2 = fround(fround(y2 < 0 ? y2 + 4294967296 : y2) + 0.5);
      const v3 = fround(fround(y3 < 0 ? y3 + 4294967296 : y3) + 0.5);
      // Exponent and mantissa of v without a type pun: k = position of y's top bit, unless
      // rounding carried v up to the next power of two.
      let k0 = 31 - Math.clz32(y0); // -1 for y = 0 (v = 0.5)
      let k1 = 31 - Math.clz32(y1); // -1 for y = 0 (v = 0.5)
      let k2 = 31 - Math.clz32(y2); // -1 for y = 0 (v = 0.5)
      let k3 = 31 - Math.clz32(y3); // -1 for y = 0 (v = 0.5)
      let x0 = v0 * pow2[k0 + 1]; // exact: a power-of-two scaling
      let x1 = v1 * pow2[k1 + 1]; // exact: a power-of-two scaling
      let x2 = v2 * pow2[k2 + 1]; // exact: a power-of-two scaling
      let x3 = v3 * pow2[k3 + 1]; // exact: a power-of-two scaling
      if (x0 >= 2) {
        x0 = 1;
        k0++;
      }
      if (x1 >= 2) {
        x1 = 1;
        k1++;
      }
      if (x2 >= 2) {
        x2 = 1;
        k2++;
      }
      if (x3 >= 2) {
        x3 = 1;
        k3++;
      }
      // c0 + x * (c1 + x * (c2 + x * c3)) + ln2 * exp, one rounding per operation.
      let p0 = fround(x0 * C3);
      let p1 = fround(x1 * C3);
      let p2 = fround(x2 * C3);
      let p3 = fround(x3 * C3);
      p0 = fround(C2 + p0);
      p1 = fround(C2 + p1);
      p2 = fround(C2 + p2);
      p3 = fround(C2 + p3);
      p0 = fround(x0 * p0);
      p1 = fround(x1 * p1);
      p2 = fround(x2 * p2);
      p3 = fround(x3 * p3);
      p0 = fround(C1 + p0);
      p1 = fround(C1 + p1);
      p2 = fround(C1 + p2);
      p3 = fround(C1 + p3);
      p0 = fround(x0 * p0);
      p1 = fround(x1 * p1);
      p2 = fround(x2 * p2);
      p3 = fround(x3 * p3);
      p0 = fround(C0 + p0);
      p1 = fround(C0 + p1);
      p2 = fround(C0 + p2);
      p3 = fround(C0 + p3);
      p0 = fround(p0 + lnExp[k0 + 1]);
      p1 = fround(p1 + lnExp[k1 + 1]);
      p2 = fround(p2 + lnExp[k2 + 1]);
      p3 = fround(p3 + lnExp[k3 + 1]);
      // B = 1 + log_approx(y) * one_log1m_lambda; then floor and cap at Max_long (any float
      // ≥ 2^62 is capped; below it, float → uintnat truncates, and the floor of a float32 is
      // again a float32, so `out` holds it exactly).
      const b0 = fround(1 + fround(p0 * o));
      const b1 = fround(1 + fround(p1 * o));
      const b2 = fround(1 + fround(p2 * o));
      const b3 = fround(1 + fround(p3 * o));
      out[i + 0] = b0 >= MAX_LONG_NUMBER ? MAX_LONG_NUMBER : Math.floor(b0);
      out[i + 1] = b1 >= MAX_LONG_NUMBER ? MAX_LONG_NUMBER : Math.floor(b1);
      out[i + 2] = b2 >= MAX_LONG_NUMBER ? MAX_LONG_NUMBER : Math.floor(b2);
      out[i + 3] = b3 >= MAX_LONG_NUMBER ? MAX_LONG_NUMBER : Math.floor(b3);
    }
  }
}

/** Which batch kernel a {@link MemprofRng} uses: "auto" prefers WebAssembly SIMD. */
export type RngBackend = "auto" | "wasm-simd" | "ts";

function makeKernel(backend: RngBackend): BatchKernel {
  if (backend !== "ts") {
    let k: BatchKernel | null = null;
    try {
      k = createWasmBatchKernelWith({
        c0: LOG_APPROX_C0,
        c1: LOG_APPROX_C1,
        c2: LOG_APPROX_C2,
        c3: LOG_APPROX_C3,
        ln2: LOG_APPROX_LN2,
      });
    } catch (e) {
      // e.g. no memory left for another instance: "auto" falls back to the TypeScript kernel.
      if (backend === "wasm-simd") throw e;
    }
    if (k !== null) return k;
    if (backend === "wasm-simd") {
      throw new Error("WebAssembly SIMD batch kernel is not available in this engine");
    }
  }
  return new TsBatchKernel();
}

// ---------------------------------------------------------------------------------------------
// Per-domain state

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/**
 * Per-domain sampling RNG state, as memprof.c's domain state holds it: the 64 xoshiro128+ lanes,
 * the buffer of 64 geometric variates with its position (`rand_pos`), and `next_rand_geom`.
 *
 * The C reads `one_log1m_lambda` from the domain's current profile config when a refill happens;
 * here every drawing method takes it as an argument, and it is used only when the buffer is
 * empty. Variates already buffered keep the value they were computed with — as in the C, where a
 * config change without `rand_init` (e.g. a domain adopting its parent's config) does not discard
 * the batch. Pass the value of the config that memprof.c's `domain->entries.config` holds at that
 * point, i.e. `oneLog1mLambda(lambda)` of the domain's profile.
 *
 * Life cycle, mirroring memprof.c:
 * - domain creation (`caml_memprof_new_domain`): `new MemprofRng(id)` (xoshiro_init + empty batch),
 *   then `init(config)` with the inherited config's value, or `init(null)` when there is none
 *   (or pass it as the constructor's second argument);
 * - `caml_memprof_start`: `init(oneLog1mLambda(lambda))` — the lanes are NOT reseeded, so a second
 *   profile continues the same stream;
 * - `caml_memprof_set_trigger` / `sample_young`: `geom(o)`;
 * - `caml_memprof_sample_block` and the non-Caml path of `sample_young`: `binom(len, o)`.
 */
export class MemprofRng {
  /** The domain id the lanes were seeded from (as the C's uint64_t seed). */
  readonly domainId: bigint;
  /**
   * The current batch of 64 variates (memprof.c's `rand_geom_buff`; float32 values, 2^62 for
   * Max_long). With {@linkcode pos}, the fast path a consumer reads directly: while
   * `pos < RAND_BLOCK_SIZE` the next variate is `batch[pos++]`; at `RAND_BLOCK_SIZE` call
   * {@linkcode refill} first. {@linkcode geom} and {@linkcode binom} do exactly that.
   */
  readonly batch: Float32Array;
  /** memprof.c's `rand_pos`: the index of the next variate in {@linkcode batch}; 64 = empty. */
  pos: number = RAND_BLOCK_SIZE;
  readonly #kernel: BatchKernel;
  // next_rand_geom: a Number while it is a safe integer, else NaN and the exact BigInt in
  // #nextBig (NaN makes binom's one-comparison fast path fail without a second test).
  #next = 0;
  #nextBig: bigint | null = null;

  /**
   * Seeds the lanes from the domain id (splitmix64, as `xoshiro_init`) and leaves the batch empty
   * (`rand_pos = RAND_BLOCK_SIZE`). `next_rand_geom` starts at 0 (the C's domain state is
   * zero-allocated).
   *
   * @param domainId the domain's id (any integer; cast to uint64 like the C's seed).
   * @param inheritedOneLog1mLambda if given (a number or null), `init` is run with it, as
   *   `caml_memprof_new_domain` runs `rand_init` right after seeding.
   * @param options.backend batch kernel: "auto" (default) uses WebAssembly SIMD when available.
   */
  constructor(
    domainId: number | bigint,
    inheritedOneLog1mLambda?: number | null,
    options: { backend?: RngBackend } = {},
  ) {
    if (typeof domainId === "number" && !Number.isSafeInteger(domainId)) {
      throw new RangeError(`domain id must be an integer, got ${domainId}`);
    }
    this.domainId = BigInt.asUintN(64, BigInt(domainId));
    this.#kernel = makeKernel(options.backend ?? "auto");
    seedLanes(this.domainId, this.#kernel.lanes);
    this.batch = this.#kernel.out;
    if (inheritedOneLog1mLambda !== undefined) this.init(inheritedOneLog1mLambda);
  }

  /** The batch kernel in use ("wasm-simd" or "ts"). */
  get backend(): "wasm-simd" | "ts" {
    return this.#kernel.name;
  }

  /** How many variates are left in the current batch (RAND_BLOCK_SIZE − rand_pos). */
  get buffered(): number {
    return RAND_BLOCK_SIZE - this.pos;
  }

  /**
   * memprof.c's `rand_geom`: the next geometric variate (≥ 1). Refills a batch of 64 with
   * `oneLog1mLambda` when the buffer is empty. Values above 2^53 are exact (they are float32
   * integers), except Max_long, returned as {@link MAX_LONG_NUMBER} (2^62).
   *
   * @param oneLog1mLambda the profile's `1/log1p(-lambda)` (≤ 0; see {@link oneLog1mLambda}).
   */
  geom(oneLog1mLambda: number): number {
    if (this.pos === RAND_BLOCK_SIZE) this.refill(oneLog1mLambda);
    return this.batch[this.pos++];
  }

  /**
   * memprof.c's `rand_batch`: advances the 64 lanes once and fills {@linkcode batch} with 64
   * variates computed with `oneLog1mLambda`; `pos` becomes 0. Call it only when the batch is
   * exhausted (`pos === RAND_BLOCK_SIZE`), as the C does, or variates are skipped.
   *
   * @throws {RangeError} if `oneLog1mLambda` is not ≤ 0 (NaN or positive: variates below 1).
   */
  refill(oneLog1mLambda: number): void {
    // The C asserts this; NaN or a positive value would make variates below 1.
    if (!(oneLog1mLambda <= 0)) {
      throw new RangeError(`one_log1m_lambda must be <= 0, got ${oneLog1mLambda}`);
    }
    this.#kernel.refill(oneLog1mLambda);
    this.pos = 0;
  }

  /**
   * memprof.c's `rand_binom`: how many times a block of `len` words is sampled. Draws gaps while
   * `next_rand_geom < len`, then subtracts `len` (uintnat arithmetic, exact here too).
   *
   * The common case (no sample: `next_rand_geom ≥ len`) draws nothing. Otherwise the gaps are
   * read straight from {@linkcode batch}, one call of a small loop per batch (four gaps summed
   * at a time while they fall short of `len`), one refill per 64.
   *
   * @param len block size in words, an integer in [0, Max_long) (a bigint above 2^53). Not
   *   validated on the fast path: pass a non-negative integer.
   * @param oneLog1mLambda the profile's `1/log1p(-lambda)`.
   */
  binom(len: number | bigint, oneLog1mLambda: number): number {
    // The common case in one comparison: #next is NaN while the exact value is in #nextBig, and
    // no number compares ≥ NaN; a len above 2^53 − 1 is above every safe #next.
    const next = this.#next;
    if (typeof len === "number" && next >= len) {
      this.#next = next - len;
      return 0;
    }
    return this.#binomDraw(len, oneLog1mLambda);
  }

  /** {@linkcode binom} when it draws, or when `len` or `next_rand_geom` is not a safe integer. */
  #binomDraw(len: number | bigint, oneLog1mLambda: number): number {
    if (typeof len === "number" && this.#nextBig === null && len <= MAX_SAFE) {
      // One call of #consume per batch: the per-variate loop lives in a small function that V8
      // optimises like any hot function (a loop here would only get on-stack-replaced code).
      let res = 0;
      do {
        if (this.pos === RAND_BLOCK_SIZE) this.refill(oneLog1mLambda);
        res += this.#consume(len);
        if (this.#nextBig !== null) {
          // A sum left the safe integers: continue exactly (#binomBig's end stores the result).
          return this.#binomBig(this.#nextBig, BigInt(len), res, oneLog1mLambda);
        }
      } while (this.#next < len);
      this.#next -= len;
      return res;
    }
    const big = BigInt(len);
    if (big < 0n || big >= MAX_LONG) throw new RangeError(`block length out of range: ${len}`);
    return this.#binomBig(this.nextRandGeomExact, big, 0, oneLog1mLambda);
  }

  /**
   * `rand_binom`'s loop over what is left of the batch (`pos` < 64, `next_rand_geom` < len ≤
   * 2^53 − 1, both safe integers): adds gaps to `next_rand_geom` while it stays below `len`,
   * returns how many it drew. If a sum would exceed 2^53 − 1, the exact sum is left in
   * `#nextBig` (and that gap counted) instead.
   */
  #consume(len: number): number {
    const buf = this.batch;
    let pos = this.pos;
    let next = this.#next;
    const start = pos;
    // Four gaps at a time while all four fall short of len: their sum is off the loop's
    // dependency chain, and exact (see below), so only one add per four waits on `next`.
    while (pos <= RAND_BLOCK_SIZE - 4) {
      const s4 = next + ((buf[pos] + buf[pos + 1]) + (buf[pos + 2] + buf[pos + 3]));
      // len ≤ 2^53 − 1. If every partial sum of the true values is ≤ 2^53, every addition is
      // exact; if one is above, rounding (monotone) keeps the result ≥ 2^53 > len. So s4 < len
      // exactly when the four true gaps leave next below len: the C would draw all four.
      if (!(s4 < len)) break;
      next = s4;
      pos += 4;
    }
    // Then one at a time while the gaps fall short of len (next < len here).
    while (pos < RAND_BLOCK_SIZE) {
      const g = buf[pos++];
      const sum = next + g;
      if (sum > MAX_SAFE) {
        this.#nextBig = BigInt(next) + geomToBigInt(g);
        next = NaN; // the exact value is in #nextBig from now on
        break;
      }
      next = sum;
      if (!(next < len)) break;
    }
    this.pos = pos;
    this.#next = next;
    return pos - start;
  }

  #binomBig(next: bigint, len: bigint, res: number, o: number): number {
    while (next < len) {
      next += geomToBigInt(this.geom(o));
      res++;
    }
    this.nextRandGeomExact = next - len;
    return res;
  }

  /**
   * memprof.c's `rand_init`: discards the rest of the batch (`rand_pos = RAND_BLOCK_SIZE`) and,
   * unless there is no config (`null`) or sampling is off (−Infinity), sets
   * `next_rand_geom = rand_geom() − 1` — drawing from a fresh batch. The C does this whatever the
   * config's status (sampling, stopped, discarded), so pass the config's value regardless.
   *
   * @param oneLog1mLambda the config's `1/log1p(-lambda)`, or null for CONFIG_NONE.
   */
  init(oneLog1mLambda: number | null): void {
    this.pos = RAND_BLOCK_SIZE;
    if (oneLog1mLambda !== null && oneLog1mLambda !== MIN_ONE_LOG1M_LAMBDA) {
      const g = this.geom(oneLog1mLambda);
      if (g <= MAX_SAFE) this.nextRandGeom = g - 1;
      else this.nextRandGeomExact = geomToBigInt(g) - 1n;
    }
  }

  /**
   * memprof.c's `next_rand_geom`: words left before the next sample in `binom`'s accounting.
   * Exact below 2^53; above, the nearest double (use {@link nextRandGeomExact} for the integer).
   */
  get nextRandGeom(): number {
    return this.#nextBig === null ? this.#next : Number(this.#nextBig);
  }

  set nextRandGeom(value: number) {
    if (!(Number.isInteger(value) && value >= 0)) {
      throw new RangeError(`next_rand_geom must be a non-negative integer, got ${value}`);
    }
    if (value <= MAX_SAFE) {
      this.#next = value;
      this.#nextBig = null;
    } else {
      this.#next = NaN;
      this.#nextBig = BigInt(value);
    }
  }

  /** `next_rand_geom` as an exact integer (uintnat: 0 ≤ value < 2^64). */
  get nextRandGeomExact(): bigint {
    return this.#nextBig ?? BigInt(this.#next);
  }

  set nextRandGeomExact(value: bigint) {
    if (value < 0n || value > MASK64) {
      throw new RangeError(`next_rand_geom must be within [0, 2^64), got ${value}`);
    }
    if (value <= BigInt(MAX_SAFE)) {
      this.#next = Number(value);
      this.#nextBig = null;
    } else {
      this.#next = NaN;
      this.#nextBig = value;
    }
  }
}
