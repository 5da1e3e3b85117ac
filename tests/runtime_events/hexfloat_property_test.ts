// Property: OCaml's %h text of any double denotes exactly that double.
import fc from "fast-check";
import { assertEquals } from "./assert.ts";
import { ocamlHexFloat } from "../../lib/util/ocaml_printf.ts";

/** Exact value of `[-]0x<d>[.<hex>]p<e>` as the bits of the double it denotes. */
function parseHex(s: string): bigint {
  const m = /^(-?)0x([01])(?:\.([0-9a-f]+))?p([+-]\d+)$/.exec(s);
  if (!m) throw new Error(`not a hex float: ${s}`);
  const frac = (m[3] ?? "").padEnd(13, "0");
  if (frac.length !== 13) throw new Error(`too many digits: ${s}`);
  const mant = BigInt("0x" + frac);
  const exp = Number(m[4]);
  const sign = m[1] ? 1n << 63n : 0n;
  if (m[2] === "0") return sign | mant; // zero or subnormal (exponent printed as -1022 or 0)
  return sign | (BigInt(exp + 1023) << 52n) | mant;
}

Deno.test("ocamlHexFloat: the printed mantissa and exponent are exact", () => {
  const bits = new BigUint64Array(1);
  const f = new Float64Array(bits.buffer);
  fc.assert(
    fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (x) => {
      f[0] = x;
      assertEquals(parseHex(ocamlHexFloat(x)), bits[0]);
    }),
    { seed: 42, numRuns: 5000 },
  );
});
