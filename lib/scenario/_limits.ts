/**
 * The limits a scenario must stay within so that it can run and its outputs can be written:
 * nesting depth, plain names, the virtual clock, the ring image, the expected number of steps.
 * @module
 */
/** Deepest nesting of steps with bodies (`repeat`, `call`, `blocking`, `attempt`, `every`)
 * inside each other. Deeper scenarios are refused before they run: building, checking and
 * running them recurses once per level. */
export const MAX_NESTING = 1000;

/** Why steps nested deeper than {@linkcode MAX_NESTING} are refused. */
export const NESTING_PROBLEM =
  `steps nest more than ${MAX_NESTING} deep (repeat, call, blocking, ` +
  "attempt and every inside each other)";

/** The latest virtual time, in nanoseconds, a run may reach: trace and ring timestamps are
 * computed exactly only up to 2^53 - 1 (about 104 days). */
export const MAX_CLOCK_NS: number = Number.MAX_SAFE_INTEGER;

/** Largest runtime_events ring image (all domains' rings), kept in memory while running. */
export const MAX_RING_IMAGE_BYTES = 2 ** 30;

/** Most steps `deno task scenario` runs without `--max-steps`. */
export const DEFAULT_MAX_STEPS = 1e9;

/** Longest scenario name. */
export const MAX_NAME_LENGTH = 100;

const PLAIN_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;

/** Whether `name` is a plain folder name: letters, digits, `_`, `-` and `.`, not starting with
 * `.` or `-` (so never `.` or `..`), at most {@linkcode MAX_NAME_LENGTH} characters. */
export function isPlainName(name: unknown): name is string {
  return typeof name === "string" && name.length <= MAX_NAME_LENGTH && PLAIN_NAME.test(name);
}

/** Why `name` is not a plain folder name (for messages). */
export const PLAIN_NAME_RULE =
  `letters, digits, '_', '-' and '.', not starting with '.' or '-', at most ${MAX_NAME_LENGTH} characters`;

/** Formats a count with thousands separators (`1,000,000`), or in exponent form when huge. */
export function formatCount(n: number): string {
  if (!Number.isFinite(n) || n >= 1e21) return n.toExponential(3);
  return Math.round(n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}
