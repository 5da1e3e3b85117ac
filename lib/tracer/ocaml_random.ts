/**
 * OCaml 5's `Random.State`: the LXM generator (an LCG and a xoroshiro-like generator combined
 * through a mixing function), seeded from an int array through two MD5 digests, as
 * `Random.State.make` does. memtrace's external-allocation sampler draws from it, so the tracer
 * needs the same numbers for the same seed.
 * @module
 */
import { createHash } from "node:crypto";

const MASK64 = (1n << 64n) - 1n;
const LCG_M = 0xd1342543de82ef95n;
const MIX = 0xdaba0b6eb09322e3n;

function rotl(x: bigint, k: bigint): bigint {
  return ((x << k) | (x >> (64n - k))) & MASK64;
}

/** A generator state: additive constant `a` (odd), LCG state `s`, XBG state `x0`, `x1`. */
export class OCamlRandomState {
  #a: bigint;
  #s: bigint;
  #x0: bigint;
  #x1: bigint;

  /** A state from its four 64-bit words, normalised as `Random.State` requires (a odd, the
   * XBG words non-zero). */
  constructor(i1: bigint, i2: bigint, i3: bigint, i4: bigint) {
    this.#a = BigInt.asUintN(64, i1) | 1n;
    this.#s = BigInt.asUintN(64, i2);
    this.#x0 = BigInt.asUintN(64, i3) || 1n;
    this.#x1 = BigInt.asUintN(64, i4) || 2n;
  }

  /** `Random.State.make seed`. */
  static make(seed: readonly number[]): OCamlRandomState {
    const n = seed.length;
    const bytes = new Uint8Array(n * 8 + 1);
    const view = new DataView(bytes.buffer);
    for (let i = 0; i < n; i++) view.setBigInt64(i * 8, BigInt(seed[i]), true);
    const digest = (suffix: number) => {
      bytes[n * 8] = suffix;
      const d = createHash("md5").update(bytes).digest();
      const dv = new DataView(d.buffer, d.byteOffset, d.byteLength);
      return [dv.getBigUint64(0, true), dv.getBigUint64(8, true)];
    };
    const [a, s] = digest(1);
    const [x0, x1] = digest(2);
    return new OCamlRandomState(a, s, x0, x1);
  }

  /** The four state words, as signed int64 (as OCaml prints them). */
  words(): [bigint, bigint, bigint, bigint] {
    return [this.#a, this.#s, this.#x0, this.#x1].map((w) => BigInt.asIntN(64, w)) as [
      bigint,
      bigint,
      bigint,
      bigint,
    ];
  }

  /** The next 64 random bits (`caml_lxm_next`), unsigned. */
  next(): bigint {
    let z = (this.#s + this.#x0) & MASK64;
    z = ((z ^ (z >> 32n)) * MIX) & MASK64;
    z = ((z ^ (z >> 32n)) * MIX) & MASK64;
    z = z ^ (z >> 32n);
    this.#s = (this.#s * LCG_M + this.#a) & MASK64;
    let q0 = this.#x0, q1 = this.#x1;
    q1 ^= q0;
    q0 = rotl(q0, 24n);
    q0 = q0 ^ q1 ^ ((q1 << 16n) & MASK64);
    q1 = rotl(q1, 37n);
    this.#x0 = q0;
    this.#x1 = q1;
    return z;
  }

  /** `Random.State.bits64`: the next 64 bits as a signed int64. */
  bits64(): bigint {
    return BigInt.asIntN(64, this.next());
  }

  /** `Random.State.bits`: 30 random bits, 0 ≤ x < 2^30. */
  bits(): number {
    return Number(this.next() & 0x3fffffffn);
  }

  /** `Random.State.int bound` for 0 < bound ≤ 2^30 − 1 (rejection sampling, as OCaml does). */
  int(bound: number): number {
    if (!(Number.isInteger(bound) && bound > 0 && bound <= 0x3fffffff)) {
      throw new RangeError("Random.int");
    }
    for (;;) {
      const r = this.bits();
      const v = r % bound;
      if (!(r - v > 0x3fffffff - bound + 1)) return v;
    }
  }
}
