/**
 * Location lookups for the tools: a code the trace never defined is malformed input, reported as
 * lib/memtrace's copy reports it — `MemtraceFormatError` "invalid location code %08x" at the
 * event's offset — where memtrace's tools stop with `Invalid_argument`.
 * @module
 */
import {
  formatLocationCodeHex,
  type Location,
  type LocationCode,
  MemtraceFormatError,
} from "../memtrace/mod.ts";
import type { TraceInput } from "./input.ts";

/** A lookup on `reader`'s location table, valid during its iteration's callbacks. */
export function locationLookup(reader: TraceInput): (code: LocationCode) => readonly Location[] {
  return (code) => {
    const locs = reader.locationsOf(code);
    if (locs === undefined) {
      throw new MemtraceFormatError(
        `invalid location code ${formatLocationCodeHex(code)}`,
        reader.eventOffset(),
        reader.fileName,
      );
    }
    return locs;
  };
}
