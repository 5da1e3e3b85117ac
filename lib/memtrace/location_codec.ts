/**
 * The location codec: each location-code definition lists its source locations, each packed in
 * 48 bits (line 20, start 8, end 10, then two 5-bit move-to-front indices) with filenames and
 * function names sent as strings only on a move-to-front miss.
 * @module
 */
import { encodeString, type ReadBuf, Underflow, UnsafeInteger, type WriteBuf } from "./buf.ts";
import { Location, type LocationCode } from "./types.ts";
import type { LocationTable } from "./_location_table.ts";

/** Entries of each move-to-front table; index 31 means "not in the table". */
const MTF_LENGTH = 31;
const NOT_FOUND = MTF_LENGTH;

/** Raised when a move-to-front index names an empty slot (memtrace asserts here). */
export class MtfIndexError extends Error {}

/** The writer's move-to-front table of strings with a value attached to each, kept in a
 * circular array so that pushing a new entry (dropping the last) costs O(1). */
class MtfTable<V> {
  #keys: (string | undefined)[] = new Array(MTF_LENGTH).fill(undefined);
  #vals: (V | undefined)[] = new Array(MTF_LENGTH).fill(undefined);
  /** Physical slot of logical index 0. */
  #head = 0;
  /** The value of the entry found or pushed last. */
  found: V | undefined = undefined;

  #slot(i: number): number {
    const p = this.#head + i;
    return p >= MTF_LENGTH ? p - MTF_LENGTH : p;
  }

  /** Moves entry `i` to the front. */
  #toFront(i: number): void {
    const keys = this.#keys, vals = this.#vals;
    let to = this.#slot(i);
    const k = keys[to], v = vals[to];
    for (let j = i; j > 0; j--) {
      const from = to === 0 ? MTF_LENGTH - 1 : to - 1;
      keys[to] = keys[from];
      vals[to] = vals[from];
      to = from;
    }
    keys[to] = k;
    vals[to] = v;
  }

  /** Pushes a new entry at the front; the last one falls off. */
  push(k: string, v: V): void {
    this.#head = this.#head === 0 ? MTF_LENGTH - 1 : this.#head - 1;
    this.#keys[this.#head] = k;
    this.#vals[this.#head] = v;
    this.found = v;
  }

  /** Index of `k` (moved to the front), or NOT_FOUND after pushing it with `ifAbsent()`; the
   * entry's value is left in {@linkcode found}. */
  encodeIndex(k: string, ifAbsent: () => V): number {
    for (let i = 0; i < MTF_LENGTH; i++) {
      const p = this.#slot(i);
      const key = this.#keys[p];
      if (key === undefined) break;
      if (key === k) {
        this.found = this.#vals[p] as V;
        this.#toFront(i);
        return i;
      }
    }
    this.push(k, ifAbsent());
    return NOT_FOUND;
  }
}

type DefnTable = MtfTable<true>;

/** Upper bound on the encoded size of one location-code definition. */
export const LOCATION_MAX_LENGTH = 4 * 1024;

function clamp(n: number, lim: number): number {
  return n < 0 || n > lim ? lim : n;
}

const TWO32 = 4294967296;

const UNKNOWN_LIST: readonly Location[] = [Location.unknown];
const newDefnTable = (): DefnTable => new MtfTable<true>();
const yes = (): true => true;

/** Filenames and function names recur endlessly, across writers too: encode each once. */
const utf8Cache = new Map<string, Uint8Array>();

/** Per-writer state of the location codec. */
export class LocationWriter {
  readonly #files = new MtfTable<DefnTable>();

  #bytesOf(s: string): Uint8Array {
    let b = utf8Cache.get(s);
    if (b === undefined) {
      if (utf8Cache.size >= 65536) utf8Cache.clear();
      b = encodeString(s);
      utf8Cache.set(s, b);
    }
    return b;
  }

  /** Writes the definition of `code` as the list `locs` (outermost first). Lists of more than
   * 255 entries or of a worst-case size over 4 KiB become the single unknown location. */
  put(b: WriteBuf, code: LocationCode, locs: readonly Location[]): void {
    let worst = 8 + 1;
    for (let i = 0; i < locs.length && worst <= LOCATION_MAX_LENGTH; i++) {
      const loc = locs[i];
      worst += 6 + (this.#bytesOf(loc.filename).length + 1) +
        (this.#bytesOf(loc.defname).length + 1);
    }
    const list = locs.length <= 255 && worst <= LOCATION_MAX_LENGTH ? locs : UNKNOWN_LIST;
    b.put64(code);
    b.put8(list.length);
    for (let i = 0; i < list.length; i++) {
      const loc = list[i];
      const line = clamp(loc.line, 0xfffff);
      const start = clamp(loc.startChar, 0xff);
      const end = clamp(loc.endChar, 0x3ff);
      const fcode = this.#files.encodeIndex(loc.filename, newDefnTable);
      const dcode = (this.#files.found as DefnTable).encodeIndex(loc.defname, yes);
      const packed = line + start * 2 ** 20 + end * 2 ** 28 + fcode * 2 ** 38 + dcode * 2 ** 43;
      const hi = Math.floor(packed / TWO32);
      b.put32(packed - hi * TWO32);
      b.put16(hi);
      if (fcode === NOT_FOUND) b.putStringBytes(this.#bytesOf(loc.filename));
      if (dcode === NOT_FOUND) b.putStringBytes(this.#bytesOf(loc.defname));
    }
  }
}

/**
 * Per-domain state of the location decoder: the same move-to-front tables as the writer's, over
 * string numbers of the reader's {@linkcode LocationTable}, in typed arrays. The filename table
 * is circular (logical index i at slot `(fileHead + i) mod 31`, -1 marking an empty slot), each
 * entry naming its function-name table t, itself circular in `defKey[31 t, 31 t + 31)` from
 * `defHead[t]`. Tables are made as filenames first fill the slots: 31 at most.
 */
export class LocationReader {
  readonly #fileKey = new Int32Array(MTF_LENGTH).fill(-1);
  readonly #fileDefns = new Int32Array(MTF_LENGTH);
  #fileHead = 0;
  #defKey = new Int32Array(4 * MTF_LENGTH).fill(-1);
  readonly #defHead = new Int32Array(MTF_LENGTH);
  #tables = 0;

  /** Reads one location-code definition into `table`; returns false if it contradicts an
   * earlier definition of the same code (see {@linkcode LocationTable.commit}). Throws
   * {@linkcode MtfIndexError} on an index that names an empty table slot. */
  get(b: ReadBuf, table: LocationTable): boolean {
    // ReadBuf's reads, inlined: the same checks, raising the same errors at the same positions.
    const buf = b.buf, end = b.end;
    let p = b.pos;
    if (p + 8 > end) throw new Underflow(p);
    const lo = (buf[p] | (buf[p + 1] << 8) | (buf[p + 2] << 16) | (buf[p + 3] << 24)) >>> 0;
    const hi = buf[p + 4] | (buf[p + 5] << 8) | (buf[p + 6] << 16) | (buf[p + 7] << 24);
    if (hi >= 0x200000 || hi < -0x200000 || (hi === -0x200000 && lo === 0)) {
      throw new UnsafeInteger(p);
    }
    const code = hi * TWO32 + lo;
    p += 8;
    if (p + 1 > end) throw new Underflow(p);
    const n = buf[p++];
    const fileKey = this.#fileKey, fileDefns = this.#fileDefns, defHead = this.#defHead;
    table.begin();
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
        b.pos = p;
        filename = table.addString(b);
        p = b.pos;
        const head = this.#fileHead = this.#fileHead === 0 ? MTF_LENGTH - 1 : this.#fileHead - 1;
        // The slot taken is the last entry's, which falls off. Format v1 writers could reuse
        // that entry's function-name table for the new filename; decoding the same way keeps
        // those traces readable and is harmless for later writers, which never rely on it.
        t = fileKey[head] < 0 ? this.#newTable() : fileDefns[head];
        fileKey[head] = filename;
        fileDefns[head] = t;
      } else {
        let q = this.#fileHead + fcode;
        if (q >= MTF_LENGTH) q -= MTF_LENGTH;
        filename = fileKey[q];
        if (filename < 0) {
          b.pos = p;
          throw new MtfIndexError();
        }
        t = fileDefns[q];
        for (let j = fcode; j > 0; j--) {
          const from = q === 0 ? MTF_LENGTH - 1 : q - 1;
          fileKey[q] = fileKey[from];
          fileDefns[q] = fileDefns[from];
          q = from;
        }
        fileKey[q] = filename;
        fileDefns[q] = t;
      }
      const base = t * MTF_LENGTH, defKey = this.#defKey;
      let defname: number;
      if (dcode === NOT_FOUND) {
        b.pos = p;
        defname = table.addString(b);
        p = b.pos;
        const head = defHead[t] = defHead[t] === 0 ? MTF_LENGTH - 1 : defHead[t] - 1;
        defKey[base + head] = defname;
      } else {
        let q = defHead[t] + dcode;
        if (q >= MTF_LENGTH) q -= MTF_LENGTH;
        defname = defKey[base + q];
        if (defname < 0) {
          b.pos = p;
          throw new MtfIndexError();
        }
        for (let j = dcode; j > 0; j--) {
          const from = q === 0 ? MTF_LENGTH - 1 : q - 1;
          defKey[base + q] = defKey[base + from];
          q = from;
        }
        defKey[base + q] = defname;
      }
      table.addLocation(
        low & 0xfffff,
        (low >>> 20) & 0xff,
        (low >>> 28) | ((high & 0x3f) << 4),
        filename,
        defname,
      );
    }
    b.pos = p;
    return table.commit(code);
  }

  /** A new, empty function-name table. */
  #newTable(): number {
    const t = this.#tables++;
    if ((t + 1) * MTF_LENGTH > this.#defKey.length) {
      const grown = new Int32Array(Math.min(2 * this.#defKey.length, MTF_LENGTH * MTF_LENGTH));
      grown.fill(-1, this.#defKey.length);
      grown.set(this.#defKey);
      this.#defKey = grown;
    }
    return t;
  }
}
