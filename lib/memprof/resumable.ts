/**
 * Resumable computations: the runtime's and memprof's slow paths (the allocation slow path,
 * pending actions, callbacks, explicit collections, `Gc.Memprof.stop`) are each written once,
 * as a generator, so that a callback may block its systhread (memprof's {@linkcode Blocking})
 * where a scheduler can resume it. A caller with no scheduler (a plain run) drives the generator
 * to its end at once with {@linkcode runToEnd}, which fails with
 * {@linkcode BlockedOutsideResumableRun}, naming the operation, if anything blocks.
 *
 * So that a plain run makes no generator where no callback blocks, the hottest paths (the
 * allocation slow path, memprof's sampling, pending actions) run as plain code as far as they
 * can, and return the rest (from the callback on that blocked, raised or is to run in a loop)
 * as a generator, or null when they ran to their end; plain callers pass it to `runToEnd`,
 * resumable ones yield through it. The rest is the same code: no path is written twice.
 * @module
 */

/** A computation that may suspend its systhread: it yields what the caller's scheduler
 * needs (the thread to run next), and returns `R` when done. */
export type Resumable<R> = Generator<unknown, R, unknown>;

/**
 * What a tracker's callback returns when it may block its systhread (wait for its turn inside
 * the callback, as a callback blocking on a mutex or a pipe does): a generator whose return
 * value is the callback's result. memprof runs it, passing on what it yields; on a plain path
 * ({@linkcode runToEnd}) a callback that actually yields fails the operation.
 */
export class Blocking {
  /** `run` is the callback's body. */
  constructor(readonly run: Resumable<unknown>) {}
}

/** A {@linkcode Blocking} callback yielded outside a resumable run. */
export class BlockedOutsideResumableRun extends Error {
  /** Error class name. */
  override name = "BlockedOutsideResumableRun";
  /** The plain operation that was running (`Gc.minor`, `caml_alloc_small_dispatch`, …). */
  readonly operation: string;
  /** A callback blocked during `operation`. */
  constructor(operation: string) {
    super(
      `${operation}: a callback blocked its thread where nothing can resume it ` +
        "(a plain, not resumable, path)",
    );
    this.operation = operation;
  }
}

/**
 * Drives `run` to its end and returns its result: the plain form of a resumable path. If it
 * yields (a callback blocked its thread), the computation is abandoned — its `finally` blocks
 * run, as when an exception leaves it — and {@linkcode BlockedOutsideResumableRun} is thrown,
 * naming `operation`. `run` may be null: what a path that ran to its end as plain code returns
 * for its rest (then nothing runs, and the result is undefined).
 */
export function runToEnd<R>(run: Resumable<R>, operation: string): R;
/** {@linkcode runToEnd} of a path's rest, if any. */
export function runToEnd<R>(run: Resumable<R> | null, operation: string): R | undefined;
export function runToEnd<R>(run: Resumable<R> | null, operation: string): R | undefined {
  if (run === null) return undefined;
  const r = run.next();
  if (r.done === true) return r.value;
  try {
    run.return(undefined as R);
  } catch {
    // What the unwinding threw matters less than why it unwound.
  }
  throw new BlockedOutsideResumableRun(operation);
}
