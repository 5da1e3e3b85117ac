/**
 * The CI budget of the fuzz campaign over every `events` command (issue 23): 2,000 structure-aware
 * mutants of ring images (fuzz_harness.ts; QUICK_CASES in the quick tier, tests/tier.ts), with a
 * fixed seed, each through the paths of dump,
 * stats (text, --json), gc-stats (text, --json; both pause rules and counter units) and export
 * --format chrome, without and with --with-trace (the seed trace of the memtrace campaign's case,
 * or its mutant; --trace-anchor-ns, --pid) (fuzz_commands.ts). Each must end cleanly or with
 * RuntimeEventsFormatError at a real offset (or the trace's MemtraceFormatError), within its
 * output bound, and the Chrome JSON must pass the structural check. A failure names the case:
 * `ringCase(SEED, i)` rebuilds it. The long campaign is `deno task fuzz` (tests/fuzz_campaign.ts).
 */
import { assert } from "./assert.ts";
import { ringCase, ringSeeds } from "./fuzz_harness.ts";
import { exerciseRingCommands, RING_COMMANDS } from "./fuzz_commands.ts";
import { mutant, seedFor } from "../memtrace/fuzz_harness.ts";
import { sized } from "../tier.ts";

const SEED = 0x65766e74; // "evnt"
const CASES = sized(2_000, 200);

Deno.test(`every events command on ${CASES.toLocaleString("en")} structure-aware mutants ends cleanly or in the typed error, within bounds`, () => {
  const ok = new Map<string, number>(), rejected = new Map<string, number>();
  const reasons = new Set<string>();
  try {
    for (let i = 0; i < CASES; i++) {
      const c = ringCase(SEED, i);
      const s = seedFor(SEED, i);
      const trace = i % 2 === 0 ? s.bytes : mutant(s, SEED, i).bytes;
      try {
        // Throws RingFuzzFailure, naming the case, on an escape or a broken bound.
        const o = exerciseRingCommands(c.bytes, `case ${i} of seed ${SEED} (${c.desc})`, {
          seed: (SEED ^ Math.imul(i + 7, 0x2545f491)) >>> 0,
          trace,
        });
        for (const [cmd, r] of Object.entries(o)) {
          const m = r.error === null ? ok : rejected;
          m.set(cmd, (m.get(cmd) ?? 0) + 1);
          if (r.error !== null) reasons.add(`${cmd}: ${r.error.replace(/\d+/g, "N")}`);
        }
      } finally {
        c.restore();
      }
    }
  } finally {
    for (const s of ringSeeds()) {
      assert.ok(s.image.every((b, k) => b === s.original[k]), `${s.name} not restored`);
    }
  }
  for (const cmd of RING_COMMANDS) {
    assert.equal((ok.get(cmd) ?? 0) + (rejected.get(cmd) ?? 0), CASES, cmd);
    assert.ok((ok.get(cmd) ?? 0) > CASES / 5, `${cmd}: only ${ok.get(cmd)} clean`);
    assert.ok((rejected.get(cmd) ?? 0) > CASES / 5, `${cmd}: only ${rejected.get(cmd)} rejected`);
  }
  const has = (prefix: string) => [...reasons].some((r) => r.startsWith(prefix));
  for (
    const reason of [
      "dump: message of invalid length N",
      "gc-stats --json: ring_size_elements N does not match ring_size_bytes N",
      "export chrome: custom event padding byte N exceeds its",
      "export chrome --with-trace: trace: ",
    ]
  ) {
    assert.ok(has(reason), `no case failed "${reason}"`);
  }
  console.log(`events commands: ${CASES} cases, ${reasons.size} distinct command errors`);
});
