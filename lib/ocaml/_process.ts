/**
 * Internal helpers of the toolchain manager: looking programs up on a PATH, asking an `ocamlopt`
 * for its version, and running build commands with their output streamed.
 *
 * @module
 */

import { delimiter, resolve } from "node:path";
import type { CommandRunner } from "./toolchain.ts";

/** An environment as the toolchain functions take it (unset variables may appear as undefined). */
export type Env = Record<string, string | undefined>;

/** The environment with its unset entries dropped, as a child process gets it. */
export function childEnv(env: Env, drop: readonly string[] = []): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (v !== undefined && !drop.includes(k)) out[k] = v;
  }
  return out;
}

/** Whether a file exists, is a regular file (after symlinks) and has an execute bit. */
function isExecutableFile(path: string): boolean {
  try {
    const st = Deno.statSync(path);
    return st.isFile && (st.mode === null || (st.mode & 0o111) !== 0);
  } catch {
    return false;
  }
}

/** The absolute path of the first executable `name` in `env.PATH`, as a shell would find it. */
export function findOnPath(name: string, env: Env): string | undefined {
  const path = env.PATH;
  if (path === undefined || path === "") return undefined;
  for (const dir of path.split(delimiter)) {
    const candidate = resolve(dir === "" ? "." : dir, name);
    if (isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}

/** Whether OCaml `version` (as `ocamlopt -version` prints it) is a 5.3 release: 5.3.0, 5.3.1,
 * possibly with a `~rc1` or `+options` suffix. */
export function isSupportedVersion(version: string): boolean {
  return /^5\.3\.\d+([~+].*)?$/.test(version);
}

/** What {@linkcode probeVersion} found out. */
export type Probe =
  | { ok: true; version: string }
  | { ok: false; reason: string; version?: string };

/** How long `ocamlopt -version` may take before it is given up on. */
const PROBE_TIMEOUT_MS = 20_000;

/**
 * Runs `command -version` (command being e.g. `["/usr/bin/ocamlopt"]` or
 * `["/usr/bin/ocamlfind", "ocamlopt"]`) and checks that it prints an OCaml 5.3.x version.
 * Never throws for a bad program: the reason is in the result.
 */
export async function probeVersion(command: readonly string[], env: Env): Promise<Probe> {
  const file = command[0];
  const shown = command.join(" ");
  let st: Deno.FileInfo;
  try {
    st = await Deno.stat(file);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return { ok: false, reason: `${file} does not exist` };
    return { ok: false, reason: `${file} cannot be read: ${(e as Error).message}` };
  }
  if (st.isDirectory) return { ok: false, reason: `${file} is a directory, not a program` };
  if (st.mode !== null && (st.mode & 0o111) === 0) {
    return { ok: false, reason: `${file} is not executable (chmod +x ${file}?)` };
  }
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), PROBE_TIMEOUT_MS);
  let out: Deno.CommandOutput;
  try {
    out = await new Deno.Command(file, {
      args: [...command.slice(1), "-version"],
      env: childEnv(env),
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      signal: ac.signal,
    }).output();
  } catch (e) {
    return { ok: false, reason: `${file} cannot be run: ${(e as Error).message}` };
  } finally {
    clearTimeout(timer);
  }
  if (ac.signal.aborted) {
    return {
      ok: false,
      reason: `'${shown} -version' did not answer within ${PROBE_TIMEOUT_MS / 1000} s`,
    };
  }
  const dec = new TextDecoder();
  if (!out.success) {
    const err = dec.decode(out.stderr).trim().split("\n")[0] ?? "";
    return {
      ok: false,
      reason: `'${shown} -version' failed (exit status ${out.code})${err ? `: ${err}` : ""}`,
    };
  }
  const version = dec.decode(out.stdout).trim();
  if (!/^\d+\.\d+\.\d+\S*$/.test(version)) {
    const shownOut = version.length > 60 ? `${version.slice(0, 60)}…` : version;
    return {
      ok: false,
      reason: `'${shown} -version' printed '${shownOut}', which is not an OCaml version`,
    };
  }
  if (!isSupportedVersion(version)) {
    return {
      ok: false,
      version,
      reason: `${shown} is OCaml ${version}, but memprof-lab needs OCaml 5.3.x`,
    };
  }
  return { ok: true, version };
}

/** Runs commands with `Deno.Command`, streaming their output; the default
 * {@linkcode CommandRunner}. An aborted signal kills the command. */
export const denoRunner: CommandRunner = async (command, options) => {
  const child = new Deno.Command(command[0], {
    args: command.slice(1),
    cwd: options.cwd,
    env: options.env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: options.signal,
  }).spawn();
  const pump = async (stream: ReadableStream<Uint8Array>, name: "stdout" | "stderr") => {
    for await (const chunk of stream) options.onOutput(chunk, name);
  };
  const [status] = await Promise.all([
    child.status,
    pump(child.stdout, "stdout"),
    pump(child.stderr, "stderr"),
  ]);
  return status.code;
};

/** Whether process `pid` is running (on this machine), asked with `kill -0` (Deno grants no
 * access to /proc/<pid> short of --allow-all). A process we may not signal counts as running, and
 * so does one we cannot ask about: a live build must never be broken into. */
export function processAlive(pid: number): boolean {
  if (pid === Deno.pid) return true;
  try {
    const out = new Deno.Command("/bin/sh", {
      args: ["-c", 'kill -0 "$1"', "sh", String(pid)],
      env: { LC_ALL: "C" },
      clearEnv: true,
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).outputSync();
    if (out.success) return true;
    return !/no such process/i.test(new TextDecoder().decode(out.stderr));
  } catch {
    return true;
  }
}
