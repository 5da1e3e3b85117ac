/**
 * OCaml's exceptions, one class each, shared by every part of the project that models a place
 * where OCaml raises one: the simulated runtime and memprof (`Failure`, `Invalid_argument`,
 * `Thread.Exit`), runtime_events' user-event registration (`Invalid_argument`) and memtrace's
 * writer (`Invalid_argument`, through its own subclass).
 *
 * A memprof callback may raise: any value a callback throws is treated as an OCaml exception and
 * propagated exactly where OCaml would propagate it (out of the allocation, poll point or GC call
 * that ran the callback).
 *
 * Every class sets `name` to its own class name; the OCaml constructor is in `ocamlName`.
 *
 * @module
 */

/** Base class of OCaml exceptions: `ocamlName` is the OCaml constructor, e.g. `Failure`. */
export class OCamlException extends Error {
  /** Error class name. */
  override name = "OCamlException";
  /** The OCaml constructor name, e.g. `Failure`. */
  readonly ocamlName: string;
  /**
   * Creates the exception.
   * @param ocamlName constructor name.
   * @param message the exception's string argument.
   */
  constructor(ocamlName: string, message: string) {
    super(message);
    this.ocamlName = ocamlName;
  }
}

/** OCaml's `Failure msg` (raised by `caml_failwith`). */
export class OCamlFailure extends OCamlException {
  /** Error class name. */
  override name = "OCamlFailure";
  /** Creates `Failure message`. */
  constructor(message: string) {
    super("Failure", message);
  }
}

/** OCaml's `Invalid_argument msg` (raised by `caml_invalid_argument`), with OCaml's message. */
export class OCamlInvalidArgument extends OCamlException {
  /** Error class name. */
  override name = "OCamlInvalidArgument";
  /** Creates `Invalid_argument message`. */
  constructor(message: string) {
    super("Invalid_argument", message);
  }
}

/**
 * The exception `Thread.exit` raises to unwind the current thread (OCaml 5 implements it as an
 * exception caught at the thread's top). A callback throwing this is cancelled like any other
 * raising callback; the driver then calls `thread.exit()`.
 */
export class ThreadExit extends OCamlException {
  /** Error class name. */
  override name = "ThreadExit";
  /** Creates the exception. */
  constructor() {
    super("Thread.Exit", "Thread.exit");
  }
}
