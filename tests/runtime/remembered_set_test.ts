// The remembered set (minor_gc.c): storing a young block in the major heap over anything but a
// young block adds an entry to the storing domain's ref table; at minor heap / 8 entries OCaml
// requests a minor collection. Scenario figures are those of the real OCaml 5.3.0 runtime
// (deno task diff remembered_set).
import assert from "node:assert/strict";
import { Runtime } from "../../lib/runtime/mod.ts";
import { keep, type RunEvent, runScenario, scenario } from "../../lib/scenario/mod.ts";

Deno.test("a full ref table requests a minor collection, done at the next allocation", () => {
  const rt = new Runtime({ minorHeapWords: 8192 }); // a 1,024-entry table
  const d = rt.mainDomain;
  for (let k = 0; k < 1024; k++) d.rememberStore(d.alloc(1), -1);
  assert.equal(d.requestedMinorGc, false);
  d.rememberStore(d.alloc(1), -1); // the 1,025th entry finds the table full
  assert.equal(d.requestedMinorGc, true);
  assert.equal(rt.minorCollections, 0);
  d.alloc(1);
  assert.equal(rt.minorCollections, 1);
  // The table is empty again: 1,024 more stores fit before the next request.
  for (let k = 0; k < 1024; k++) d.rememberStore(d.alloc(1), -1);
  assert.equal(d.requestedMinorGc, false);
});

Deno.test("stores that add no entry: major blocks, and over a young block", () => {
  const rt = new Runtime({ minorHeapWords: 8192 });
  const d = rt.mainDomain;
  const big = d.allocMajor(300);
  let prev = d.alloc(1);
  for (let k = 0; k < 5000; k++) {
    d.rememberStore(big, -1); // not young: no entry
    const a = d.alloc(1);
    d.rememberStore(a, prev); // over a young block: no entry
    prev = a;
  }
  assert.equal(d.requestedMinorGc, false);
});

function minorIterations(lifetime: Parameters<typeof keep.cycle>[0], n: number): number[] {
  const events: RunEvent[] = [];
  const sc = scenario({ name: "rs", minorHeapWords: 32_768 }, (s) => {
    s.main.memprof.start({ samplingRate: 0.01, callstackSize: 0 });
    s.main.repeat(n, () => s.main.alloc(1, { lifetime }));
    s.main.memprof.stop();
    s.release("l");
  });
  runScenario(sc, { onEvent: (e) => events.push(e) });
  return [
    ...new Set(events.filter((e) => e.kind === "promote").map((e) => e.loops[0])),
  ];
}

Deno.test("blocks in fresh global slots collect at 4,096 entries, lists and rings do not", () => {
  // 32,768-word heap: a 4,096-entry table. Gc.Memprof.start stores its boxed rate (one entry),
  // so the 4,096th block kept fills it and the collection comes at iteration 4,097.
  assert.deepEqual(minorIterations(keep.forever, 6_000), [4_097]);
  // A list stores only its head over the previous, young, head; a ring overwrites young
  // blocks: neither fills the table, and 6,000 two-word blocks fit in the heap.
  assert.deepEqual(minorIterations(keep.list("l"), 6_000), []);
  assert.deepEqual(minorIterations(keep.ring(100), 6_000), []);
});

Deno.test("a ring releases the block it overwrites; a list keeps every block until released", () => {
  const deaths = (lifetime: Parameters<typeof keep.cycle>[0]) => {
    const events: RunEvent[] = [];
    runScenario(
      scenario({ name: "rs2" }, (s) => {
        s.main.memprof.start({ samplingRate: 1, callstackSize: 0 });
        s.main.repeat(10, () => s.main.alloc(1, { lifetime }));
        s.main.minorGc();
        s.main.memprof.stop();
        s.release("l");
      }),
      { onEvent: (e) => events.push(e) },
    );
    return events.filter((e) => e.kind === "deallocMinor").length;
  };
  assert.equal(deaths(keep.ring(3)), 7); // the last 3 survive
  assert.equal(deaths(keep.list("l")), 0);
  assert.equal(deaths(keep.drop), 10);
});

Deno.test("a keep slot stored again is promoted at its first store since the last minor collection", () => {
  const rt = new Runtime({ minorHeapWords: 8192 });
  const d = rt.mainDomain;
  const slots = [0, 1, 2].map((k) => rt.root(d.alloc(4), 4, { site: 0, slot: k }));
  rt.minorCollection(d);
  // Stores in the order 2, 0, 1, then 2 again: the remembered set's entries are 2, 0, 1 (the
  // last store finds a young block there and adds none), and promotion takes them in that
  // order, each slot's block as it is now. Promoted blocks get ascending addresses.
  for (const k of [2, 0, 1, 2]) slots[k].set(d.alloc(4), 4);
  rt.minorCollection(d);
  const order = [0, 1, 2].sort((a, b) => slots[a].addr - slots[b].addr);
  assert.deepEqual(order, [2, 0, 1]);
});
