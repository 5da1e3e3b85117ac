import assert from "node:assert/strict";
import { type Domain, Runtime } from "../../lib/runtime/mod.ts";
import { ThreadExit } from "../../lib/memprof/mod.ts";
import { AuditTracker } from "../../lib/memprof/invariants.ts";
import { checkAll } from "./helpers.ts";

Deno.test("multi-domain: a terminated domain's entries are orphaned, adopted and balanced", () => {
  const rt = new Runtime({ minorHeapWords: 16_384 });
  const main = rt.mainDomain;
  let running: Domain = main;
  const ranOn: Record<string, number[]> = { alloc: [], promote: [], dealloc: [] };
  const audit = new AuditTracker({
    allocMinor: (info) => (ranOn.alloc.push(running.id), info.size),
    allocMajor: (info) => (ranOn.alloc.push(running.id), info.size),
    promote: (x) => (ranOn.promote.push(running.id), x),
    deallocMinor: () => void ranOn.dealloc.push(running.id),
    deallocMajor: () => void ranOn.dealloc.push(running.id),
  });
  main.memprofStart({ samplingRate: 0.01, tracker: audit.tracker });
  const d1 = rt.spawnDomain(main); // inherits the profile
  assert.equal(d1.id, 1);
  running = d1;
  const keep = Array.from({ length: 50 }, () => rt.root());
  for (let i = 0; i < 20_000; i++) {
    keep[i % 50].set(d1.alloc(1 + (i % 5)), 1 + (i % 5));
    if (i % 4000 === 0) checkAll(rt);
  }
  d1.allocMajor(1000); // caml_alloc_shr from C: a major sample whose callback is pending
  const sampledOnD1 = ranOn.alloc.filter((x) => x === 1).length;
  assert.ok(sampledOnD1 > 0, "the spawned domain samples under the inherited profile");
  const before = { promote: ranOn.promote.length, dealloc: ranOn.dealloc.length };
  rt.terminateDomain(d1); // minor GC: kept blocks promoted, others dead; entries orphaned
  checkAll(rt);
  assert.ok(rt.memprofShared.orphans !== null, "entries went to the global orphans");
  assert.equal(main.memprof.orphans, null);
  running = main;
  main.minorGc(); // adopts the orphans and runs their callbacks
  checkAll(rt);
  assert.equal(rt.memprofShared.orphans, null);
  const promotedAfter = ranOn.promote.slice(before.promote);
  const deallocAfter = ranOn.dealloc.slice(before.dealloc);
  assert.ok(promotedAfter.length > 0 && promotedAfter.every((x) => x === 0));
  assert.ok(deallocAfter.length > 0 && deallocAfter.every((x) => x === 0));
  main.memprofStop();
  for (const r of keep) r.release();
  main.fullMajor();
  checkAll(rt);
  audit.assertBalanced();
  // The major block sampled on d1 never ran its alloc callback: dropped, never reported.
  assert.ok(audit.records.every((r) => r.minor));
});

Deno.test("multi-domain: a new domain reuses a freed id, and a minor GC is stop-the-world", () => {
  const rt = new Runtime({ minorHeapWords: 4096 });
  const main = rt.mainDomain;
  const d1 = rt.spawnDomain();
  d1.alloc(10);
  main.alloc(10);
  main.minorGc();
  assert.equal(d1.youngPtr, d1.youngEnd);
  rt.terminateDomain(d1);
  const d2 = rt.spawnDomain();
  assert.equal(d2.id, 1);
  rt.terminateDomain(d2);
  assert.throws(() => rt.terminateDomain(main), /last domain/);
});

Deno.test("thread_exit_in_callback: a thread exiting inside its alloc callback", () => {
  const rt = new Runtime();
  const d = rt.mainDomain;
  const mainThread = d.current;
  const audit = new AuditTracker({
    allocMinor: () => {
      if (d.current !== mainThread) throw new ThreadExit();
      return 1;
    },
  });
  d.memprofStart({ samplingRate: 1, callstackSize: 10, tracker: audit.tracker });
  for (let k = 0; k < 20; k++) {
    const t = d.createThread(["thread_body"]);
    d.switchTo(t);
    try {
      d.alloc(1); // ref 1 in the thread
      assert.fail("the thread should have exited");
    } catch (e) {
      assert.ok(e instanceof ThreadExit);
      t.exit();
    }
    assert.equal(d.current, mainThread);
    checkAll(rt);
  }
  const r = rt.root(d.alloc(1), 1);
  d.memprofStop();
  r.release();
  d.fullMajor();
  checkAll(rt);
  audit.assertBalanced();
  assert.equal(d.threads.length, 1);
  // Second part: the main thread itself exits from the callback; the allocation never returns.
  d.memprofStart({
    samplingRate: 1,
    callstackSize: 10,
    tracker: {
      allocMinor: () => {
        throw new ThreadExit();
      },
    },
  });
  assert.throws(() => d.alloc(1), ThreadExit);
  checkAll(rt);
});

Deno.test("systhreads: a thread runs its own allocation callbacks", () => {
  const rt = new Runtime();
  const d = rt.mainDomain;
  const t1 = d.current;
  const t2 = d.createThread();
  const ranBy: number[] = [];
  d.memprofStart({
    samplingRate: 1,
    tracker: {
      allocMinor: () => void ranBy.push(d.current.id),
      allocMajor: () => void ranBy.push(d.current.id),
    },
  });
  d.switchTo(t2);
  d.allocFromRuntime(3); // sampled by t2; callback deferred to a poll point
  d.allocMajor(1000); // caml_alloc_shr from C: deferred as well
  d.switchTo(t1);
  d.processPendingActions(); // t1 cannot run t2's allocation callbacks
  assert.deepEqual(ranBy, []);
  d.switchTo(t2);
  d.processPendingActions();
  assert.deepEqual(ranBy, [t2.id, t2.id]);
  d.blockingSection(() => d.switchTo(t1));
  assert.equal(d.current, t2);
  d.switchTo(t1);
  t2.exit();
  d.memprofStop();
  checkAll(rt);
});

Deno.test("systhreads: a thread exiting before its callbacks hands entries to the domain", () => {
  const rt = new Runtime();
  const d = rt.mainDomain;
  const t2 = d.createThread();
  const audit = new AuditTracker({ allocMinor: () => 1, allocMajor: () => 2 });
  d.memprofStart({ samplingRate: 1, tracker: audit.tracker });
  d.switchTo(t2);
  d.allocFromRuntime(3); // pending alloc callback in t2's table
  t2.exit(); // entries that never ran a callback are dropped on transfer
  d.processPendingActions();
  d.memprofStop();
  d.fullMajor();
  checkAll(rt);
  assert.equal(audit.records.length, 0);
});
