/**
 * The text format of the RNG reference files (../shared/fixtures/rng/*.txt), produced from
 * {@link MemprofRng}, plus a C-compatible `%.17g` formatter for the header's doubles.
 *
 * Format (one line each, "\n"-terminated):
 * 1. `domain <id> lambda <%.17g> one_log1m_lambda <%.17g>`;
 * 2. `geom` and `count` raw `rand_geom` values from a freshly seeded domain — or, when
 *    one_log1m_lambda is −inf, `sampling off (min lambda)` and nothing more;
 * 3. `binom` and `LEN:SAMPLES` per length, from a second freshly seeded domain after `rand_init`,
 *    calling `rand_binom` successively on the same state.
 *
 * @module
 */

import { geomToBigInt, isMinLambda, MemprofRng, oneLog1mLambda, type RngBackend } from "./rng.ts";

/** The binom lengths the reference files use, in order (fixtures README). */
export const DEFAULT_BINOM_LENGTHS: readonly number[] = Object.freeze([
  1,
  2,
  3,
  7,
  16,
  100,
  256,
  1000,
  5000,
  100000,
  1,
  1,
  1,
  1000000,
]);

/** Default number of geom values (as in the reference files). */
export const DEFAULT_GEOM_COUNT = 200;

const f64 = new Float64Array(1);
const u32 = new Uint32Array(f64.buffer); // little-endian hosts: [low, high]

/**
 * C's `printf("%.<precision>g", x)` as glibc prints it: the exact binary value rounded to
 * `precision` significant digits, ties to even; `%e` style when the decimal exponent is < −4 or
 * ≥ precision, else `%f` style; trailing zeros and a bare point removed; "inf", "-inf", "nan".
 */
export function formatG(x: number, precision = 17): string {
  if (!Number.isInteger(precision) || precision < 1) {
    throw new RangeError(`precision must be a positive integer, got ${precision}`);
  }
  if (Number.isNaN(x)) return "nan";
  if (x === Infinity) return "inf";
  if (x === -Infinity) return "-inf";
  const sign = x < 0 || Object.is(x, -0) ? "-" : "";
  if (x === 0) return sign + "0";

  // Exact decimal expansion: |x| = m · 2^e = D · 10^-k.
  f64[0] = Math.abs(x);
  const hi = u32[1], lo = u32[0];
  const biased = hi >>> 20;
  let m = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  let e: number;
  if (biased === 0) {
    e = -1074; // subnormal
  } else {
    m |= 1n << 52n;
    e = biased - 1075;
  }
  let digits: string;
  let k: number;
  if (e >= 0) {
    digits = (m << BigInt(e)).toString();
    k = 0;
  } else {
    digits = (m * 5n ** BigInt(-e)).toString();
    k = -e;
  }
  // Decimal exponent of the leading digit.
  let exp10 = digits.length - 1 - k;

  // Round to `precision` significant digits, half to even, on the exact digits.
  if (digits.length > precision) {
    let head = BigInt(digits.slice(0, precision));
    const first = digits.charCodeAt(precision) - 48;
    const restNonZero = /[1-9]/.test(digits.slice(precision + 1));
    if (first > 5 || (first === 5 && (restNonZero || (head & 1n) === 1n))) head++;
    let s = head.toString();
    if (s.length > precision) { // carried into a new digit (999… → 1000…)
      s = s.slice(0, precision);
      exp10++;
    }
    digits = s;
  } else {
    digits = digits.padEnd(precision, "0");
  }

  if (exp10 < -4 || exp10 >= precision) {
    const frac = digits.slice(1).replace(/0+$/, "");
    const ae = Math.abs(exp10);
    return sign + digits[0] + (frac ? "." + frac : "") + "e" + (exp10 < 0 ? "-" : "+") +
      (ae < 10 ? "0" : "") + ae;
  }
  let int: string, frac: string;
  if (exp10 >= 0) {
    int = digits.slice(0, exp10 + 1);
    frac = digits.slice(exp10 + 1);
  } else {
    int = "0";
    frac = "0".repeat(-exp10 - 1) + digits;
  }
  frac = frac.replace(/0+$/, "");
  return sign + int + (frac ? "." + frac : "");
}

/** Options for {@link writeRngReference} / {@link formatRngReference}. */
export interface RngReferenceOptions {
  /** Batch kernel for the generators (default "auto"). */
  backend?: RngBackend;
}

/** `%lu` of a geom value. */
function geomText(g: number): string {
  return g <= Number.MAX_SAFE_INTEGER ? String(g) : geomToBigInt(g).toString();
}

/**
 * Streams the reference text for (domain, lambda) in chunks (each a whole line or a part of the
 * geom/binom line), so very long outputs need not be held in memory.
 *
 * @param domainId domain id (non-negative integer below 2^64)
 * @param lambda sampling rate in [0, 1]
 * @param count number of geom values
 * @param lengths binom block lengths (integers in [0, Max_long))
 * @param write receives the text
 */
export function writeRngReference(
  domainId: number | bigint,
  lambda: number,
  count: number,
  lengths: readonly (number | bigint)[],
  write: (chunk: string) => void,
  options: RngReferenceOptions = {},
): void {
  const id = BigInt(domainId);
  if (id < 0n || id >= 1n << 64n) throw new RangeError(`domain id out of range: ${domainId}`);
  if (!(Number.isSafeInteger(count) && count >= 0)) {
    throw new RangeError(`count must be a non-negative integer, got ${count}`);
  }
  const o = oneLog1mLambda(lambda);
  write(`domain ${id} lambda ${formatG(lambda)} one_log1m_lambda ${formatG(o)}\n`);
  if (isMinLambda(o)) {
    write("sampling off (min lambda)\n");
    return;
  }
  const backend = options.backend ?? "auto";

  const g = new MemprofRng(id, undefined, { backend });
  const CHUNK = 4096;
  let line = "geom";
  for (let i = 0; i < count; i++) {
    line += " " + geomText(g.geom(o));
    if ((i + 1) % CHUNK === 0) {
      write(line);
      line = "";
    }
  }
  write(line + "\n");

  const b = new MemprofRng(id, o, { backend });
  line = "binom";
  for (const len of lengths) line += ` ${len}:${b.binom(len, o)}`;
  write(line + "\n");
}

/**
 * The reference file text for (domain, lambda): byte for byte what the C reference generator
 * prints (see the module doc). `lengths` defaults to {@link DEFAULT_BINOM_LENGTHS}.
 */
export function formatRngReference(
  domainId: number | bigint,
  lambda: number,
  count: number = DEFAULT_GEOM_COUNT,
  lengths: readonly (number | bigint)[] = DEFAULT_BINOM_LENGTHS,
  options: RngReferenceOptions = {},
): string {
  const parts: string[] = [];
  writeRngReference(domainId, lambda, count, lengths, (c) => parts.push(c), options);
  return parts.join("");
}
