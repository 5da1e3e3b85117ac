/**
 * `sampleYoung` samples a lone block through a fast path (`#sampleYoungOne`) and anything else
 * through the general steps; the plain form (`alloc`) runs them as plain code up to a callback
 * that raises or blocks, the resumable one (`allocG`) yields through the rest. These tests run
 * the same program both ways and compare everything observable.
 */
import assert from "node:assert/strict";
import { type Domain, Runtime } from "../../lib/runtime/mod.ts";
import { checkAll } from "./helpers.ts";

/** A small seeded generator (xorshift32), so each run makes the same choices. */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 2 ** 32;
  };
}

/** What a callback does, drawn per call. */
type Behaviour = "value" | "none" | "raise" | "minor" | "alloc";

/** Runs `steps` allocations on a fresh runtime, by `alloc` or by draining `allocG`; returns
 * the log of every callback, allocation result and exception, and the final counters. */
function run(opts: { resumable: boolean; seed: number; steps: number; lambda: number }): string[] {
  const rt = new Runtime({ minorHeapWords: 4096 });
  const d: Domain = rt.mainDomain;
  const log: string[] = [];
  const choose = rng(opts.seed);
  const behaviours: Behaviour[] = ["value", "value", "value", "none", "raise", "minor", "alloc"];
  let depth = 0;
  const act = (what: string, v: unknown): unknown => {
    const b = behaviours[Math.floor(choose() * behaviours.length)];
    log.push(`${what} ${JSON.stringify(v)} -> ${b} @${d.youngPtr}`);
    if (depth > 0) return v; // no nested antics
    depth++;
    try {
      switch (b) {
        case "value":
          return v;
        case "none":
          return null;
        case "raise":
          throw new Error(`raised in ${what}`);
        case "minor":
          d.minorGc();
          return v;
        case "alloc":
          d.alloc(3);
          return v;
      }
    } finally {
      depth--;
    }
  };
  const keep = Array.from({ length: 8 }, () => rt.root());
  d.memprofStart({
    samplingRate: opts.lambda,
    callstackSize: 4,
    tracker: {
      allocMinor: (info) => act("allocMinor", [info.nSamples, info.size]),
      allocMajor: (info) => act("allocMajor", [info.nSamples, info.size]),
      promote: (x) => act("promote", x),
      deallocMinor: (x) => void act("deallocMinor", x),
      deallocMajor: (x) => void act("deallocMajor", x),
    },
  });
  for (let i = 0; i < opts.steps; i++) {
    const sz = 1 + (i % 7);
    try {
      let a: number;
      if (opts.resumable) {
        const g = d.allocG(sz);
        let r = g.next();
        while (!r.done) r = g.next();
        a = r.value;
      } else a = d.alloc(sz);
      if (i % 5 === 0) keep[i % 8].set(a, sz);
      log.push(`alloc ${sz} = ${a}`);
      const es = d.memprof.entries;
      log.push(
        `cursors ${es.size} ${es.young} ${es.evict} ${es.active} ${es.capacity}; limit ${d.youngLimit}; ${
          JSON.stringify(d.stats)
        }`,
      );
    } catch (e) {
      log.push(`alloc ${sz} raised ${(e as Error).message}`);
    }
    if (i % 50 === 0) checkAll(rt);
  }
  for (let k = 0; k < 10; k++) {
    try {
      d.fullMajor(); // the remaining callbacks run (some may raise: then again)
      break;
    } catch (e) {
      log.push(`fullMajor raised ${(e as Error).message}`);
    }
  }
  checkAll(rt);
  log.push(`stats ${JSON.stringify(rt.memprofShared.stats)} entries ${d.memprof.entryCount()}`);
  return log;
}

for (const lambda of [0.01, 0.3, 1]) {
  Deno.test(`sampling a lone block takes the general path's steps when callbacks return, raise, collect or allocate (λ=${lambda})`, () => {
    for (const seed of [1, 2, 3]) {
      const plain = run({ resumable: false, seed, steps: 600, lambda });
      const general = run({ resumable: true, seed, steps: 600, lambda });
      assert.ok(plain.some((l) => l.startsWith("allocMinor")), "some samples were taken");
      assert.ok(plain.some((l) => l.includes("raised")), "some allocation was cancelled");
      assert.deepEqual(plain, general);
    }
  });
}
