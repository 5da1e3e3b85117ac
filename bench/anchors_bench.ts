/**
 * Side by side with the real thing, in one run (anchors built by bench/_anchors.ts):
 *
 * - the geometric draw against memprof.c's algorithm compiled with gcc -O2 (anchors/geom.c), in
 *   ns per draw: once the way the runtime consumes variates (rand_binom's and sample_young's
 *   loops: the batch read in place, refilled when exhausted, no call per variate) — the figure
 *   the goal "≤ 1.00" is about — and once through `geom()`, one call per variate. Both check that
 *   our 10,000,000 draws are the C's: the sum of the `geom()` draws equals the C's checksum, and
 *   `binom(checksum)` on a fresh generator takes exactly 10,000,000 draws with nothing left over;
 * - simulated allocation throughput against the real OCaml 5.3 runtime allocating the same
 *   workload (bench/_alloc_workload.ts, anchors/alloc.ml's `alloc`), in M allocations/s.
 *
 * Without gcc, the OCaml toolchain or the permissions, a line says why and gives our figure
 * alone.
 *
 * Run: deno bench --allow-read --allow-write --allow-run --allow-env bench/anchors_bench.ts
 * @module
 */

import { MemprofRng, oneLog1mLambda } from "../lib/memprof/rng.ts";
import { memprofCDraw, ocamlAllocationsPerSecond } from "./_anchors.ts";
import { ALLOCATIONS, allocWorkload } from "./_alloc_workload.ts";
import { medianSeconds, printSideBySide } from "./_side_by_side.ts";

const DRAWS = 10_000_000;
const LAMBDA = 1e-4;
const SEED = 1;
let sink = 0;

/**
 * DRAWS variates through `geom()`, one call each, from lanes seeded with SEED (no rand_init
 * draw, as the C anchor): best of 3 rounds in ns per draw, and the sum of the draws.
 */
function geomDraws(): { ns: number; sum: number } {
  const o = oneLog1mLambda(LAMBDA);
  let best = Infinity, sum = 0;
  for (let round = 0; round < 3; round++) {
    const rng = new MemprofRng(SEED);
    let s = 0;
    const t0 = performance.now();
    for (let i = 0; i < DRAWS; i++) s += rng.geom(o);
    best = Math.min(best, performance.now() - t0);
    sum = s;
  }
  return { ns: best * 1e6 / DRAWS, sum };
}

/**
 * rand_binom over `len` words from lanes seeded with SEED (next_rand_geom = 0): best of 3
 * rounds in ns per draw, the number of draws it took and what was left over.
 */
function binomDraws(len: number): { ns: number; res: number; left: number } {
  const o = oneLog1mLambda(LAMBDA);
  let best = Infinity, res = 0, left = -1;
  for (let round = 0; round < 3; round++) {
    const rng = new MemprofRng(SEED);
    const t0 = performance.now();
    res = rng.binom(len, o);
    best = Math.min(best, performance.now() - t0);
    left = rng.nextRandGeom;
  }
  return { ns: best * 1e6 / DRAWS, res, left };
}

function report(): void {
  console.log("\nanchors (best of 3 for draws, median of 5 for allocations; this machine, now):");
  const c = memprofCDraw(LAMBDA, DRAWS, SEED);
  const anchor = typeof c === "string" ? c : c.ns;
  const { ns: geomNs, sum } = geomDraws();
  // The C's checksum, or (without the anchor) ours: binom over it must take exactly DRAWS draws.
  const binom = binomDraws(typeof c === "string" ? sum : Number(c.sum));
  const binomNs = binom.ns;
  const same = typeof c === "string" ? "" : BigInt(sum) === c.sum ? "same " : "DIFFERENT ";
  const binomOk = binom.res === DRAWS && binom.left === 0;
  const draws = `${DRAWS.toLocaleString("en")} draws`;
  printSideBySide({
    group: "anchored",
    label: `geometric draw λ=${LAMBDA}, as the runtime consumes it (rand_binom)`,
    ours: { value: binomNs, unit: "ns" },
    anchor,
    anchorName: "memprof.c -O2",
    note: `goal ≤ 1.00; ${binomOk ? "" : "NOT "}${draws}, nothing left over`,
  });
  printSideBySide({
    group: "anchored",
    label: `geometric draw λ=${LAMBDA}, geom() per variate`,
    ours: { value: geomNs, unit: "ns" },
    anchor,
    anchorName: "memprof.c -O2",
    note: typeof c === "string" ? undefined : `${same}${draws}`,
  });
  for (const lambda of [null, 1e-4, 1e-2]) {
    const seconds = medianSeconds(allocWorkload(lambda), { warmup: 3 });
    printSideBySide({
      group: "anchored",
      label: `allocations, ${lambda === null ? "no profile" : `λ=${lambda}`}`,
      ours: { value: ALLOCATIONS / seconds / 1e6, unit: "M/s" },
      anchor: ((v) => typeof v === "string" ? v : v / 1e6)(
        ocamlAllocationsPerSecond("alloc", lambda),
      ),
      anchorName: "OCaml 5.3",
    });
  }
  console.log();
}

report();

Deno.bench(`geometric draw ×${DRAWS.toLocaleString("en")}, λ=${LAMBDA}, geom()`, {
  group: "anchored",
}, () => {
  const o = oneLog1mLambda(LAMBDA);
  const rng = new MemprofRng(SEED);
  let s = 0;
  for (let i = 0; i < DRAWS; i++) s += rng.geom(o);
  sink += s;
});

globalThis.addEventListener("unload", () => {
  if (sink === -1) console.log(sink);
});
