/**
 * Errors of the trace analyses. A malformed trace surfaces as memtrace's own
 * `MemtraceFormatError` (naming the file and byte offset); wrong analysis options as
 * {@linkcode TraceAnalysisError}.
 * @module
 */

/** An analysis option that cannot be honoured: a bad filter value, time or format name. */
export class TraceAnalysisError extends Error {
  /** Error class name. */
  override name = "TraceAnalysisError";
  /** The option at fault (`size`, `from`, `live-at`, …). */
  readonly option: string;
  /** An error about `option`; the message names it. */
  constructor(option: string, message: string) {
    super(`${option}: ${message}`);
    this.option = option;
  }
}
