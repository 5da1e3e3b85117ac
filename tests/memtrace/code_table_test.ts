import assert from "node:assert/strict";
import { CodeTable } from "../../lib/memtrace/_code_table.ts";

/** A deterministic generator of 32-bit values (xorshift32). */
function rng(seed: number): () => number {
  let x = seed | 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return x >>> 0;
  };
}

/** Adds `n` codes to a table and a Map side by side (a fraction `dupRate` of them codes added
 * before), looking codes up now and then, and checks every answer against the Map's. */
function check(seed: number, n: number, dupRate: number, lookupEvery: number): void {
  const next = rng(seed);
  const t = new CodeTable();
  const m = new Map<number, number>();
  const codes: number[] = [];
  for (let i = 0; i < n; i++) {
    let code: number;
    if (codes.length > 0 && next() / 2 ** 32 < dupRate) code = codes[next() % codes.length];
    else {
      // Return-address-like codes beyond 2^31, and some small or negative ones.
      const r = next() % 8;
      code = r === 0
        ? -(next() % 1000) - 1
        : r === 1
        ? next() % 64
        : 0x2adbf7000000 + (next() % 0x1000000) * 4;
    }
    const lo = code | 0, hi = Math.floor(code / 4294967296) | 0;
    const expected = m.get(code);
    const got = t.getOrAdd(lo, hi);
    if (expected === undefined) {
      assert.equal(got, -1, `code ${code} is new (step ${i})`);
      m.set(code, m.size);
      codes.push(code);
    } else assert.equal(got, expected, `code ${code} was added as number ${expected} (step ${i})`);
    assert.equal(t.size, m.size);
    if (lookupEvery > 0 && i % lookupEvery === 0) {
      const probe = codes[next() % codes.length];
      assert.equal(t.get(probe), m.get(probe));
      assert.equal(t.get(probe + 1e15), m.get(probe + 1e15) ?? -1);
    }
  }
  for (const [code, number] of m) assert.equal(t.get(code), number);
  assert.equal(t.get(123456789012), m.get(123456789012) ?? -1);
}

Deno.test("a code table numbers codes as a Map would: few duplicates, no lookups", () => {
  // The filter's path alone, then one lookup at the end (the index brought up to date at once).
  check(1, 3000, 0.001, 0);
});

Deno.test("a code table numbers codes as a Map would: many duplicates (scans, then syncs)", () => {
  check(2, 5000, 0.3, 0);
  check(3, 20000, 0.9, 0);
});

Deno.test("a code table numbers codes as a Map would: lookups between additions", () => {
  check(4, 5000, 0.05, 7);
  check(5, 3000, 0.5, 1);
});

Deno.test("a code table numbers codes as a Map would past the filter's capacity", () => {
  // Beyond 8,192 codes every code is indexed as it comes; the slots grow past 4,096 too.
  check(6, 30000, 0.02, 0);
  check(7, 30000, 0.2, 101);
});
