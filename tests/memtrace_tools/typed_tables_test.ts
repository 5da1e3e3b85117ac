// The tools' typed-array tables against the plain models they replace, on seeded random
// operation streams: ShadowingIntMap against ShadowingMap (OCaml's add/find/remove shadowing),
// PairHeavyHitters against memtrace's Heavy_hitters written directly on the OCamlHashtbl model
// (a miss visiting every counter through filter_map_inplace) — the same counters, in the same
// traversal order, after every stream.
import assert from "node:assert/strict";
import { OCamlHashtbl, ShadowingMap } from "../../lib/memtrace_tools/_hashtbl.ts";
import { ShadowingIntMap } from "../../lib/memtrace_tools/_int_map.ts";
import { PairHeavyHitters } from "../../lib/memtrace_tools/_heavy_hitters.ts";
import { mulberry32 } from "../prng.ts";

Deno.test("ShadowingIntMap agrees with ShadowingMap on random add/find/take streams", () => {
  for (const seed of [1, 2, 3, 4]) {
    const rnd = mulberry32(seed);
    const fast = new ShadowingIntMap();
    const model = new ShadowingMap<number, number>();
    // Keys from a small range (collisions, shadowing) and from far apart (large ids, negatives).
    const key = () =>
      rnd() < 0.7
        ? Math.floor(rnd() * 3000)
        : rnd() < 0.5
        ? 2 ** 40 + Math.floor(rnd() * 50)
        : -Math.floor(rnd() * 50);
    let bound = 0;
    for (let op = 0; op < 60_000; op++) {
      const k = key();
      const r = rnd();
      if (r < 0.45) {
        fast.add(k, op);
        model.add(k, op);
        bound++;
      } else if (r < 0.9) {
        const expected = model.find(k);
        model.remove(k);
        assert.equal(fast.take(k), expected, `seed ${seed}, op ${op}: take ${k}`);
      } else assert.equal(fast.find(k), model.find(k), `seed ${seed}, op ${op}: find ${k}`);
    }
    assert.ok(bound > 20_000);
    for (let k = -60; k < 3000; k++) assert.equal(fast.find(k), model.find(k));
  }
});

/** memtrace's Heavy_hitters, as hotspots had it: OCamlHashtbl and filter_map_inplace. */
class ModelHeavyHitters {
  readonly tbl: OCamlHashtbl<number, { hits: number; misses: number; skippedBefore: number }>;
  len = 0;
  skipped = 0;
  constructor(readonly k: number, hash: (x: number) => number) {
    this.tbl = new OCamlHashtbl({ hash, equal: (a, b) => a === b }, k);
  }
  add(x: number): void {
    const c = this.tbl.find(x);
    if (c !== undefined) c.hits++;
    else if (this.len < this.k) {
      this.len++;
      this.tbl.add(x, { hits: 1, misses: 0, skippedBefore: this.skipped });
    } else {
      this.skipped++;
      this.tbl.filterMapInplace((_x, c) => {
        c.misses++;
        if (c.hits > c.misses) return c;
        this.len--;
        this.skipped += c.hits;
        return undefined;
      });
    }
  }
}

Deno.test("ShadowingIntMap: ids a crafted trace spaces by powers of two spread over the table", () => {
  // 30,000 live ids, spaced by 2^20, 2^32 or 2^40 (multiples of any table size), or consecutive:
  // with a hash whose low bits depend only on the ids' low bits, the spaced ones all share one
  // slot's probe run (30,000 long), and every add and find walks it. Fibonacci hashing's top
  // bits spread them: at half load, the longest run stays short (about 30 here).
  for (const step of [2 ** 20, 2 ** 32, 2 ** 40, 1]) {
    const m = new ShadowingIntMap();
    for (let k = 0; k < 30_000; k++) m.add(k * step, k);
    assert.ok(m.longestRun() < 200, `step ${step}: a probe run of ${m.longestRun()}`);
    for (let k = 0; k < 30_000; k += 997) assert.equal(m.find(k * step), k);
    // Taking every other id keeps the rest findable (backward-shift deletion with the new homes).
    for (let k = 0; k < 30_000; k += 2) assert.equal(m.take(k * step), k);
    for (let k = 1; k < 30_000; k += 2) assert.equal(m.find(k * step), k);
  }
});

Deno.test("PairHeavyHitters keeps memtrace's counters in memtrace's order", () => {
  const hash = (p: number) => Math.imul(p, 1231441) ^ Math.imul(p >>> 5, 3821);
  for (const [seed, k, keys] of [[1, 16, 40], [2, 100, 400], [3, 500, 20_000], [4, 50, 60]]) {
    const rnd = mulberry32(seed);
    const fast = new PairHeavyHitters(k, hash);
    const model = new ModelHeavyHitters(k, hash);
    let misses = 0;
    for (let n = 0; n < 200_000; n++) {
      // Skewed: a few heavy keys, a long tail that keeps the table full and missing.
      const x = rnd() < 0.5 ? Math.floor(rnd() ** 3 * 20) : Math.floor(rnd() * keys);
      if (model.len === k && model.tbl.find(x) === undefined) misses++;
      fast.add(x);
      model.add(x);
    }
    assert.ok(misses > 100, `seed ${seed}: ${misses} misses`);
    const got: number[][] = [], want: number[][] = [];
    fast.iter((x, hits, skippedBefore) => got.push([x, hits, skippedBefore]));
    model.tbl.iter((x, c) => want.push([x, c.hits, c.skippedBefore]));
    assert.ok(want.length > 0);
    assert.deepEqual(got, want, `seed ${seed}`);
  }
});
