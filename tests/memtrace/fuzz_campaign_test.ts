/**
 * The in-test memtrace fuzz campaign: 20,000 structure-aware mutants (fuzz_harness.ts; 1,000 in
 * the quick tier, tests/tier.ts), with a fixed seed, each read four ways. No exception other than MemtraceFormatError (or its
 * MemtraceLimitError) may escape, and the bounds of fuzz_harness.ts hold for every case. A
 * failure names the case: `mutant(seedFor(SEED, i), SEED, i)` rebuilds it. The long campaign is
 * `deno task fuzz` (tests/fuzz_campaign.ts).
 */
import assert from "node:assert/strict";
import { exercise, mutant, seedFor, seeds } from "./fuzz_harness.ts";
import { statistics } from "../verbose.ts";
import { sized } from "../tier.ts";

const SEED = 0x6d656d74; // "memt"
// The first 1,000 cases already reach every seed and every check below (the last, the v1 seed,
// at case 364; 384 clean, 616 rejected; 26 distinct checks).
const CASES = sized(20_000, 1_000);

Deno.test(`memtrace fuzz campaign: ${CASES.toLocaleString("en")} structure-aware mutants end cleanly or in the typed error, within bounds`, () => {
  const byCheck = new Map<string, number>();
  const bySeed = new Map<string, number>();
  let clean = 0, rejected = 0, maxFrames = 0, maxDumpRatio = 0, maxCopyRatio = 0;
  for (let i = 0; i < CASES; i++) {
    const s = seedFor(SEED, i);
    const { bytes, desc } = mutant(s, SEED, i);
    // Throws FuzzFailure, naming the case, on an escape or a bound exceeded.
    const o = exercise(bytes, `case ${i} of seed ${SEED} from ${s.name} (${desc})`);
    bySeed.set(s.name, (bySeed.get(s.name) ?? 0) + 1);
    if (o.clean === 4) clean++;
    if (o.errors.length > 0) rejected++;
    for (const c of o.errors) {
      const key = c.replace(/[0-9a-f]{8,}|\d+/g, "N");
      byCheck.set(key, (byCheck.get(key) ?? 0) + 1);
    }
    maxFrames = Math.max(maxFrames, o.maxFrames);
    maxDumpRatio = Math.max(maxDumpRatio, o.dumpChars / Math.max(1, bytes.length));
    maxCopyRatio = Math.max(maxCopyRatio, o.copyBytes / Math.max(1, bytes.length));
  }
  // The mutants reached every seed, both outcomes and the checks that matter here.
  assert.equal(bySeed.size, seeds().length, [...bySeed.keys()].join(", "));
  assert.ok(clean > CASES / 10, `only ${clean} clean cases`);
  assert.ok(rejected > CASES / 3, `only ${rejected} rejected cases`);
  for (
    const check of [
      "Not a CTF packet",
      "Buffer underflow",
      "alloc id sync",
      "cache verification",
      "location table index",
      "trace format vN, but expected vN",
      // copy: a trace the reader accepts, but memtrace's writer could not have written
      "Incorrect allocation ID: the event has id N",
      "invalid location code N",
      // limits
      "limit: dump output of more than N characters",
      "limit: backtrace of more than N frames",
      "limit: backtrace caches (N bytes each) for more than N domains within the first N bytes",
    ]
  ) {
    assert.ok((byCheck.get(check) ?? 0) > 0, `no case failed "${check}"`);
  }
  assert.ok(byCheck.size >= 20, `only ${byCheck.size} distinct checks`);
  assert.ok(maxFrames > 1000, `longest backtrace ${maxFrames}`);
  statistics(
    `memtrace campaign: ${CASES} cases, ${clean} clean, ${rejected} rejected, ` +
      `${byCheck.size} checks; longest backtrace ${maxFrames} frames; ` +
      `dump ≤ ${maxDumpRatio.toFixed(0)} chars/byte, copy ≤ ${maxCopyRatio.toFixed(1)} bytes/byte`,
  );
});
