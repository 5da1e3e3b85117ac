/**
 * The CI budget of the scenario fuzz campaign (issue 23): 2,000 mutants of the library's scenarios
 * (fuzz_harness.ts: numbers, hostile strings, structure; QUICK_CASES in the quick tier,
 * tests/tier.ts), with a fixed seed, each validated and
 * exported to OCaml as `deno task diff` exports it. Each must give a program (that lexes, with
 * every hostile text inside a literal or a comment, within its size bound) or a ScenarioError /
 * ExportError; anything else is an escape. A failure names the case: `scenarioCase(SEED, i)`
 * rebuilds it. The long campaign is `deno task fuzz --target scenario` (tests/fuzz_campaign.ts).
 */
import assert from "node:assert/strict";
import { exerciseScenario, scenarioCase, scenarioSeeds } from "./fuzz_harness.ts";
import { sized } from "../tier.ts";

const SEED = 0x7363656e; // "scen"
const CASES = sized(2_000, 300);

Deno.test(`${CASES.toLocaleString("en")} mutated scenarios validate and export to a program, or end in ScenarioError or ExportError`, () => {
  const errors = new Map<string, number>();
  const seeds = new Set<string>();
  let programs = 0;
  for (let i = 0; i < CASES; i++) {
    const c = scenarioCase(SEED, i);
    seeds.add(c.seed.name);
    // Throws ScenarioFuzzFailure, naming the case, on an escape or a broken bound.
    const o = exerciseScenario(c.json, `case ${i} of seed ${SEED} (${c.desc})`, 100_000 + i);
    if (o.error === null) programs++;
    else errors.set(o.error, (errors.get(o.error) ?? 0) + 1);
  }
  const kinds = (k: string) => [...errors.keys()].filter((e) => e.startsWith(k)).length;
  assert.ok(seeds.size > scenarioSeeds().length / 2, `only ${seeds.size} seeds`);
  assert.ok(programs > CASES / 10, `only ${programs} programs`);
  assert.ok(kinds("ScenarioError") >= 30, `${kinds("ScenarioError")} kinds of ScenarioError`);
  assert.ok(kinds("ExportError") >= 3, `${kinds("ExportError")} kinds of ExportError`);
  for (
    const problem of [
      "ScenarioError: a body must be an array of steps",
      "ScenarioError: steps nest more than N deep",
    ]
  ) {
    assert.ok(kinds(problem) > 0, `no case failed "${problem}"`);
  }
  console.log(`scenarios: ${CASES} cases, ${programs} programs, ${errors.size} distinct errors`);
});
