/**
 * OCaml's testsuite/tests/statmemprof behaviours, re-expressed against lib/runtime + lib/memprof.
 */
import assert from "node:assert/strict";
import { type Domain, type Root, Runtime } from "../../lib/runtime/mod.ts";
import {
  type AllocationInfo,
  AllocationSource,
  discard,
  OCamlFailure,
  type Profile,
  type Tracker,
} from "../../lib/memprof/mod.ts";
import { AuditTracker } from "../../lib/memprof/invariants.ts";
import { assertBinomial, checkAll, f33 } from "./helpers.ts";
import { sized } from "../tier.ts";

class MyExc extends Error {}

type Triple = readonly [number, number, number];
const key = (t: Triple) => t.join(",");

function holdAll(rt: Runtime, addrs: number[], roots: Root[]): void {
  for (const a of addrs) roots.push(rt.root(a, 1));
}

Deno.test("comballoc: each component of a combined allocation is sampled with the right rate", async (t) => {
  for (const rate of [0.42, 0.01, 0.83]) {
    await t.step(`rate ${rate}`, () => {
      const rt = new Runtime();
      const d = rt.mainDomain;
      const allocs = new Map<number, number>();
      const promotes = new Map<number, number>();
      const deallocs = new Map<number, number>();
      const stacks = new Map<number, string>();
      const add = (m: Map<number, number>, k: number, v: number) => m.set(k, (m.get(k) ?? 0) + v);
      d.memprofStart({
        samplingRate: rate,
        callstackSize: 10,
        tracker: {
          allocMinor: (info: AllocationInfo) => {
            add(allocs, info.size, info.nSamples);
            const s = info.callstack.join(";");
            if (!stacks.has(info.size)) stacks.set(info.size, s);
            else assert.equal(stacks.get(info.size), s);
            return [info.size, info.nSamples] as const;
          },
          promote: ([sz, n]: readonly [number, number]) => {
            add(promotes, sz, n);
            return undefined;
          },
          deallocMinor: ([sz, n]: readonly [number, number]) => add(deallocs, sz, n),
        },
      });
      // f n = (n, (n, n, f4 n)) with f4 inlined: blocks (n,n,n,n) [4], (n,n,x) [3], (n,x) [2]
      const lens = [2, 3, 4];
      const stacksPer = [["comballoc.ml:f:pair"], ["comballoc.ml:f:triple"], ["f4"]];
      // 20,000 in the quick tier (tests/tier.ts): the bounds are the binomial's at that size.
      const iter = sized(100_000, 20_000);
      const arr: Root[] = [];
      for (let i = 0; i < iter; i++) {
        const base = d.allocCombined(lens, stacksPer);
        arr.push(rt.root(base + 3 + 4, 4)); // keep x = f4 n
      }
      d.minorGc();
      d.memprofStop();
      checkAll(rt);
      for (const [sz, a] of allocs) {
        assert.equal((deallocs.get(sz) ?? 0) + (promotes.get(sz) ?? 0), a);
        assertBinomial(a, (sz + 1) * iter, rate, `size ${sz}`);
      }
      assert.deepEqual([...allocs.keys()].sort(), [2, 3, 4]);
      // The kept blocks' samples, (4 + 1) × iter × rate expected: 5,000 (1,000 in the quick
      // tier) at the lowest rate, 0.01.
      assert.ok((promotes.get(4) ?? 0) > iter / 100);
      assert.equal(promotes.get(2) ?? 0, 0);
      assert.equal(stacks.get(4), "f4");
      for (const r of arr) r.release();
    });
  }
  await t.step("no callback after stop", () => {
    for (let trigger = 0; trigger <= 200; trigger++) {
      const rt = new Runtime();
      const d = rt.mainDomain;
      let stopped = false;
      let cnt = 0;
      d.memprofStart({
        samplingRate: 1,
        callstackSize: 0,
        tracker: {
          allocMinor: () => {
            assert.ok(!stopped);
            if (++cnt > trigger) {
              d.memprofStop();
              stopped = true;
            }
            return undefined;
          },
        },
      });
      for (let i = 0; i <= 1000 && !stopped; i++) d.allocCombined([2, 3, 4]);
      assert.ok(stopped);
    }
  });
});

Deno.test("exception_comballoc: a raising callback cancels the comballoc; earlier callbacks get deallocs", () => {
  const rt = new Runtime();
  const d = rt.mainDomain;
  let nAlloc = 0;
  let nProf = 0;
  let nExc = 0;
  const allocs = new Set<string>();
  const deallocs = new Set<string>();
  const excs = new Set<string>();
  const tracker: Tracker<Triple, Triple> = {
    allocMinor: (info) => {
      nAlloc++;
      const t: Triple = [nProf, nAlloc, info.size + 1];
      allocs.add(key(t));
      if (nAlloc >= nProf) {
        excs.add(key(t));
        throw new MyExc("from allocation callback");
      }
      return t;
    },
    promote: (m) => m,
    deallocMinor: (m) => void deallocs.add(key(m)),
    deallocMajor: (m) => void deallocs.add(key(m)),
    allocMajor: () => assert.fail("no major allocation expected"),
  };
  const arr: Root[] = [];
  for (let i = 1; i <= 10; i++) {
    nProf++;
    nAlloc = 0;
    d.memprofStart({ samplingRate: 1, tracker });
    const before = d.youngPtr;
    try {
      const blocks = f33(d);
      const cons = d.alloc(2);
      holdAll(rt, [...blocks, cons], arr);
    } catch (e) {
      assert.ok(e instanceof MyExc);
      nExc++;
    }
    if (i <= 8) assert.ok(d.youngPtr <= before); // nothing of a cancelled comballoc is kept
    d.memprofStop();
    d.minorGc();
    checkAll(rt);
  }
  for (const r of arr) r.release();
  d.fullMajor();
  checkAll(rt);
  const size = (s: Set<string>) => [...s].reduce((a, k) => a + Number(k.split(",")[2]), 0);
  assert.equal(nExc, 8);
  for (const k of deallocs) assert.ok(!excs.has(k));
  assert.deepEqual(new Set([...deallocs, ...excs]), allocs);
  assert.equal(deallocs.size, 0 + 1 + 2 + 3 + 4 + 5 + 6 + 7 + 8 + 8);
  assert.equal(allocs.size, deallocs.size + nExc);
  const row = [6, 5, 4, 6, 5, 4, 3, 3];
  let expected = 0;
  for (let i = 1; i <= 10; i++) {
    // profile i raises at its i-th block (i ≤ 8); profiles 9 and 10 complete all 8 blocks
    for (let j = 0; j < Math.min(i - 1, 8); j++) expected += row[j];
  }
  assert.equal(size(deallocs), expected);
  assert.equal(size(allocs), size(deallocs) + row.reduce((a, b) => a + b));
});

for (const restart of [true, false]) {
  Deno.test(`stop_start_in_callback (restart=${restart})`, () => {
    const rt = new Runtime();
    const d = rt.mainDomain;
    let nAlloc = 0;
    let nProf = 0;
    const allocs = new Set<string>();
    const promotes = new Set<string>();
    const dMinor = new Set<string>();
    const dMajor = new Set<string>();
    let tracker: Tracker<Triple, Triple> = {};
    const start = () => {
      nProf++;
      nAlloc = 0;
      d.memprofStart({ samplingRate: 1, tracker });
    };
    tracker = {
      allocMinor: (info) => {
        nAlloc++;
        const t: Triple = [nProf, nAlloc, info.size + 1];
        allocs.add(key(t));
        if (nAlloc >= nProf) {
          d.memprofStop();
          if (restart) start();
        }
        return t;
      },
      promote: (m) => (promotes.add(key(m)), m),
      deallocMinor: (m) => void dMinor.add(key(m)),
      deallocMajor: (m) => void dMajor.add(key(m)),
      allocMajor: () => assert.fail("no major allocation expected"),
    };
    const arr: Root[] = [];
    start();
    for (let k = 0; k < 4; k++) {
      holdAll(rt, [...f33(d), d.alloc(2)], arr);
      checkAll(rt);
      if (k < 3 && !restart) start();
    }
    if (restart) d.memprofStop();
    d.minorGc();
    for (const r of arr) r.release();
    d.fullMajor();
    checkAll(rt);
    for (const p of promotes) assert.ok(dMajor.has(p));
    for (const x of dMinor) assert.ok(allocs.has(x) && !dMajor.has(x));
    for (const x of dMajor) assert.ok(allocs.has(x));
    assert.deepEqual(new Set([...dMinor, ...dMajor]), allocs);
    const words = [...allocs].reduce((a, k) => a + Number(k.split(",")[2]), 0);
    if (restart) {
      assert.equal(allocs.size, 1 + 2 + 3 + 4 + 1);
      assert.equal(words, 6 + (3 + 6) + (3 + 6 + 5) + (3 + 6 + 5 + 4) + 3);
    } else {
      assert.equal(allocs.size, 1 + 2 + 3 + 4);
      assert.equal(words, 6 + (6 + 5) + (6 + 5 + 4) + (6 + 5 + 4 + 6));
    }
  });

  Deno.test(`discard_in_callback (restart=${restart})`, () => {
    const rt = new Runtime();
    const d = rt.mainDomain;
    let nProf = 0;
    let nAlloc = 0;
    let allocs = 0;
    let words = 0;
    let tracker: Tracker<number, number> = {};
    let pref: Profile = d.memprofStart({ samplingRate: 0, tracker: {} });
    d.memprofStop();
    const start = () => {
      nProf++;
      nAlloc = 0;
      pref = d.memprofStart({ samplingRate: 1, tracker });
    };
    const stop = () => {
      d.memprofStop();
      d.memprofDiscard(pref);
    };
    tracker = {
      allocMinor: (info) => {
        allocs++;
        nAlloc++;
        words += info.size + 1;
        if (nAlloc >= nProf) {
          stop();
          if (restart) start();
        }
        return words;
      },
      promote: () => assert.fail("promote"),
      deallocMinor: () => assert.fail("dealloc_minor"),
      deallocMajor: () => assert.fail("dealloc_major"),
      allocMajor: () => assert.fail("alloc_major"),
    };
    const res: Root[] = [];
    start();
    for (let k = 0; k < 4; k++) {
      holdAll(rt, [...f33(d), d.alloc(2)], res);
      checkAll(rt);
      if (k < 3 && !restart) start();
    }
    if (restart) stop();
    d.minorGc();
    for (const r of res) r.release();
    d.fullMajor();
    checkAll(rt);
    if (restart) {
      assert.equal(allocs, 1 + 2 + 3 + 4 + 1);
      assert.equal(words, 6 + (3 + 6) + (3 + 6 + 5) + (3 + 6 + 5 + 4) + 3);
    } else {
      assert.equal(allocs, 1 + 2 + 3 + 4);
      assert.equal(words, 6 + (6 + 5) + (6 + 5 + 4) + (6 + 5 + 4 + 6));
    }
  });
}

Deno.test("exception_callback: a raising callback's exception escapes Array.make", () => {
  // Array.make 200 0 at rate 0.5 with a callback that fails: the block is allocated by C
  // (caml_alloc_small), so the callback runs at caml_make_vect's final poll and raises there.
  const rt = new Runtime();
  const d = rt.mainDomain;
  let calls = 0;
  d.memprofStart({
    samplingRate: 0.5,
    callstackSize: 10,
    tracker: {
      allocMinor: () => {
        calls++;
        throw new MyExc("assert false");
      },
    },
  });
  assert.throws(() => d.makeArray(200), MyExc);
  assert.equal(calls, 1);
  checkAll(rt);
});

/** A fresh runtime's main domain sampling every word with `tracker`. */
function sampleEverything(tracker: Tracker): { rt: Runtime; d: Domain } {
  const rt = new Runtime();
  const d = rt.mainDomain;
  d.memprofStart({ samplingRate: 1, tracker });
  return { rt, d };
}

const raiseMyExc = (): never => {
  throw new MyExc();
};

Deno.test("exception_callback: exceptions from every kind of callback propagate", async (t) => {
  await t.step("alloc_major raises out of Array.make", () => {
    const { rt, d } = sampleEverything({ allocMajor: raiseMyExc });
    assert.throws(() => d.alloc(1000), MyExc);
    d.processPendingActions(); // the entry was dropped: nothing more to raise
    d.memprofStop();
    checkAll(rt);
  });
  await t.step("a major sample from C waits for the next poll point", () => {
    const { rt, d } = sampleEverything({ allocMajor: raiseMyExc });
    d.allocMajor(1000);
    assert.throws(() => d.processPendingActions(), MyExc);
    d.memprofStop();
    checkAll(rt);
  });
  await t.step("promote raises out of Gc.minor", () => {
    const { rt, d } = sampleEverything({ allocMinor: () => 1, promote: raiseMyExc });
    const r = rt.root(d.alloc(1), 1);
    assert.throws(() => d.minorGc(), MyExc);
    d.memprofStop();
    r.release();
    d.fullMajor();
    checkAll(rt);
  });
  await t.step("dealloc raises out of Gc.full_major", () => {
    const { rt, d } = sampleEverything({ allocMinor: () => 1, deallocMinor: raiseMyExc });
    d.alloc(1);
    d.memprofStop();
    assert.throws(() => d.fullMajor(), MyExc);
    checkAll(rt);
  });
});

Deno.test("exception_callback_minor: ref (ref 42) at rate 1 with failing callbacks", () => {
  // The two blocks are one combined allocation; the first callback raises, none is allocated
  // and the exception escapes (the OCaml test exits with status 2 before `stop`).
  const rt = new Runtime();
  const d = rt.mainDomain;
  let calls = 0;
  const fail = () => {
    calls++;
    throw new MyExc("assert false");
  };
  d.memprofStart({
    samplingRate: 1,
    callstackSize: 10,
    tracker: { allocMinor: fail, allocMajor: fail },
  });
  const before = d.youngPtr;
  assert.throws(() => d.allocCombined([1, 1]), MyExc);
  assert.equal(calls, 1);
  assert.equal(d.youngPtr, before - 5, "only the runtime's sample_info record was allocated");
  assert.equal(d.memprof.current!.entries.size, 0, "the other sampled block's entry is gone");
  checkAll(rt);
});

Deno.test("exception_callback_minor: raising callbacks leave the profile working", () => {
  const rt = new Runtime();
  const d = rt.mainDomain;
  let n = 0;
  const audit = new AuditTracker({
    allocMinor: () => {
      if (++n % 2 === 0) throw new MyExc();
      return n;
    },
  });
  d.memprofStart({ samplingRate: 0.1, callstackSize: 0, tracker: audit.tracker });
  let raised = 0;
  const keep = rt.root();
  for (let i = 0; i < 10_000; i++) {
    try {
      keep.set(d.alloc(4), 4);
    } catch (e) {
      assert.ok(e instanceof MyExc);
      raised++;
    }
    if (i % 1000 === 0) checkAll(rt);
  }
  assert.ok(raised > 100);
  d.memprofStop();
  keep.release();
  d.fullMajor();
  checkAll(rt);
  audit.assertBalanced();
});

Deno.test("start_stop: valid and invalid orderings of start, stop and discard", async (t) => {
  const rt = new Runtime();
  const d = rt.mainDomain;
  const prof = () => d.memprofStart({ samplingRate: 1, tracker: {} });
  const sampling = (b: boolean) => assert.equal(d.memprof.sampling(), b);
  await t.step("null test", () => {
    sampling(false);
    const p = prof();
    sampling(true);
    d.memprofStop();
    sampling(false);
    discard(p);
    sampling(false);
  });
  await t.step("stop without starting", () => {
    assert.throws(() => d.memprofStop(), new OCamlFailure("Gc.Memprof.stop: no profile running."));
  });
  await t.step("second start without stopping", () => {
    try {
      prof();
      assert.throws(() => prof(), new OCamlFailure("Gc.Memprof.start: already started."));
      sampling(true);
    } finally {
      d.memprofStop();
    }
    sampling(false);
  });
  await t.step("discard without stopping", () => {
    try {
      assert.throws(
        () => discard(prof()),
        new OCamlFailure("Gc.Memprof.discard: profile not stopped."),
      );
    } finally {
      d.memprofStop();
    }
  });
  await t.step("discard twice", () => {
    const p = prof();
    d.memprofStop();
    discard(p);
    assert.throws(
      () => discard(p),
      new OCamlFailure("Gc.Memprof.discard: profile already discarded."),
    );
  });
  await t.step("double profiles, with every discard order", () => {
    prof();
    d.memprofStop();
    prof();
    d.memprofStop();
    let p1 = prof();
    d.memprofStop();
    discard(p1);
    prof();
    d.memprofStop();
    p1 = prof();
    d.memprofStop();
    discard(p1);
    let p2 = prof();
    d.memprofStop();
    discard(p2);
    p1 = prof();
    d.memprofStop();
    p2 = prof();
    d.memprofStop();
    discard(p1);
    discard(p2);
    p1 = prof();
    d.memprofStop();
    p2 = prof();
    d.memprofStop();
    discard(p2);
    discard(p1);
  });
  await t.step("discarding an old profile while another samples", () => {
    const p1 = prof();
    d.memprofStop();
    const p2 = prof();
    discard(p1);
    sampling(true);
    d.memprofStop();
    discard(p2);
  });
  checkAll(rt);
});

Deno.test("start_stop: repeated start/stop while allocating; promote and dealloc after stop", () => {
  const rt = new Runtime({ minorHeapWords: 8192 });
  const d = rt.mainDomain;
  const audits: { audit: AuditTracker; discarded: boolean }[] = [];
  const roots = Array.from({ length: 64 }, () => rt.root());
  for (let round = 0; round < 50; round++) {
    const audit = new AuditTracker({
      allocMinor: (info) => info.size,
      promote: (x) => x,
      allocMajor: (info) => info.size,
    });
    const p = d.memprofStart({ samplingRate: 0.01, tracker: audit.tracker });
    for (let i = 0; i < 2000; i++) {
      const sz = 1 + (i % 7);
      const a = d.alloc(i % 97 === 0 ? 300 : sz);
      roots[i % roots.length].set(a, sz);
      d.poll();
    }
    d.memprofStop();
    const discarded = round % 2 === 0;
    if (discarded) discard(p);
    audits.push({ audit, discarded });
    checkAll(rt);
  }
  for (const r of roots) r.release();
  d.fullMajor();
  checkAll(rt);
  // Stopped profiles keep their promote/dealloc callbacks: every block balances.
  for (const { audit, discarded } of audits) {
    assert.ok(audit.records.length > 0);
    if (!discarded) audit.assertBalanced();
  }
});

Deno.test("lists_in_minor: list cells sampled at the sampling rate (5.7 sigma)", async (t) => {
  // allocate_list: n :: accu, cnt lists of len cells; each cell is 3 words with its header.
  const cases: [number, number, number][] = [
    [10, 1_000_000, 0.01],
    [1_000_000, 10, 0.00001],
    [1_000_000, 10, 0.0001],
    [1_000_000, 10, 0.001],
    [1_000_000, 10, 0.01],
    [100_000, 10, 0.1],
    [100_000, 10, 1],
  ];
  for (const [len, full, rate] of cases) {
    // A tenth of the lists in the quick tier (tests/tier.ts): the bound is 5.7 sigma at the size
    // run (at rate 0.00001, 30 ± 31 samples instead of 300 ± 99).
    const cnt = sized(full, full / 10);
    await t.step(`check_distrib ${len} ${cnt} ${rate}`, () => {
      const rt = new Runtime();
      const d = rt.mainDomain;
      d.setCallstack(["allocate_list", "allocate_lists", "check_distrib"]);
      let smp = 0;
      d.memprofStart({
        samplingRate: rate,
        callstackSize: 10,
        tracker: {
          allocMinor: (info) => {
            assert.equal(info.size, 2);
            assert.ok(info.nSamples > 0);
            smp += info.nSamples;
            return undefined;
          },
          allocMajor: () => assert.fail("no major allocation expected"),
        },
      });
      const head = rt.root(); // the list under construction is live
      for (let j = 0; j < cnt; j++) {
        for (let n = len; n > 0; n--) head.set(d.alloc(2), 2);
        head.clear();
      }
      d.memprofStop();
      const mean = cnt * len * 3 * rate;
      assert.ok(Math.abs(mean - smp) <= Math.sqrt(mean) * 5.7, `${smp} vs ${mean}`);
    });
  }
  await t.step("check_callstack", () => {
    const rt = new Runtime();
    const d = rt.mainDomain;
    d.setCallstack(["allocate_list", "allocate_lists", "check_callstack"]);
    let cs: readonly string[] | null = null;
    d.memprofStart({
      samplingRate: 1,
      callstackSize: 10,
      tracker: { allocMinor: (info) => void (cs = info.callstack) },
    });
    for (let n = 1000; n > 0; n--) d.alloc(2);
    d.memprofStop();
    assert.deepEqual(cs, ["allocate_list", "allocate_lists", "check_callstack"]);
  });
});

/** allocate_arrays lo hi cnt keep: root := Array.make i 0 :: !root for i in lo..hi. */
function allocateArrays(
  rt: Runtime,
  root: Root[],
  lo: number,
  hi: number,
  cnt: number,
  keep: boolean,
): void {
  const d = rt.mainDomain;
  for (let j = 0; j < cnt; j++) {
    for (let i = lo; i <= hi; i++) {
      root.push(rt.root(d.makeArray(i), i));
      root.push(rt.root(d.alloc(2), 2)); // the cons cell
    }
    if (!keep) {
      for (const r of root) r.release();
      root.length = 0;
    }
  }
}

Deno.test("arrays_in_major", async (t) => {
  await t.step("check_nosample", () => {
    const rt = new Runtime();
    const cb = () => assert.fail("callback called with sampling_rate = 0");
    rt.mainDomain.memprofStart({
      samplingRate: 0,
      callstackSize: 10,
      tracker: { allocMinor: cb, allocMajor: cb },
    });
    allocateArrays(rt, [], 300, 3000, 1, false);
    rt.mainDomain.memprofStop();
  });
  for (const forcePromote of [false, true]) {
    await t.step(`check_counts_full_major ${forcePromote}`, () => {
      const rt = new Runtime();
      const d = rt.mainDomain;
      const n = { allocMinor: 0, allocMajor: 0, promote: 0, deallocMinor: 0, deallocMajor: 0 };
      let enable = true;
      d.memprofStart({
        samplingRate: 0.01,
        callstackSize: 10,
        tracker: {
          allocMinor: () => (enable ? (n.allocMinor++, true) : undefined),
          allocMajor: () => (enable ? (n.allocMajor++, true) : undefined),
          promote: () => (n.promote++, true),
          deallocMinor: () => void n.deallocMinor++,
          deallocMajor: () => void n.deallocMajor++,
        },
      });
      const root: Root[] = [];
      allocateArrays(rt, root, 300, 3000, 1, true);
      enable = false;
      assert.equal(n.deallocMinor + n.deallocMajor, 0);
      const release = () => {
        for (const r of root) r.release();
        root.length = 0;
      };
      if (forcePromote) {
        d.fullMajor();
        assert.equal(n.deallocMinor + n.deallocMajor, 0);
        assert.equal(n.promote, n.allocMinor);
        release();
        d.fullMajor();
        assert.equal(n.deallocMinor, 0);
        assert.equal(n.deallocMajor, n.allocMinor + n.allocMajor);
      } else {
        release();
        d.minorGc();
        d.fullMajor();
        d.fullMajor();
        assert.equal(n.allocMinor, n.deallocMinor + n.promote);
        assert.equal(n.deallocMajor, n.promote + n.allocMajor);
      }
      assert.ok(n.allocMinor > 0 && n.allocMajor > 0);
      d.memprofStop();
      checkAll(rt);
    });
  }
  await t.step("check_no_nested", () => {
    const rt = new Runtime();
    const d = rt.mainDomain;
    let inCallback = false;
    let calls = 0;
    const cb = () => {
      assert.ok(!inCallback);
      inCallback = true;
      calls++;
      allocateArrays(rt, [], 300, 300, 100, false);
      inCallback = false;
    };
    const cb2 = () => (cb(), true);
    d.memprofStart({
      samplingRate: 1,
      callstackSize: 10,
      tracker: {
        allocMinor: cb2,
        allocMajor: cb2,
        promote: cb2,
        deallocMinor: cb,
        deallocMajor: cb,
      },
    });
    allocateArrays(rt, [], 300, 300, 100, false);
    d.memprofStop();
    assert.ok(calls >= 200);
    checkAll(rt);
  });
  const distribs: [number, number, number, number][] = [
    [300, 3000, 3, 0.00001],
    [300, 3000, 1, 0.0001],
    [300, 3000, 1, 0.01],
    [300, 3000, 1, 0.9],
    [300, 300, 100_000, 0.1],
    [300_000, 300_000, 30, 0.1],
  ];
  for (const [lo, hi, cnt, rate] of distribs) {
    await t.step(`check_distrib ${lo} ${hi} ${cnt} ${rate}`, () => {
      const rt = new Runtime();
      const d = rt.mainDomain;
      let smp = 0;
      d.memprofStart({
        samplingRate: rate,
        callstackSize: 10,
        tracker: {
          allocMajor: (info) => {
            assert.ok(info.size >= lo && info.size <= hi);
            assert.ok(info.nSamples > 0);
            assert.equal(info.source, AllocationSource.NORMAL);
            smp += info.nSamples;
            return undefined;
          },
        },
      });
      allocateArrays(rt, [], lo, hi, cnt, false);
      d.memprofStop();
      const tot = cnt * (lo + hi + 2) * (hi - lo + 1) / 2;
      assert.ok(tot * rate > 100 && tot * (1 - rate) > 100);
      assertBinomial(smp, tot, rate, "major samples");
    });
  }
});

Deno.test("alloc_counts: at rate 1 every word is a sample", () => {
  const rt = new Runtime();
  const d = rt.mainDomain;
  let minor = 0;
  let major = 0;
  d.memprofStart({
    samplingRate: 1,
    tracker: {
      allocMinor: (i) => void (minor += i.nSamples),
      allocMajor: (i) => void (major += i.nSamples),
    },
  });
  for (let i = 0; i < 10; i++) {
    d.alloc(1);
    d.alloc(1);
    d.alloc(1); // ref (ref (ref 42))
    d.alloc(10); // short array
    d.alloc(1000); // long array: major
    d.allocCombined([2, 3]);
  }
  d.processPendingActions();
  d.memprofStop();
  assert.equal(minor, 10 * (2 + 2 + 2 + 11 + 3 + 4));
  assert.equal(major, 10 * 1001);
});
