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

// Decoded strings, interned by a hash of their bytes: traces repeat the same few hundred
// filenames and function names thousands of times.
interface Interned {
  bytes: Uint8Array;
  str: string;
}
const interned = new Map<number, Interned>();

/** Decodes bytes as UTF-8; bytes that are not valid UTF-8 are taken as Latin-1 so that nothing is
 * lost or replaced. */
export function decodeString(b: Uint8Array, start: number, end: number): string {
  let h = 0x811c9dc5;
  let ascii = true;
  for (let i = start; i < end; i++) {
    const c = b[i];
    if (c > 0x7f) ascii = false;
    h = Math.imul(h ^ c, 0x01000193);
  }
  const hit = interned.get(h);
  if (hit !== undefined && hit.bytes.length === end - start) {
    const known = hit.bytes;
    let same = true;
    for (let i = 0; i < known.length; i++) {
      if (known[i] !== b[start + i]) {
        same = false;
        break;
      }
    }
    if (same) return hit.str;
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
  if (end - start <= 256) {
    if (interned.size >= 1 << 16) interned.clear();
    interned.set(h, { bytes: b.slice(start, end), str: s });
  }
  return s;
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
    const b = this.buf;
    b[p] = v;
    b[p + 1] = v >>> 8;
    this.pos = p + 2;
  }

  put32(v: number): void {
    const p = this.pos;
    if (p + 4 > this.end) throw new Overflow(p);
    const b = this.buf;
    b[p] = v;
    b[p + 1] = v >>> 8;
    b[p + 2] = v >>> 16;
    b[p + 3] = v >>> 24;
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
    const b = this.buf;
    b[at] = v;
    b[at + 1] = v >>> 8;
    b[at + 2] = v >>> 16;
    b[at + 3] = v >>> 24;
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
    const p = this.pos;
    if (p + 4 > this.end) throw new Underflow(p);
    this.pos = p + 4;
    const b = this.buf;
    return (b[p] | (b[p + 1] << 8) | (b[p + 2] << 16) | (b[p + 3] << 24)) >>> 0;
  }

  /** Signed 32 bits. */
  getI32(): number {
    const p = this.pos;
    if (p + 4 > this.end) throw new Underflow(p);
    this.pos = p + 4;
    const b = this.buf;
    return b[p] | (b[p + 1] << 8) | (b[p + 2] << 16) | (b[p + 3] << 24);
  }

  /** Signed 64 bits as a number; throws {@linkcode UnsafeInteger} outside ±(2^53−1). */
  get64(): number {
    const p = this.pos;
    if (p + 8 > this.end) throw new Underflow(p);
    this.pos = p + 8;
    const b = this.buf;
    const lo = (b[p] | (b[p + 1] << 8) | (b[p + 2] << 16) | (b[p + 3] << 24)) >>> 0;
    const hi = b[p + 4] | (b[p + 5] << 8) | (b[p + 6] << 16) | (b[p + 7] << 24);
    // Safe integers have hi in [-2^21, 2^21), except -2^53 itself which we refuse too.
    if (hi >= 0x200000 || hi < -0x200000 || (hi === -0x200000 && lo === 0)) {
      throw new UnsafeInteger(p);
    }
    return hi * TWO32 + lo;
  }

  /** Signed 64 bits as a bigint (any value). */
  get64Big(): bigint {
    const p = this.pos;
    if (p + 8 > this.end) throw new Underflow(p);
    this.pos = p + 8;
    const b = this.buf;
    const lo = (b[p] | (b[p + 1] << 8) | (b[p + 2] << 16) | (b[p + 3] << 24)) >>> 0;
    const hi = b[p + 4] | (b[p + 5] << 8) | (b[p + 6] << 16) | (b[p + 7] << 24);
    return (BigInt(hi) << 32n) | BigInt(lo);
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
    let i = start;
    while (true) {
      if (i >= this.end) throw new Underflow(i);
      if (b[i] === 0) break;
      i++;
    }
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
