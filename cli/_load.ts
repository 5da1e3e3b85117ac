/**
 * Finding the scenarios a command line names: a library scenario by name, or a module whose
 * default export is a scenario. A module that cannot be imported, has no scenario as its
 * default export, or holds an invalid scenario gives one error naming the file.
 * @module
 */
import { type Scenario, ScenarioError, validateScenario } from "../lib/scenario/mod.ts";
import { scenarios as registered } from "../scenarios/index.ts";
import { UsageError } from "./_io.ts";
import { suggest } from "../lib/util/suggest.ts";

/** Extensions of scenario modules given by path. */
const MODULE_EXTENSIONS = [".ts", ".mts", ".js", ".mjs"];

/** A scenario module that cannot be used: it fails to import, its default export is not a
 * scenario, or the scenario is invalid. The message names the file. A failure, not a usage
 * error: every command exits 1 for it (an unknown name or a missing file is a usage error,
 * exit 2). */
export class ScenarioLoadError extends Error {
  override name = "ScenarioLoadError";
  /** An error about module `path` (as given on the command line). */
  constructor(readonly path: string, message: string) {
    super(message);
  }
}

/** A scenario and where it comes from. */
export interface LoadedScenario {
  /** The scenario. */
  readonly scenario: Scenario;
  /** Whether it is one of the library's (scenarios/index.ts), whose goldens are tests/golden. */
  readonly library: boolean;
  /** The module's path as given, for a scenario loaded from a module. */
  readonly module?: string;
}

/** How {@linkcode loadScenarioEntry} reaches the outside world. */
export interface LoadOptions {
  /** Whether a file exists; a missing module is then a usage error ("no such file"). */
  exists?: (path: string) => boolean;
  /** The module's `file:` URL (to point at the line of a module that throws when imported). */
  moduleUrl?: (path: string) => string;
}

/** Whether `arg` names a module rather than a library scenario. */
export function isModulePath(arg: string): boolean {
  return MODULE_EXTENSIONS.some((e) => arg.endsWith(e));
}

/** The usage error for `arg`, which names no library scenario: the closest name when one is
 * close enough, then the names known. */
export function unknownScenario(arg: string): UsageError {
  const names = registered.map((s) => s.settings.name);
  const close = suggest(arg, names);
  return new UsageError(
    `no scenario named "${arg}"${close === undefined ? "" : ` (did you mean ${close}?)`}`,
    `known scenarios: ${names.join(", ")}`,
  );
}

/** The scenario `arg` names; `importModule` loads a module given by path. */
export async function loadScenario(
  importModule: (path: string) => Promise<{ default?: unknown }>,
  arg: string,
): Promise<Scenario> {
  return (await loadScenarioEntry(importModule, arg)).scenario;
}

/** The scenario `arg` names, and whether it is the library's. Throws {@linkcode UsageError}
 * for an unknown name or a missing file, {@linkcode ScenarioLoadError} for a module that cannot
 * be used. */
export async function loadScenarioEntry(
  importModule: (path: string) => Promise<{ default?: unknown }>,
  arg: string,
  options: LoadOptions = {},
): Promise<LoadedScenario> {
  const byName = registered.find((s) => s.settings.name === arg);
  if (byName !== undefined) return { scenario: byName, library: true };
  if (!isModulePath(arg)) {
    throw unknownScenario(arg);
  }
  if (options.exists !== undefined && !options.exists(arg)) {
    throw new UsageError(`cannot load ${arg}: no such file`);
  }
  let mod: { default?: unknown };
  try {
    mod = await importModule(arg);
  } catch (e) {
    if (isScenarioError(e)) throw new ScenarioLoadError(arg, `${arg}: ${e.message}`);
    const where = throwSite(e, options.moduleUrl?.(arg), arg);
    throw new ScenarioLoadError(arg, `cannot load ${arg}: ${errorText(e)}${where}`);
  }
  const notMade = `${arg} has no default export made with scenario(...)`;
  if (typeof mod !== "object" || mod === null || !("default" in mod)) {
    throw new ScenarioLoadError(arg, `${notMade}: it has no default export`);
  }
  const sc = mod.default;
  if (typeof sc !== "object" || sc === null || !("steps" in sc) || !("settings" in sc)) {
    throw new ScenarioLoadError(arg, `${notMade}: its default export is ${describeValue(sc)}`);
  }
  const library = registered.includes(sc as Scenario);
  if (!library) {
    // Built by another copy of the DSL, by hand, or altered after scenario(): check it again.
    try {
      validateScenario(sc as Scenario);
    } catch (e) {
      if (isScenarioError(e)) throw new ScenarioLoadError(arg, `${arg}: ${e.message}`);
      throw new ScenarioLoadError(
        arg,
        `${notMade}: its default export is not a well-formed scenario (${errorText(e)})`,
      );
    }
  }
  return { scenario: sc as Scenario, library, module: arg };
}

function isScenarioError(e: unknown): e is ScenarioError {
  return e instanceof ScenarioError ||
    (e instanceof Error && e.name === "ScenarioError" && "scenario" in e && "step" in e);
}

function errorText(e: unknown): string {
  if (!(e instanceof Error)) return `it throws ${describeValue(e)}`;
  const first = e.message.split("\n")[0];
  return e.name === "Error" ? first : `${e.name}: ${first}`;
}

/** ` (at PATH:LINE:COL)` for the first frame of `e`'s stack in the module, or "". */
function throwSite(e: unknown, url: string | undefined, arg: string): string {
  if (url === undefined || !(e instanceof Error) || e.stack === undefined) return "";
  const i = e.stack.indexOf(url + ":");
  if (i < 0) return "";
  const m = /^:(\d+):(\d+)/.exec(e.stack.slice(i + url.length));
  return m === null ? "" : ` (at ${arg}:${m[1]}:${m[2]})`;
}

function describeValue(v: unknown): string {
  if (v === null) return "null";
  if (v === undefined) return "undefined";
  if (Array.isArray(v)) return "an array";
  if (typeof v === "object") {
    const keys = Object.keys(v as object);
    return keys.length === 0 ? "an empty object" : `an object with keys ${keys.join(", ")}`;
  }
  if (typeof v === "function") return "a function";
  return `${typeof v} ${String(v).slice(0, 40)}`;
}
