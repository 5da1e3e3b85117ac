/**
 * The location codec: each location-code definition lists its source locations, each packed in
 * 48 bits (line 20, start 8, end 10, then two 5-bit move-to-front indices) with filenames and
 * function names sent as strings only on a move-to-front miss.
 * @module
 */
import { encodeString, type ReadBuf, type WriteBuf } from "./buf.ts";
import { Location, type LocationCode } from "./types.ts";
import { type LocationTable, MTF_LENGTH, newMtfState, NOT_FOUND } from "./_location_table.ts";

export { MtfIndexError } from "./_location_table.ts";

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
 * string numbers of the reader's {@linkcode LocationTable}, in one typed array (laid out as
 * {@linkcode LocationTable.readDefinition} says).
 */
export class LocationReader {
  readonly #mtf = newMtfState();

  /** Reads one location-code definition into `table`; returns false if it contradicts an
   * earlier definition of the same code (see {@linkcode LocationTable.commit}). Throws
   * {@linkcode MtfIndexError} on an index that names an empty table slot. */
  get(b: ReadBuf, table: LocationTable): boolean {
    return table.readDefinition(b, this.#mtf);
  }
}
