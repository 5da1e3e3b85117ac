// The tracer's lock around an external allocation (memtrace's ext_alloc_slowpath): the hooks run
// with the lock held, `afterDraw` once per draw of the sampler (its loop's back-edge poll),
// `whileLocked` once after the draws; a memprof allocation callback meanwhile is not tracked, a
// promotion is deferred to the unlock (and keeps its id). The exported program emulates exactly
// this (tests/export/external_test.ts).
import assert from "node:assert/strict";
import { GeometricSampler, Tracer } from "../../lib/tracer/mod.ts";
import { type Info, MemorySink } from "../../lib/memtrace/mod.ts";

const INFO: Info = {
  sampleRate: 0.5,
  wordSize: 64,
  executableName: "exec",
  hostName: "host",
  ocamlRuntimeParams: "",
  pid: 7n,
  initialDomain: 0,
  startTime: 1_000_000,
  context: undefined,
};

Deno.test("extAlloc: afterDraw runs after each draw, whileLocked once, both with the lock held; callbacks then are not tracked or are deferred", () => {
  const rate = 0.05;
  const tracer = new Tracer(new MemorySink(), {
    info: INFO,
    clock: () => 2_000_000,
    externalSamplingRate: rate,
  });
  // The draws the tracer makes: its first at its creation, then as many as a 5,000-byte
  // allocation needs.
  const g = new GeometricSampler(rate);
  let left = g.draw() * 8 - 5_000;
  let draws = 0;
  while (left <= 0) {
    left += g.draw() * 8;
    draws++;
  }
  assert.ok(draws > 1, "several draws");
  const tracked = tracer.alloc(0, { size: 2, nSamples: 1, callstack: [] }, false)!;
  const seen: string[] = [];
  const id = tracer.extAlloc(0, 5_000, [], {
    afterDraw: () => {
      assert.equal(tracer.busy, true);
      seen.push("draw");
    },
    whileLocked: () => {
      assert.equal(tracer.busy, true);
      seen.push("locked");
      assert.equal(tracer.alloc(0, { size: 3, nSamples: 1, callstack: [] }, false), undefined);
      assert.equal(tracer.promote(0, tracked), tracked);
    },
  });
  assert.notEqual(id, undefined);
  assert.deepEqual(seen, [...Array(draws).fill("draw"), "locked"]);
  assert.equal(tracer.busy, false);
  assert.equal(tracer.stats.ignoredWhileBusy, 1);
  assert.equal(tracer.stats.deferred, 1);
  assert.equal(tracer.stats.promotes, 1, "the deferred promotion is written at the unlock");
  assert.equal(tracer.stats.externalAllocs, 1);
  // Not sampled: no hook runs (the fast path only subtracts).
  const small = Math.min(left - 1, 8);
  const none = tracer.extAlloc(0, small, [], {
    afterDraw: () => assert.fail("no draw"),
    whileLocked: () => assert.fail("not locked"),
  });
  assert.equal(none, undefined);
});

Deno.test("extAlloc: an exception thrown under the lock fails the tracer, as memtrace's mark_failed; it is reported, not thrown", () => {
  const reported: unknown[] = [];
  const tracer = new Tracer(new MemorySink(), {
    info: INFO,
    clock: () => 2_000_000,
    externalSamplingRate: 1,
    reportError: (e) => reported.push(e),
  });
  const tracked = tracer.alloc(0, { size: 2, nSamples: 1, callstack: [] }, false)!;
  const boom = new Error("raised by a callback at the sampling loop's poll");
  let draws = 0;
  const id = tracer.extAlloc(0, 64, [], {
    afterDraw: () => {
      draws++;
      // A promotion meeting the lock is deferred; the failure drops it, as unlock_and_stop.
      assert.equal(tracer.promote(0, tracked), tracked);
      throw boom;
    },
    whileLocked: () => assert.fail("the exception ended the locked part"),
  });
  assert.equal(id, undefined, "External.alloc returns no token");
  assert.equal(draws, 1);
  assert.deepEqual(reported, [boom]);
  assert.equal(tracer.failed, true);
  assert.equal(tracer.busy, false, "the lock is released");
  assert.equal(tracer.active, false);
  assert.equal(tracer.stats.promotes, 0, "the deferred promotion is dropped");
  // Is_stopped from now on: nothing is sampled, tracked or written.
  const after = tracer.extAlloc(0, 1_000_000, [], { afterDraw: () => assert.fail("no draw") });
  assert.equal(after, undefined);
  assert.equal(tracer.alloc(0, { size: 2, nSamples: 1, callstack: [] }, false), undefined);
  assert.equal(tracer.stats.externalAllocs, 0);
});

Deno.test("extAlloc: the default reportError throws the failure on; the tracer has failed all the same", () => {
  const tracer = new Tracer(new MemorySink(), {
    info: INFO,
    clock: () => 0,
    externalSamplingRate: 1,
  });
  const boom = new Error("boom");
  assert.throws(() =>
    tracer.extAlloc(0, 8, [], {
      whileLocked: () => {
        throw boom;
      },
    }), boom);
  assert.equal(tracer.failed, true);
  assert.equal(tracer.busy, false);
});

Deno.test("extAlloc on another domain than the main one returns at once, as memtrace's ext_alloc: its sampler is not drawn", () => {
  const mk = () =>
    new Tracer(new MemorySink(), { info: INFO, clock: () => 0, externalSamplingRate: 0.01 });
  const a = mk(), b = mk();
  for (let i = 0; i < 50; i++) {
    assert.equal(
      b.extAlloc(1, 10_000, [], { afterDraw: () => assert.fail("domain 1 never samples") }),
      undefined,
    );
  }
  // Domain 0's samples come where they would without domain 1's allocations.
  const sampled = (t: Tracer) =>
    Array.from({ length: 50 }, () => t.extAlloc(0, 2_000, []) !== undefined);
  const inB = sampled(b), inA = sampled(a);
  assert.deepEqual(inB, inA);
  assert.ok(inA.includes(true));
  assert.equal(b.stats.externalAllocs, a.stats.externalAllocs);
});
