/**
 * The one error memtrace's tools raise of their own (malformed traces raise lib/memtrace's
 * `MemtraceFormatError`).
 * @module
 */

/** A trace or an argument a tool cannot handle: memtrace's own tool would crash or fail here
 * (an assertion, an array index out of bounds, `Invalid_argument`); we stop with this instead.
 * The message starts with the tool's name, and ends with where, when known:
 * `hotspots: allocation 0 has an empty backtrace … (at byte offset 187 of t.ctf)`. */
export class TraceToolError extends Error {
  /** Error class name. */
  override name = "TraceToolError";
  /** An error of `tool` (`hotspots`, `identify`, …) about the event at byte `offset` of `file`
   * (either may be unknown). */
  constructor(
    /** The tool that stopped. */
    readonly tool: string,
    /** What is wrong, without the tool's name or the place. */
    readonly problem: string,
    /** The trace's name, when reading a file. */
    readonly file?: string,
    /** Byte offset of the event concerned, when there is one. */
    readonly offset?: number,
  ) {
    const where = offset !== undefined
      ? ` (at byte offset ${offset}${file === undefined ? "" : ` of ${file}`})`
      : file !== undefined
      ? ` (in ${file})`
      : "";
    super(`${tool}: ${problem}${where}`);
  }
}
