/**
 * OCaml's `String.compare` on strings that lib/memtrace decoded from UTF-8: OCaml compares the
 * bytes, which for UTF-8 is the order of code points. JavaScript's `<` compares UTF-16 code
 * units, which puts U+E000–U+FFFF after the surrogate pairs of U+10000 and above; we shift the
 * code units so that they compare in code-point order.
 * @module
 */

/** Code unit → a key that sorts in code-point order (surrogates above U+E000–U+FFFF). */
function key(c: number): number {
  if (c < 0xd800) return c;
  if (c < 0xe000) return c + 0x2000; // surrogates: code points ≥ U+10000
  return c - 0x800; // U+E000–U+FFFF
}

/** `String.compare a b` on the UTF-8 bytes of `a` and `b`: negative, zero or positive. */
export function compareOCamlStrings(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i), y = b.charCodeAt(i);
    if (x !== y) return key(x) - key(y);
  }
  return a.length - b.length;
}
