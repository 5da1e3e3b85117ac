// What the tests print besides their results: statistics (fuzz campaigns, peak memory, files
// written) only with MEMPROF_LAB_VERBOSE=1, so that `deno task test` says one line per file.
// Skip notices (tests/real_toolchain.ts `skipNotice`) are always printed: they are results.

/** Whether the tests print their statistics: `MEMPROF_LAB_VERBOSE=1`. */
export const VERBOSE: boolean = (() => {
  try {
    return Deno.env.get("MEMPROF_LAB_VERBOSE") === "1";
  } catch {
    return false; // no permission to read the environment: quiet
  }
})();

/** Prints `text` (a test's statistics) when {@linkcode VERBOSE}. */
export function statistics(text: string): void {
  if (VERBOSE) console.log(text);
}
