// Run by helpers.ts (inChild) in a child Deno with --allow-env: calls buildProgram or
// diffScenario as the request says and prints what they returned or threw, as JSON.
import { buildProgram, diffScenario } from "../../lib/differential/mod.ts";
import { exportOCaml } from "../../lib/export/mod.ts";
import { type ChildAnswer, type ChildRequest, childScenarios } from "./helpers.ts";

const req = JSON.parse(Deno.args[0]) as ChildRequest;
const sc = childScenarios[req.scenario];
if (sc === undefined) throw new Error(`no child scenario named ${req.scenario}`);
const progress: string[] = [];
const opts = {
  ocamlopt: req.ocamlopt,
  cacheDir: req.cacheDir,
  timeoutMs: req.timeoutMs,
  firstRuns: req.firstRuns,
  onProgress: (m: string) => progress.push(m),
};
const outcomes: ChildAnswer["outcomes"] = [];
for (let k = 0; k < (req.times ?? 1); k++) {
  try {
    const value = req.op === "build"
      ? await buildProgram(exportOCaml(sc), opts)
      : await diffScenario(sc, opts);
    outcomes.push({ value });
  } catch (e) {
    const err = e as Error;
    outcomes.push({ error: { name: err.name, message: err.message } });
  }
}
console.log(JSON.stringify({ outcomes, progress } satisfies ChildAnswer));
