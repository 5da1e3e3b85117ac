// Running the commands of cli/ as a user does: a child deno process, stdin /dev/null, killed if
// it hangs (a guard against a hang, not a measure of time).
import { join } from "node:path";

/** The repository's root folder. */
export const root = new URL("../../", import.meta.url).pathname;

/** The permissions `deno install --global … -n memprof-lab cli/main.ts` gives (README). */
export const MEMPROF_LAB_PERMISSIONS = [
  "--allow-read",
  "--allow-write",
  "--allow-run",
  "--allow-env",
];

/** What a command did. */
export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `deno run <permissions> cli/<script> args…` in `cwd` (default: the repository). */
export async function runCli(
  script: string,
  args: readonly string[],
  { cwd = root, permissions = MEMPROF_LAB_PERMISSIONS }: {
    cwd?: string;
    permissions?: readonly string[];
  } = {},
): Promise<Ran> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...permissions, join(root, "cli", script), ...args],
    cwd,
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(120_000),
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/** Runs `memprof-lab args…` (cli/main.ts with its installed permissions) in `cwd`. */
export function memprofLab(args: readonly string[], cwd = root): Promise<Ran> {
  return runCli("main.ts", args, { cwd });
}
