/**
 * The OCaml 5.3 toolchain memprof-lab compiles real OCaml programs with: found (a cache build, or
 * the user's own OCaml 5.3.x) or built from the npm package `ocaml@5.3.0` into a cache.
 *
 * Which toolchain is used, first match wins:
 * 1. an explicit `ocamlopt` or `ocamlfind` option (refused, with an error, unless OCaml 5.3.x);
 * 2. the cache at the `prefix` option or `$MEMPROF_LAB_OCAML_PREFIX`, if built;
 * 3. the default cache ({@linkcode defaultPrefix}), if built;
 * 4. `ocamlopt` on `PATH`, if it is OCaml 5.3.x.
 *
 * A build configures OCaml with `--prefix=PREFIX`, builds it in a temporary source directory
 * beside the prefix (`PREFIX.tmp-<pid>-<16 hex digits>`), installs it with
 * `make install DESTDIR=…` into that directory, checks `ocamlopt -version`, and only then renames
 * the installed tree to `PREFIX`: an interrupted or failed build leaves no `PREFIX`, and the
 * directory of a killed one is removed by the next setup (only a directory named so, and only once
 * its pid is gone). `PREFIX.lock` keeps two setups from building at once; `PREFIX.build.log`
 * receives the full output of the build.
 *
 * @module
 */

import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { OCamlToolchainError } from "./errors.ts";
import {
  childEnv,
  denoRunner,
  type Env,
  findOnPath,
  isSupportedVersion,
  type Probe,
  probeVersion,
  processAlive,
} from "./_process.ts";
import { acquireLock, lockPid } from "./_lock.ts";

/** The OCaml release memprof-lab builds (and the one its fixtures were made with). */
export const OCAML_VERSION = "5.3.0";

/** The npm package holding the complete OCaml release source, pinned to {@linkcode OCAML_VERSION}. */
export const OCAML_NPM_PACKAGE = `ocaml@${OCAML_VERSION}`;

/** The integrity (`dist.integrity`) of {@linkcode OCAML_NPM_PACKAGE} on the npm registry; a fetched
 * package with any other is refused. */
export const OCAML_NPM_INTEGRITY =
  "sha512-D0uG44Q3r6LY4wSzhBZpHe+q1yMJ4QHgk5R1Osv7qLWBgWPQ2jE60vY6rXgJraL/H9fvsWOF3KZSIro/bS+Z8A==";

/** The environment variable that overrides the cache prefix (the `prefix` option wins over it). */
export const PREFIX_ENV_VAR = "MEMPROF_LAB_OCAML_PREFIX";

/** Name of the file a cache build writes at the root of its prefix ({@linkcode BuildInfo}). */
export const BUILD_INFO_FILE = "memprof-lab-build.json";

/** An OCaml native compiler to run. */
export interface Toolchain {
  /** Command and leading arguments that run the native compiler, e.g. `["/x/bin/ocamlopt"]` or
   * `["/usr/bin/ocamlfind", "ocamlopt"]`. */
  readonly ocamlopt: readonly string[];
  /** What `ocamlopt -version` prints, e.g. `5.3.0`. */
  readonly version: string;
  /** `cache` for a prefix built by {@linkcode setupToolchain} (or any OCaml 5.3.x installed at a
   * cache prefix), `user` for the user's own OCaml. */
  readonly origin: "cache" | "user";
  /** The install prefix, for cache builds. */
  readonly prefix?: string;
}

/** Where to look for a toolchain. */
export interface ToolchainOptions {
  /** Cache prefix overriding `$MEMPROF_LAB_OCAML_PREFIX` and the default one. */
  prefix?: string;
  /** Use this `ocamlopt` (a path, or a name looked up on `PATH`); it must be OCaml 5.3.x. */
  ocamlopt?: string;
  /** Use `<ocamlfind> ocamlopt` (a path, or a name looked up on `PATH`); it must be OCaml 5.3.x. */
  ocamlfind?: string;
  /** The environment (`HOME`, `XDG_CACHE_HOME`, `PATH`, …), also given to the commands run;
   * defaults to the process's. */
  env?: Record<string, string | undefined>;
}

/** How {@linkcode CommandRunner} runs a command. */
export interface RunOptions {
  /** Working directory. */
  readonly cwd: string;
  /** The complete environment of the command. */
  readonly env: Record<string, string>;
  /** Receives the command's output as it comes. */
  onOutput(chunk: Uint8Array, stream: "stdout" | "stderr"): void;
  /** Kills the command when aborted. */
  readonly signal?: AbortSignal;
}

/** Runs one build command (`command[0]` is an absolute path) and resolves to its exit status.
 * {@linkcode setupToolchain} runs every build step through one; tests replace it with a fake. */
export type CommandRunner = (command: readonly string[], options: RunOptions) => Promise<number>;

/** Options of {@linkcode setupToolchain}. */
export interface SetupOptions extends ToolchainOptions {
  /** Receives progress lines (stages with elapsed seconds, and a line every `heartbeatMs`). */
  onProgress?: (line: string) => void;
  /** Build into the default cache even when `ocamlopt` on `PATH` is OCaml 5.3.x. (A `prefix`
   * option or `$MEMPROF_LAB_OCAML_PREFIX` always builds there.) */
  build?: boolean;
  /** Parallel jobs for `make` (default: the number of CPUs). */
  jobs?: number;
  /** Interrupts the setup: the running command is killed and nothing is installed. */
  signal?: AbortSignal;
  /** How long to wait for another setup holding the lock before giving up (default 30 min). */
  lockTimeoutMs?: number;
  /** How often to look at the lock while waiting (default 1 s). */
  lockPollMs?: number;
  /** A progress line is printed when a step has been quiet this long (default 15 s). */
  heartbeatMs?: number;
  /** Runs the build commands (default: real processes). */
  runner?: CommandRunner;
  /** Whether process `pid` is running, to recognise stale locks (default: /proc or `ps`). */
  isAlive?: (pid: number) => boolean;
}

/** Where a cache prefix came from. */
export type PrefixSource = "option" | "env" | "default";

/** The contents of {@linkcode BUILD_INFO_FILE}. */
export interface BuildInfo {
  /** The OCaml version built. */
  readonly version: string;
  /** The npm package the source came from. */
  readonly source: string;
  /** The package's integrity. */
  readonly integrity: string;
  /** When the build completed (ISO 8601). */
  readonly builtAt: string;
  /** How long the whole setup took, in seconds. */
  readonly seconds: number;
}

/** What {@linkcode toolchainStatus} found at a cache prefix. */
export interface CacheStatus {
  /** The absolute prefix. */
  readonly prefix: string;
  /** Where the prefix came from. */
  readonly source: PrefixSource;
  /** Whether `PREFIX/bin/ocamlopt` is there and is OCaml 5.3.x. */
  readonly built: boolean;
  /** The version of `PREFIX/bin/ocamlopt`, when it runs. */
  readonly version?: string;
  /** Why an existing prefix cannot be used (or built into). */
  readonly problem?: string;
  /** The build record, for prefixes built by {@linkcode setupToolchain}. */
  readonly buildInfo?: BuildInfo;
  /** The build log, if there is one. */
  readonly buildLog?: string;
  /** The pid of a running setup holding the prefix's lock. */
  readonly buildingPid?: number;
}

/** What {@linkcode toolchainStatus} found about the user's own OCaml. */
export interface UserStatus {
  /** The command that runs it. */
  readonly ocamlopt: readonly string[];
  /** `option` for `ocamlopt`/`ocamlfind` options, `PATH` for `ocamlopt` found on `PATH`. */
  readonly source: "option" | "PATH";
  /** Its version, when it printed one. */
  readonly version?: string;
  /** Whether it is OCaml 5.3.x. */
  readonly accepted: boolean;
  /** Why it is refused. */
  readonly problem?: string;
}

/** Everything {@linkcode toolchainStatus} knows: the caches, the user's OCaml and the choice. */
export interface ToolchainStatus {
  /** The OCaml versions accepted. */
  readonly required: "5.3.x";
  /** The version a cache build gets ({@linkcode OCAML_VERSION}). */
  readonly pinned: string;
  /** The cache prefix `setup` builds into. */
  readonly cache: CacheStatus;
  /** The default cache, when `cache` is an override of it. */
  readonly defaultCache?: CacheStatus;
  /** An explicit `ocamlopt`/`ocamlfind`, else the first `ocamlopt` on `PATH`, if any. */
  readonly user?: UserStatus;
  /** The toolchain {@linkcode findToolchain} returns. */
  readonly selected?: Toolchain;
}

function envOf(opts: ToolchainOptions | undefined): Env {
  return opts?.env ?? Deno.env.toObject();
}

/**
 * The default cache prefix: `$XDG_CACHE_HOME/memprof-lab/ocaml-5.3.0` when `XDG_CACHE_HOME` is an
 * absolute path (as the XDG specification requires), else `$HOME/.cache/memprof-lab/ocaml-5.3.0`.
 * Throws {@linkcode OCamlToolchainError} when neither is set.
 */
export function defaultPrefix(
  env: Record<string, string | undefined> = Deno.env.toObject(),
): string {
  const leaf = join("memprof-lab", `ocaml-${OCAML_VERSION}`);
  const xdg = env.XDG_CACHE_HOME;
  if (xdg !== undefined && isAbsolute(xdg)) return join(xdg, leaf);
  const home = env.HOME;
  if (home !== undefined && home !== "") return join(resolve(home), ".cache", leaf);
  throw new OCamlToolchainError(
    `cannot choose a cache directory: neither XDG_CACHE_HOME nor HOME is set; pass --prefix DIR or set ${PREFIX_ENV_VAR}`,
  );
}

/** The cache prefix to use (absolute) and where it came from: the `prefix` option, else
 * `$MEMPROF_LAB_OCAML_PREFIX`, else {@linkcode defaultPrefix}. */
export function resolvePrefix(
  opts: ToolchainOptions = {},
): { prefix: string; source: PrefixSource } {
  if (opts.prefix !== undefined && opts.prefix !== "") {
    return { prefix: resolve(opts.prefix), source: "option" };
  }
  const env = envOf(opts);
  const fromEnv = env[PREFIX_ENV_VAR];
  if (fromEnv !== undefined && fromEnv !== "") return { prefix: resolve(fromEnv), source: "env" };
  return { prefix: defaultPrefix(env), source: "default" };
}

/** The lock file, build log and temporary-directory prefix that go with a cache prefix. */
export function prefixFiles(prefix: string): { lock: string; log: string; tmpPrefix: string } {
  return { lock: `${prefix}.lock`, log: `${prefix}.build.log`, tmpPrefix: `${prefix}.tmp-` };
}

// ---------------------------------------------------------------------------------------------
// Finding

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
}

async function isEmptyDir(path: string): Promise<boolean> {
  for await (const _ of Deno.readDir(path)) return false;
  return true;
}

/** What is at a cache prefix: built (with version), absent, or something unusable. */
async function inspectPrefix(
  prefix: string,
  env: Env,
): Promise<{ built: boolean; version?: string; problem?: string }> {
  let st: Deno.FileInfo;
  try {
    st = await Deno.stat(prefix);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return { built: false };
    return { built: false, problem: `cannot be read: ${(e as Error).message}` };
  }
  if (!st.isDirectory) return { built: false, problem: "exists and is not a directory" };
  const ocamlopt = join(prefix, "bin", "ocamlopt");
  if (!(await exists(ocamlopt))) {
    return await isEmptyDir(prefix)
      ? { built: false }
      : { built: false, problem: "exists but holds no bin/ocamlopt" };
  }
  const probe = await probeVersion([ocamlopt], env);
  if (probe.ok) return { built: true, version: probe.version };
  return { built: false, version: probe.version, problem: probe.reason };
}

/** The command for an explicit `ocamlopt`/`ocamlfind` option: a name without `/` is looked up on
 * PATH, a path is made absolute. */
function explicitCommand(opts: ToolchainOptions, env: Env): readonly string[] {
  if (opts.ocamlopt !== undefined && opts.ocamlfind !== undefined) {
    throw new OCamlToolchainError("give either ocamlopt or ocamlfind, not both");
  }
  const [what, value] = opts.ocamlfind !== undefined
    ? ["ocamlfind", opts.ocamlfind]
    : ["ocamlopt", opts.ocamlopt!];
  let file: string;
  if (value.includes("/")) {
    file = resolve(value);
  } else {
    const found = findOnPath(value, env);
    if (found === undefined) {
      throw new OCamlToolchainError(`${what} '${value}' was not found on PATH`);
    }
    file = found;
  }
  return what === "ocamlfind" ? [file, "ocamlopt"] : [file];
}

function refusal(command: readonly string[], probe: Probe & { ok: false }): OCamlToolchainError {
  return new OCamlToolchainError(
    `cannot use ${command.join(" ")}: ${probe.reason}. Use an OCaml 5.3.x, or run ` +
      `'deno task ocaml setup' to build OCaml ${OCAML_VERSION} into the cache`,
  );
}

async function explicitToolchain(opts: ToolchainOptions, env: Env): Promise<Toolchain> {
  const command = explicitCommand(opts, env);
  const probe = await probeVersion(command, env);
  if (!probe.ok) throw refusal(command, probe);
  return { ocamlopt: command, version: probe.version, origin: "user" };
}

function cacheToolchain(prefix: string, version: string): Toolchain {
  return { ocamlopt: [join(prefix, "bin", "ocamlopt")], version, origin: "cache", prefix };
}

/** The cache prefixes to consider, in order: the override (if any), then the default. */
function cacheCandidates(
  opts: ToolchainOptions,
  env: Env,
): { prefix: string; source: PrefixSource }[] {
  const out: { prefix: string; source: PrefixSource }[] = [];
  const chosen = resolvePrefix({ ...opts, env });
  out.push(chosen);
  if (chosen.source !== "default") {
    let dflt: string | undefined;
    try {
      dflt = defaultPrefix(env);
    } catch { /* no HOME: only the override */ }
    if (dflt !== undefined && dflt !== chosen.prefix) out.push({ prefix: dflt, source: "default" });
  }
  return out;
}

/**
 * The toolchain to use, without building anything (see the module documentation for the order),
 * or undefined when there is none. Throws {@linkcode OCamlToolchainError} when an explicit
 * `ocamlopt`/`ocamlfind` is not a usable OCaml 5.3.x.
 */
export async function findToolchain(opts: ToolchainOptions = {}): Promise<Toolchain | undefined> {
  const env = envOf(opts);
  if (opts.ocamlopt !== undefined || opts.ocamlfind !== undefined) {
    return await explicitToolchain(opts, env);
  }
  let caches: { prefix: string }[] = [];
  try {
    caches = cacheCandidates(opts, env);
  } catch (e) {
    if (!(e instanceof OCamlToolchainError)) throw e; // no HOME: no default cache to look at
  }
  for (const { prefix } of caches) {
    const state = await inspectPrefix(prefix, env);
    if (state.built) return cacheToolchain(prefix, state.version!);
  }
  const onPath = findOnPath("ocamlopt", env);
  if (onPath !== undefined) {
    const probe = await probeVersion([onPath], env);
    if (probe.ok) return { ocamlopt: [onPath], version: probe.version, origin: "user" };
  }
  return undefined;
}

async function readBuildInfo(prefix: string): Promise<BuildInfo | undefined> {
  try {
    return JSON.parse(await Deno.readTextFile(join(prefix, BUILD_INFO_FILE))) as BuildInfo;
  } catch {
    return undefined;
  }
}

async function cacheStatus(
  prefix: string,
  source: PrefixSource,
  env: Env,
  isAlive: (pid: number) => boolean,
): Promise<CacheStatus> {
  const state = await inspectPrefix(prefix, env);
  const files = prefixFiles(prefix);
  const buildInfo = state.built ? await readBuildInfo(prefix) : undefined;
  const buildLog = await exists(files.log) ? files.log : undefined;
  let buildingPid: number | undefined;
  try {
    const pid = lockPid(await Deno.readTextFile(files.lock));
    if (pid !== undefined && isAlive(pid)) buildingPid = pid;
  } catch { /* no lock */ }
  return {
    prefix,
    source,
    built: state.built,
    ...(state.version !== undefined ? { version: state.version } : {}),
    ...(state.problem !== undefined ? { problem: state.problem } : {}),
    ...(buildInfo !== undefined ? { buildInfo } : {}),
    ...(buildLog !== undefined ? { buildLog } : {}),
    ...(buildingPid !== undefined ? { buildingPid } : {}),
  };
}

/**
 * Inspects everything that {@linkcode findToolchain} looks at — the cache prefixes, an explicit
 * or `PATH` `ocamlopt` — and which toolchain it would choose. Never builds, and does not throw for
 * a refused explicit `ocamlopt` (`user.problem` says why, and nothing is selected).
 */
export async function toolchainStatus(
  opts: ToolchainOptions & { isAlive?: (pid: number) => boolean } = {},
): Promise<ToolchainStatus> {
  const env = envOf(opts);
  const isAlive = opts.isAlive ?? processAlive;
  const caches: CacheStatus[] = [];
  for (const c of cacheCandidates(opts, env)) {
    caches.push(await cacheStatus(c.prefix, c.source, env, isAlive));
  }
  let user: UserStatus | undefined;
  const explicit = opts.ocamlopt !== undefined || opts.ocamlfind !== undefined;
  if (explicit) {
    let command: readonly string[] | undefined;
    try {
      command = explicitCommand(opts, env);
    } catch (e) {
      const given = opts.ocamlfind !== undefined ? [opts.ocamlfind, "ocamlopt"] : [opts.ocamlopt!];
      user = { ocamlopt: given, source: "option", accepted: false, problem: (e as Error).message };
    }
    if (command !== undefined) {
      user = userStatus(command, "option", await probeVersion(command, env));
    }
  } else {
    const onPath = findOnPath("ocamlopt", env);
    if (onPath !== undefined) {
      user = userStatus([onPath], "PATH", await probeVersion([onPath], env));
    }
  }
  let selected: Toolchain | undefined;
  if (explicit) {
    if (user!.accepted) {
      selected = { ocamlopt: user!.ocamlopt, version: user!.version!, origin: "user" };
    }
  } else {
    const built = caches.find((c) => c.built);
    if (built !== undefined) selected = cacheToolchain(built.prefix, built.version!);
    else if (user?.accepted) {
      selected = { ocamlopt: user.ocamlopt, version: user.version!, origin: "user" };
    }
  }
  return {
    required: "5.3.x",
    pinned: OCAML_VERSION,
    cache: caches[0],
    ...(caches.length > 1 ? { defaultCache: caches[1] } : {}),
    ...(user !== undefined ? { user } : {}),
    ...(selected !== undefined ? { selected } : {}),
  };
}

function userStatus(
  command: readonly string[],
  source: "option" | "PATH",
  probe: Probe,
): UserStatus {
  return probe.ok ? { ocamlopt: command, source, version: probe.version, accepted: true } : {
    ocamlopt: command,
    source,
    ...(probe.version !== undefined ? { version: probe.version } : {}),
    accepted: false,
    problem: probe.reason,
  };
}

// ---------------------------------------------------------------------------------------------
// Building

/** Environment variables dropped for the build: they would redirect OCaml's standard library or
 * compiler flags, or hand make a foreign job server. */
const BUILD_ENV_DROP = ["OCAMLLIB", "CAMLLIB", "OCAMLPARAM", "MAKEFLAGS", "MFLAGS", "MAKELEVEL"];

/** The programs a build needs, with the Debian/Ubuntu package providing each. */
function checkBuildTools(env: Env): { gcc: string; make: string; npm: string; tar: string } {
  const cc = findOnPath("gcc", env) ?? findOnPath("cc", env);
  const make = findOnPath("make", env);
  const npm = findOnPath("npm", env);
  const tar = findOnPath("tar", env);
  const missing: { what: string; pkg: string }[] = [];
  if (cc === undefined) missing.push({ what: "a C compiler (gcc or cc)", pkg: "gcc" });
  if (make === undefined) missing.push({ what: "make", pkg: "make" });
  if (npm === undefined) {
    missing.push({ what: "npm (it fetches the OCaml sources from the npm registry)", pkg: "npm" });
  }
  if (tar === undefined) missing.push({ what: "tar", pkg: "tar" });
  if (missing.length > 0) {
    throw new OCamlToolchainError(
      `cannot build OCaml ${OCAML_VERSION}: ${
        missing.map((m) => m.what).join(", ")
      } not found on PATH. ` +
        `Install ${missing.length === 1 ? "it" : "them"} (Debian/Ubuntu: apt-get install ${
          missing.map((m) => m.pkg).join(" ")
        }), or use an OCaml 5.3.x of your own with --ocamlopt PATH or --ocamlfind PATH`,
    );
  }
  return { gcc: cc!, make: make!, npm: npm!, tar: tar! };
}

/** Keeps the last lines of a build's output, for error messages and progress lines. */
class OutputTail {
  #lines: string[] = [];
  #partial = "";
  #decoder = new TextDecoder();
  constructor(readonly keep: number) {}
  add(chunk: Uint8Array): void {
    const text = this.#partial + this.#decoder.decode(chunk, { stream: true });
    const parts = text.split(/\r?\n/);
    this.#partial = parts.pop()!;
    for (const line of parts) {
      if (line.trim() === "") continue;
      this.#lines.push(line);
      if (this.#lines.length > this.keep) this.#lines.shift();
    }
  }
  lines(): string[] {
    return this.#partial.trim() === "" ? [...this.#lines] : [...this.#lines, this.#partial];
  }
  reset(): void {
    this.#lines = [];
    this.#partial = "";
  }
}

function shorten(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

/**
 * The toolchain to use, building OCaml 5.3.0 when there is none: an explicit `ocamlopt` or
 * `ocamlfind` is checked and returned; a built cache prefix is returned at once; without an
 * override prefix (and without `build`), `ocamlopt` on PATH is used if it is OCaml 5.3.x;
 * otherwise OCaml is built into the cache prefix (see the module documentation).
 *
 * Throws {@linkcode OCamlToolchainError} for a refused `ocamlopt`, missing build tools, a failed
 * fetch or build step (naming the build log), a lock held too long, or an interruption.
 */
export async function setupToolchain(opts: SetupOptions = {}): Promise<Toolchain> {
  const env = envOf(opts);
  const progress = opts.onProgress ?? (() => {});
  if (opts.ocamlopt !== undefined || opts.ocamlfind !== undefined) {
    const tc = await explicitToolchain(opts, env);
    progress(`using ${tc.ocamlopt.join(" ")} (OCaml ${tc.version}); nothing to build`);
    return tc;
  }
  const { prefix, source } = resolvePrefix({ ...opts, env });
  const state = await inspectPrefix(prefix, env);
  if (state.built) {
    progress(`OCaml ${state.version} already built at ${prefix}`);
    return cacheToolchain(prefix, state.version!);
  }
  if (state.problem !== undefined) throw unusablePrefix(prefix, state.problem);
  if (source === "default" && !opts.build) {
    const onPath = findOnPath("ocamlopt", env);
    if (onPath !== undefined) {
      const probe = await probeVersion([onPath], env);
      if (probe.ok) {
        progress(
          `using ${onPath} from PATH (OCaml ${probe.version}); nothing to build ` +
            `(pass --build to build OCaml ${OCAML_VERSION} into ${prefix} anyway)`,
        );
        return { ocamlopt: [onPath], version: probe.version, origin: "user" };
      }
    }
  }
  const tools = checkBuildTools(env);
  await Deno.mkdir(dirname(prefix), { recursive: true });
  const files = prefixFiles(prefix);
  const release = await acquireLock(files.lock, {
    timeoutMs: opts.lockTimeoutMs ?? 30 * 60_000,
    pollMs: opts.lockPollMs ?? 1000,
    signal: opts.signal,
    isAlive: opts.isAlive ?? processAlive,
    onWait: (pid) =>
      progress(
        `another setup (${pid === undefined ? "unknown pid" : `pid ${pid}`}) is building into ` +
          `${prefix}; waiting for it (lock file ${files.lock})`,
      ),
    onStale: (pid) =>
      progress(
        `taking over the stale lock ${files.lock} (${
          pid === undefined ? "never completed" : `pid ${pid} is not running`
        })`,
      ),
  });
  try {
    const again = await inspectPrefix(prefix, env);
    if (again.built) {
      progress(`OCaml ${again.version} already built at ${prefix} (by the other setup)`);
      return cacheToolchain(prefix, again.version!);
    }
    if (again.problem !== undefined) throw unusablePrefix(prefix, again.problem);
    await removeStaleTemps(prefix, opts.isAlive ?? processAlive);
    return await build(prefix, tools, env, opts, progress);
  } finally {
    await release();
  }
}

function unusablePrefix(prefix: string, problem: string): OCamlToolchainError {
  return new OCamlToolchainError(
    `${prefix} ${problem}; it is not an OCaml ${OCAML_VERSION} built by memprof-lab, and it is ` +
      `left alone: remove it, or choose another prefix with --prefix DIR or ${PREFIX_ENV_VAR}`,
  );
}

/** The name of a build's temporary directory beside the prefix: `<tmpPrefix><pid>-<16 hex>`,
 * with the pid of the setup that made it (and a random part); {@linkcode tmpDirOwner} reads it
 * back. */
function tmpDirName(prefix: string, pid: number): string {
  const random = crypto.getRandomValues(new Uint8Array(8));
  const hex = [...random].map((b) => b.toString(16).padStart(2, "0")).join("");
  return `${prefixFiles(prefix).tmpPrefix}${pid}-${hex}`;
}

/** The pid of the setup that made the temporary directory `name` (a name in the prefix's folder),
 * or undefined for a name a build does not give ({@linkcode tmpDirName}). */
function tmpDirOwner(prefix: string, name: string): number | undefined {
  const start = basename(prefixFiles(prefix).tmpPrefix);
  if (!name.startsWith(start)) return undefined;
  const m = /^([1-9][0-9]{0,9})-[0-9a-f]{16}$/.exec(name.slice(start.length));
  return m === null ? undefined : Number(m[1]);
}

/** Removes the temporary directories of builds whose setup is gone (killed: one that ends
 * removes its own). Only directories named as a build names them ({@linkcode tmpDirOwner}) are
 * considered, and only those of a pid that is not running: anything else beside the prefix, even
 * `PREFIX.tmp-…`, is left alone. */
async function removeStaleTemps(prefix: string, isAlive: (pid: number) => boolean): Promise<void> {
  const dir = dirname(prefix);
  for await (const entry of Deno.readDir(dir)) {
    if (!entry.isDirectory || entry.isSymlink) continue;
    const pid = tmpDirOwner(prefix, entry.name);
    if (pid === undefined || pid === Deno.pid || isAlive(pid)) continue;
    await Deno.remove(join(dir, entry.name), { recursive: true }).catch(() => {});
  }
}

async function build(
  prefix: string,
  tools: { gcc: string; make: string; npm: string; tar: string },
  env: Env,
  opts: SetupOptions,
  progress: (line: string) => void,
): Promise<Toolchain> {
  const runner = opts.runner ?? denoRunner;
  const jobs = Math.max(1, Math.floor(opts.jobs ?? navigator.hardwareConcurrency ?? 2));
  const heartbeatMs = opts.heartbeatMs ?? 15_000;
  const files = prefixFiles(prefix);
  const tmp = tmpDirName(prefix, Deno.pid);
  const stage = join(tmp, "stage");
  const staged = join(stage, prefix); // where `make install DESTDIR=stage` puts the prefix
  const buildEnv = childEnv(env, BUILD_ENV_DROP);
  const started = Date.now();
  const elapsed = () => Math.round((Date.now() - started) / 1000);
  const line = (stage: string, text: string) =>
    progress(`[${String(elapsed()).padStart(4)}s] ${stage}: ${text}`);
  const encoder = new TextEncoder();
  const log = await Deno.open(files.log, { write: true, create: true, truncate: true });
  const logText = (s: string) => {
    const b = encoder.encode(s);
    for (let off = 0; off < b.length;) off += log.writeSync(b.subarray(off));
  };
  const tail = new OutputTail(12);
  let stageName = "fetch";
  let lastLineAt = Date.now();

  const stepFailed = (command: readonly string[], code: number) => {
    const shownTail = tail.lines().map((l) => `  | ${shorten(l, 200)}`).join("\n");
    const hint = stageName === "fetch" && basename(command[0]) === "npm"
      ? `could not fetch ${OCAML_NPM_PACKAGE} from the npm registry (npm pack exited with ` +
        `status ${code}); check the network connection and npm's registry setting`
      : `OCaml ${OCAML_VERSION} build failed at ${stageName} (${basename(command[0])} exited ` +
        `with status ${code})`;
    return new OCamlToolchainError(
      `${hint}; nothing was installed at ${prefix}. Full output in the build log: ${files.log}` +
        (shownTail ? `\nlast lines:\n${shownTail}` : ""),
      { logPath: files.log },
    );
  };
  const interrupted = () =>
    new OCamlToolchainError(
      `setup interrupted during ${stageName}; nothing was installed at ${prefix} (build log: ${files.log})`,
      { logPath: files.log },
    );
  /** Runs one command of the current stage; returns its stdout text. */
  const run = async (
    command: readonly string[],
    cwd: string,
    logStdout = true,
  ): Promise<string> => {
    if (opts.signal?.aborted) throw interrupted();
    logText(`\n$ ${command.join(" ")}   (in ${cwd})\n`);
    tail.reset();
    const stdout: Uint8Array[] = [];
    let code: number;
    const heartbeat = setInterval(() => {
      if (Date.now() - lastLineAt < heartbeatMs) return;
      lastLineAt = Date.now();
      const last = tail.lines().at(-1);
      line(stageName, `still running${last ? `, last output: ${shorten(last.trim(), 90)}` : ""}`);
    }, Math.max(10, Math.min(heartbeatMs, 1000)));
    try {
      code = await runner(command, {
        cwd,
        env: buildEnv,
        signal: opts.signal,
        onOutput: (chunk, stream) => {
          if (stream === "stderr" || logStdout) {
            for (let off = 0; off < chunk.length;) off += log.writeSync(chunk.subarray(off));
            tail.add(chunk);
          }
          if (stream === "stdout") stdout.push(chunk);
        },
      });
    } catch (e) {
      if (opts.signal?.aborted) throw interrupted();
      logText(`\n[memprof-lab] cannot run ${command[0]}: ${(e as Error).message}\n`);
      throw new OCamlToolchainError(
        `OCaml ${OCAML_VERSION} build failed at ${stageName}: cannot run ${command[0]}: ${
          (e as Error).message
        }; build log: ${files.log}`,
        { logPath: files.log, cause: e },
      );
    } finally {
      clearInterval(heartbeat);
    }
    logText(`[memprof-lab] exit status ${code}\n`);
    if (opts.signal?.aborted) throw interrupted();
    if (code !== 0) throw stepFailed(command, code);
    return new TextDecoder().decode(concat(stdout));
  };
  const begin = (name: string, text: string) => {
    stageName = name;
    lastLineAt = Date.now();
    line(name, text);
  };

  try {
    logText(
      `memprof-lab: building OCaml ${OCAML_VERSION} into ${prefix}, ${new Date().toISOString()}\n`,
    );
    progress(`building OCaml ${OCAML_VERSION} into ${prefix} (build log: ${files.log})`);
    await Deno.mkdir(tmp, { recursive: true });

    begin("fetch", `${OCAML_NPM_PACKAGE} from the npm registry (npm pack)`);
    // npm's stdout is a JSON description listing the package's 4,488 files: checkPacked logs
    // only the part that matters.
    const npmPack = [tools.npm, "pack", OCAML_NPM_PACKAGE, "--json", "--pack-destination", tmp];
    const packed = await run(npmPack, tmp, false);
    const tarball = checkPacked(packed, tmp, files.log, logText);
    await run([tools.tar, "xzf", tarball], tmp);
    const src = join(tmp, "package");
    if (!(await exists(join(src, "configure")))) {
      throw new OCamlToolchainError(
        `the ${OCAML_NPM_PACKAGE} package has no package/configure; build log: ${files.log}`,
        { logPath: files.log },
      );
    }

    begin("configure", `./configure --prefix=${prefix}`);
    await run([join(src, "configure"), `--prefix=${prefix}`], src);

    begin("make", `make -j${jobs} (this takes a few minutes)`);
    await run([tools.make, `-j${jobs}`], src);

    begin("install", `make install into a staging directory`);
    await run([tools.make, "install", `DESTDIR=${stage}`], src);

    begin("verify", `ocamlopt -version`);
    const ocamlopt = join(staged, "bin", "ocamlopt");
    const probe = await probeVersion([ocamlopt], env);
    if (!probe.ok || probe.version !== OCAML_VERSION) {
      const why = probe.ok ? `it is OCaml ${probe.version}, not ${OCAML_VERSION}` : probe.reason;
      logText(`\n[memprof-lab] verify failed: ${why}\n`);
      throw new OCamlToolchainError(
        `OCaml ${OCAML_VERSION} build failed at verify: ${why}; nothing was installed at ${prefix}. ` +
          `Build log: ${files.log}`,
        { logPath: files.log },
      );
    }
    if (opts.signal?.aborted) throw interrupted();
    const info: BuildInfo = {
      version: probe.version,
      source: `npm:${OCAML_NPM_PACKAGE}`,
      integrity: OCAML_NPM_INTEGRITY,
      builtAt: new Date().toISOString(),
      seconds: elapsed(),
    };
    await Deno.writeTextFile(join(staged, BUILD_INFO_FILE), JSON.stringify(info, null, 2) + "\n");
    try {
      // Atomic: PREFIX appears complete or not at all (an empty PREFIX directory is replaced).
      await Deno.rename(staged, prefix);
    } catch (e) {
      throw new OCamlToolchainError(
        `cannot move the built OCaml from ${staged} to ${prefix}: ${(e as Error).message}`,
        { logPath: files.log, cause: e },
      );
    }
    logText(`\n[memprof-lab] installed at ${prefix} in ${elapsed()} s\n`);
    line("done", `OCaml ${probe.version} built at ${prefix} in ${elapsed()} s`);
    return cacheToolchain(prefix, probe.version);
  } finally {
    log.close();
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
  }
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let off = 0;
  for (const c of chunks) {
    out.set(c, off);
    off += c.length;
  }
  return out;
}

/** Checks `npm pack --json` output: the exact package, its pinned integrity, and the tarball
 * written. Returns the tarball's path. */
function checkPacked(
  json: string,
  dir: string,
  logPath: string,
  log: (text: string) => void,
): string {
  let entry: { name?: unknown; version?: unknown; integrity?: unknown; filename?: unknown };
  try {
    const parsed = JSON.parse(json);
    entry = Array.isArray(parsed) ? parsed[0] : parsed;
    if (entry === null || typeof entry !== "object") throw new Error("no package entry");
  } catch (e) {
    throw new OCamlToolchainError(
      `'npm pack ${OCAML_NPM_PACKAGE} --json' printed no package description (${
        (e as Error).message
      }); build log: ${logPath}`,
      { logPath },
    );
  }
  const { name, version, integrity, filename: file } = entry;
  log(`[memprof-lab] npm pack: ${JSON.stringify({ name, version, integrity, filename: file })}\n`);
  if (entry.name !== "ocaml" || entry.version !== OCAML_VERSION) {
    throw new OCamlToolchainError(
      `npm pack fetched ${String(entry.name)}@${String(entry.version)}, not ${OCAML_NPM_PACKAGE}`,
      { logPath },
    );
  }
  if (entry.integrity !== OCAML_NPM_INTEGRITY) {
    throw new OCamlToolchainError(
      `npm pack fetched ${OCAML_NPM_PACKAGE} with integrity ${String(entry.integrity)}, but ` +
        `${OCAML_NPM_INTEGRITY} is pinned; refusing to build it`,
      { logPath },
    );
  }
  const filename = typeof entry.filename === "string"
    ? entry.filename
    : `ocaml-${OCAML_VERSION}.tgz`;
  return join(dir, basename(filename));
}

export { isSupportedVersion };
