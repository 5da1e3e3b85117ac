/**
 * The checked-in list of known differences between the simulation and the real runtime:
 * scenario, where it first differs, and a one-line reason. A differential run tolerates exactly
 * these; a listed scenario that agrees again, or differs elsewhere, makes the run fail so that
 * the list stays true.
 * @module
 */
import type { Comparison } from "./compare.ts";

/** One entry of the list. */
export interface KnownDifference {
  /** The scenario's name. */
  readonly scenario: string;
  /** Where it first differs: `callback 12`, `collections`, `minor heap` or `overflow`; or
   * `not exportable` for a scenario the export refuses (the reason then says why it cannot be
   * judged on the real runtime). */
  readonly at: string;
  /** Why, in one line. */
  readonly reason: string;
}

/** A malformed known-differences file. */
export class KnownDifferencesError extends Error {
  /** Error class name. */
  override name = "KnownDifferencesError";
}

/** Where a comparison first differs, in the list's terms (undefined when it agrees). */
export function differenceKey(c: Comparison): string | undefined {
  const d = c.difference;
  if (d === undefined) return undefined;
  switch (d.kind) {
    case "callback":
      return `callback ${d.index}`;
    case "collections":
      return "collections";
    case "minorHeap":
      return "minor heap";
    case "overflow":
      return "overflow";
  }
}

/** The `at` of a scenario the export refuses. */
export const NOT_EXPORTABLE = "not exportable";

const KEY = /^(callback [1-9][0-9]*|collections|minor heap|overflow|not exportable)$/;

/** The places a list names: `at` must match `pattern`, which `description` says in words. */
export interface KnownKeys {
  /** What an entry's `at` must match. */
  readonly pattern: RegExp;
  /** The same in words, for the error naming an entry that does not match. */
  readonly description: string;
}

/** The places of `known_differences.json`: the callback logs'. */
export const CALLBACK_KEYS: KnownKeys = {
  pattern: KEY,
  description: '"callback N", "collections", "minor heap", "overflow" or "not exportable"',
};

/** Parses the list (JSON: an array of entries), naming `file` in errors; `keys` are the places
 * it may name (default {@linkcode CALLBACK_KEYS}). */
export function parseKnownDifferences(
  text: string,
  file: string,
  keys: KnownKeys = CALLBACK_KEYS,
): KnownDifference[] {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new KnownDifferencesError(`${file}: not valid JSON: ${(e as Error).message}`);
  }
  if (!Array.isArray(data)) {
    throw new KnownDifferencesError(`${file}: expected an array of known differences`);
  }
  const seen = new Set<string>();
  return data.map((entry, i) => {
    const where = `${file}, entry ${i + 1}`;
    if (typeof entry !== "object" || entry === null) {
      throw new KnownDifferencesError(`${where}: expected an object`);
    }
    const { scenario, at, reason, ...rest } = entry as Record<string, unknown>;
    const extra = Object.keys(rest);
    if (extra.length > 0) {
      throw new KnownDifferencesError(`${where}: unknown key "${extra[0]}"`);
    }
    if (typeof scenario !== "string" || scenario === "") {
      throw new KnownDifferencesError(`${where}: "scenario" must be a scenario name`);
    }
    if (typeof at !== "string" || !keys.pattern.test(at)) {
      throw new KnownDifferencesError(`${where}: "at" must be ${keys.description}`);
    }
    if (typeof reason !== "string" || reason.trim() === "" || reason.includes("\n")) {
      throw new KnownDifferencesError(`${where}: "reason" must be one line of text`);
    }
    if (seen.has(scenario)) {
      throw new KnownDifferencesError(`${where}: scenario "${scenario}" is listed twice`);
    }
    seen.add(scenario);
    return { scenario, at, reason };
  });
}

/** How a scenario's result stands against the list. */
export type Verdict =
  | { readonly kind: "ok" }
  | { readonly kind: "known"; readonly entry: KnownDifference }
  | { readonly kind: "unexpected" }
  | { readonly kind: "now agrees"; readonly entry: KnownDifference }
  | { readonly kind: "moved"; readonly entry: KnownDifference; readonly now: string }
  | { readonly kind: "now exportable"; readonly entry: KnownDifference };

/** Judges a comparison of `scenario` against the list. */
export function judge(
  scenario: string,
  c: Comparison,
  known: readonly KnownDifference[],
): Verdict {
  return judgeKey(scenario, differenceKey(c), known);
}

/** Judges where `scenario` differs (`key`, undefined when it agrees) against the list. */
export function judgeKey(
  scenario: string,
  key: string | undefined,
  known: readonly KnownDifference[],
): Verdict {
  const entry = known.find((k) => k.scenario === scenario);
  if (entry === undefined) return key === undefined ? { kind: "ok" } : { kind: "unexpected" };
  if (entry.at === NOT_EXPORTABLE) return { kind: "now exportable", entry };
  if (key === undefined) return { kind: "now agrees", entry };
  if (key !== entry.at) return { kind: "moved", entry, now: key };
  return { kind: "known", entry };
}

/** Judges a scenario the export refused against the list: tolerated only when the list names
 * it as `not exportable`, with its reason; a listed difference elsewhere has moved. */
export function judgeRefusal(scenario: string, known: readonly KnownDifference[]): Verdict {
  const entry = known.find((k) => k.scenario === scenario);
  if (entry === undefined) return { kind: "unexpected" };
  if (entry.at !== NOT_EXPORTABLE) return { kind: "moved", entry, now: NOT_EXPORTABLE };
  return { kind: "known", entry };
}
