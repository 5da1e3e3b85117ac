/**
 * A reader's location definitions, stored compactly as they are read and turned into
 * {@linkcode Location} objects only when a code is looked up. Decoding a definition checks
 * everything memtrace checks (see location_codec.ts); this table keeps the numbers and the raw
 * bytes of each string (copied, so that a streamed window or a caller's buffer may change), and
 * decodes a string the first time a location that names it is looked up. Most codes of a trace
 * are defined once and looked up rarely (the decode passes of the benches never look them up).
 * @module
 */
import { decodeString, type ReadBuf, Underflow, UnsafeInteger } from "./buf.ts";
import { CodeTable } from "./_code_table.ts";
import { Location, type LocationCode } from "./types.ts";

/** Entries of each move-to-front table; index 31 means "not in the table". */
export const MTF_LENGTH = 31;
/** The move-to-front index of a string not in the table: it follows, in full. */
export const NOT_FOUND = MTF_LENGTH;
/** The layout of a domain's move-to-front state in one Int32Array (see
 * {@linkcode LocationTable.readDefinition}): the filename table's keys (string numbers, -1 for an
 * empty slot) and their function-name tables, each function-name table's head, the function-name
 * tables' keys (31 per table), then the filename table's head and the number of function-name
 * tables made. */
const FILE_KEY = 0, FILE_DEFNS = MTF_LENGTH, DEF_HEAD = 2 * MTF_LENGTH, DEF_KEY = 3 * MTF_LENGTH;
const FILE_HEAD = DEF_KEY + MTF_LENGTH * MTF_LENGTH, TABLES = FILE_HEAD + 1;
/** Int32 entries of a domain's move-to-front state. */
export const MTF_STATE_LENGTH = TABLES + 1;

/** A new move-to-front state: every table empty. */
export function newMtfState(): Int32Array {
  const mtf = new Int32Array(MTF_STATE_LENGTH);
  mtf.fill(-1, FILE_KEY, FILE_KEY + MTF_LENGTH);
  mtf.fill(-1, DEF_KEY, DEF_KEY + MTF_LENGTH * MTF_LENGTH);
  return mtf;
}

/** Raised when a move-to-front index names an empty slot (memtrace asserts here). */
export class MtfIndexError extends Error {}

/** Int32 fields per stored location: line, start and end characters, filename, function name. */
const STRIDE = 4;
/** Tables grow by this factor: a reader starts small, and a large trace grows them rarely. */
const GROWTH = 4;

/** The size `size` grows to for `need` entries. */
function grownSize(size: number, need: number): number {
  let n = size * GROWTH;
  while (n < need) n *= GROWTH;
  return n;
}

/** `a` copied into an array of at least `need` entries. */
function grownI32(a: Int32Array, need: number): Int32Array<ArrayBuffer> {
  const out = new Int32Array(grownSize(a.length, need));
  out.set(a);
  return out;
}

/** `a` copied into an array of at least `need` bytes. */
function grownU8(a: Uint8Array, need: number): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(grownSize(a.length, need));
  out.set(a);
  return out;
}

/** The location definitions of one reader (all its domains and iterations). */
export class LocationTable {
  /** Code → definition number. */
  readonly #index = new CodeTable();
  /** Definition d: its locations are `#locs[STRIDE * defs[2 d], STRIDE * (defs[2 d] +
   * defs[2 d + 1]))`. */
  #defs = new Int32Array(2 * 512);
  #ndefs = 0;
  /** The objects of the definitions looked up so far, undefined for the others (extended to
   * the definitions read when one is looked up, so that it stays a dense array). */
  #objects: (Location[] | undefined)[] = [];
  /** Locations of committed definitions, then those of the definition being read. */
  #locs = new Int32Array(STRIDE * 512);
  #nlocs = 0;
  /** Where the definition being read started, in locations. */
  #pending = 0;
  /** String s is `#bytes[strs[2 s], strs[2 s + 1])`; its text is decoded on first use. */
  #bytes = new Uint8Array(8192);
  #nbytes = 0;
  #strs = new Int32Array(2 * 512);
  #nstrings = 0;
  /** The text of the strings decoded so far, undefined for the others (dense, as
   * {@linkcode #objects}). */
  #text: (string | undefined)[] = [];

  /** Number of codes defined. */
  get size(): number {
    return this.#ndefs;
  }

  /** Reads a NUL-terminated string at `b.pos` as {@linkcode ReadBuf.getString} does (same
   * bounds, same {@linkcode Underflow}), keeps its bytes and returns its number. */
  addString(b: ReadBuf): number {
    const s = this.#nstrings;
    if (2 * s + 2 > this.#strs.length) this.#strs = grownI32(this.#strs, 2 * s + 2);
    const number = this.#copyString(b.buf, b.pos, b.end);
    b.pos = this.#after;
    return number;
  }

  /**
   * Reads one location-code definition at `b.pos` (memtrace's `Location_codec.Reader.get`), with
   * the move-to-front state `mtf` of its domain ({@linkcode newMtfState}), and stores it as
   * {@linkcode begin}, {@linkcode addString}, {@linkcode addLocation} and {@linkcode commit} would:
   * the same checks, raising the same errors at the same positions (`b.pos` is where a
   * {@linkcode MtfIndexError} was found), in one function so that the reader's most frequent
   * definitions cost no calls. Returns false if the definition contradicts an earlier one of the
   * same code. The filename table is circular (logical index i at slot `(head + i) mod 31`), each
   * entry naming its function-name table t, itself circular in `DEF_KEY + 31 t` from
   * `mtf[DEF_HEAD + t]`; tables are made as filenames first fill the slots.
   */
  readDefinition(b: ReadBuf, mtf: Int32Array): boolean {
    const buf = b.buf, end = b.end;
    let p = b.pos;
    if (p + 8 > end) throw new Underflow(p);
    // The code's halves, signed, as the code table keeps them.
    const lo = buf[p] | (buf[p + 1] << 8) | (buf[p + 2] << 16) | (buf[p + 3] << 24);
    const hi = buf[p + 4] | (buf[p + 5] << 8) | (buf[p + 6] << 16) | (buf[p + 7] << 24);
    if (hi >= 0x200000 || hi < -0x200000 || (hi === -0x200000 && lo === 0)) {
      throw new UnsafeInteger(p);
    }
    p += 8;
    if (p + 1 > end) throw new Underflow(p);
    const n = buf[p++];
    // Room for the definition's locations and strings, made once.
    const from = this.#pending;
    if (STRIDE * (from + n) > this.#locs.length) {
      this.#locs = grownI32(this.#locs, STRIDE * (from + n));
    }
    if (2 * (this.#nstrings + 2 * n) > this.#strs.length) {
      this.#strs = grownI32(this.#strs, 2 * (this.#nstrings + 2 * n));
    }
    const locs = this.#locs;
    let j = STRIDE * from;
    for (let i = 0; i < n; i++) {
      if (p + 4 > end) throw new Underflow(p);
      const low = (buf[p] | (buf[p + 1] << 8) | (buf[p + 2] << 16) | (buf[p + 3] << 24)) >>> 0;
      p += 4;
      if (p + 2 > end) throw new Underflow(p);
      const high = buf[p] | (buf[p + 1] << 8);
      p += 2;
      const fcode = (high >>> 6) & 0x1f;
      const dcode = (high >>> 11) & 0x1f;
      let filename: number, t: number;
      if (fcode === NOT_FOUND) {
        filename = this.#copyString(buf, p, end);
        p = this.#after;
        const head = mtf[FILE_HEAD] = mtf[FILE_HEAD] === 0 ? MTF_LENGTH - 1 : mtf[FILE_HEAD] - 1;
        // The slot taken is the last entry's, which falls off. Format v1 writers could reuse
        // that entry's function-name table for the new filename; decoding the same way keeps
        // those traces readable and is harmless for later writers, which never rely on it.
        t = mtf[FILE_KEY + head] < 0 ? mtf[TABLES]++ : mtf[FILE_DEFNS + head];
        mtf[FILE_KEY + head] = filename;
        mtf[FILE_DEFNS + head] = t;
      } else {
        let q = mtf[FILE_HEAD] + fcode;
        if (q >= MTF_LENGTH) q -= MTF_LENGTH;
        filename = mtf[FILE_KEY + q];
        if (filename < 0) {
          b.pos = p;
          throw new MtfIndexError();
        }
        t = mtf[FILE_DEFNS + q];
        for (let k = fcode; k > 0; k--) {
          const prev = q === 0 ? MTF_LENGTH - 1 : q - 1;
          mtf[FILE_KEY + q] = mtf[FILE_KEY + prev];
          mtf[FILE_DEFNS + q] = mtf[FILE_DEFNS + prev];
          q = prev;
        }
        mtf[FILE_KEY + q] = filename;
        mtf[FILE_DEFNS + q] = t;
      }
      const base = DEF_KEY + t * MTF_LENGTH;
      let defname: number;
      if (dcode === NOT_FOUND) {
        defname = this.#copyString(buf, p, end);
        p = this.#after;
        const head = mtf[DEF_HEAD + t] = mtf[DEF_HEAD + t] === 0
          ? MTF_LENGTH - 1
          : mtf[DEF_HEAD + t] - 1;
        mtf[base + head] = defname;
      } else {
        let q = mtf[DEF_HEAD + t] + dcode;
        if (q >= MTF_LENGTH) q -= MTF_LENGTH;
        defname = mtf[base + q];
        if (defname < 0) {
          b.pos = p;
          throw new MtfIndexError();
        }
        for (let k = dcode; k > 0; k--) {
          const prev = q === 0 ? MTF_LENGTH - 1 : q - 1;
          mtf[base + q] = mtf[base + prev];
          q = prev;
        }
        mtf[base + q] = defname;
      }
      locs[j] = low & 0xfffff;
      locs[j + 1] = ((low >>> 20) & 0xff) | (((low >>> 28) | ((high & 0x3f) << 4)) << 8);
      locs[j + 2] = filename;
      locs[j + 3] = defname;
      j += STRIDE;
    }
    b.pos = p;
    this.#nlocs = from + n;
    return this.commitHalves(lo, hi);
  }

  /** Position after the string {@linkcode #copyString} read last. */
  #after = 0;

  /** Copies the NUL-terminated string at `buf[p..]` (`end` its bound) into the store, growing it
   * as needed: returns its number, the position after it in {@linkcode #after}. The caller made
   * room in `#strs` ({@linkcode addString}, {@linkcode readDefinition}). */
  #copyString(buf: Uint8Array, p: number, end: number): number {
    let bytes = this.#bytes, at = this.#nbytes, i = p;
    if (at + (end - p) > bytes.length) {
      // The store may not hold what remains of the packet: copy with its bound checked.
      while (true) {
        const stop = Math.min(end, i + bytes.length - at);
        for (let c; i < stop && (c = buf[i]) !== 0; i++) bytes[at++] = c;
        if (i < stop) break;
        if (stop === end) throw new Underflow(Math.max(p, end));
        bytes = this.#bytes = grownU8(bytes, at + 1);
      }
    } else {
      for (let c; i < end && (c = buf[i]) !== 0; i++) bytes[at++] = c;
      if (i >= end) throw new Underflow(Math.max(p, end));
    }
    this.#after = i + 1;
    const s = this.#nstrings++;
    this.#strs[2 * s] = this.#nbytes;
    this.#strs[2 * s + 1] = this.#nbytes = at;
    return s;
  }

  /** Starts reading a definition (dropping the locations of one left unfinished). */
  begin(): void {
    this.#nlocs = this.#pending;
  }

  /** Adds a location to the definition being read; `file` and `defname` are string numbers. */
  addLocation(line: number, startChar: number, endChar: number, file: number, defname: number) {
    const j = STRIDE * this.#nlocs++;
    if (j + STRIDE > this.#locs.length) this.#locs = grownI32(this.#locs, j + STRIDE);
    const locs = this.#locs;
    locs[j] = line;
    locs[j + 1] = startChar | (endChar << 8);
    locs[j + 2] = file;
    locs[j + 3] = defname;
  }

  /** Ends the definition being read as `code`'s. A code defined already keeps its first
   * definition: returns whether this one says the same (memtrace's "consistent location
   * info"). */
  commit(code: LocationCode): boolean {
    return this.commitHalves(code | 0, Math.floor(code / 4294967296) | 0);
  }

  /** {@linkcode commit} of the code whose low and high 32 bits are `lo` and `hi` (each a signed
   * 32-bit integer): what a trace holds, so that no heap number is made per definition. */
  commitHalves(lo: number, hi: number): boolean {
    const from = this.#pending, n = this.#nlocs - from;
    // Codes are numbered as definitions are: a new code's number is #ndefs.
    const known = this.#index.getOrAdd(lo, hi);
    if (known >= 0) {
      this.#nlocs = from;
      return this.#same(known, from, n);
    }
    const d = this.#ndefs++;
    if (2 * d + 2 > this.#defs.length) this.#defs = grownI32(this.#defs, 2 * d + 2);
    this.#defs[2 * d] = from;
    this.#defs[2 * d + 1] = n;
    this.#pending = this.#nlocs;
    return true;
  }

  /** Whether definition `d` holds the `n` locations stored from location `from` on. */
  #same(d: number, from: number, n: number): boolean {
    if (this.#defs[2 * d + 1] !== n) return false;
    const locs = this.#locs;
    let a = STRIDE * this.#defs[2 * d], b = STRIDE * from;
    for (let k = 0; k < n; k++, a += STRIDE, b += STRIDE) {
      if (locs[a] !== locs[b] || locs[a + 1] !== locs[b + 1]) return false;
      if (!this.#sameString(locs[a + 2], locs[b + 2])) return false;
      if (!this.#sameString(locs[a + 3], locs[b + 3])) return false;
    }
    return true;
  }

  /** Whether strings `s` and `t` decode to the same text (same bytes, or different bytes with
   * the same decoding, as a Latin-1 fallback and its UTF-8 encoding). */
  #sameString(s: number, t: number): boolean {
    if (s === t) return true;
    const strs = this.#strs;
    const len = strs[2 * s + 1] - strs[2 * s];
    if (len === strs[2 * t + 1] - strs[2 * t]) {
      const bytes = this.#bytes;
      let i = strs[2 * s], j = strs[2 * t], k = 0;
      while (k < len && bytes[i] === bytes[j]) i++, j++, k++;
      if (k === len) return true;
    }
    return this.#string(s) === this.#string(t);
  }

  #string(s: number): string {
    const text = this.#text;
    while (text.length < this.#nstrings) text.push(undefined);
    return text[s] ??= decodeString(this.#bytes, this.#strs[2 * s], this.#strs[2 * s + 1]);
  }

  /** The locations of `code` (the same array on every call), or undefined if it has none. */
  get(code: LocationCode): Location[] | undefined {
    const d = this.#index.get(code);
    if (d < 0) return undefined;
    const all = this.#objects;
    while (all.length < this.#ndefs) all.push(undefined);
    let objects = all[d];
    if (objects === undefined) {
      const n = this.#defs[2 * d + 1], locs = this.#locs;
      objects = new Array(n);
      for (let k = 0, j = STRIDE * this.#defs[2 * d]; k < n; k++, j += STRIDE) {
        const chars = locs[j + 1];
        objects[k] = new Location(
          this.#string(locs[j + 2]),
          locs[j],
          chars & 0xff,
          chars >>> 8,
          this.#string(locs[j + 3]),
        );
      }
      all[d] = objects;
    }
    return objects;
  }
}
