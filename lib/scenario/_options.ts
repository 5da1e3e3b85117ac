/**
 * Checks of the options objects a scenario passes to the DSL, at run time, so that a mistyped
 * key in a plain-JavaScript (or unchecked) scenario is refused with a suggestion instead of
 * being ignored: `unknown option `lifetme`; did you mean `lifetime`?`.
 * @module
 */

import { suggest } from "../util/suggest.ts";

/** The "did you mean" helper, shared with the command line's options (lib/util/suggest.ts). */
export { editDistance, suggest } from "../util/suggest.ts";

/** A short description of a value's type, for messages. */
export function describe(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  if (typeof v === "function") return `a function${v.name ? ` (${v.name})` : ""}`;
  if (typeof v === "number" || typeof v === "boolean" || typeof v === "bigint") {
    return `${typeof v} ${String(v)}`;
  }
  if (typeof v === "string") return `string ${JSON.stringify(v).slice(0, 60)}`;
  if (typeof v === "object") {
    const keys = Object.keys(v as object);
    return keys.length === 0 ? "an empty object" : `an object with keys ${keys.join(", ")}`;
  }
  return String(typeof v);
}

/** Whether `v` is an object (not null, an array or a function); typed values keep their type. */
export function isObject(v: unknown): boolean {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** {@linkcode isObject}, narrowing `v` to a record. */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return isObject(v);
}

/** The problem with the keys of options object `obj` of `what`, or undefined when every key
 * is one of `known`. The problem starts with `what: ` unless `prefix` is false (when the
 * message names `what` already). */
export function unknownKey(
  obj: object,
  known: readonly string[],
  what: string,
  { prefix = true }: { readonly prefix?: boolean } = {},
): string | undefined {
  for (const key of Object.keys(obj)) {
    if (known.includes(key)) continue;
    const s = suggest(key, known);
    return `${prefix ? `${what}: ` : ""}unknown option \`${key}\`` +
      (s === undefined ? "" : `; did you mean \`${s}\`?`) +
      ` (${what} accepts ${known.map((k) => `\`${k}\``).join(", ")})`;
  }
  return undefined;
}

/** The problem with an options argument of `what` (which may be omitted), or undefined. A
 * lifetime given where options are expected (`alloc(8, keep.forever)`) gets its own hint. */
export function optionsProblem(
  opts: unknown,
  known: readonly string[],
  what: string,
): string | undefined {
  if (opts === undefined) return undefined;
  if (!isRecord(opts)) {
    return `${what}: options must be an object { ${known.join(", ")} }, got ${describe(opts)}`;
  }
  if ("kind" in opts && known.includes("lifetime") && !known.includes("kind")) {
    return `${what}: options must be an object { ${
      known.join(", ")
    } }, got what looks like a lifetime: write { lifetime: … }`;
  }
  return unknownKey(opts, known, what);
}

/** Keys of each options object of the DSL: the schema's (lib/scenario/_schema.ts). */
export { OPTION_KEYS } from "./_schema.ts";
