/**
 * Finding the scenarios a command line names: a library scenario by name, or a module whose
 * default export is a scenario.
 * @module
 */
import type { Scenario } from "../lib/scenario/mod.ts";
import { scenarios as registered } from "../scenarios/index.ts";
import { UsageError } from "./_io.ts";

/** The scenario `arg` names; `importModule` loads a module given by path. */
export async function loadScenario(
  importModule: (path: string) => Promise<{ default?: unknown }>,
  arg: string,
): Promise<Scenario> {
  const byName = registered.find((s) => s.settings.name === arg);
  if (byName !== undefined) return byName;
  if (!arg.endsWith(".ts")) {
    throw new UsageError(
      `no scenario named "${arg}"`,
      `known scenarios: ${registered.map((s) => s.settings.name).join(", ")}`,
    );
  }
  let mod: { default?: unknown };
  try {
    mod = await importModule(arg);
  } catch (e) {
    throw new UsageError(`cannot load ${arg}: ${(e as Error).message}`);
  }
  const sc = mod.default;
  if (sc === undefined || typeof sc !== "object" || sc === null || !("steps" in sc)) {
    throw new UsageError(`${arg} has no default export made with scenario(...)`);
  }
  return sc as Scenario;
}
