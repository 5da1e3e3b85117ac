/**
 * Errors raised by the memtrace codec.
 *
 * Malformed input always surfaces as {@linkcode MemtraceFormatError}; input beyond one of the
 * documented limits (backtrace frames, dump output, per-domain caches) as its subclass
 * {@linkcode MemtraceLimitError}; misuse of the writer API as {@linkcode MemtraceArgumentError};
 * a fork-like pid change as {@linkcode PidChangedError}.
 * @module
 */

import { OCamlInvalidArgument } from "../util/ocaml_exceptions.ts";

/** A trace that does not follow the format. The message starts `malformed trace: `, then the
 * name of the check that failed (memtrace's own wording where memtrace has the check), then where. */
export class MemtraceFormatError extends Error {
  /** Error class name. */
  override name = "MemtraceFormatError";
  /** memtrace's name for the failed check, e.g. `Not a CTF packet` or `alloc id sync`. */
  readonly check: string;
  /** Byte offset in the file (or byte array) where the problem was found. */
  readonly offset: number;
  /** The file name, when reading a file. */
  readonly file: string | undefined;
  /** An error for the failed `check` at byte `offset` of `file`. */
  constructor(check: string, offset: number, file?: string) {
    super(
      `malformed trace: ${check} (at byte offset ${offset}${
        file === undefined ? "" : ` of ${file}`
      })`,
    );
    this.check = check;
    this.offset = offset;
    this.file = file;
  }
}

/** A trace refused because it goes beyond one of the reader's documented limits (see
 * docs/memtrace.md, "Limits and errors"): too many backtrace frames, too much dump output for its
 * size, backtrace caches for too many domains, or a trace that cannot be re-encoded. The message
 * starts `trace exceeds a limit: `; `check`, `offset` and `file` are as for
 * {@linkcode MemtraceFormatError}, and `limit` is the bound that was hit. */
export class MemtraceLimitError extends MemtraceFormatError {
  /** Error class name. */
  override name = "MemtraceLimitError";
  /** The bound that was exceeded (frames, characters, domains or bytes, as `check` says). */
  readonly limit: number;
  /** An error for exceeding `limit`, as described by `check`, at byte `offset` of `file`. */
  constructor(check: string, limit: number, offset: number, file?: string) {
    super(check, offset, file);
    this.limit = limit;
    this.message = `trace exceeds a limit: ${check} (at byte offset ${offset}${
      file === undefined ? "" : ` of ${file}`
    })`;
  }
}

/**
 * Invalid use of the writer or reader API: memtrace's own `Invalid_argument`, with the same text
 * (a subclass of {@linkcode OCamlInvalidArgument}, so one `instanceof` catches every
 * `Invalid_argument` the project models).
 */
export class MemtraceArgumentError extends OCamlInvalidArgument {
  /** Error class name. */
  override name = "MemtraceArgumentError";
}

/** The process id changed between two flushes (memtrace's `Writer.Pid_changed`): the writer
 * refuses to write, as memtrace does in a forked child. */
export class PidChangedError extends Error {
  /** Error class name. */
  override name = "PidChangedError";
  /** `expected` is the pid the writer was created with, `actual` the current one. */
  constructor(readonly expected: bigint, readonly actual: bigint) {
    super(`Pid_changed: trace writer created by pid ${expected}, now running as pid ${actual}`);
  }
}
