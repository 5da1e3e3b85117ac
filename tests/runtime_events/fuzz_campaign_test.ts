/**
 * The in-test runtime_events fuzz campaign: 20,000 structure-aware mutants of ring images
 * (fuzz_harness.ts; QUICK_CASES in the quick tier, tests/tier.ts), with a fixed seed, each read from memory and through a file-like source:
 * both reads must agree, end cleanly or in RuntimeEventsFormatError with a real offset, and keep
 * the dump within its bound. A failure names the case: `ringCase(SEED, i)` rebuilds it. The long
 * campaign is `deno task fuzz` (tests/fuzz_campaign.ts).
 */
import { assert } from "./assert.ts";
import { exerciseRing, ringCase, ringSeeds } from "./fuzz_harness.ts";
import { statistics } from "../verbose.ts";
import { sized } from "../tier.ts";

const SEED = 0x72696e67; // "ring"
const CASES = sized(20_000, 2_000);

Deno.test(`runtime_events fuzz campaign: ${CASES.toLocaleString("en")} structure-aware mutants read the same from memory and from a source, cleanly or in the typed error`, () => {
  const reasons = new Map<string, number>();
  let clean = 0, maxLines = 0;
  try {
    for (let i = 0; i < CASES; i++) {
      const c = ringCase(SEED, i);
      try {
        // Throws RingFuzzFailure, naming the case, on an escape, a bound or a difference.
        const o = exerciseRing(c.bytes, `case ${i} of seed ${SEED} (${c.desc})`, i % 16 === 0);
        if (o.error === null) clean++;
        else {
          const key = o.error.replace(/\d+/g, "N").replace(/^[^:]*: /, "");
          reasons.set(key, (reasons.get(key) ?? 0) + 1);
        }
        maxLines = Math.max(maxLines, o.lines);
      } finally {
        c.restore();
      }
    }
  } finally {
    for (const s of ringSeeds()) {
      assert.ok(s.image.every((b, k) => b === s.original[k]), `${s.name} not restored`);
    }
  }
  assert.ok(clean > CASES / 10, `only ${clean} clean cases`);
  assert.ok(CASES - clean > CASES / 4, `only ${CASES - clean} rejected cases`);
  for (
    const reason of [
      "data_offset N (the ring headers end at byte N) puts ring",
      "file truncated: data_offset N puts ring",
      "ring_size_elements N does not match ring_size_bytes",
      "message of invalid length N",
      "message of N words runs past the ring tail",
      "ring holds N words (head N, tail N) but has room for N",
      "custom event padding byte N exceeds its",
      "name of user event N lies beyond the end of the file",
    ]
  ) {
    const n = [...reasons].reduce((k, [r, c]) => k + (r.startsWith(reason) ? c : 0), 0);
    assert.ok(n > 0, `no case failed "${reason}"`);
  }
  assert.ok(reasons.size >= 15, `only ${reasons.size} distinct reasons`);
  statistics(
    `runtime_events campaign: ${CASES} cases, ${clean} clean, ${reasons.size} reasons, ` +
      `up to ${maxLines} lines`,
  );
});
