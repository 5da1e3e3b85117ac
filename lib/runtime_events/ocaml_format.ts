/**
 * OCaml's text conventions needed to print events as OCaml programs do:
 * `%S` string literals and `%h` hexadecimal floats.
 *
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
