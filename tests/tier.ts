// The test tiers (docs/test-cost.md, "Tiers"). `MEMPROF_LAB_TEST_TIER` is the one knob:
//
// - `quick` (`deno task test`, the developer's loop): the costly in-test loops (fuzz campaigns,
//   property tests with many runs, counts over many generated programs) run at the reduced size
//   each gives to `sized`, and the real OCaml runtime is not used (tests/real_toolchain.ts says
//   there is no toolchain, so its tests are ignored); the files that exist to judge the
//   simulation against the real runtime (`REAL_RUNTIME_FILES`) are not run at all.
// - `full` (`deno task test:full`, what CI runs): every file, every loop at its full size, the
//   real runtime wherever it is found.
//
// tests/run_tests.ts sets the variable for each deno test it starts; a `deno test` run without
// it (or without --allow-env) is the full tier, so that nothing is reduced unless asked.

/** The tiers: `quick` reduces, `full` runs everything at full size. */
export type Tier = "quick" | "full";

/** The environment variable naming the tier. */
export const TIER_ENV_VAR = "MEMPROF_LAB_TEST_TIER";

/** The tier named by `value` (the variable's text); undefined if it names none. */
export function parseTier(value: string | undefined): Tier | undefined {
  return value === "quick" || value === "full" ? value : undefined;
}

/** The tier of this run: `MEMPROF_LAB_TEST_TIER`, `full` when unset or unreadable. A value that
 * names no tier is an error (a typo must not run a reduced suite silently). */
export const TIER: Tier = (() => {
  let value: string | undefined;
  try {
    value = Deno.env.get(TIER_ENV_VAR);
  } catch {
    return "full"; // no permission to read the environment
  }
  if (value === undefined || value === "") return "full";
  const tier = parseTier(value);
  if (tier === undefined) throw new Error(`${TIER_ENV_VAR} must be quick or full, got '${value}'`);
  return tier;
})();

/** The size of a costly loop in this tier: `full` in the full tier, `quick` in the quick one.
 * Every test calling it must still be able to fail at the quick size: its bounds are checked
 * (or recomputed) for both sizes, with its fixed seed. */
export function sized(full: number, quick: number): number {
  return TIER === "full" ? full : quick;
}

/** The test files whose purpose is to judge the simulation against the real OCaml runtime
 * (every test, or every test but a listing check, compiles and runs OCaml programs): the quick
 * tier does not run them; named on its command line, one runs in the full tier
 * (tests/run_tests.ts). Other files with some real-runtime tests stay in the quick tier, those
 * tests ignored there (tests/real_toolchain.ts). Paths relative to the checkout. */
export const REAL_RUNTIME_FILES: readonly string[] = [
  "tests/differential/library_agree_test.ts",
  "tests/differential/rings_real_test.ts",
  "tests/docs/findings_test.ts",
  "tests/export/build_command_test.ts",
  "tests/export/harness_heap_real_test.ts",
];
