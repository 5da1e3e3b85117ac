/**
 * Frames are written as memtrace prints a location, `defname@file:line:start-end`, so that a
 * scenario's stacks read exactly like the trace dumps they produce.
 * @module
 */
import { Location } from "../memtrace/types.ts";

/** Parses a frame, or returns undefined when it is not of the form `defname@file:line:a-b`. */
export function parseFrame(frame: string): Location | undefined {
  return Location.parse(frame);
}
