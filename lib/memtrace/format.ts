/**
 * OCaml printf conversions needed to print traces exactly as OCaml programs do: `%S` string
 * literals, `%h` hexadecimal floats, and the shortest `%.Ng` that reads back to the same float.
 * @module
 */
import { encodeString } from "./buf.ts";

/** OCaml's `%S`: a quoted literal with OCaml escapes (bytes outside ASCII as `\ddd`). */
export function ocamlQuoted(s: string): string {
  const bytes = encodeString(s);
  let out = '"';
  for (const c of bytes) {
    if (c === 0x22) out += '\\"';
    else if (c === 0x5c) out += "\\\\";
    else if (c === 0x0a) out += "\\n";
    else if (c === 0x09) out += "\\t";
    else if (c === 0x0d) out += "\\r";
    else if (c === 0x08) out += "\\b";
    else if (c >= 0x20 && c <= 0x7e) out += String.fromCharCode(c);
    else out += "\\" + String(c).padStart(3, "0");
  }
  return out + '"';
}

const f64 = new Float64Array(1);
const u32 = new Uint32Array(f64.buffer);

/** OCaml's `%h`: e.g. `0x1.47ae147ae147bp-7`, `0x1p+0`, `-0x0p+0`. */
export function hexFloat(x: number): string {
  if (Number.isNaN(x)) return "nan";
  if (x === Infinity) return "infinity";
  if (x === -Infinity) return "-infinity";
  f64[0] = x;
  const lo = u32[0], hi = u32[1];
  const sign = hi >>> 31 ? "-" : "";
  let exp = (hi >>> 20) & 0x7ff;
  // 52 mantissa bits as 13 hex digits.
  let mant = (hi & 0xfffff).toString(16).padStart(5, "0") + lo.toString(16).padStart(8, "0");
  let lead = "1";
  if (exp === 0) {
    if (hi === (hi & 0x80000000) && lo === 0) return `${sign}0x0p+0`;
    lead = "0";
    exp = -1022;
  } else exp -= 1023;
  mant = mant.replace(/0+$/, "");
  return `${sign}0x${lead}${mant ? "." + mant : ""}p${exp >= 0 ? "+" : ""}${exp}`;
}

/** C's `%.<precision>g`. */
export function formatG(x: number, precision: number): string {
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x < 0 ? "-inf" : "inf";
  if (x === 0) return Object.is(x, -0) ? "-0" : "0";
  const p = Math.max(1, precision);
  const expForm = x.toExponential(p - 1);
  const e = Number(expForm.slice(expForm.indexOf("e") + 1));
  if (e < -4 || e >= p) {
    let [m, ex] = expForm.split("e");
    if (m.includes(".")) m = m.replace(/0+$/, "").replace(/\.$/, "");
    const n = Number(ex);
    return `${m}e${n < 0 ? "-" : "+"}${String(Math.abs(n)).padStart(2, "0")}`;
  }
  let s = x.toFixed(p - 1 - e);
  if (s.includes(".")) s = s.replace(/0+$/, "").replace(/\.$/, "");
  return s;
}

/** The shortest `%.Ng` (N ≤ 17) that reads back as `x`. */
export function shortestG(x: number): string {
  for (let p = 1; p < 17; p++) {
    const s = formatG(x, p);
    if (Number(s) === x) return s;
  }
  return formatG(x, 17);
}
