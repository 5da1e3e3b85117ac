/**
 * The command line of every command, read one way: options parsed by `node:util`'s `parseArgs`
 * (strict), a mistyped option refused in one line with the closest known one and a pointer to
 * the command's help, and integers read by one rule.
 *
 * ```
 * error: unknown option --limt (did you mean --limit?)
 * Run 'memprof-lab trace top --help' for usage.
 * ```
 * @module
 */
import { parseArgs, type ParseArgsConfig } from "node:util";
import { suggest } from "../lib/util/suggest.ts";
import { UsageError } from "./_io.ts";
import { helpHint } from "./_usage.ts";

/** What {@linkcode parseCommandLine} takes: `parseArgs`'s configuration without the arguments
 * (it is always strict). */
export type CommandLineConfig = Omit<ParseArgsConfig, "args" | "strict">;

/** What {@linkcode parseCommandLine} returns: `parseArgs`'s result for `T`. */
export type CommandLine<T extends CommandLineConfig> = ReturnType<typeof parseArgs<T>>;

/** A usage error of `command` (its words after the program name, such as `trace top`): one
 * line saying what is wrong, one pointing to the command's `--help`. */
export function usageError(command: string, message: string): UsageError {
  return new UsageError(message, helpHint(command));
}

/** The message for option `rawName` (as typed: `--limt`, `-x`) that `command` does not know,
 * with the closest of its long options when one is close enough. */
export function unknownOptionMessage(rawName: string, known: readonly string[]): string {
  const name = rawName.replace(/^--?/, "");
  const close = rawName.startsWith("--") ? suggest(name, known) : undefined;
  return `unknown option ${rawName}${close === undefined ? "" : ` (did you mean --${close}?)`}`;
}

/** The message for a command name `name` that is none of `known`, with the closest one when
 * one is close enough. */
export function unknownCommandMessage(name: string, known: readonly string[]): string {
  const close = suggest(name, known);
  return `unknown command '${name}'${close === undefined ? "" : ` (did you mean ${close}?)`}`;
}

/**
 * Parses `args` of `command` (its words after the program name, for the messages) with
 * `parseArgs` in strict mode. A wrong command line throws a {@linkcode UsageError} of one line,
 * whose hint points to `<command> --help`: an unknown option (with a suggestion), an option
 * without its value (or whose value looks like an option: write `--name=-value`), a value
 * given to a flag, an argument where the command takes none.
 */
export function parseCommandLine<const T extends CommandLineConfig>(
  command: string,
  args: readonly string[],
  config: T,
): CommandLine<T> {
  const options = config.options ?? {};
  const known = Object.keys(options);
  // A first, lenient pass finds what is wrong, in the order it was typed.
  const { tokens } = parseArgs({
    args: [...args],
    options,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  for (const t of tokens) {
    if (t.kind === "positional" && config.allowPositionals !== true) {
      throw usageError(command, `unexpected argument '${t.value}'`);
    }
    if (t.kind !== "option") continue;
    const spec = Object.hasOwn(options, t.name) ? options[t.name] : undefined;
    if (spec === undefined) throw usageError(command, unknownOptionMessage(t.rawName, known));
    if (spec.type === "boolean" && t.value !== undefined) {
      throw usageError(command, `option ${t.rawName} takes no value, got '${t.value}'`);
    }
    if (spec.type === "string" && t.value === undefined) {
      throw usageError(command, `option ${t.rawName} needs a value`);
    }
    if (spec.type === "string" && !t.inlineValue && /^-./s.test(t.value ?? "")) {
      throw usageError(
        command,
        `option ${t.rawName} needs a value, got option-like '${t.value}' (for a value ` +
          `starting with '-', write --${t.name}=${t.value})`,
      );
    }
  }
  try {
    return parseArgs({ ...config, args: [...args], strict: true }) as CommandLine<T>;
  } catch (e) {
    // Not expected after the checks above; still one line, without parseArgs' advice.
    throw usageError(command, (e as Error).message.split(/\. |\n/)[0]);
  }
}

/** The form of an integer on the command line: decimal digits, an optional sign and an optional
 * power of ten (`1e9`). */
const INTEGER = /^([+-]?[0-9]+)(?:e\+?([0-9]+))?$/i;

/** The largest power of ten read: beyond it, every integer but 0 is far out of range anyway. */
const MAX_EXPONENT = 400;

/** How the integer messages state a range. */
function rangeText(min: number | bigint, max: number | bigint | undefined): string {
  if (max === undefined) {
    return min <= -Number.MAX_SAFE_INTEGER ? "an integer" : `an integer ≥ ${min}`;
  }
  return `an integer from ${min} to ${max}`;
}

/** Reads `text` as an integer of the one form ({@linkcode INTEGER}); undefined when it is not. */
function integerOf(text: string): bigint | undefined {
  const m = INTEGER.exec(text);
  if (m === null) return undefined;
  // Past MAX_EXPONENT, the power of ten is capped: out of every range all the same.
  const exponent = Math.min(m[2] === undefined ? 0 : Number(m[2]), MAX_EXPONENT);
  return BigInt(m[1]) * 10n ** BigInt(exponent);
}

/**
 * The integer `text` gives for option or argument `name` (named as typed: `--limit`, `FACTOR`),
 * read by the one rule of every command: decimal digits with an optional sign and an optional
 * power of ten (`1e9`); no blanks, fractions or hexadecimal; a safe integer (at most 2^53 - 1 in
 * magnitude) within [`min`, `max`] (default: 0 to 2^53 - 1). Anything else is a usage error
 * saying what is accepted, with `command`'s help as its hint.
 */
export function parseInteger(
  command: string,
  name: string,
  text: string,
  { min = 0, max = Number.MAX_SAFE_INTEGER }: { min?: number; max?: number } = {},
): number {
  const n = integerOf(text);
  const unbounded = max === Number.MAX_SAFE_INTEGER;
  if (unbounded && n !== undefined && n > BigInt(max)) {
    throw usageError(command, `${name} must be at most 2^53 - 1 (${max}), got '${text}'`);
  }
  if (n === undefined || n < BigInt(min) || n > BigInt(max)) {
    throw usageError(
      command,
      `${name} must be ${rangeText(min, unbounded ? undefined : max)}, got '${text}'`,
    );
  }
  return Number(n);
}

/** {@linkcode parseInteger} for integers past 2^53 (ids, nanosecond times): the same form, as a
 * bigint within [`min`, `max`] (each unbounded when not given). */
export function parseBigInteger(
  command: string,
  name: string,
  text: string,
  { min, max }: { min?: bigint; max?: bigint } = {},
): bigint {
  const n = integerOf(text);
  if (n === undefined || (min !== undefined && n < min) || (max !== undefined && n > max)) {
    const range = min === undefined
      ? (max === undefined ? "an integer" : `an integer ≤ ${max}`)
      : rangeText(min, max);
    throw usageError(command, `${name} must be ${range}, got '${text}'`);
  }
  return n;
}
