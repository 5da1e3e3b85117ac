/**
 * OCaml's printf conversions that memprof-lab's text outputs need, shared by every module:
 * `%S` string literals, `%h` hexadecimal floats, and C's `%.<n>g` (which OCaml's `%g` is).
 * @module
 */

const encoder = new TextEncoder();

/**
 * Quotes bytes as OCaml's `Printf "%S"` (`String.escaped` between double
 * quotes): printable ASCII as is, `\"`, `\\`, `\n`, `\t`, `\r`, `\b`, and
 * every other byte as a three-digit decimal escape.
 */
export function ocamlQuote(s: Uint8Array | string): string {
  const bytes = typeof s === "string" ? encoder.encode(s) : s;
  let out = '"';
  for (const b of bytes) {
    switch (b) {
      case 0x22:
        out += '\\"';
        break;
      case 0x5c:
        out += "\\\\";
        break;
      case 0x0a:
        out += "\\n";
        break;
      case 0x09:
        out += "\\t";
        break;
      case 0x0d:
        out += "\\r";
        break;
      case 0x08:
        out += "\\b";
        break;
      default:
        if (b >= 0x20 && b <= 0x7e) out += String.fromCharCode(b);
        else out += "\\" + b.toString().padStart(3, "0");
    }
  }
  return out + '"';
}

const f64 = new Float64Array(1);
const u64 = new BigUint64Array(f64.buffer);

/**
 * Formats a float as OCaml's `Printf "%h"`: shortest exact hexadecimal
 * mantissa, e.g. `0x1.ap+1` for 3.25, `-0x0p+0`, `0x1p-1074`, `infinity`, `nan`.
 */
export function ocamlHexFloat(x: number): string {
  f64[0] = x;
  const bits = u64[0];
  const sign = bits >> 63n ? "-" : "";
  const exp = Number((bits >> 52n) & 0x7ffn);
  let m = bits & ((1n << 52n) - 1n);
  if (exp === 0x7ff) return sign + (m === 0n ? "infinity" : "nan");
  let e: number;
  let lead: string;
  if (exp === 0) {
    e = m === 0n ? 0 : -1022;
    lead = "0";
  } else {
    e = exp - 1023;
    lead = "1";
  }
  let frac = "";
  while (m !== 0n) {
    frac += Number(m >> 48n).toString(16);
    m = (m << 4n) & ((1n << 52n) - 1n);
  }
  return `${sign}0x${lead}${frac ? "." + frac : ""}p${e >= 0 ? "+" : ""}${e}`;
}

const g64 = new Float64Array(1);
const g32 = new Uint32Array(g64.buffer); // little-endian hosts: [low, high]

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
  g64[0] = Math.abs(x);
  const hi = g32[1], lo = g32[0];
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

/** The shortest `%.<n>g` (n ≤ 17) that reads back as `x`. */
export function shortestG(x: number): string {
  for (let p = 1; p < 17; p++) {
    const s = formatG(x, p);
    if (Number(s) === x) return s;
  }
  return formatG(x, 17);
}
