/**
 * Where compiled differential programs are kept between runs: one folder shared by
 * `deno task diff` and the test suite (tests/differential/library_agree_test.ts), so that a program
 * compiled and verified by one is reused by the other.
 * @module
 */

/** The environment variable naming the cache folder. */
export const DIFF_CACHE_ENV_VAR = "MEMPROF_LAB_DIFF_CACHE";

/**
 * The default folder for compiled programs: `$MEMPROF_LAB_DIFF_CACHE`, else
 * `$XDG_CACHE_HOME/memprof-lab/differential`, else `$HOME/.cache/memprof-lab/differential`;
 * undefined when none of these variables is set. `env` reads one variable.
 */
export function defaultDiffCacheDir(env: (name: string) => string | undefined): string | undefined {
  const dir = env(DIFF_CACHE_ENV_VAR);
  if (dir) return dir;
  const xdg = env("XDG_CACHE_HOME");
  if (xdg) return `${xdg}/memprof-lab/differential`;
  const home = env("HOME");
  if (home) return `${home}/.cache/memprof-lab/differential`;
  return undefined;
}
