// The runtime_events rings of the library against the real OCaml 5.3 runtime (issue 27), under
// `deno task test:full`: every exportable scenario's program runs with its ring on from its start
// and OCAMLRUNPARAM=v=0x400 (diffScenario with `rings: "always"`, as `deno task diff --rings`).
// For each:
// - the real ring's gc-stats equal the runtime's own statistics (v=0x400), every figure;
// - the simulated ring's collections equal the simulation's own counters;
// - neither side's callback log changes with the ring on;
// - the rings agree event by event, or part exactly where scenarios/known_ring_differences.json
//   says (or the real ring is not deterministic, listed so).
// Without an OCaml 5.3 toolchain (tests/real_toolchain.ts) the tests are ignored, with one line
// saying how to enable them.
import assert from "node:assert/strict";
import { scenarios } from "../../scenarios/index.ts";
import { ExportError, exportOCaml } from "../../lib/export/mod.ts";
import {
  diffScenario,
  judgeKey,
  parseKnownDifferences,
  RING_KEYS,
  ringDifferenceContext,
  ringDifferenceSummary,
  ringKey,
} from "../../lib/differential/mod.ts";
import { DIFF_CACHE, DIFF_SKIP, REAL_OCAML, skipNotice } from "../real_toolchain.ts";

import knownText from "../../scenarios/known_ring_differences.json" with { type: "text" };

const KNOWN = "scenarios/known_ring_differences.json";
const known = parseKnownDifferences(knownText, KNOWN, RING_KEYS);

const exportable = scenarios.filter((sc) => {
  try {
    exportOCaml(sc);
    return true;
  } catch (e) {
    return !(e instanceof ExportError);
  }
});

const cacheDir = DIFF_CACHE;
const skip = DIFF_SKIP;
if (skip !== undefined) {
  skipNotice(`the library's ${exportable.length} rings on the real OCaml 5.3`, skip);
}

Deno.test("every scenario of the known ring differences is an exportable library scenario", () => {
  const names = new Set(exportable.map((sc) => sc.settings.name));
  for (const entry of known) {
    assert.ok(names.has(entry.scenario), `${KNOWN} lists "${entry.scenario}"`);
  }
});

for (const sc of exportable) {
  const name = sc.settings.name;
  Deno.test({
    name:
      `${name}: its real ring's gc-stats equal v=0x400, and the rings agree or differ as listed`,
    ignore: skip !== undefined,
    async fn() {
      const r = await diffScenario(sc, {
        ocamlopt: REAL_OCAML.toolchain!.ocamlopt,
        cacheDir: cacheDir!,
        rings: "always",
      });
      if (r.status === "error" || r.status === "not exportable") {
        assert.fail(`${name}: ${r.status === "error" ? r.message : `not exportable: ${r.reason}`}`);
      }
      const j = r.rings;
      if (j === undefined && "races" in r && r.races !== undefined) {
        // Race points: its real runs may differ (the callback log is judged over several runs,
        // lib/differential/run.ts, resolveRaces), so its ring is not compared; the list must say so.
        assert.ok(
          known.some((e) => e.scenario === name && e.at === "nondeterministic"),
          `${name}: its ring is not compared (race points): ${KNOWN} must list it as nondeterministic`,
        );
        return;
      }
      assert.ok(j !== undefined, `${name}: rings were not compared`);
      if (j.status === "error") assert.fail(`${name}: ${j.message}`);
      if (j.status === "compared") {
        const g = j.gcStats;
        assert.deepEqual(
          g.real.ring,
          g.real.runtime,
          `${name}: gc-stats of the real ring ≠ v=0x400`,
        );
        assert.deepEqual(g.sim.ring, g.sim.own, `${name}: the simulated ring ≠ its counters`);
        assert.deepEqual(j.callbacksChanged, { sim: false, real: false }, `${name}: callbacks`);
      }
      const verdict = judgeKey(name, ringKey(j), known);
      if (verdict.kind === "ok" || verdict.kind === "known") return;
      const summary = j.status === "compared" ? ringDifferenceSummary(j.comparison) : j.message;
      const why = verdict.kind === "now agrees"
        ? `, but ${KNOWN} lists it at ${verdict.entry.at}: remove it from the list`
        : verdict.kind === "moved"
        ? `, but ${KNOWN} lists it at ${verdict.entry.at}: update the list`
        : "";
      const d = j.status === "compared" ? j.comparison.difference : undefined;
      assert.fail(
        [`${name}: ${summary}${why}`, ...(d === undefined ? [] : ringDifferenceContext(d))].join(
          "\n",
        ),
      );
    },
  });
}
