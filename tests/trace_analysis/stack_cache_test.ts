// The interned backtraces in front of the stack tree (lib/trace_analysis/_stack_cache.ts): a
// backtrace is found only with its very codes (a shared hash is not enough), gives back the nodes
// it was added with, and the cache stops growing at its bound.
import assert from "node:assert/strict";
import { STACK_CACHE_CODES, StackCache } from "../../lib/trace_analysis/_stack_cache.ts";

const codes = (...xs: number[]) => Float64Array.from(xs);
const nodesOf = (cache: StackCache, at: number, len: number) =>
  Array.from(cache.nodes.subarray(at, at + len));

Deno.test("a backtrace is found by its codes and gives back its nodes", () => {
  const cache = new StackCache();
  const a = codes(1, 2, 3), b = codes(1, 2, 2 ** 40 + 3);
  assert.equal(cache.find(a, 3, 77), -1);
  cache.add(a, Int32Array.from([10, 11, 12]), 3, 77);
  // Same hash, other codes (a code past 2^32 differing in its high bits): not found.
  assert.equal(cache.find(b, 3, 77), -1);
  // Same codes, other length or hash: not found.
  assert.equal(cache.find(a, 2, 77), -1);
  assert.equal(cache.find(a, 3, 78), -1);
  cache.add(b, Int32Array.from([10, 11, 13]), 3, 77);
  assert.deepEqual(nodesOf(cache, cache.find(a, 3, 77), 3), [10, 11, 12]);
  assert.deepEqual(nodesOf(cache, cache.find(b, 3, 77), 3), [10, 11, 13]);
  // An empty backtrace is one too.
  cache.add(codes(), new Int32Array(0), 0, 5);
  assert.ok(cache.find(codes(), 0, 5) >= 0);
});

Deno.test("many backtraces: each found with its nodes, through the table's growth", () => {
  const cache = new StackCache();
  const n = 5_000;
  for (let i = 0; i < n; i++) {
    // Hashes colliding in their low bits, so that probes run.
    cache.add(codes(i, i + 1), Int32Array.from([2 * i, 2 * i + 1]), 2, (i % 7) * 1024);
  }
  for (let i = 0; i < n; i++) {
    assert.deepEqual(nodesOf(cache, cache.find(codes(i, i + 1), 2, (i % 7) * 1024), 2), [
      2 * i,
      2 * i + 1,
    ]);
  }
});

Deno.test("the cache holds at most STACK_CACHE_CODES codes", () => {
  const cache = new StackCache();
  const len = 1024, buf = new Float64Array(len), nodes = new Int32Array(len);
  const fits = STACK_CACHE_CODES / len;
  for (let i = 0; i <= fits; i++) {
    buf[0] = i;
    cache.add(buf, nodes, len, i);
  }
  buf[0] = fits - 1;
  assert.ok(cache.find(buf, len, fits - 1) >= 0, "the last that fits is held");
  buf[0] = fits;
  assert.equal(cache.find(buf, len, fits), -1, "one more is not");
  assert.ok(cache.nodes.length <= STACK_CACHE_CODES);
});
