// checkExportable: every refusal of the export in one place (lib/export/exportable.ts), and the
// export refusing with its first, writing nothing for a refused scenario.
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  checkExportable,
  ExportError,
  exportOCaml,
  type ExportRefusal,
  MAX_PROGRAM_CHARS,
} from "../../lib/export/mod.ts";
import {
  keep,
  type Scenario,
  scenario,
  ScenarioError,
  sizes,
  validateScenario,
} from "../../lib/scenario/mod.ts";
import { scenarioCase, scenarioOf } from "./fuzz_harness.ts";
import { scenarios } from "../../scenarios/index.ts";
import { genProgram } from "../../lib/differential/_gen_program.ts";
import { buildGenScenario } from "../../lib/differential/_gen_build.ts";
import { sized } from "../tier.ts";

/** Raw generated programs the writer is checked on: 50 in the quick tier (tests/tier.ts). */
const RAW = sized(200, 50);

Deno.test("checkExportable returns every refusal of a scenario, each naming its step, in the export's order", () => {
  const sc = scenario({ name: "many" }, (s) => {
    s.main.memprof.start({ samplingRate: 0.5, callstackSize: 0 });
    s.main.alloc(2, { source: "custom", customMem: 10 }); // 2
    s.main.alloc(sizes.geometric(3), { lifetime: keep.forever }); // 3
    s.main.alloc(100, { source: "major" }); // 4
    s.main.alloc(5, { source: "runtime", lifetime: keep.list("l") }); // 5
    s.main.userEvent("ev", { type: "custom", bytes: [1] }); // 6
    s.main.memprof.stop();
    s.release("l");
  });
  const refusals = checkExportable(sc);
  assert.deepEqual(
    refusals.map((r) => [r.kind, r.step]),
    [
      ["customBlockSize", "2"],
      ["unboundedGeometric", "3"],
      ["smallMajorAlloc", "4"],
      ["unlinkable", "5"],
      ["customUserEvent", "6"],
    ],
  );
  assert.match(refusals[2].reason, /a direct major allocation of 100 words/);
  assert.throws(
    () => exportOCaml(sc),
    (e: unknown) =>
      e instanceof ExportError && e.step === "2" && e.kind === "customBlockSize" &&
      e.reason === refusals[0].reason && e.refusals.length === refusals.length,
  );
});

Deno.test("the refusals of a domain's steps come from the highest-numbered domain first, as the program is written", () => {
  const sc = scenario({ name: "domains" }, (s) => {
    const d = s.main.spawn("d");
    s.main.alloc(100, { source: "major" }); // 2
    d.alloc(sizes.geometric(2)); // 3
    d.terminate();
  });
  assert.deepEqual(checkExportable(sc).map((r) => [r.kind, r.step]), [
    ["unboundedGeometric", "3"],
    ["smallMajorAlloc", "2"],
  ]);
});

Deno.test("a scenario without refusals exports; each refused library scenario's first refusal is the export's error", () => {
  let refused = 0;
  for (const sc of scenarios) {
    const refusals = checkExportable(sc);
    if (refusals.length === 0) {
      exportOCaml(sc); // throws if refused
      continue;
    }
    refused++;
    assert.throws(
      () => exportOCaml(sc),
      (e: unknown) =>
        e instanceof ExportError && e.step === refusals[0].step &&
        e.reason === refusals[0].reason && e.kind === refusals[0].kind,
      sc.settings.name,
    );
  }
  // comballoc, thread_exit_in_callback, sources, callback_actions, thread_block_in_callback
  // (domains_orphans, domain_exit_tracked and loop_indices are exported since their domains'
  // ends are the `join` race point, tracer_reentrancy since memtrace's External is emulated,
  // threads since it is written with programs).
  assert.equal(refused, 5);
});

/** checkExportable's verdict on `sc` and the export's: the first refusal is the export's error,
 * and a scenario without refusals is written, the writer meeting nothing the checks let through
 * that it cannot write (it would throw an internal Error, not an ExportError). */
function agreement(sc: Scenario): readonly ExportRefusal[] {
  const refusals = checkExportable(sc);
  let error: ExportError | undefined;
  try {
    exportOCaml(sc);
  } catch (e) {
    if (!(e instanceof ExportError)) throw e;
    error = e;
  }
  assert.equal(error?.reason, refusals[0]?.reason);
  assert.equal(error?.step, refusals[0]?.step);
  return refusals;
}

Deno.test("the writer meets no unchecked case, and the export refuses with checkExportable's first reason, on 800 mutants of the library's scenarios (seed 0x65787074)", () => {
  const kinds = new Set<string>();
  let valid = 0;
  let refused = 0;
  for (let i = 0; i < 800; i++) {
    const sc = scenarioOf(scenarioCase(0x65787074, i).json);
    try {
      validateScenario(sc);
    } catch (e) {
      if (e instanceof ScenarioError) continue;
      throw e;
    }
    valid++;
    const refusals = agreement(sc);
    if (refusals.length > 0) refused++;
    for (const r of refusals) kinds.add(r.kind);
  }
  assert(valid >= 150, `${valid} valid mutants`);
  assert(refused >= 20, `${refused} refused`);
  assert(kinds.size >= 5, `refusals of ${[...kinds].join(", ")}`);
  console.log(`${valid} valid mutants, ${refused} refused, kinds: ${[...kinds].join(", ")}`);
});

Deno.test(`the writer meets no unchecked case on generated programs (${RAW} raw programs, seed 17)`, () => {
  for (const p of fc.sample(genProgram(), { seed: 17, numRuns: RAW })) {
    agreement(buildGenScenario(p, "agree"));
  }
});

Deno.test("the program's length is the one refusal left to the writing", () => {
  // 60,000 allocations of a drawn size, each a `match` of 256 arms: more than 16 Mi characters.
  const sc = scenario({ name: "long" }, (s) => {
    for (let i = 0; i < 400; i++) s.main.alloc(sizes.uniform(1, 300));
  });
  assert.deepEqual(checkExportable(sc), []);
  assert.throws(
    () => exportOCaml(sc),
    (e: unknown) =>
      e instanceof ExportError && e.kind === "programSize" &&
      e.reason.includes(`more than ${MAX_PROGRAM_CHARS} characters`),
  );
});
