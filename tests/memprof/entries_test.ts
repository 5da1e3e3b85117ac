import assert from "node:assert/strict";
import {
  CB_ALLOC,
  cbMask,
  Entries,
  F_ALLOC_YOUNG,
  F_OFFSET,
  M_ALLOC,
  MIN_ENTRIES_DOMAIN_CAPACITY,
  MIN_ENTRIES_THREAD_CAPACITY,
  SOURCE_SHIFT,
} from "../../lib/memprof/entries.ts";
import { Profile, ProfileStatus } from "../../lib/memprof/mod.ts";

const profile = () =>
  new Profile({ samplingRate: 0.5, oneLog1mLambda: -1.4, callstackSize: 0, tracker: {} });

function fill(es: Entries, n: number): void {
  for (let i = 0; i < n; i++) {
    es.newEntry(1000 + i, i, 1, 1);
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
  assert.deepEqual(es.userData.slice(0, 3), [0, 7, 15]); // two fills
  assert.deepEqual(es.block.slice(0, 3), [1000, 1007, 1015]);
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
  assert.equal(es.userData[es.young], 6);
  assert.equal(es.userData[es.active], 8);
  assert.equal(es.evict, 8);
});

Deno.test("entries: transfer appends, drops never-called entries and fixes runners", () => {
  const p = profile();
  const from = new Entries(MIN_ENTRIES_THREAD_CAPACITY, p);
  const to = new Entries(MIN_ENTRIES_DOMAIN_CAPACITY, p);
  fill(to, 3);
  to.young = to.evict = to.active = 3;
  fill(from, 4);
  from.meta.fill(M_ALLOC, 0, from.size);
  from.meta[1] = 0; // never ran its allocation callback: deleted on the way
  const runner = { runningTable: from as Entries | null, runningIndex: 3 };
  from.setRunner(3, runner, CB_ALLOC);
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
  assert.deepEqual(to.userData.slice(0, 6), [0, 1, 2, 0, 2, 3]);
  assert.equal(to.view(5).runner, runner);
  assert.equal(from.userData[0], undefined, "the source table holds no user data any more");
});

Deno.test("entries: a transfer of many entries copies every field", () => {
  const p = profile();
  const from = new Entries(MIN_ENTRIES_THREAD_CAPACITY, p);
  const to = new Entries(MIN_ENTRIES_DOMAIN_CAPACITY, p);
  fill(to, 2);
  fill(from, 40);
  for (let i = 0; i < 40; i++) {
    from.samples[i] = i + 1;
    from.wosize[i] = 2 * i;
    from.meta[i] = M_ALLOC | ((i % 3) << SOURCE_SHIFT) | (i % 2 ? F_ALLOC_YOUNG : 0);
  }
  from.transferTo(to);
  assert.equal(to.size, 42);
  for (let i = 0; i < 40; i++) {
    const e = to.view(i + 2);
    assert.deepEqual(
      [e.block, e.userData, e.samples, e.wosize, e.source, e.allocYoung, e.callbacks, e.runner],
      [1000 + i, i, i + 1, 2 * i, i % 3, i % 2 === 1, cbMask(CB_ALLOC), null],
    );
  }
});

Deno.test("entries: clear_offsets fakes deallocation after an allocation callback", () => {
  const es = new Entries(MIN_ENTRIES_THREAD_CAPACITY, profile());
  for (const [block, wosize] of [[0, 2], [3, 3]]) {
    const i = es.newEntry(block, "cs", wosize, 1); // (newEntry may reallocate es.meta)
    es.meta[i] = F_ALLOC_YOUNG | F_OFFSET;
  }
  es.meta[0] |= M_ALLOC;
  es.active = 2;
  es.clearOffsets();
  assert.equal(es.size, 1);
  const e = es.view(0);
  assert.ok(e.deallocated && e.block === null && !e.offset && e.wosize === 2);
  assert.equal(es.active, 0);
});

Deno.test("entries: a discarded profile empties the table of inactive entries", () => {
  const p = profile();
  const es = new Entries(MIN_ENTRIES_THREAD_CAPACITY, p);
  fill(es, 5);
  es.setRunner(2, { runningTable: es, runningIndex: 2 }, CB_ALLOC);
  assert.equal(es.validatedConfig(), p);
  p.status = ProfileStatus.DISCARDED;
  assert.equal(es.validatedConfig(), null);
  assert.equal(es.size, 1);
  assert.equal(es.userData[0], 2);
});
