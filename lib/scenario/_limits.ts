/**
 * The limits a scenario must stay within so that it can run and its outputs can be written:
 * nesting depth, plain names, the characters of its other names and frames, the virtual clock,
 * the ring image, the expected number of steps.
 * @module
 */
import { Location } from "../memtrace/types.ts";

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

const LABEL = /^[A-Za-z0-9_.-]+$/;

/** Whether `name` is a valid name of a domain, a systhread, a profile or a group of kept blocks
 * (`keep.until`, `keep.steps`, `keep.list`, `keep.ring`, `release`): one or more letters, digits,
 * `_`, `-` and `.`. The builder and the validator both check it (see
 * {@linkcode LABEL_NAME_RULE}). */
export function isLabelName(name: unknown): name is string {
  return typeof name === "string" && LABEL.test(name);
}

/** What {@linkcode isLabelName} accepts (for messages). */
export const LABEL_NAME_RULE = "one or more letters, digits, '_', '-' and '.'";

/** Whether `frame` is a callstack frame as memtrace prints locations,
 * `defname@file:line:start-end` (no blank anywhere, no `@` in the name). The builder and the
 * validator both check it (see {@linkcode FRAME_RULE}). */
export function isFrame(frame: unknown): frame is string {
  return typeof frame === "string" && Location.parse(frame) !== undefined;
}

/** What {@linkcode isFrame} accepts (for messages). */
export const FRAME_RULE = "of the form defname@file:line:start-end";

/** Formats a count with thousands separators (`1,000,000`), or in exponent form when huge. */
export function formatCount(n: number): string {
  if (!Number.isFinite(n) || n >= 1e21) return n.toExponential(3);
  return Math.round(n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}
