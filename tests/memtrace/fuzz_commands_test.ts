/**
 * The CI budget of the fuzz campaign over every `trace` command (issue 23): 400 structure-aware
 * mutants (fuzz_harness.ts; QUICK_CASES in the quick tier, tests/tier.ts), with a fixed seed, each through the paths of info, copy, subsample
 * (a factor, a window), strip-names, flamegraph, hotspots, identify, top (by site, function and
 * stack, --json, --live-at end/peak/SEC, other filters), diff (against the seed trace, by each
 * key, both ways), export (pprof, speedscope, folded) and report (fuzz_commands.ts). Each must end
 * cleanly or with the command's typed error, within its output bound, and what it writes as a
 * trace must read back. A failure names the case: `mutant(seedFor(SEED, i), SEED, i)` rebuilds
 * it. The long campaign is `deno task fuzz` (tests/fuzz_campaign.ts).
 */
import assert from "node:assert/strict";
import { mutant, seedFor } from "./fuzz_harness.ts";
import { exerciseCommands, TRACE_COMMANDS } from "./fuzz_commands.ts";
import { sized } from "../tier.ts";

const SEED = 0x636d6473; // "cmds"
const CASES = sized(400, 50);

Deno.test(`every trace command on ${CASES} structure-aware mutants ends cleanly or in its typed error, within bounds`, () => {
  const ok = new Map<string, number>(), rejected = new Map<string, number>();
  const checks = new Set<string>();
  for (let i = 0; i < CASES; i++) {
    const s = seedFor(SEED, i);
    const { bytes, desc } = mutant(s, SEED, i);
    // Throws FuzzFailure, naming the case, on an escape or a bound exceeded.
    const o = exerciseCommands(bytes, `case ${i} of seed ${SEED} from ${s.name} (${desc})`, {
      base: s.bytes,
      seed: (SEED ^ Math.imul(i + 7, 0x2545f491)) >>> 0,
    });
    for (const [cmd, r] of Object.entries(o)) {
      const m = r.error === null ? ok : rejected;
      m.set(cmd, (m.get(cmd) ?? 0) + 1);
      if (r.error !== null) checks.add(`${cmd}: ${r.error.replace(/[0-9a-f]{8,}|\d+/g, "N")}`);
    }
  }
  // Every command ran on every case, and the mutants reached both outcomes of each.
  for (const cmd of TRACE_COMMANDS) {
    assert.equal((ok.get(cmd) ?? 0) + (rejected.get(cmd) ?? 0), CASES, cmd);
    assert.ok((ok.get(cmd) ?? 0) > CASES / 5, `${cmd}: only ${ok.get(cmd)} clean`);
    assert.ok((rejected.get(cmd) ?? 0) > CASES / 5, `${cmd}: only ${rejected.get(cmd)} rejected`);
  }
  for (
    const check of [
      "copy: Incorrect allocation ID: the event has id N",
      "hotspots: invalid location code N",
      "report: invalid location code N",
      "info: monotone timestamps",
      "identify: tool: object N is promoted at N µs but is not a live minor-heap allocation",
    ]
  ) {
    assert.ok(checks.has(check), `no case failed "${check}"`);
  }
  console.log(`trace commands: ${CASES} cases, ${checks.size} distinct command errors`);
});
