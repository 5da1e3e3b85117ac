import assert from "node:assert/strict";
import {
  CB_ALLOC,
  cbMask,
  Entries,
  MIN_ENTRIES_DOMAIN_CAPACITY,
  MIN_ENTRIES_THREAD_CAPACITY,
} from "../../lib/memprof/entries.ts";
import { Profile, ProfileStatus } from "../../lib/memprof/mod.ts";

const profile = () =>
  new Profile({ samplingRate: 0.5, oneLog1mLambda: -1.4, callstackSize: 0, tracker: {} });

function fill(es: Entries, n: number): void {
  for (let i = 0; i < n; i++) {
    es.newEntry({
      block: 1000 + i,
      userData: i,
      wosize: 1,
      samples: 1,
      source: 0,
      isYoung: false,
      offset: false,
    });
  }
}

Deno.test("entries: capacity grows by 2x from the minimum and shrinks only when 4x too large", () => {
  const es = new Entries(MIN_ENTRIES_THREAD_CAPACITY, profile());
  es.ensure(0);
  assert.equal(es.capacity, 0, "an unused table stays unallocated");
  fill(es, 1);
  assert.equal(es.capacity, 16);
  fill(es, 16);
  assert.equal(es.capacity, 34); // 17 entries needed: 17 * 2
  for (let i = 0; i < 17; i++) if (i % 8 !== 0) es.delete(i);
  es.evictDeleted();
  assert.equal(es.size, 3);
  assert.equal(es.capacity, 16, "shrunk: 3 * 2 < 16, so the minimum");
  assert.deepEqual(es.t.slice(0, 3).map((e) => e.userData), [0, 7, 15]); // two fills
});

Deno.test("entries: eviction keeps the young and active cursors on the same entries", () => {
  const es = new Entries(MIN_ENTRIES_DOMAIN_CAPACITY, profile());
  fill(es, 10);
  es.young = 6;
  es.active = 8;
  es.evict = 10;
  es.delete(2);
  es.delete(7);
  assert.equal(es.evict, 2);
  es.evictDeleted();
  assert.equal(es.size, 8);
  assert.equal(es.t[es.young].userData, 6);
  assert.equal(es.t[es.active].userData, 8);
  assert.equal(es.evict, 8);
});

Deno.test("entries: transfer appends, drops never-called entries and fixes runners", () => {
  const p = profile();
  const from = new Entries(MIN_ENTRIES_THREAD_CAPACITY, p);
  const to = new Entries(MIN_ENTRIES_DOMAIN_CAPACITY, p);
  fill(to, 3);
  to.young = to.evict = to.active = 3;
  fill(from, 4);
  for (const e of from.t) e.callbacks = cbMask(CB_ALLOC);
  from.t[1].callbacks = 0; // never ran its allocation callback: deleted on the way
  const runner = { runningTable: from as Entries | null, runningIndex: 3 };
  from.t[3].runner = runner;
  from.active = 2;
  from.evict = 4;
  from.transferTo(to);
  assert.equal(from.size, 0);
  assert.equal(to.size, 7);
  assert.equal(to.active, 5);
  assert.equal(to.evict, 4, "the deleted entry is found by the next eviction");
  assert.equal(runner.runningTable, to);
  assert.equal(runner.runningIndex, 6);
  to.evictDeleted();
  assert.equal(to.size, 6);
  assert.equal(runner.runningIndex, 5);
});

Deno.test("entries: clear_offsets fakes deallocation after an allocation callback", () => {
  const es = new Entries(MIN_ENTRIES_THREAD_CAPACITY, profile());
  const offsetEntry = {
    userData: "cs",
    samples: 1,
    source: 0,
    isYoung: true,
    offset: true,
  } as const;
  es.newEntry({ ...offsetEntry, block: 0, wosize: 2 });
  es.newEntry({ ...offsetEntry, block: 3, wosize: 3 });
  es.t[0].callbacks = cbMask(CB_ALLOC);
  es.active = 2;
  es.clearOffsets();
  assert.equal(es.size, 1);
  assert.ok(es.t[0].deallocated && es.t[0].block === null && !es.t[0].offset);
  assert.equal(es.active, 0);
});

Deno.test("entries: a discarded profile empties the table of inactive entries", () => {
  const p = profile();
  const es = new Entries(MIN_ENTRIES_THREAD_CAPACITY, p);
  fill(es, 5);
  es.t[2].runner = { runningTable: es, runningIndex: 2 };
  assert.equal(es.validatedConfig(), p);
  p.status = ProfileStatus.DISCARDED;
  assert.equal(es.validatedConfig(), null);
  assert.equal(es.size, 1);
  assert.equal(es.t[0].userData, 2);
});
