/**
 * Text dump of a ring file, one event per line, in the format of the
 * reference dumps made with OCaml's own consumer (`read_poll` until it
 * returns 0).
 *
 * @module
 */

import { type ConsumerCallbacks, type CursorOptions, RuntimeEventsCursor } from "./consumer.ts";
import { counterName, lifecycleName, phaseName } from "./enums.ts";
import { ocamlQuote } from "../util/ocaml_printf.ts";

/** Lowercase hex of bytes, no separators. */
export function hexBytes(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += b.toString(16).padStart(2, "0");
  return s;
}

function jsonish(value: unknown): string {
  return JSON.stringify(value, (_k, v) => typeof v === "bigint" ? v.toString() : v) ??
    String(value);
}

/**
 * Callbacks that turn each event into its dump line and pass it to `emit`.
 * Formats: `<ring> <ts> begin|end <phase>`, `<ring> <ts> counter <name> <v>`,
 * `<ring> <ts> alloc [b0;…;b19]`, `<ring> <ts> lifecycle <name> None|Some <n>`,
 * `<ring> lost_events <words>`, `<ring> <ts> user "<name>" unit | int <v> |
 * span begin|end | custom <text>`. A custom payload prints through its
 * decoder's `format` (or JSON of the decoded value) when a decoder is
 * registered for the event name, else as `custom <hex bytes>`.
 */
export function dumpCallbacks(
  emit: (line: string) => void,
  options: CursorOptions = {},
): ConsumerCallbacks {
  const decoders = options.decoders;
  return {
    runtimeBegin: (d, ts, phase) => emit(`${d} ${ts} begin ${phaseName(phase)}`),
    runtimeEnd: (d, ts, phase) => emit(`${d} ${ts} end ${phaseName(phase)}`),
    runtimeCounter: (d, ts, c, v) => emit(`${d} ${ts} counter ${counterName(c)} ${v}`),
    alloc: (d, ts, buckets) => emit(`${d} ${ts} alloc [${buckets.join(";")}]`),
    lifecycle: (d, ts, ev, data) =>
      emit(`${d} ${ts} lifecycle ${lifecycleName(ev)} ${data === null ? "None" : `Some ${data}`}`),
    lostEvents: (d, words) => emit(`${d} lost_events ${words}`),
    userUnit: (d, ts, ev) => emit(`${d} ${ts} user ${ocamlQuote(ev.nameBytes)} unit`),
    userInt: (d, ts, ev, v) => emit(`${d} ${ts} user ${ocamlQuote(ev.nameBytes)} int ${v}`),
    userSpan: (d, ts, ev, span) => emit(`${d} ${ts} user ${ocamlQuote(ev.nameBytes)} span ${span}`),
    userCustom: (d, ts, ev, payload, decoded) => {
      const decoder = decoders?.get(ev.name);
      let text: string;
      if (decoder === undefined) text = hexBytes(payload);
      else if (decoder.format) text = decoder.format(decoded);
      else text = jsonish(decoded);
      emit(`${d} ${ts} user ${ocamlQuote(ev.nameBytes)} custom ${text}`);
    },
  };
}

/**
 * Dumps a whole image to text (one line per event, each ending in a newline),
 * reading every ring from position 0 as a fresh OCaml cursor does. Throws
 * {@linkcode RuntimeEventsFormatError} on corrupt input.
 */
export function dumpImage(image: Uint8Array | ArrayBuffer, options: CursorOptions = {}): string {
  const lines: string[] = [];
  const cursor = new RuntimeEventsCursor(image, options);
  cursor.readAll(dumpCallbacks((l) => lines.push(l), options));
  return lines.length === 0 ? "" : lines.join("\n") + "\n";
}
