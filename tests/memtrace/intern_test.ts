// decodeString (lib/memtrace/buf.ts): names are interned in a two-way table whose bytes live in
// one arena, emptied when full. Whatever the table holds, a decode gives the bytes' text: UTF-8,
// or Latin-1 where the bytes are not valid UTF-8.
import assert from "node:assert/strict";
import { decodeString } from "../../lib/memtrace/buf.ts";
import { Rng } from "../prng.ts";

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** What decodeString must give for `bytes`. */
function expected(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch {
    return Array.from(bytes, (c) => String.fromCharCode(c)).join("");
  }
}

/** A name of `len` bytes: ASCII, UTF-8 or arbitrary bytes. */
function name(rng: Rng, len: number): Uint8Array {
  const kind = rng.int(3);
  if (kind === 0) return Uint8Array.from({ length: len }, () => 0x21 + rng.int(94));
  if (kind === 1) {
    const s = Array.from(
      { length: Math.max(1, len >> 1) },
      () => rng.pick(["é", "ü", "λ", "a", "_"]),
    )
      .join("");
    return new TextEncoder().encode(s);
  }
  return Uint8Array.from({ length: len }, () => rng.int(256));
}

Deno.test("decodeString gives each name's text through evictions and the arena's refills", () => {
  const rng = new Rng(0x1f7e);
  // 8,000 names of 128 to 256 bytes (about 1.5 MB, more than the arena holds), each decoded when
  // first seen and again later, after many others (so after evictions and a refill).
  const names = Array.from({ length: 8000 }, () => name(rng, 128 + rng.int(129)));
  // Each name sits in a buffer at an offset, as in a trace's bytes.
  const at = (bytes: Uint8Array) => {
    const pad = rng.int(8);
    const buf = new Uint8Array(pad + bytes.length + 3);
    buf.set(bytes, pad);
    return { buf, start: pad, end: pad + bytes.length };
  };
  for (let round = 0; round < 3; round++) {
    for (const [i, n] of names.entries()) {
      const { buf, start, end } = at(n);
      assert.equal(decodeString(buf, start, end), expected(n), `round ${round}, name ${i}`);
    }
  }
  // Hot names decoded between cold ones stay right too.
  for (let k = 0; k < 20_000; k++) {
    const n = names[rng.chance(0.5) ? rng.int(16) : rng.int(names.length)];
    const { buf, start, end } = at(n);
    assert.equal(decodeString(buf, start, end), expected(n));
  }
});

Deno.test("decodeString: names longer than the table keeps, and the empty name", () => {
  const rng = new Rng(7);
  for (const len of [257, 1000, 5000]) {
    const n = name(rng, len);
    assert.equal(decodeString(n, 0, n.length), expected(n));
    assert.equal(decodeString(n, 0, n.length), expected(n));
  }
  assert.equal(decodeString(new Uint8Array(4), 2, 2), "");
});
