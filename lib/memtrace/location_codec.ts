/**
 * The location codec: each location-code definition lists its source locations, each packed in
 * 48 bits (line 20, start 8, end 10, then two 5-bit move-to-front indices) with filenames and
 * function names sent as strings only on a move-to-front miss.
 * @module
 */
import { encodeString, type ReadBuf, type WriteBuf } from "./buf.ts";
import { Location, type LocationCode } from "./types.ts";

/** Entries of each move-to-front table; index 31 means "not in the table". */
const MTF_LENGTH = 31;
const NOT_FOUND = MTF_LENGTH;

/** Raised when a move-to-front index names an empty slot (memtrace asserts here). */
export class MtfIndexError extends Error {}

/** A move-to-front table of strings with a value attached to each, kept in a circular array
 * so that pushing a new entry (dropping the last) costs O(1). */
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

  /** The key at index `i` (< NOT_FOUND), moved to the front; its value is left in
   * {@linkcode found}. Throws {@linkcode MtfIndexError} for an empty slot. */
  take(i: number): string {
    const p = this.#slot(i);
    const key = this.#keys[p];
    if (key === undefined) throw new MtfIndexError();
    this.found = this.#vals[p];
    this.#toFront(i);
    return key;
  }

  /** The value of the last slot, which the next push will drop. */
  last(): V | undefined {
    return this.#vals[this.#slot(MTF_LENGTH - 1)];
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

/** Per-domain state of the location decoder. */
export class LocationReader {
  readonly #files = new MtfTable<DefnTable>();
  /** The code of the definition read last. */
  code = 0;

  /** Reads one location-code definition: sets {@linkcode code} and returns its locations.
   * Throws {@linkcode MtfIndexError} on an index that names an empty table slot. */
  get(b: ReadBuf): Location[] {
    this.code = b.get64();
    const n = b.get8();
    const locs: Location[] = new Array(n);
    const files = this.#files;
    for (let i = 0; i < n; i++) {
      const low = b.getU32();
      const high = b.get16();
      const line = low & 0xfffff;
      const start = (low >>> 20) & 0xff;
      const end = (low >>> 28) | ((high & 0x3f) << 4);
      const fcode = (high >>> 6) & 0x1f;
      const dcode = (high >>> 11) & 0x1f;
      let filename: string;
      if (fcode === NOT_FOUND) {
        filename = b.getString();
        // Format v1 writers could reuse the function-name table of the file entry about to be
        // pushed out; decoding the same way keeps those traces readable and is harmless for
        // later writers, which never rely on it.
        files.push(filename, files.last() ?? new MtfTable<true>());
      } else filename = files.take(fcode);
      const defns = files.found as DefnTable;
      let defname: string;
      if (dcode === NOT_FOUND) {
        defname = b.getString();
        defns.push(defname, true);
      } else defname = defns.take(dcode);
      locs[i] = new Location(filename, line, start, end, defname);
    }
    return locs;
  }
}
