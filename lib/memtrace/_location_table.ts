/**
 * A reader's location definitions, stored compactly as they are read and turned into
 * {@linkcode Location} objects only when a code is looked up. Decoding a definition checks
 * everything memtrace checks (see location_codec.ts); this table keeps the numbers and the raw
 * bytes of each string (copied, so that a streamed window or a caller's buffer may change), and
 * decodes a string the first time a location that names it is looked up. Most codes of a trace
 * are defined once and looked up rarely (the decode passes of the benches never look them up).
 * @module
 */
import { decodeString, type ReadBuf, Underflow } from "./buf.ts";
import { CodeTable } from "./_code_table.ts";
import { Location, type LocationCode } from "./types.ts";

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
    const buf = b.buf, from = b.pos, limit = b.end;
    let at = this.#nbytes, i = from;
    // Copy while looking for the NUL, growing the store when it is full.
    while (true) {
      const bytes = this.#bytes;
      const stop = Math.min(limit, i + bytes.length - at);
      for (let c; i < stop && (c = buf[i]) !== 0; i++) bytes[at++] = c;
      if (i < stop) break;
      if (stop === limit) throw new Underflow(Math.max(from, limit));
      const grown = new Uint8Array(grownSize(bytes.length, at + 1));
      grown.set(bytes);
      this.#bytes = grown;
    }
    b.pos = i + 1;
    const s = this.#nstrings++;
    if (2 * s + 2 > this.#strs.length) this.#strs = grownI32(this.#strs, 2 * s + 2);
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
    const from = this.#pending, n = this.#nlocs - from;
    const known = this.#index.getOrSet(code, this.#ndefs);
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
