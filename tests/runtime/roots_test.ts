import assert from "node:assert/strict";
import { Root, RootSet } from "../../lib/runtime/mod.ts";

function roots(set: RootSet, n: number, from = 0): Root[] {
  return Array.from({ length: n }, (_, i) => {
    const r = new Root(set, from + i, 1);
    set.add(r);
    return r;
  });
}

Deno.test("RootSet keeps creation order through removals and compaction", () => {
  const set = new RootSet();
  const rs = roots(set, 200);
  // Remove three quarters, so that the next additions compact the slots.
  for (let i = 0; i < 200; i++) if (i % 4 !== 0) rs[i].release();
  assert.equal(set.size, 50);
  const more = roots(set, 100, 1000);
  const want = [...rs.filter((_, i) => i % 4 === 0), ...more].map((r) => r.addr);
  assert.deepEqual([...set].map((r) => r.addr), want);
  assert.ok(more.every((r) => set.has(r)) && !set.has(rs[1]));
  // A released root is removed once; releasing it again changes nothing.
  assert.equal(set.delete(rs[0]), true);
  assert.equal(set.delete(rs[0]), false);
  assert.equal(set.size, 149);
});

Deno.test("RootSet walks like a Set: roots added during a walk are visited, removed ones are not", () => {
  const set = new RootSet();
  const rs = roots(set, 100);
  const seen: number[] = [];
  let added: Root[] = [];
  for (const r of set) {
    seen.push(r.addr);
    if (r.addr === 10) {
      for (let i = 11; i < 100; i += 2) rs[i].release(); // not yet visited: skipped
      rs[5].release(); // already visited
      added = roots(set, 80, 500); // many additions while walking: no compaction under the walk
    }
  }
  const want = [
    ...Array.from({ length: 11 }, (_, i) => i),
    ...Array.from({ length: 89 }, (_, i) => i + 11).filter((a) => a % 2 === 0),
    ...added.map((r) => r.addr),
  ];
  assert.deepEqual(seen, want);
  // The same walk over a JavaScript Set gives the same sequence.
  const js = new Set<number>(Array.from({ length: 100 }, (_, i) => i));
  const jsSeen: number[] = [];
  for (const a of js) {
    jsSeen.push(a);
    if (a === 10) {
      for (let i = 11; i < 100; i += 2) js.delete(i);
      js.delete(5);
      for (let i = 0; i < 80; i++) js.add(500 + i);
    }
  }
  assert.deepEqual(seen, jsSeen);
});

Deno.test("a global slot losing its block reports it (the write barrier); a local root does not", () => {
  const set = new RootSet();
  const lost: number[] = [];
  set.onOverwrite = (addr) => lost.push(addr);
  const slot = new Root(set, 10, 1);
  set.add(slot);
  slot.set(11, 1); // overwritten
  slot.set(11, 1); // the same block again: nothing lost
  slot.clear();
  slot.set(12, 1);
  slot.release();
  const local = new Root(set, 20, 1, { local: true });
  set.add(local);
  local.set(21, 1);
  local.release();
  assert.deepEqual(lost, [10, 11, 12]);
});
