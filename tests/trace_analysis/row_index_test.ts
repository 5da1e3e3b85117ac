// lib/trace_analysis/_row_index.ts against a Map, through its growth, with keys that collide.
import assert from "node:assert/strict";
import { RowIndex } from "../../lib/trace_analysis/_row_index.ts";
import { mulberry32 } from "../prng.ts";

Deno.test("RowIndex finds every row added, and no other, as it grows", () => {
  const rnd = mulberry32(29);
  const cls = new Int32Array(50_000), cell = new Int32Array(50_000);
  const want = new Map<string, number>();
  const index = new RowIndex(4);
  let rows = 0;
  for (let k = 0; k < 80_000; k++) {
    // Few classes and cells: many repeated keys, many sharing one class or one cell.
    const c = Math.floor(rnd() * 500), e = Math.floor(rnd() * 2 ** 24) % 301;
    const got = index.get(c, e, cls, cell);
    const expected = want.get(`${c},${e}`);
    assert.equal(got, expected ?? -1);
    if (expected === undefined && rows < cls.length) {
      cls[rows] = c;
      cell[rows] = e;
      index.add(c, e, rows, cls, cell);
      want.set(`${c},${e}`, rows++);
    }
  }
  assert.ok(rows > 40_000, `${rows} rows`);
  for (const [key, row] of want) {
    const [c, e] = key.split(",").map(Number);
    assert.equal(index.get(c, e, cls, cell), row);
  }
  assert.equal(index.get(500, 0, cls, cell), -1);
  assert.equal(index.get(0, 301, cls, cell), -1);
});
