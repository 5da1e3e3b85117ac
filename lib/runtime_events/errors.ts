/**
 * Error types of the runtime_events producer and consumer. User-event registration raises
 * OCaml's `Invalid_argument` as the project-wide `OCamlInvalidArgument`.
 *
 * @module
 */

/**
 * A ring file (or in-memory image) is truncated or corrupt. OCaml's consumer
 * reports this as `E_CORRUPT_STREAM` ("Runtime_events: corrupt stream"); we
 * also say where: the domain whose ring was being read (if any) and the byte
 * offset in the image of the field or message at fault.
 */
export class RuntimeEventsFormatError extends Error {
  /** Error class name. */
  override name = "RuntimeEventsFormatError";
  /** Ring (domain slot) being read, or `null` for file-level problems. */
  readonly domain: number | null;
  /** Byte offset in the image of the faulty field or message. */
  readonly offset: number;
  /** The problem, without the location prefix. */
  readonly reason: string;

  /** Makes the error; the message names the ring (if any) and the byte offset. */
  constructor(reason: string, domain: number | null, offset: number) {
    const where = domain === null ? `at byte ${offset}` : `in ring ${domain} at byte ${offset}`;
    super(`corrupt runtime_events stream ${where}: ${reason}`);
    this.domain = domain;
    this.offset = offset;
    this.reason = reason;
  }
}

/**
 * Input refused because reading it would go beyond a documented bound (see
 * docs/runtime_events.md, "Limits and errors"): a pipe or device whose header
 * describes more than the cursor reads from a stream. A subclass of
 * {@linkcode RuntimeEventsFormatError}, so one `catch` takes both.
 */
export class RuntimeEventsLimitError extends RuntimeEventsFormatError {
  /** Error class name. */
  override name = "RuntimeEventsLimitError";
  /** The bound that was hit, in bytes. */
  readonly limit: number;

  /** Makes the error; `offset` is that of the header field at cause. */
  constructor(reason: string, limit: number, offset: number) {
    super(reason, null, offset);
    this.limit = limit;
    this.message = `runtime_events input beyond a limit at byte ${offset}: ${reason}`;
  }
}
