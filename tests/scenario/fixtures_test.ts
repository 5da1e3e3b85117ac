// Scenarios that are the programs of the real-runtime fixtures must reproduce them exactly.
import assert from "node:assert/strict";
import refText from "../fixtures/memprof_exact/ref_0.01.txt" with { type: "text" };
import tripleText from "../fixtures/memprof_exact/triple_cons_0.01.txt" with {
  type: "text",
};
import lifecycleText from "../fixtures/memprof_lifecycle/lifecycle_0.001_600000_1000.txt" with {
  type: "text",
};
import { runScenario } from "../../lib/scenario/mod.ts";
import { firstDifference } from "../../lib/scenario/golden.ts";
import refLoop from "../../scenarios/ref_loop.ts";
import tripleCons from "../../scenarios/triple_cons.ts";
import lifecycle from "../../scenarios/lifecycle.ts";

for (
  const [sc, want, file] of [
    [refLoop, refText, "memprof_exact/ref_0.01.txt"],
    [tripleCons, tripleText, "memprof_exact/triple_cons_0.01.txt"],
    [lifecycle, lifecycleText, "memprof_lifecycle/lifecycle_0.001_600000_1000.txt"],
  ] as const
) {
  Deno.test(`scenario ${sc.settings.name} reproduces fixtures/${file} exactly`, () => {
    const log = runScenario(sc).callbackLog;
    assert.equal(firstDifference(log, want), undefined, firstDifference(log, want));
  });
}
