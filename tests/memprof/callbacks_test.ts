import assert from "node:assert/strict";
import { Runtime } from "../../lib/runtime/mod.ts";
import { AllocationSource } from "../../lib/memprof/mod.ts";
import { AuditTracker } from "../../lib/memprof/invariants.ts";
import { checkAll } from "./helpers.ts";

Deno.test("starting a new profile orphans the old one's entries, which keep their callbacks", () => {
  const rt = new Runtime();
  const d = rt.mainDomain;
  const auditA = new AuditTracker({ allocMinor: () => "a", promote: () => "a" });
  const auditB = new AuditTracker({ allocMinor: () => "b", promote: () => "b" });
  d.memprofStart({ samplingRate: 0.05, tracker: auditA.tracker });
  const keep = Array.from({ length: 20 }, () => rt.root());
  for (let i = 0; i < 2000; i++) keep[i % 20].set(d.alloc(2), 2);
  d.memprofStop();
  const liveA = auditA.live().length;
  assert.ok(liveA > 0);
  d.memprofStart({ samplingRate: 0.05, tracker: auditB.tracker });
  assert.equal(d.memprof.orphanTables().length, 1, "profile A's entries became orphans");
  assert.equal(d.memprof.entries.size, 0);
  checkAll(rt);
  for (let i = 0; i < 2000; i++) keep[i % 20].set(d.alloc(2), 2);
  d.minorGc(); // A's and B's survivors are promoted: each profile's own promote runs
  checkAll(rt);
  assert.ok(auditA.log.some((l) => l.startsWith("dealloc_minor")));
  assert.ok(auditB.log.some((l) => l.startsWith("promote")));
  d.memprofStop();
  for (const r of keep) r.release();
  d.fullMajor();
  checkAll(rt);
  auditA.assertBalanced();
  auditB.assertBalanced();
  assert.equal(d.memprof.orphanTables().length, 0, "empty orphan tables are freed");
});

Deno.test("callbacks may allocate, collect, and switch threads", () => {
  const rt = new Runtime({ minorHeapWords: 2048 });
  const d = rt.mainDomain;
  const t1 = d.current;
  const t2 = d.createThread(["worker"]);
  let depth = 0;
  const audit = new AuditTracker({
    allocMinor: (info) => {
      depth++;
      if (depth === 1 && d.current === t1) {
        d.minorGc(); // a GC inside an allocation callback: the pending block is an offset entry
        d.switchTo(t2); // Thread.yield: t2 runs while t1 is inside its callback
        for (let i = 0; i < 50; i++) d.alloc(3); // t2 samples and runs its own callbacks
        d.switchTo(t1);
      }
      for (let i = 0; i < 30; i++) d.alloc(2);
      depth--;
      return info.size;
    },
    promote: (x) => x,
  });
  d.memprofStart({ samplingRate: 0.02, tracker: audit.tracker });
  const keep = Array.from({ length: 8 }, () => rt.root());
  for (let i = 0; i < 3000; i++) {
    keep[i % 8].set(d.alloc(1 + (i % 4)), 1 + (i % 4));
    if (i % 100 === 0) checkAll(rt);
  }
  d.memprofStop();
  for (const r of keep) r.release();
  d.switchTo(t2);
  d.processPendingActions();
  d.switchTo(t1);
  d.fullMajor();
  checkAll(rt);
  audit.assertBalanced();
  assert.ok(audit.records.length > 50);
});

Deno.test("allocation sources: runtime, custom and unmarshalled blocks", () => {
  const rt = new Runtime();
  const d = rt.mainDomain;
  const seen: string[] = [];
  d.memprofStart({
    samplingRate: 1,
    tracker: {
      allocMinor: (i) => void seen.push(`minor ${i.source} ${i.size} ${i.nSamples}`),
      allocMajor: (i) => void seen.push(`major ${i.source} ${i.size} ${i.nSamples}`),
    },
  });
  d.allocCustom(2, 100); // the block (normal, 3 words) and its out-of-heap memory (custom)
  assert.deepEqual(seen, [], "runtime allocations wait for a poll point");
  d.processPendingActions();
  assert.deepEqual(seen, [
    `minor ${AllocationSource.NORMAL} 2 3`,
    `minor ${AllocationSource.CUSTOM} 100 100`,
  ]);
  // intern.c samples every block of an unmarshalled value on its own, then runs pending
  // actions before returning: ref (ref (ref 42)) fits the minor heap in one bulk block...
  seen.length = 0;
  d.unmarshal([1, 1, 1]);
  assert.deepEqual(seen, [1, 2, 3].map(() => `minor ${AllocationSource.MARSHAL} 1 2`));
  // ...a value over 256 words does not: each block is allocated in the major heap.
  seen.length = 0;
  d.unmarshal([300, 2]);
  assert.deepEqual(seen, [
    `major ${AllocationSource.MARSHAL} 300 301`,
    `major ${AllocationSource.MARSHAL} 2 3`,
  ]);
  d.memprofStop();
});
