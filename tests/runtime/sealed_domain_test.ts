// A sealed runtime (issue 26): a Domain's allocation pointers and flags are the runtime's own.
// Outside lib/runtime they can be read, not written — the type system refuses a write (the
// `@ts-expect-error`s below fail `deno check` the day one becomes writable) and so does the
// object at run time; what the engine and memprof need goes through the allocation API
// (`bump`, `advanceYoung`, `moveYoungPtr`, `setMemprofTrigger`).
import assert from "node:assert/strict";
import { type Domain, Runtime } from "../../lib/runtime/mod.ts";

/** Never called: type-checked only. */
function _writesAreTypeErrors(d: Domain): void {
  // @ts-expect-error: the allocation pointer is read-only outside the runtime
  d.youngPtr = 0;
  // @ts-expect-error: so is the limit
  d.youngLimit = 0;
  // @ts-expect-error: and the triggers
  d.youngTrigger = 0;
  // @ts-expect-error: memprof's
  d.memprofYoungTrigger = 0;
  // @ts-expect-error: the heap's bounds
  d.youngStart = 0;
  // @ts-expect-error: the flags
  d.actionPending = false;
  // @ts-expect-error: the requests
  d.requestedMinorGc = true;
  // @ts-expect-error: the statistics
  d.stats.runtimeEntries = 0;
}

const FIELDS = [
  "youngStart",
  "youngEnd",
  "youngPtr",
  "youngTrigger",
  "memprofYoungTrigger",
  "youngLimit",
  "actionPending",
  "requestedMinorGc",
  "requestedMajorSlice",
  "promotedWords",
  "majorSliceEpoch",
  "alive",
  "current",
] as const;

Deno.test("a Domain's fields cannot be written from outside the runtime", () => {
  const d = new Runtime({ minorHeapWords: 4096 }).mainDomain;
  for (const f of FIELDS) {
    const before = d[f];
    assert.throws(() => {
      (d as unknown as Record<string, unknown>)[f] = 12345;
    }, TypeError);
    assert.equal(d[f], before, f);
  }
});

Deno.test("bump allocates inline or refuses, leaving the domain as it was", () => {
  const rt = new Runtime({ minorHeapWords: 4096 });
  const d = rt.mainDomain;
  const p0 = d.youngPtr;
  assert.equal(d.bump(3), p0 - 3);
  assert.equal(d.youngPtr, p0 - 3);
  // Past the limit (the middle of the heap, no profile): -1, nothing moved.
  const tooMuch = d.youngPtr - d.youngLimit + 1;
  assert.equal(d.bump(tooMuch), -1);
  assert.equal(d.youngPtr, p0 - 3);
  // Exactly to the limit is still inline (an allocation's check is `<`).
  const exact = d.youngPtr - d.youngLimit;
  assert.equal(d.bump(exact), d.youngLimit);
  assert.equal(d.stats.runtimeEntries, 0);
});

Deno.test("advanceYoung moves the pointer in bulk, strictly above the limit only", () => {
  const d = new Runtime({ minorHeapWords: 4096 }).mainDomain;
  const p0 = d.youngPtr, room = p0 - d.youngLimit;
  d.advanceYoung(room - 1);
  assert.equal(d.youngPtr, d.youngLimit + 1);
  // Reaching the limit would have entered the runtime at a poll: refused, nothing moved.
  assert.throws(() => d.advanceYoung(1), RangeError);
  assert.throws(() => d.advanceYoung(-1), RangeError);
  assert.equal(d.youngPtr, d.youngLimit + 1);
  // An interrupt (limit +Infinity) refuses any advance.
  d.interrupt();
  assert.throws(() => d.advanceYoung(0), RangeError);
});

Deno.test("outside lib/runtime, no source writes a Domain's pointers", async () => {
  // The type system does it for typed code; this looks for a cast getting around it.
  const root = new URL("../../", import.meta.url).pathname;
  const hits: string[] = [];
  const write = new RegExp(
    String.raw`\.(?:${FIELDS.join("|")})\s*(?:[-+*/]?=(?!=)|\+\+|--)`,
  );
  for (const dir of ["lib", "cli"]) {
    for await (const f of walk(root + dir)) {
      if (f.includes("/lib/runtime/") || !f.endsWith(".ts")) continue;
      const lines = (await Deno.readTextFile(f)).split("\n");
      lines.forEach((l, k) => {
        // Other objects share some names (a thread's `alive`, the run's `current`…): only
        // writes through something named like a domain count.
        if (write.test(l) && /\b(?:d|dom|domain|host|loopDomain|child|parent|target)\./.test(l)) {
          hits.push(`${f.slice(root.length)}:${k + 1}: ${l.trim()}`);
        }
      });
    }
  }
  assert.deepEqual(hits, []);
});

async function* walk(dir: string): AsyncGenerator<string> {
  for await (const e of Deno.readDir(dir)) {
    const p = `${dir}/${e.name}`;
    if (e.isDirectory) yield* walk(p);
    else yield p;
  }
}
