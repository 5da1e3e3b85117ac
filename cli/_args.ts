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
 * (it is always strict), and how to read a negative integer such as `-5`: by default as an
 * option (unknown, so refused); with `negativeIntegers: "positional"`, as an argument (for
 * commands whose arguments may be negative numbers). */
export type CommandLineConfig = Omit<ParseArgsConfig, "args" | "strict"> & {
  readonly negativeIntegers?: "option" | "positional";
};

/** The options of a command: `parseArgs`'s option table. */
export type OptionTable = NonNullable<ParseArgsConfig["options"]>;

/** The `-h, --help` flag every command takes. */
export const HELP_OPTION = { help: { type: "boolean", short: "h" } } as const;

/** What {@linkcode parseCommandLine} returns: `parseArgs`'s result for `T`. */
export type CommandLine<T extends CommandLineConfig> = ReturnType<typeof parseArgs<T>>;

/** A usage error of `command` (its words after the program name, such as `trace top`): one
 * line saying what is wrong, one pointing to the command's `--help`. */
export function usageError(command: string, message: string): UsageError {
  return new UsageError(message, helpHint(command));
}

/** The `n` files `command` (such as `trace diff`) takes as its arguments `positionals`; a usage
 * error saying how many it takes when there are more or fewer. */
export function fileArguments(command: string, positionals: string[], n: number): string[] {
  if (positionals.length !== n) {
    throw usageError(
      command,
      `'${command}' takes ${n === 1 ? "one file" : `${n} files`}, got ${positionals.length}`,
    );
  }
  return positionals;
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
  if (config.negativeIntegers === "positional") return parseWithNegatives(command, args, config);
  const { negativeIntegers: _, ...parseConfig } = config;
  const options = config.options ?? {};
  const known = Object.keys(options);
  // A first, lenient pass finds what is wrong, in the order it was typed.
  for (const t of lenientTokens(args, options)) {
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
    return parseArgs({ ...parseConfig, args: [...args], strict: true }) as CommandLine<T>;
  } catch (e) {
    // Not expected after the checks above; still one line, without parseArgs' advice.
    throw usageError(command, (e as Error).message.split(/\. |\n/)[0]);
  }
}

/** A negative integer typed as an argument (`-5`, `-1e3`). */
const NEGATIVE_INTEGER = /^-[0-9]+(?:e\+?[0-9]+)?$/i;

/** {@linkcode parseCommandLine} with negative integers read as arguments: each is swapped for a
 * placeholder, a NUL byte and its number (arguments that start with a NUL byte, which no process
 * is given but a caller may pass, are swapped too), and swapped back after. */
function parseWithNegatives<const T extends CommandLineConfig>(
  command: string,
  args: readonly string[],
  config: T,
): CommandLine<T> {
  const swapped: string[] = [];
  const masked = args.map((a) => {
    if (!NEGATIVE_INTEGER.test(a) && !a.startsWith("\0")) return a;
    swapped.push(a);
    return `\0${swapped.length - 1}`;
  });
  const restore = (x: string) => x.startsWith("\0") ? swapped[Number(x.slice(1))] : x;
  const r: {
    values: Record<string, unknown>;
    positionals: string[];
    tokens?: { kind: string; value?: unknown }[];
  } = parseCommandLine(command, masked, { ...config, negativeIntegers: "option" });
  r.positionals = r.positionals.map(restore);
  for (const [k, v] of Object.entries(r.values)) {
    if (typeof v === "string") r.values[k] = restore(v);
    else if (Array.isArray(v)) r.values[k] = v.map((x) => typeof x === "string" ? restore(x) : x);
  }
  for (const t of r.tokens ?? []) {
    if (typeof t.value === "string") t.value = restore(t.value);
  }
  return r as CommandLine<T>;
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

/**
 * {@linkcode parseCommandLine} for a command that takes arguments (files, numbers) and the
 * options `options` besides `-h, --help`.
 */
export function parseCommandArgs<const O extends OptionTable>(
  command: string,
  args: readonly string[],
  options: O,
  { negativeIntegers = "option" }: Pick<CommandLineConfig, "negativeIntegers"> = {},
): CommandLine<{ allowPositionals: true; options: typeof HELP_OPTION & O }> {
  return parseCommandLine(command, args, {
    allowPositionals: true,
    options: { ...HELP_OPTION, ...options },
    negativeIntegers,
  }) as CommandLine<{ allowPositionals: true; options: typeof HELP_OPTION & O }>;
}

/**
 * Where the `n`-th argument (0-based, options and their values skipped) of `args` stands, read
 * leniently by `options` (nothing is refused here): for a command that passes everything from
 * one argument on to another tool. Undefined when there are fewer arguments.
 */
export function argumentIndex(
  args: readonly string[],
  options: OptionTable,
  n: number,
): number | undefined {
  return lenientTokens(args, options).filter((t) => t.kind === "positional")[n]?.index;
}

/** `args` as `parseArgs` reads them by `options`, refusing nothing. */
function lenientTokens(args: readonly string[], options: OptionTable) {
  return parseArgs({
    args: [...args],
    options,
    strict: false,
    allowPositionals: true,
    tokens: true,
  })
    .tokens;
}

/** {@linkcode parseInteger} of an option that may be absent: undefined when `text` is. */
export function parseIntegerOption(
  command: string,
  name: string,
  text: string | undefined,
  range: { min?: number; max?: number } = {},
): number | undefined {
  return text === undefined ? undefined : parseInteger(command, name, text, range);
}

/**
 * The rate `text` gives for `name` (a probability, such as `--rate`): a decimal number, with an
 * optional fraction and power of ten (`0.01`, `.5`, `1e-3`), no sign, blanks, hexadecimal, NaN
 * or Infinity, within [0, 1]. Anything else is a usage error with `command`'s help as its hint.
 */
export function parseRate(command: string, name: string, text: string): number {
  if (!/^([0-9]+(\.[0-9]*)?|\.[0-9]+)(e[-+]?[0-9]+)?$/i.test(text)) {
    throw usageError(command, `${name} must be a number in [0, 1], got '${text}'`);
  }
  const x = Number(text);
  if (!(x >= 0 && x <= 1)) {
    throw usageError(command, `${name} must be within [0, 1], got '${text}'`);
  }
  return x;
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
