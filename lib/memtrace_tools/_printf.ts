/**
 * The float conversions memtrace's tools print with — OCaml's `Printf` `%<w>.<p>f` and
 * `%<w>.<p>e` — exactly as glibc's printf renders them: the exact binary value rounded to the
 * requested digits, ties to even. (JavaScript's `toFixed`/`toExponential` round ties away from
 * zero, which shows on values such as 0.5 or 2.5.)
 *
 * OCaml passes `%.<p>f` to the C library without the width and pads the result itself, on the
 * left with spaces; so do we. Infinities print `inf`/`-inf`. Every NaN these tools can meet
 * comes from an invalid operation (0/0, ∞·0) on amd64, which yields the default NaN with its sign
 * bit set, printed by glibc as `-nan`: that is what we print for NaN.
 * @module
 */

const f64 = new Float64Array(1);
const u32 = new Uint32Array(f64.buffer); // little-endian hosts: [low, high]

/** |x| = m · 2^e with m an integer (x finite, non-zero). */
function decompose(x: number): { m: bigint; e: number } {
  f64[0] = Math.abs(x);
  const hi = u32[1], lo = u32[0];
  const biased = hi >>> 20;
  let m = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  if (biased === 0) return { m, e: -1074 };
  m |= 1n << 52n;
  return { m, e: biased - 1075 };
}

function special(x: number): string | undefined {
  if (Number.isNaN(x)) return "-nan";
  if (x === Infinity) return "inf";
  if (x === -Infinity) return "-inf";
  return undefined;
}

function sign(x: number): string {
  return x < 0 || Object.is(x, -0) ? "-" : "";
}

function pad(s: string, width: number): string {
  return s.length >= width ? s : " ".repeat(width - s.length) + s;
}

/** `num / den` rounded to the nearest integer, ties to even. */
function divRoundEven(num: bigint, den: bigint): bigint {
  const q = num / den;
  const r2 = (num % den) * 2n;
  return r2 > den || (r2 === den && (q & 1n) === 1n) ? q + 1n : q;
}

/** OCaml's `Printf.sprintf "%<width>.<prec>f" x`. */
export function printfF(x: number, prec: number, width = 0): string {
  const sp = special(x);
  if (sp !== undefined) return pad(sp, width);
  let n: bigint; // round(|x| · 10^prec)
  if (x === 0) n = 0n;
  else {
    const { m, e } = decompose(x);
    const scale = 10n ** BigInt(prec);
    n = e >= 0 ? (m << BigInt(e)) * scale : divRoundEven(m * scale, 1n << BigInt(-e));
  }
  let digits = n.toString();
  if (digits.length <= prec) digits = "0".repeat(prec + 1 - digits.length) + digits;
  const int = digits.slice(0, digits.length - prec);
  const frac = digits.slice(digits.length - prec);
  return pad(sign(x) + int + (prec > 0 ? "." + frac : ""), width);
}

/** OCaml's `Printf.sprintf "%<width>.<prec>e" x` (at least two exponent digits, as glibc). */
export function printfE(x: number, prec: number, width = 0): string {
  const sp = special(x);
  if (sp !== undefined) return pad(sp, width);
  let digits: string;
  let exp10: number;
  if (x === 0) {
    digits = "0".repeat(prec + 1);
    exp10 = 0;
  } else {
    // Exact decimal expansion |x| = D · 10^-k, then D rounded to prec + 1 digits.
    const { m, e } = decompose(x);
    const all = e >= 0 ? (m << BigInt(e)).toString() : (m * 5n ** BigInt(-e)).toString();
    const k = e >= 0 ? 0 : -e;
    exp10 = all.length - 1 - k;
    const want = prec + 1;
    if (all.length > want) {
      let head = divRoundEven(BigInt(all), 10n ** BigInt(all.length - want)).toString();
      if (head.length > want) { // 9.99… rounded up to 10.0…
        head = head.slice(0, want);
        exp10++;
      }
      digits = head;
    } else {
      digits = all.padEnd(want, "0");
    }
  }
  const ae = Math.abs(exp10);
  const mant = digits[0] + (prec > 0 ? "." + digits.slice(1) : "");
  return pad(
    `${sign(x)}${mant}e${exp10 < 0 ? "-" : "+"}${ae < 10 ? "0" : ""}${ae}`,
    width,
  );
}

/** OCaml's `Printf "%x"` of a native int: negative values print as their 63-bit two's
 * complement, as on 64-bit OCaml. */
export function printfHex(n: number): string {
  if (n >= 0) return n.toString(16);
  return BigInt.asUintN(63, BigInt(n)).toString(16);
}
