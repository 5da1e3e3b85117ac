/**
 * The sampler: memprof's generator and the simulated runtime's allocations under a profile, each
 * group side by side with the real thing (anchors built by bench/_anchors.ts), then
 * `Deno.bench`'s table.
 *
 * Group "rng: geom variates": the geometric draw at λ = 1e-4 against memprof.c's algorithm
 * compiled with gcc -O2 (anchors/geom.c), in ns per draw. Twice: the way the runtime consumes
 * variates (rand_binom's and sample_young's loops read the batch in place, refilled when it runs
 * out; no call per variate) — the figure the goal "≤ 1.00" is about — and through `geom()`, one
 * call per variate. Both check that our 10,000,000 draws are the C's: the sum of the `geom()`
 * draws equals the C's checksum, and `binom(checksum)` on a fresh generator takes exactly
 * 10,000,000 draws with nothing left over. In the table, an iteration draws 1,000,000 variates, so
 * its time in ms is the time per variate in ns.
 *
 * Group "rng: binom": memprof.c's `rand_binom` for 1,000,000 blocks of 1 to 16 words (block i has
 * i mod 16 + 1) at λ = 1e-4 from a fresh generator (`next_rand_geom` = 0), in ns per block,
 * against the same loop in C; the total number of samples must be the C's.
 *
 * Group "memprof alloc": simulated allocation throughput of lib/runtime + lib/memprof
 * (bench/_alloc_workload.ts: one million allocations of 1–6 words, 4.5 M words with headers, on
 * one domain, under a profile whose tracker returns a value for every callback) at λ = 1e-5,
 * 1e-4 and 1e-2 and with no profile, against the real OCaml 5.3 runtime allocating the same
 * (anchors/alloc.ml's `alloc`), in M allocations/s. Each rate is measured in a fresh V8 isolate
 * (a Worker, bench/_alloc_isolated.ts), as the anchor runs each rate in a fresh process.
 *
 * Without gcc, the OCaml toolchain or the permissions, a line says why and gives our figure
 * alone.
 *
 * Run: deno bench --allow-read --allow-write --allow-run --allow-env bench/sampler_bench.ts
 * @module
 */

import { MemprofRng, oneLog1mLambda, type RngBackend } from "../lib/memprof/rng.ts";
import { memprofCDraw, ocamlAllocationsPerSecond } from "./_anchors.ts";
import { ALLOCATIONS, allocWorkload } from "./_alloc_workload.ts";
import { printSideBySide } from "./_side_by_side.ts";
import { allocSecondsInFreshIsolate } from "./_alloc_isolated.ts";

const DRAWS = 10_000_000;
const TABLE_DRAWS = 1_000_000;
const BLOCKS = 1_000_000;
const LAMBDA = 1e-4;
const SEED = 1;
const BINOM_SEED = 2;
const LAMBDAS = [null, 1e-5, 1e-4, 1e-2] as const;
let sink = 0; // keeps results alive so the loops are not optimised away

/** Best of 3 rounds of `round`, in ns per `per`, with the last round's result. */
function bestOf3<T>(per: number, round: () => T): { ns: number; result: T } {
  let best = Infinity, result!: T;
  for (let k = 0; k < 3; k++) {
    const t0 = performance.now();
    result = round();
    best = Math.min(best, performance.now() - t0);
  }
  return { ns: best * 1e6 / per, result };
}

/** Draws per call of the chunk functions below: each is a small function called many times,
 * which V8 optimises as a whole (a ten-million-iteration loop would run in on-stack-replaced code
 * whose tier varies from run to run), as the runtime's own callers are. */
const CHUNK = 10_000;

function geomChunk(rng: MemprofRng, o: number): number {
  let s = 0;
  for (let i = 0; i < CHUNK; i++) s += rng.geom(o);
  return s;
}

/** DRAWS variates through `geom()` from lanes seeded with SEED (no rand_init draw, as the C). */
function geomDraws(): number {
  const o = oneLog1mLambda(LAMBDA);
  const rng = new MemprofRng(SEED);
  let s = 0;
  for (let i = 0; i < DRAWS; i += CHUNK) s += geomChunk(rng, o);
  return s;
}

/** rand_binom over `len` words from lanes seeded with SEED: the draws it took, what was left. */
function binomDraws(len: number): { res: number; left: number } {
  const rng = new MemprofRng(SEED);
  const res = rng.binom(len, oneLog1mLambda(LAMBDA));
  return { res, left: rng.nextRandGeom };
}

function binomChunk(rng: MemprofRng, o: number, from: number): number {
  let s = 0;
  for (let i = from; i < from + CHUNK; i++) s += rng.binom((i & 15) + 1, o);
  return s;
}

/** rand_binom for BLOCKS blocks of 1–16 words from a fresh generator: the total of samples. */
function binomBlocks(): number {
  const o = oneLog1mLambda(LAMBDA);
  const rng = new MemprofRng(BINOM_SEED);
  let s = 0;
  for (let i = 0; i < BLOCKS; i += CHUNK) s += binomChunk(rng, o, i);
  return s;
}

/**
 * {@linkcode binomChunk} with `next_rand_geom` kept in a local between blocks, the generator
 * called only when a block is sampled: the same samples, and what V8 makes of the loop itself
 * once no state goes through memory (the C's loop keeps it in a register).
 */
function binomChunkLocal(rng: MemprofRng, o: number, from: number): number {
  let s = 0, next = rng.nextRandGeom;
  for (let i = from; i < from + CHUNK; i++) {
    const len = (i & 15) + 1;
    if (next >= len) {
      next -= len;
    } else {
      rng.nextRandGeom = next;
      s += rng.binom(len, o);
      next = rng.nextRandGeom;
    }
  }
  rng.nextRandGeom = next;
  return s;
}

/** {@linkcode binomBlocks} through {@linkcode binomChunkLocal}. */
function binomBlocksLocal(): number {
  const o = oneLog1mLambda(LAMBDA);
  const rng = new MemprofRng(BINOM_SEED);
  let s = 0;
  for (let i = 0; i < BLOCKS; i += CHUNK) s += binomChunkLocal(rng, o, i);
  return s;
}

function reportDraws(): void {
  const group = "rng: geom variates", anchorName = "memprof.c -O2";
  const c = memprofCDraw(LAMBDA, DRAWS, SEED);
  const anchor = typeof c === "string" ? c : c.ns;
  const geom = bestOf3(DRAWS, geomDraws);
  // The C's checksum, or (without the anchor) ours: binom over it must take exactly DRAWS draws.
  const binom = bestOf3(
    DRAWS,
    () => binomDraws(typeof c === "string" ? geom.result : Number(c.sum)),
  );
  const draws = `${DRAWS.toLocaleString("en")} draws`;
  const allDrawn = binom.result.res === DRAWS && binom.result.left === 0;
  printSideBySide({
    group,
    label: `λ=${LAMBDA}, as the runtime consumes variates (rand_binom, the batch read in place)`,
    ours: { value: binom.ns, unit: "ns" },
    anchor,
    anchorName,
    note: `goal ≤ 1.00; ${allDrawn ? "" : "NOT "}${draws}, nothing left over`,
  });
  const same = typeof c === "string" ? "" : BigInt(geom.result) === c.sum ? "same " : "DIFFERENT ";
  printSideBySide({
    group,
    label: `λ=${LAMBDA}, geom() per variate`,
    ours: { value: geom.ns, unit: "ns" },
    anchor,
    anchorName,
    note: `${same}${draws}; one call per variate, which the runtime makes once per sample`,
  });
}

function reportBinom(): void {
  const c = memprofCDraw(LAMBDA, BLOCKS, BINOM_SEED, { mode: "binom" });
  const same = (sum: number) => {
    const samples = `${sum.toLocaleString("en")} samples`;
    return typeof c === "string"
      ? samples
      : `${BigInt(sum) === c.sum ? "same" : "DIFFERENT"} ${samples}`;
  };
  const ours = bestOf3(BLOCKS, binomBlocks);
  printSideBySide({
    group: "rng: binom",
    label: `rand_binom, ${BLOCKS.toLocaleString("en")} blocks of 1–16 words, λ=${LAMBDA}`,
    ours: { value: ours.ns, unit: "ns/block" },
    anchor: typeof c === "string" ? c : c.ns,
    anchorName: "memprof.c -O2",
    note: same(ours.result),
  });
  const local = bestOf3(BLOCKS, binomBlocksLocal);
  printSideBySide({
    group: "rng: binom",
    label: "the same blocks, next_rand_geom kept in a local (V8's floor for this loop)",
    ours: { value: local.ns, unit: "ns/block" },
    anchor: typeof c === "string" ? c : c.ns,
    anchorName: "memprof.c -O2",
    note: `${same(local.result)}; informational`,
  });
}

/** Fresh isolates per rate: V8 compiles the workload's loop in one of two shapes (see
 * bench/README.md), so one isolate's figure is one draw of that choice; the line gives the
 * median and every isolate's figure. */
const ISOLATES = 3;

async function reportAllocations(): Promise<void> {
  for (const lambda of LAMBDAS) {
    // Each rate in its own isolates, as the anchor runs each in its own process.
    const rates: number[] = [];
    for (let k = 0; k < ISOLATES; k++) {
      rates.push(ALLOCATIONS / await allocSecondsInFreshIsolate(lambda) / 1e6);
    }
    const each = rates.map((r) => r.toFixed(1)).join(", ");
    rates.sort((a, b) => a - b);
    const anchor = ocamlAllocationsPerSecond("alloc", lambda);
    printSideBySide({
      group: "memprof alloc",
      label: lambda === null ? "no profile" : `λ=${lambda}`,
      ours: { value: rates[ISOLATES >> 1], unit: "M allocations/s" },
      anchor: typeof anchor === "string" ? anchor : anchor / 1e6,
      anchorName: "OCaml 5.3",
      note: `median of ${ISOLATES} isolates: ${each}`,
    });
  }
}

console.log(
  "\nsampler against memprof.c and OCaml 5.3 (draws: best of 3; allocations: median of 9 " +
    `after 1 s of warm-up, each rate in ${ISOLATES} fresh isolates; ` +
    "this machine, now):",
);
reportDraws();
reportBinom();
await reportAllocations();
console.log();

// ---- Deno.bench's table ----

function geomBench(backend: Exclude<RngBackend, "auto">, lambda: number, baseline = false) {
  const o = oneLog1mLambda(lambda);
  const rng = new MemprofRng(1, o, { backend });
  Deno.bench({
    name: `geom ×1e6, λ=${lambda}, ${backend}`,
    group: "rng: geom variates",
    baseline,
    fn() {
      const r = rng, oo = o; // locals, so the loop does not reload closure slots
      let s = 0;
      for (let i = 0; i < TABLE_DRAWS; i++) s += r.geom(oo);
      sink += s;
    },
  });
}

geomBench("wasm-simd", 1e-4, true);
geomBench("ts", 1e-4);
geomBench("wasm-simd", 0.5);
geomBench("ts", 0.5);

// The runtime's consumption: rand_binom over the sum of the first million draws, i.e. about a
// million variates read from the batch in place per iteration.
{
  const o = oneLog1mLambda(LAMBDA);
  const first = new MemprofRng(1, o);
  let total = 0;
  for (let i = 0; i < TABLE_DRAWS; i++) total += first.geom(o);
  const rng = new MemprofRng(1, o);
  Deno.bench({
    name: "≈1e6 variates through binom (in place), λ=1e-4, wasm-simd",
    group: "rng: geom variates",
    fn() {
      sink += rng.binom(total, o);
    },
  });
}

// rand_binom over typical block sizes, as the report's line (one generator, running on).
{
  const o = oneLog1mLambda(LAMBDA);
  const rng = new MemprofRng(BINOM_SEED);
  Deno.bench({
    name: "binom ×1e6 blocks of 1–16 words, λ=1e-4",
    group: "rng: binom",
    fn() {
      const r = rng, oo = o;
      let s = 0;
      for (let i = 0; i < BLOCKS; i++) s += r.binom((i & 15) + 1, oo);
      sink += s;
    },
  });
}

for (const lambda of LAMBDAS) {
  Deno.bench({
    name: lambda === null
      ? "no profile: 1M allocations, 4.5M words"
      : `lambda ${lambda}: 1M allocations, 4.5M words`,
    group: "memprof alloc",
    baseline: lambda === null,
    fn: allocWorkload(lambda),
  });
}

// Keep `sink` observable.
globalThis.addEventListener("unload", () => {
  if (sink === -1) console.log(sink);
});
