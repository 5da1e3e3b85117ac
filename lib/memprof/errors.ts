/**
 * OCaml exceptions as the simulated runtime raises and propagates them.
 *
 * A memprof callback may raise: any value a callback throws is treated as an OCaml exception and
 * propagated exactly where OCaml would propagate it (out of the allocation, poll point or GC
 * call that ran the callback). These classes model the exceptions the runtime itself raises.
 *
 * @module
 */

/** Base class of OCaml exceptions raised by the simulated runtime. */
export class OCamlException extends Error {
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
    this.name = ocamlName;
  }
}

/** OCaml's `Failure msg` (raised by `caml_failwith`). */
export class OCamlFailure extends OCamlException {
  /** Creates `Failure message`. */
  constructor(message: string) {
    super("Failure", message);
  }
}

/** OCaml's `Invalid_argument msg` (raised by `caml_invalid_argument`). */
export class OCamlInvalidArgument extends OCamlException {
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
  /** Creates the exception. */
  constructor() {
    super("Thread.Exit", "Thread.exit");
  }
}
