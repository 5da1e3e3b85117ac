import assert from "node:assert/strict";
import {
  comballocBlock,
  Lifecycle,
  MAX_YOUNG_WOSIZE,
  RecordingSink,
  Runtime,
  RuntimeCounter,
  RuntimePhase,
} from "../../lib/runtime/mod.ts";

Deno.test("minor heap: addresses grow down, the trigger moves from the middle to the start", () => {
  const sink = new RecordingSink();
  const rt = new Runtime({ minorHeapWords: 4096, events: sink });
  const d = rt.mainDomain;
  assert.equal(d.youngPtr, d.youngEnd);
  assert.equal(d.youngTrigger, d.youngStart + 2048);
  const a = d.alloc(3);
  assert.equal(a, d.youngEnd - 4);
  assert.equal(d.youngPtr, a);
  // Fill past the middle: no collection yet, but the trigger moves and a major slice runs.
  while (d.youngPtr > d.youngStart + 2048) d.alloc(9);
  assert.equal(d.youngTrigger, d.youngStart);
  assert.equal(rt.minorCollections, 0);
  assert.equal(d.stats.majorSlices, 1);
  // Then a collection happens as soon as fewer than 257 words would remain.
  while (rt.minorCollections === 0) d.alloc(9);
  assert.equal(d.youngPtr, d.youngEnd - 10);
  assert.ok(sink.events.some((e) => e.kind === "begin" && e.phase === RuntimePhase.EV_MINOR));
});

Deno.test("blocks over Max_young_wosize go to the major heap; combined allocation layout", () => {
  const rt = new Runtime();
  const d = rt.mainDomain;
  const p = d.youngPtr;
  const big = d.alloc(MAX_YOUNG_WOSIZE + 1);
  assert.ok(!rt.isYoung(big));
  assert.equal(d.youngPtr, p);
  const small = d.alloc(MAX_YOUNG_WOSIZE);
  assert.ok(rt.isYoung(small));
  const lens = [2, 3, 4];
  const base = d.allocCombined(lens);
  assert.equal(base, small - 12);
  assert.equal(comballocBlock(base, lens, 0), base);
  assert.equal(comballocBlock(base, lens, 2), base + 3 + 4);
});

Deno.test("roots: promotion forwards, addresses are never reused, unrooted blocks die", () => {
  const rt = new Runtime({ minorHeapWords: 1024 });
  const d = rt.mainDomain;
  const a = d.alloc(2);
  const r1 = rt.root(a, 2);
  const r2 = rt.root(a, 2);
  const dead = d.alloc(2);
  d.minorGc();
  assert.equal(r1.addr, r2.addr, "one block, one forwarded copy");
  assert.ok(!rt.isYoung(r1.addr));
  assert.equal(rt.promotedWords, 2);
  const b = d.alloc(2);
  assert.notEqual(b, a);
  assert.notEqual(b, dead);
  r1.release();
  assert.ok(!rt.roots.has(r1));
});

Deno.test("memprof under compaction: tracked blocks are moved, callbacks still balance", () => {
  const sink = new RecordingSink();
  const rt = new Runtime({ events: sink });
  const d = rt.mainDomain;
  let deallocs = 0;
  d.memprofStart({
    samplingRate: 1,
    tracker: {
      allocMajor: () => 1,
      allocMinor: () => 1,
      promote: () => 1,
      deallocMajor: () => void deallocs++,
    },
  });
  const r = rt.root(d.alloc(300), 300);
  const r2 = rt.root(d.alloc(1), 1);
  d.processPendingActions();
  const before = r.addr;
  d.compact();
  assert.notEqual(r.addr, before);
  const entries = d.memprof.entries;
  assert.deepEqual(
    entries.block.slice(0, entries.size).sort(),
    [r.addr, r2.addr].sort(),
  );
  assert.equal(deallocs, 0);
  r.release();
  r2.release();
  d.fullMajor();
  assert.equal(deallocs, 2);
  d.memprofStop();
  assert.ok(sink.events.some((e) => e.kind === "begin" && e.phase === RuntimePhase.EV_COMPACT));
  assert.ok(
    sink.events.some((e) => e.kind === "begin" && e.phase === RuntimePhase.EV_MAJOR_MEMPROF_CLEAN),
  );
});

Deno.test("major cycles: a block unreachable at a cycle's start dies at its end", () => {
  const rt = new Runtime();
  const d = rt.mainDomain;
  const dead: string[] = [];
  d.memprofStart({
    samplingRate: 1,
    tracker: { allocMajor: (i) => i.size, deallocMajor: (s) => void dead.push(`${s}`) },
  });
  const r = rt.root(d.alloc(400), 400);
  d.processPendingActions();
  d.majorGc(); // allocated during this cycle: survives
  assert.deepEqual(dead, []);
  r.release(); // was reachable when the next cycle began: survives it (snapshot)
  d.majorGc();
  assert.deepEqual(dead, []);
  d.majorGc();
  assert.deepEqual(dead, ["400"]);
  d.memprofStop();
});

Deno.test("events: memprof phases, forced minor GC for memprof, domain lifecycle", () => {
  const sink = new RecordingSink();
  const rt = new Runtime({ minorHeapWords: 1024, events: sink, pid: 77 });
  const d = rt.mainDomain;
  d.memprofStart({
    samplingRate: 1,
    tracker: {
      allocMinor: () => {
        // The callback leaves 50 words above the GC trigger: too few for the 101-word block.
        while (d.youngPtr - d.youngTrigger > 50 + 257) d.alloc(255);
        const r = d.youngPtr - d.youngTrigger - 50;
        if (r > 1) d.alloc(r - 1);
        return 1;
      },
    },
  });
  for (let i = 0; i < 5; i++) d.alloc(100);
  d.memprofStop();
  const counters = sink.events.filter((e) =>
    e.kind === "counter" &&
    e.counter === RuntimeCounter.EV_C_FORCE_MINOR_MEMPROF
  );
  assert.ok(counters.length > 0, "making room after callbacks forced a minor GC");
  assert.ok(
    sink.events.some((e) => e.kind === "begin" && e.phase === RuntimePhase.EV_MINOR_MEMPROF_ROOTS),
  );
  const d1 = rt.spawnDomain();
  rt.terminateDomain(d1);
  const lc = sink.events.filter((e) => e.kind === "lifecycle");
  assert.deepEqual(lc.slice(-2), [
    { kind: "lifecycle", domain: 1, event: Lifecycle.EV_DOMAIN_SPAWN, data: 77 },
    { kind: "lifecycle", domain: 1, event: Lifecycle.EV_DOMAIN_TERMINATE, data: 77 },
  ]);
  // Every begin has its end, per domain, properly nested.
  const stacks = new Map<number, number[]>();
  for (const e of sink.events) {
    if (e.kind !== "begin" && e.kind !== "end") continue;
    const s = stacks.get(e.domain) ?? [];
    stacks.set(e.domain, s);
    if (e.kind === "begin") s.push(e.phase);
    else assert.equal(s.pop(), e.phase);
  }
  for (const s of stacks.values()) assert.deepEqual(s, []);
});

Deno.test("runtime options are validated", () => {
  assert.throws(() => new Runtime({ minorHeapWords: 100 }), RangeError);
  assert.throws(() => new Runtime({ minorHeapWords: 4097 }), RangeError);
});

Deno.test("Gc.major runs three minor collections, Gc.full_major and Gc.compact six", () => {
  // gc_ctrl.c: gc_major_res empties the minor heaps once, then caml_finish_major_cycle empties
  // them twice (stw_finish_major_cycle and cycle_all_domains); full_major and compaction finish
  // three cycles. Counted on the real OCaml 5.3.0 runtime with Gc.quick_stat.
  const rt = new Runtime();
  const d = rt.mainDomain;
  const minors = (f: () => void) => {
    const before = rt.minorCollections;
    f();
    return rt.minorCollections - before;
  };
  assert.equal(minors(() => d.majorGc()), 3);
  assert.equal(minors(() => d.fullMajor()), 6);
  assert.equal(minors(() => d.compact()), 6);
  assert.equal(minors(() => d.minorGc()), 1);
});
