// The library against the real OCaml 5.3 runtime, under `deno task test:full`: every exportable
// scenario of scenarios/index.ts exported, compiled and run (lib/differential's diffScenario, as
// `deno task diff` does), its callback log and collections compared with the simulation's. Each
// must agree, or differ exactly where scenarios/known_differences.json says. So a change to what
// the exporter writes (a try/with's depth, a keep's slot, …) fails here, not only in CI's diff
// stage. Compiled programs are cached in the folder `deno task diff` uses by default
// ($MEMPROF_LAB_DIFF_CACHE, else …/memprof-lab/differential under the user's cache), so neither
// compiles (and verifies, by three runs) what the other already did.
//
// Without an OCaml 5.3 toolchain (tests/real_toolchain.ts) the tests are ignored, with one line
// saying how to enable them.
import assert from "node:assert/strict";
import { scenarios } from "../../scenarios/index.ts";
import { ExportError, exportOCaml } from "../../lib/export/mod.ts";
import {
  differenceContext,
  differenceSummary,
  diffScenario,
  judge,
  NOT_EXPORTABLE,
  parseKnownDifferences,
} from "../../lib/differential/mod.ts";
import { DIFF_CACHE, DIFF_SKIP, REAL_OCAML, skipNotice } from "../real_toolchain.ts";

import knownText from "../../scenarios/known_differences.json" with { type: "text" };

const KNOWN = "scenarios/known_differences.json";
const known = parseKnownDifferences(knownText, KNOWN);

/** The scenarios the exporter accepts (its refusals are pinned by tests/export/ocaml_test.ts). An
 * export that throws anything but an ExportError is kept, so that its test fails naming it. */
const refused = new Map<string, string>();
const exportable = scenarios.filter((sc) => {
  try {
    exportOCaml(sc);
    return true;
  } catch (e) {
    if (e instanceof ExportError) refused.set(sc.settings.name, e.reason);
    return !(e instanceof ExportError);
  }
});

const cacheDir = DIFF_CACHE;
const skip = DIFF_SKIP;
if (skip !== undefined) {
  skipNotice(`the library's ${exportable.length} exported programs on the real OCaml 5.3`, skip);
}

Deno.test("every difference listed is an exportable library scenario's, every refusal a refused one's", () => {
  const names = new Set(exportable.map((sc) => sc.settings.name));
  for (const entry of known) {
    if (entry.at === NOT_EXPORTABLE) {
      assert.ok(refused.has(entry.scenario), `${KNOWN} lists "${entry.scenario}" as refused`);
    } else assert.ok(names.has(entry.scenario), `${KNOWN} lists "${entry.scenario}"`);
  }
});

Deno.test("every library scenario the export refuses is listed as not exportable, with why", () => {
  const listed = new Set(known.filter((k) => k.at === NOT_EXPORTABLE).map((k) => k.scenario));
  for (const [name, reason] of refused) {
    assert.ok(listed.has(name), `${name} is refused (${reason}) but not listed in ${KNOWN}`);
  }
});

for (const sc of exportable) {
  const name = sc.settings.name;
  Deno.test({
    name: `${name}: OCaml 5.3 runs its exported program as the simulation does`,
    ignore: skip !== undefined,
    async fn() {
      const r = await diffScenario(sc, {
        ocamlopt: REAL_OCAML.toolchain!.ocamlopt,
        cacheDir: cacheDir!,
        // The rings are tests/differential/rings_real_test.ts's.
        rings: "never",
      });
      if (r.status === "error" || r.status === "not exportable") {
        assert.fail(`${name}: ${r.status === "error" ? r.message : `not exportable: ${r.reason}`}`);
      }
      const verdict = judge(name, r.comparison, known);
      if (verdict.kind === "ok" || verdict.kind === "known") return;
      const d = r.comparison.difference;
      const why = verdict.kind === "now agrees"
        ? `, but ${KNOWN} lists it at ${verdict.entry.at}: remove it from the list`
        : verdict.kind === "moved"
        ? `, but ${KNOWN} lists it at ${verdict.entry.at}: update the list`
        : "";
      assert.fail(
        [
          `${name}: ${differenceSummary(r.comparison)}${why} ` +
          `(callbacks ${r.callbacks.sim}/${r.callbacks.real}, minor collections ` +
          `${r.collections.sim.minor}/${r.collections.real.minor}, major ` +
          `${r.collections.sim.major}/${r.collections.real.major}: simulation/real)`,
          ...(d === undefined ? [] : differenceContext(d)),
        ].join("\n"),
      );
    },
  });
}
