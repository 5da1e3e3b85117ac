/**
 * Little-endian byte cursors over a Uint8Array: the primitive encodings of the format (8/16/32/64
 * bit integers, floats, NUL-terminated strings and memtrace's vint).
 *
 * 64-bit integers become JS numbers only when they are safe integers; anything else is refused
 * rather than rounded.
 * @module
 */

const TWO32 = 4294967296;
const f64 = new Float64Array(1);
const f64bytes = new Uint8Array(f64.buffer);

const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder("utf-8", { fatal: true });

/** UTF-8 bytes of `s`, with an ASCII fast path. */
export function encodeString(s: string): Uint8Array {
  let ascii = true;
  for (let i = 0; i < s.length; i++) {
    if (s.charCodeAt(i) > 0x7f) {
      ascii = false;
      break;
    }
  }
  if (!ascii) return utf8Encoder.encode(s);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

// Decoded strings, interned by a hash of their bytes: traces repeat the same few hundred filenames
// and function names thousands of times. The table has two ways per set (slots 2k and 2k + 1, the
// more recently used first): in a direct-mapped table two names of one slot evict each other at
// every use, which ocamlopt.ctf's 985 names did for about a tenth of their decodes.
const INTERN_SETS = 8192;
const internHash = new Int32Array(2 * INTERN_SETS);
/** Where each slot's bytes start in the arena, and how many (-1: an empty slot). */
const internOff = new Int32Array(2 * INTERN_SETS);
const internLen = new Int32Array(2 * INTERN_SETS).fill(-1);
const internStr: string[] = new Array(2 * INTERN_SETS).fill("");
/** The interned names' bytes, one after the other (a name is at most 256 bytes): contiguous, so
 * that a lookup reads one array rather than a typed array object per name. When it is full, the
 * table starts again empty. */
const internArena = new Uint8Array(1 << 20);
let internTop = 0;

/** Whether slot `slot` of the intern table holds `b[start, end)` with hash `h`. */
function internedAt(slot: number, h: number, b: Uint8Array, start: number, end: number): boolean {
  const len = internLen[slot];
  if (len !== end - start || internHash[slot] !== h) return false;
  const arena = internArena;
  let k = 0, at = internOff[slot];
  while (k < len && arena[at] === b[start + k]) k++, at++;
  return k === len;
}

/** Puts an entry in the first way of the set at `first`, whose entry moves to the second (the
 * second's goes). */
function internFirst(first: number, h: number, off: number, len: number, str: string): void {
  internHash[first + 1] = internHash[first];
  internOff[first + 1] = internOff[first];
  internLen[first + 1] = internLen[first];
  internStr[first + 1] = internStr[first];
  internHash[first] = h;
  internOff[first] = off;
  internLen[first] = len;
  internStr[first] = str;
}

/** Decodes bytes as UTF-8; bytes that are not valid UTF-8 are taken as Latin-1 so that nothing is
 * lost or replaced. */
export function decodeString(b: Uint8Array, start: number, end: number): string {
  // Hash four bytes at a time; `high` collects the bytes' top bits (non-ASCII).
  let h = Math.imul(end - start, 0x9e3779b1);
  let high = 0;
  let i = start;
  for (; i + 4 <= end; i += 4) {
    const w = readI32(b, i);
    high |= w;
    h = Math.imul(h ^ w, 0x01000193) ^ (h >>> 15);
  }
  for (; i < end; i++) {
    high |= b[i];
    h = Math.imul(h ^ b[i], 0x01000193);
  }
  const ascii = (high & 0x80808080) === 0;
  const first = ((h ^ (h >>> 16)) & (INTERN_SETS - 1)) << 1;
  if (internedAt(first, h, b, start, end)) return internStr[first];
  if (internedAt(first + 1, h, b, start, end)) {
    const str = internStr[first + 1];
    internFirst(first, h, internOff[first + 1], internLen[first + 1], str);
    return str;
  }
  let s: string;
  if (ascii) {
    s = "";
    for (let i = start; i < end; i += 4096) {
      s += String.fromCharCode.apply(null, b.subarray(i, Math.min(end, i + 4096)) as never);
    }
  } else {
    try {
      s = utf8Decoder.decode(b.subarray(start, end));
    } catch {
      s = "";
      for (let i = start; i < end; i++) s += String.fromCharCode(b[i]);
    }
  }
  const len = end - start;
  if (len <= 256) {
    if (internTop + len > internArena.length) {
      internLen.fill(-1);
      internStr.fill("");
      internTop = 0;
    }
    internFirst(first, h, internTop, len, s);
    internArena.set(b.subarray(start, end), internTop);
    internTop += len;
  }
  return s;
}

/** The signed 32-bit little-endian integer at `b[p, p + 4)` (the caller checks the bounds). */
export function readI32(b: Uint8Array, p: number): number {
  return b[p] | (b[p + 1] << 8) | (b[p + 2] << 16) | (b[p + 3] << 24);
}

/** The signed 64-bit little-endian integer at `b[p, p + 8)` as a number (the caller checks the
 * bounds); throws {@linkcode UnsafeInteger} outside ±(2^53−1). */
export function readI64(b: Uint8Array, p: number): number {
  const lo = readI32(b, p) >>> 0;
  const hi = readI32(b, p + 4);
  // Safe integers have hi in [-2^21, 2^21), except -2^53 itself which we refuse too.
  if (hi >= 0x200000 || hi < -0x200000 || (hi === -0x200000 && lo === 0)) {
    throw new UnsafeInteger(p);
  }
  return hi * TWO32 + lo;
}

/** Writes the low 32 bits of `v` little-endian at `b[p, p + 4)` (the caller checks the bounds). */
export function writeI32(b: Uint8Array, p: number, v: number): void {
  b[p] = v;
  b[p + 1] = v >>> 8;
  b[p + 2] = v >>> 16;
  b[p + 3] = v >>> 24;
}

/** Writes memtrace's vint of `v` at `b[p..]` (at most 9 bytes; the caller checks the room) and
 * returns the position after it: the bytes {@linkcode WriteBuf.putVint} writes. */
export function putVintAt(b: Uint8Array, p: number, v: number): number {
  if (v >= 0 && v <= 252) {
    b[p] = v;
    return p + 1;
  }
  if (v >= 0 && v <= 0xffff) {
    b[p] = 253;
    b[p + 1] = v;
    b[p + 2] = v >>> 8;
    return p + 3;
  }
  if (v >= -2147483648 && v <= 2147483647) {
    b[p] = 254;
    writeI32(b, p + 1, v);
    return p + 5;
  }
  b[p] = 255;
  const hi = Math.floor(v / TWO32);
  writeI32(b, p + 1, v - hi * TWO32);
  writeI32(b, p + 5, hi);
  return p + 9;
}

/** Thrown by {@linkcode ReadBuf} when a read runs past the end of its range. */
export class Underflow extends Error {
  constructor(readonly pos: number) {
    super(`Buffer underflow at position ${pos}`);
  }
}

/** Thrown when a 64-bit field holds a value that is not a safe integer. */
export class UnsafeInteger extends Error {
  constructor(readonly pos: number) {
    super(`64-bit value at position ${pos} is outside the safe integer range`);
  }
}

/** Thrown by {@linkcode WriteBuf} when a write does not fit. */
export class Overflow extends Error {
  constructor(readonly pos: number) {
    super(`Buffer overflow at position ${pos}`);
  }
}

/** A write cursor over a fixed buffer. */
export class WriteBuf {
  pos = 0;
  constructor(readonly buf: Uint8Array, public end: number = buf.length) {}

  /** Bytes left before the end. */
  remaining(): number {
    return this.end - this.pos;
  }

  /** Starts over at position 0. */
  reset(): void {
    this.pos = 0;
  }

  put8(v: number): void {
    const p = this.pos;
    if (p + 1 > this.end) throw new Overflow(p);
    this.buf[p] = v;
    this.pos = p + 1;
  }

  put16(v: number): void {
    const p = this.pos;
    if (p + 2 > this.end) throw new Overflow(p);
    this.update16(p, v);
    this.pos = p + 2;
  }

  put32(v: number): void {
    const p = this.pos;
    if (p + 4 > this.end) throw new Overflow(p);
    writeI32(this.buf, p, v);
    this.pos = p + 4;
  }

  /** Writes a safe integer (negative ones in two's complement) as 64 bits. */
  put64(v: number): void {
    const hi = Math.floor(v / TWO32);
    const lo = v - hi * TWO32;
    this.put32(lo);
    this.put32(hi);
  }

  /** Writes any int64 given as a bigint. */
  put64Big(v: bigint): void {
    const u = BigInt.asUintN(64, v);
    this.put32(Number(u & 0xffffffffn));
    this.put32(Number(u >> 32n));
  }

  putFloat(v: number): void {
    f64[0] = v;
    const p = this.pos;
    if (p + 8 > this.end) throw new Overflow(p);
    this.buf.set(f64bytes, p);
    this.pos = p + 8;
  }

  /** Writes bytes up to (not including) the first NUL, then a NUL, as memtrace does. */
  putStringBytes(s: Uint8Array): void {
    let len = s.indexOf(0);
    if (len < 0) len = s.length;
    const p = this.pos;
    if (p + len + 1 > this.end) throw new Overflow(p);
    this.buf.set(len === s.length ? s : s.subarray(0, len), p);
    this.buf[p + len] = 0;
    this.pos = p + len + 1;
  }

  putString(s: string): void {
    this.putStringBytes(encodeString(s));
  }

  /** memtrace's variable-length integer: one byte for 0..252, then 253+u16, 254+i32, 255+i64. */
  putVint(v: number): void {
    if (v >= 0 && v <= 252) this.put8(v);
    else if (v >= 0 && v <= 0xffff) {
      this.put8(253);
      this.put16(v);
    } else if (v >= -2147483648 && v <= 2147483647) {
      this.put8(254);
      this.put32(v);
    } else {
      this.put8(255);
      this.put64(v);
    }
  }

  /** Reserves `n` bytes and returns their position. */
  skip(n: number): number {
    const p = this.pos;
    if (p + n > this.end) throw new Overflow(p);
    this.pos = p + n;
    return p;
  }

  update8(at: number, v: number): void {
    this.buf[at] = v;
  }
  update16(at: number, v: number): void {
    this.buf[at] = v;
    this.buf[at + 1] = v >>> 8;
  }
  update32(at: number, v: number): void {
    writeI32(this.buf, at, v);
  }
  update64(at: number, v: number): void {
    const hi = Math.floor(v / TWO32);
    this.update32(at, v - hi * TWO32);
    this.update32(at + 4, hi);
  }
}

/** A read cursor over `buf[pos, end)`. */
export class ReadBuf {
  constructor(public buf: Uint8Array, public pos: number, public end: number) {}

  remaining(): number {
    return this.end - this.pos;
  }

  get8(): number {
    const p = this.pos;
    if (p + 1 > this.end) throw new Underflow(p);
    this.pos = p + 1;
    return this.buf[p];
  }

  get16(): number {
    const p = this.pos;
    if (p + 2 > this.end) throw new Underflow(p);
    this.pos = p + 2;
    const b = this.buf;
    return b[p] | (b[p + 1] << 8);
  }

  /** Unsigned 32 bits. */
  getU32(): number {
    return this.getI32() >>> 0;
  }

  /** Signed 32 bits. */
  getI32(): number {
    const p = this.pos;
    if (p + 4 > this.end) throw new Underflow(p);
    this.pos = p + 4;
    return readI32(this.buf, p);
  }

  /** Signed 64 bits as a number; throws {@linkcode UnsafeInteger} outside ±(2^53−1). */
  get64(): number {
    const p = this.pos;
    if (p + 8 > this.end) throw new Underflow(p);
    this.pos = p + 8;
    return readI64(this.buf, p);
  }

  /** Signed 64 bits as a bigint (any value). */
  get64Big(): bigint {
    const p = this.pos;
    if (p + 8 > this.end) throw new Underflow(p);
    this.pos = p + 8;
    const b = this.buf;
    return (BigInt(readI32(b, p + 4)) << 32n) | BigInt(readI32(b, p) >>> 0);
  }

  /** Steps over `n` bytes. */
  skip(n: number): void {
    const p = this.pos;
    if (p + n > this.end) throw new Underflow(p);
    this.pos = p + n;
  }

  getFloat(): number {
    const p = this.pos;
    if (p + 8 > this.end) throw new Underflow(p);
    f64bytes.set(this.buf.subarray(p, p + 8));
    this.pos = p + 8;
    return f64[0];
  }

  /** Reads a NUL-terminated string. */
  getString(): string {
    const start = this.pos;
    const b = this.buf;
    const i = b.indexOf(0, start);
    if (i < 0 || i >= this.end) throw new Underflow(Math.max(start, this.end));
    this.pos = i + 1;
    return decodeString(b, start, i);
  }

  getVint(): number {
    const c = this.get8();
    if (c < 253) return c;
    if (c === 253) return this.get16();
    if (c === 254) return this.getI32();
    return this.get64();
  }
}
