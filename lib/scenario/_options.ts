/**
 * Checks of the options objects a scenario passes to the DSL, at run time, so that a mistyped
 * key in a plain-JavaScript (or unchecked) scenario is refused with a suggestion instead of
 * being ignored: `unknown option `lifetme`; did you mean `lifetime`?`.
 * @module
 */

/** Edit distance of two keys: insertions, deletions, substitutions and swaps of two adjacent
 * characters each cost 1 (the optimal string alignment distance). */
export function editDistance(a: string, b: string): number {
  const m = a.length, n = b.length;
  // Three rows suffice: the swap looks two rows back.
  let prev2 = new Array<number>(n + 1).fill(0);
  let prev = Array.from({ length: n + 1 }, (_, j) => j);
  let cur = new Array<number>(n + 1).fill(0);
  for (let i = 1; i <= m; i++) {
    cur[0] = i;
    for (let j = 1; j <= n; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d = Math.min(d, prev2[j - 2] + 1);
      }
      cur[j] = d;
    }
    [prev2, prev, cur] = [prev, cur, prev2];
  }
  return prev[n];
}

/** The known key closest to `key`, when it is close enough to be what was meant: the same
 * letters in another case, or at most 2 edits away (1 for keys of up to 3 characters). */
export function suggest(key: string, known: readonly string[]): string | undefined {
  const lower = key.toLowerCase();
  const sameCase = known.find((k) => k.toLowerCase() === lower);
  if (sameCase !== undefined) return sameCase;
  let best: string | undefined, bestD = Infinity;
  for (const k of known) {
    const d = editDistance(lower, k.toLowerCase());
    if (d < bestD) {
      best = k;
      bestD = d;
    }
  }
  const limit = key.length <= 3 ? 1 : 2;
  return bestD <= limit ? best : undefined;
}

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

/** Keys of each options object of the DSL (docs/scenarios.md lists them with examples). */
export const OPTION_KEYS = {
  settings: [
    "name",
    "description",
    "seed",
    "samplingRate",
    "callstackSize",
    "minorHeapWords",
    "ringLog2",
    "clockTickNs",
    "maxDomains",
    "pid",
    "externalSamplingRate",
    "log",
    "gcTime",
  ],
  alloc: ["lifetime", "source", "at", "customMem"],
  allocCombined: ["lifetime", "at"],
  unmarshal: ["lifetime", "at"],
  profile: ["name", "samplingRate", "callstackSize", "tracker"],
  tracker: ["allocMinor", "allocMajor", "promote", "deallocMinor", "deallocMajor"],
  callback: ["result", "actions"],
  actionEntry: ["when", "action"],
} as const;
