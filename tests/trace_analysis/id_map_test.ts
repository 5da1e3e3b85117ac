// lib/trace_analysis/_id_map.ts and _class_index.ts against Maps: through growth, deletions
// (backward shift) and colliding keys; the id map's size follows the ids live at once.
import assert from "node:assert/strict";
import { IdMap } from "../../lib/trace_analysis/_id_map.ts";
import { type ClassColumns, ClassIndex } from "../../lib/trace_analysis/_class_index.ts";
import { mulberry32 } from "../prng.ts";

Deno.test("IdMap agrees with a Map under random sets, gets and deletes", () => {
  const rnd = mulberry32(41);
  const map = new IdMap(4), want = new Map<number, number>();
  // Ids from a small range (many collisions, re-sets, deletes of absent ids), plus odd ones.
  const odd = [-1, -0.5, 2 ** 31, 2 ** 32 + 7, 2 ** 52, 1.5, 4294967296 * 3];
  for (let k = 0; k < 200_000; k++) {
    const id = rnd() < 0.02 ? odd[Math.floor(rnd() * odd.length)] : Math.floor(rnd() * 3_000);
    const op = rnd();
    if (op < 0.45) {
      const v = Math.floor(rnd() * 1e6);
      map.set(id, v);
      want.set(id, v);
    } else if (op < 0.8) {
      map.delete(id);
      want.delete(id);
    } else assert.equal(map.get(id), want.get(id) ?? -1, `get ${id} at step ${k}`);
    assert.equal(map.size, want.size);
  }
  for (const [id, v] of want) assert.equal(map.get(id), v);
  const values: number[] = [];
  map.forEachValue((v) => values.push(v));
  assert.deepEqual(values.sort((a, b) => a - b), [...want.values()].sort((a, b) => a - b));
});

Deno.test("IdMap's table follows the ids live at once, not the ids seen", () => {
  // 10^6 allocations numbered as memtrace numbers them, at most 1,000 live at once.
  const map = new IdMap();
  for (let id = 0; id < 1_000_000; id++) {
    map.set(id, id % 1000);
    if (id >= 1000) map.delete(id - 1000);
  }
  assert.equal(map.size, 1000);
  assert.ok(map.capacity <= 4096, `capacity ${map.capacity}`);
  for (let id = 999_000; id < 1_000_000; id++) assert.equal(map.get(id), id % 1000);
  assert.equal(map.get(998_999), -1);
});

Deno.test("ClassIndex finds every class added, and no other, as it grows", () => {
  const rnd = mulberry32(43);
  const n = 60_000;
  const cols: ClassColumns = {
    node: new Int32Array(n),
    domain: new Int32Array(n),
    source: new Int32Array(n),
    size: new Float64Array(n),
  };
  const index = new ClassIndex(4), want = new Map<string, number>();
  let classes = 0;
  for (let k = 0; k < 100_000; k++) {
    const key = [
      Math.floor(rnd() * 300) - 1,
      Math.floor(rnd() * 4),
      Math.floor(rnd() * 3),
      rnd() < 0.05 ? 2 ** 33 + Math.floor(rnd() * 3) : Math.floor(rnd() * 20),
    ] as const;
    const got = index.get(key[0], key[1], key[2], key[3], cols);
    const expected = want.get(key.join());
    assert.equal(got, expected ?? -1);
    if (expected === undefined && classes < n) {
      cols.node[classes] = key[0];
      cols.domain[classes] = key[1];
      cols.source[classes] = key[2];
      cols.size[classes] = key[3];
      index.add(classes, cols);
      want.set(key.join(), classes++);
    }
  }
  assert.ok(classes > 20_000, `${classes} classes`);
  for (const [key, c] of want) {
    const [a, b, s, z] = key.split(",").map(Number);
    assert.equal(index.get(a, b, s, z, cols), c);
  }
});
