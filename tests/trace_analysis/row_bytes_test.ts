// The report page's rows as bytes (lib/trace_analysis/_row_bytes.js): they read back as they
// were, in the narrowest widths, and bad bytes are refused with the place they go wrong.
import assert from "node:assert/strict";
import fc from "fast-check";
import { decodeRowBytes, encodeRowBytes } from "../../lib/trace_analysis/_row_bytes.js";

const plain = (r: Record<string, ArrayLike<number>>) =>
  Object.fromEntries(Object.entries(r).map(([k, v]) => [k, Array.from(v)]));

Deno.test("rows read back from their bytes as they were", () => {
  const bucket = fc.integer({ min: 0, max: 255 });
  const row = fc.tuple(
    fc.oneof(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 0, max: 2 ** 20 })),
    bucket,
    bucket,
    bucket,
    fc.oneof(fc.integer({ min: 0, max: 70_000 }), fc.maxSafeInteger().map(Math.abs)),
  );
  fc.assert(
    fc.property(fc.array(row, { maxLength: 50 }), (rs) => {
      const rows = {
        cls: rs.map((r) => r[0]),
        a: rs.map((r) => r[1]),
        e: rs.map((r) => r[2]),
        p: rs.map((r) => r[3]),
        samples: rs.map((r) => r[4]),
      };
      const { bytes, widths } = encodeRowBytes(rows);
      assert.equal(bytes.length % 8, 0);
      assert.deepEqual(plain(decodeRowBytes(bytes.slice().buffer, rs.length, widths)), rows);
    }),
    { seed: 29, numRuns: 300 },
  );
});

Deno.test("each column takes the narrowest width that holds its largest value", () => {
  const rows = { cls: [0, 255], a: [0, 1], e: [255, 0], p: [0, 0], samples: [1, 2 ** 32] };
  assert.deepEqual(encodeRowBytes(rows).widths, [1, 1, 1, 1, 8]);
  assert.deepEqual(encodeRowBytes({ ...rows, cls: [256, 0], samples: [65_536, 0] }).widths, [
    2,
    1,
    1,
    1,
    4,
  ]);
  // 2 rows: 5 columns of 8 bytes (padded), the samples of doubles 16.
  assert.equal(encodeRowBytes(rows).bytes.length, 4 * 8 + 16);
});

Deno.test("rows that are not counts, and bytes that are not rows, are refused", () => {
  const rows = { cls: [0], a: [0], e: [0], p: [0], samples: [1] };
  assert.throws(() => encodeRowBytes({ ...rows, samples: [-1] }), /samples\[0\] is -1/);
  assert.throws(() => encodeRowBytes({ ...rows, samples: [0.5] }), /samples\[0\] is 0.5/);
  assert.throws(() => encodeRowBytes({ ...rows, e: [256] }), /column e holds 256, not a bucket/);
  assert.throws(() => encodeRowBytes({ ...rows, p: [0, 0] }), /column p has 2 values, not 1/);
  // Columns are padded to 8 bytes: the count (the page's JSON gives it) is checked to a column's
  // padding, so 9 rows, not 2, overrun this one-row column.
  const { bytes, widths } = encodeRowBytes(rows);
  assert.throws(
    () => decodeRowBytes(bytes.slice().buffer, 9, widths),
    /end inside column e \(byte 40\)/,
  );
  assert.throws(
    () => decodeRowBytes(bytes.slice().buffer, 0, widths),
    /hold 40 bytes after 0 rows/,
  );
  assert.throws(() => decodeRowBytes(bytes.slice().buffer, 1, [1, 1, 1, 3, 1]), /row width 3/);
  assert.throws(() => decodeRowBytes(bytes.slice().buffer, -1, widths), /row count -1/);
});
