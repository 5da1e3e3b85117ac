/**
 * The OCaml 5.3 toolchain memprof-lab compiles real OCaml programs with, for differential runs
 * against the real runtime: {@linkcode findToolchain} finds one (a cache build, or the user's own
 * OCaml 5.3.x), {@linkcode setupToolchain} builds OCaml 5.3.0 from the npm package `ocaml@5.3.0`
 * into a cache when there is none, {@linkcode toolchainStatus} reports what is there.
 *
 * ```ts ignore
 * import { findToolchain, setupToolchain } from "./mod.ts";
 *
 * const tc = (await findToolchain()) ??
 *   (await setupToolchain({ onProgress: (line) => console.error(line) }));
 * const [cmd, ...args] = tc.ocamlopt;
 * await new Deno.Command(cmd, { args: [...args, "-o", "prog", "prog.ml"] }).output();
 * ```
 *
 * @module
 */

export { OCamlToolchainError } from "./errors.ts";
export {
  BUILD_INFO_FILE,
  type BuildInfo,
  type CacheStatus,
  type CommandRunner,
  defaultPrefix,
  findToolchain,
  isSupportedVersion,
  OCAML_NPM_INTEGRITY,
  OCAML_NPM_PACKAGE,
  OCAML_VERSION,
  PREFIX_ENV_VAR,
  prefixFiles,
  type PrefixSource,
  resolvePrefix,
  type RunOptions,
  type SetupOptions,
  setupToolchain,
  type Toolchain,
  type ToolchainOptions,
  type ToolchainStatus,
  toolchainStatus,
  type UserStatus,
} from "./toolchain.ts";
