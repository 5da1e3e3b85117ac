// Every registered scenario re-run and compared with its golden files (tests/golden/<name>/).
// Goldens change only through `deno task scenario --update`, and the diff is reviewed.
import assert from "node:assert/strict";
import { scenarios } from "../../scenarios/index.ts";
import { goldens } from "../golden/index.ts";
import { runScenario } from "../../lib/scenario/mod.ts";
import { compareGolden, goldenOf } from "../../lib/scenario/golden.ts";

Deno.test("every registered scenario has goldens", () => {
  const missing = scenarios.map((s) => s.settings.name).filter((n) => !(n in goldens));
  assert.deepEqual(missing, [], "run `deno task scenario --update` and review the new goldens");
  assert.deepEqual(Object.keys(goldens).sort(), scenarios.map((s) => s.settings.name).sort());
});

Deno.test("scenario outputs equal their goldens", async (t) => {
  for (const sc of scenarios) {
    const name = sc.settings.name;
    const golden = goldens[name];
    if (golden === undefined) continue; // reported by the test above
    await t.step(name, () => {
      const diff = compareGolden(goldenOf(runScenario(sc)), golden);
      assert.equal(diff, undefined, `${name}: ${diff}`);
    });
  }
});

Deno.test("an edited golden is caught, with the differing line and its context", () => {
  const sc = scenarios.find((s) => s.settings.name === "exception_comballoc")!;
  const golden = goldens[sc.settings.name];
  const lines = golden.callbackLog.split("\n");
  const k = lines.findIndex((l) => l.includes("dealloc_minor"));
  assert.ok(k >= 0);
  lines[k] = lines[k].replace("dealloc_minor", "dealloc_major");
  const edited = { ...golden, callbackLog: lines.join("\n") };
  const diff = compareGolden(goldenOf(runScenario(sc)), edited);
  assert.ok(diff !== undefined);
  assert.match(diff, new RegExp(`^callbacks\\.txt differs at line ${k + 1}:`));
  assert.ok(diff.includes(`- golden ${k + 1}: ${lines[k]}`), diff);
  assert.ok(diff.includes(`+ run    ${k + 1}: `), diff);
  // A changed trace byte whose dump still agrees is reported too.
  const ctf = golden.ctf.slice();
  ctf[ctf.length - 1] ^= 1;
  const d2 = compareGolden(goldenOf(runScenario(sc)), { ...golden, ctf });
  assert.match(d2 ?? "", /trace\.ctf differs at byte/);
});
