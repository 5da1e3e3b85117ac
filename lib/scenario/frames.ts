/**
 * Frames are written as memtrace prints a location, `defname@file:line:start-end`, so that a
 * scenario's stacks read exactly like the trace dumps they produce.
 * @module
 */

/** A parsed frame. */
export interface ParsedFrame {
  defname: string;
  filename: string;
  line: number;
  startChar: number;
  endChar: number;
}

const FRAME = /^([^@\s]+)@([^:\s][^:]*):(\d+):(\d+)-(\d+)$/;

/** Parses a frame, or returns undefined when it is not of the form `defname@file:line:a-b`. */
export function parseFrame(frame: string): ParsedFrame | undefined {
  const m = FRAME.exec(frame);
  if (m === null) return undefined;
  return {
    defname: m[1],
    filename: m[2],
    line: Number(m[3]),
    startChar: Number(m[4]),
    endChar: Number(m[5]),
  };
}
