/**
 * The error of the OCaml toolchain manager.
 *
 * @module
 */

/**
 * The OCaml toolchain cannot be found, checked or built. The message says what went wrong and
 * what to do about it: which packages to install, which option to pass, or where the build log
 * is.
 */
export class OCamlToolchainError extends Error {
  /** Error class name. */
  override name = "OCamlToolchainError";
  /** The build log holding the full output of the failed step, when a build step failed. */
  readonly logPath: string | undefined;

  /** An error with the given message; `logPath` names the build log, if there is one. */
  constructor(message: string, options?: { logPath?: string; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.logPath = options?.logPath;
  }
}
