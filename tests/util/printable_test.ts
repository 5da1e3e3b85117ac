// lib/util's printable: the one escape of names printed as text (issue 23).
import assert from "node:assert/strict";
import { printable, printableLines } from "../../lib/util/printable.ts";

Deno.test("printable escapes C0, DEL and C1 as \\xNN, and what `also` names; leaves the rest", () => {
  assert.equal(printable("Stdlib__Map.Make(Ord).add"), "Stdlib__Map.Make(Ord).add");
  assert.equal(printable("é ü 日本 😀 \\ x"), "é ü 日本 😀 \\ x");
  assert.equal(
    printable("a\x1b[31mb\nc\rd\x00e\x7ff\x9bg\x80"),
    "a\\x1b[31mb\\x0ac\\x0dd\\x00e\\x7ff\\x9bg\\x80",
  );
  assert.equal(printable("a;b c", { also: ";" }), "a\\x3bb c");
  assert.equal(printable("a;b"), "a;b");
});

Deno.test("printable bounds its result, never cutting an escape or a surrogate pair", () => {
  assert.equal(printable("abcdef", { maxChars: 6 }), "abcdef");
  assert.equal(printable("abcdefgh", { maxChars: 6 }), "abcdef…[+2 chars]");
  // "ab" then an escape of 4 characters that would cross the bound: cut before it.
  assert.equal(printable("ab\x1bcd", { maxChars: 4 }), "ab…[+6 chars]");
  assert.equal(printable("a😀b", { maxChars: 2 }), "a…[+3 chars]");
  const long = printable("\x1b".repeat(10_000), { maxChars: 1024 });
  assert.ok(long.startsWith("\\x1b".repeat(256) + "…[+"), long.slice(0, 40));
  assert.ok(long.length < 1050);
});

Deno.test("printableLines keeps newlines and tabs and escapes every other control character", () => {
  assert.equal(printableLines("a\tb\nc"), "a\tb\nc");
  assert.equal(printableLines("x\x1b[2Jy\r\n\u009b\x7f"), "x\\x1b[2Jy\\x0d\n\\x9b\\x7f");
  const plain = "no control here: é ☃";
  assert.equal(printableLines(plain), plain);
});
