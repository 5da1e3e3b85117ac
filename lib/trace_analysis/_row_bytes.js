// @ts-check
/**
 * The report page's rows as bytes: the cube's five columns (class, allocation, end and
 * promotion buckets, samples; `ProfileRows`) one after the other, little-endian, each in the
 * narrowest of 1, 2 or 4 bytes an unsigned integer that holds its largest value (8: a double,
 * for samples past 2^32), each starting at a multiple of 8 bytes. The page reads them as typed
 * arrays over the inflated bytes, without a JSON parse or a loop over the rows (rows as JSON
 * numbers cost the browser about 0.6 µs a row to inflate, parse and unpack). Plain JavaScript
 * with no imports: the HTML report inlines it, the command line imports it.
 * @module
 */

/** The row columns, in their order in the bytes. */
const ROW_COLUMNS = ["cls", "a", "e", "p", "samples"];

/**
 * The bytes of rows (columns of equal length of non-negative integers; the buckets below 256),
 * and each column's width in bytes (to give to {@linkcode decodeRowBytes}).
 * @param {{cls: ArrayLike<number>, a: ArrayLike<number>, e: ArrayLike<number>, p: ArrayLike<number>, samples: ArrayLike<number>}} rows
 * @returns {{bytes: Uint8Array, widths: number[]}}
 */
export function encodeRowBytes(rows) {
  const n = rows.cls.length;
  /** @type {number[]} */
  const widths = [];
  let size = 0;
  for (const name of ROW_COLUMNS) {
    const col = rows[/** @type {"cls"} */ (name)];
    if (col.length !== n) throw new Error(`row column ${name} has ${col.length} values, not ${n}`);
    let max = 0;
    for (let j = 0; j < n; j++) {
      const v = col[j];
      if (!(Number.isSafeInteger(v) && v >= 0)) {
        throw new Error(`row column ${name}[${j}] is ${v}, not a non-negative integer`);
      }
      if (v > max) max = v;
    }
    const w = max < 2 ** 8 ? 1 : max < 2 ** 16 ? 2 : max < 2 ** 32 ? 4 : 8;
    if (w > 1 && name !== "cls" && name !== "samples") {
      throw new Error(`row column ${name} holds ${max}, not a bucket`);
    }
    widths.push(w);
    size += Math.ceil((n * w) / 8) * 8;
  }
  const bytes = new Uint8Array(size);
  const view = new DataView(bytes.buffer);
  let at = 0;
  ROW_COLUMNS.forEach((name, c) => {
    const col = rows[/** @type {"cls"} */ (name)], w = widths[c];
    for (let j = 0; j < n; j++, at += w) {
      if (w === 1) view.setUint8(at, col[j]);
      else if (w === 2) view.setUint16(at, col[j], true);
      else if (w === 4) view.setUint32(at, col[j], true);
      else view.setFloat64(at, col[j], true);
    }
    at = Math.ceil(at / 8) * 8;
  });
  return { bytes, widths };
}

/** Whether this machine stores numbers little-endian (typed arrays use its order). */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * The rows of {@linkcode encodeRowBytes}'s bytes: `count` rows of columns `widths` bytes wide,
 * as typed arrays over `buffer` (copied on a big-endian machine).
 * @param {ArrayBuffer} buffer
 * @param {number} count
 * @param {number[]} widths
 * @returns {{cls: ArrayLike<number>, a: ArrayLike<number>, e: ArrayLike<number>, p: ArrayLike<number>, samples: ArrayLike<number>}}
 */
export function decodeRowBytes(buffer, count, widths) {
  if (!(Number.isSafeInteger(count) && count >= 0)) throw new Error(`row count ${count}`);
  if (widths.length !== ROW_COLUMNS.length) throw new Error(`row widths ${widths}`);
  /** @type {ArrayLike<number>[]} */
  const cols = [];
  let at = 0;
  const view = new DataView(buffer);
  for (let c = 0; c < ROW_COLUMNS.length; c++) {
    const w = widths[c];
    if (![1, 2, 4, 8].includes(w)) throw new Error(`row width ${w}`);
    if (at + count * w > buffer.byteLength) {
      throw new Error(`row bytes end inside column ${ROW_COLUMNS[c]} (byte ${buffer.byteLength})`);
    }
    const Type = w === 1
      ? Uint8Array
      : w === 2
      ? Uint16Array
      : w === 4
      ? Uint32Array
      : Float64Array;
    if (LITTLE_ENDIAN || w === 1) cols.push(new Type(buffer, at, count));
    else {
      const col = new Type(count);
      for (let j = 0; j < count; j++) {
        col[j] = w === 2
          ? view.getUint16(at + j * w, true)
          : w === 4
          ? view.getUint32(at + j * w, true)
          : view.getFloat64(at + j * w, true);
      }
      cols.push(col);
    }
    at += Math.ceil((count * w) / 8) * 8;
  }
  if (at !== buffer.byteLength) {
    throw new Error(`row bytes hold ${buffer.byteLength - at} bytes after ${count} rows`);
  }
  const [cls, a, e, p, samples] = cols;
  return { cls, a, e, p, samples };
}
