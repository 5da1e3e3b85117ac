// Where OCaml code enters the runtime without allocating: ocamlopt's Ipoll (loop back-edges,
// Sys.poll_actions) enters when young_ptr <= young_limit, and caml_callback turns a pending
// action into an interrupt before running a callback. The loop figures below are those the
// real OCaml 5.3.0 runtime gives for the same programs (checked with deno task diff).
import assert from "node:assert/strict";
import { Runtime } from "../../lib/runtime/mod.ts";
import { allocatesOnEveryPath } from "../../lib/scenario/polling.ts";
import { cb, type RunEvent, runScenario, scenario, type Step } from "../../lib/scenario/mod.ts";

Deno.test("a poll enters the runtime when the heap is filled exactly to the limit", () => {
  const rt = new Runtime({ minorHeapWords: 4096 });
  const d = rt.mainDomain;
  // 2-word blocks fill the 4,096-word heap exactly: the last one leaves young_ptr equal to
  // young_limit (the start), which an allocation's check (<) does not notice.
  for (let k = 0; k < 2048; k++) d.alloc(1);
  assert.equal(d.youngPtr, d.youngStart);
  assert.equal(d.youngLimit, d.youngStart);
  assert.equal(rt.minorCollections, 0);
  // jbe: taken at equality; caml_process_pending_actions then acts only if an action is
  // pending (memprof's trigger resets leave one set in a profiled program).
  d.actionPending = false;
  d.poll();
  assert.equal(rt.minorCollections, 0);
  d.actionPending = true;
  d.poll(); // the GC work due: fewer than 257 words remain, a minor collection
  assert.equal(rt.minorCollections, 1);
  assert.equal(d.youngPtr, d.youngEnd);
});

Deno.test("a poll above the limit does nothing, even with an action pending", () => {
  const rt = new Runtime({ minorHeapWords: 4096 });
  const d = rt.mainDomain;
  d.alloc(10);
  d.actionPending = true;
  d.requestedMinorGc = true;
  d.youngLimit = d.youngPtr - 1;
  d.poll();
  assert.equal(rt.minorCollections, 0);
});

Deno.test("caml_callback turns a pending action into an interrupt", () => {
  const rt = new Runtime({ minorHeapWords: 4096 });
  const d = rt.mainDomain;
  d.actionPending = false;
  const limit = d.youngLimit;
  d.enterOCamlFromC();
  assert.equal(d.youngLimit, limit);
  d.actionPending = true;
  d.enterOCamlFromC();
  assert.equal(d.youngLimit, Infinity);
  // The next allocation enters the runtime, which resets the limit.
  const entries = d.stats.runtimeEntries;
  d.alloc(1);
  assert.equal(d.stats.runtimeEntries, entries + 1);
  assert.ok(d.youngLimit !== Infinity);
});

function step(kind: string, extra: Record<string, unknown> = {}): Step {
  return { at: "1", domain: "main", kind, ...extra } as unknown as Step;
}

Deno.test("loops poll at their back-edge unless every path allocates inline", () => {
  const inline = step("alloc", { source: "caml", size: 3, frames: [], lifetime: { kind: "drop" } });
  const framed = step("alloc", {
    source: "caml",
    size: 3,
    frames: ["A.f@a.ml:1:0-1"],
    lifetime: { kind: "drop" },
  });
  const runtime = step("alloc", {
    source: "runtime",
    size: 3,
    frames: [],
    lifetime: { kind: "drop" },
  });
  const big = step("alloc", { source: "caml", size: 300, frames: [], lifetime: { kind: "drop" } });
  const dist = step("alloc", {
    source: "caml",
    size: { uniform: [1, 300] },
    frames: [],
    lifetime: { kind: "drop" },
  });
  const comb = step("allocCombined", { sizes: [2, 3], frames: [[], []], lifetimes: [] });
  assert.equal(allocatesOnEveryPath([inline]), true);
  assert.equal(allocatesOnEveryPath([step("gc", { what: "minor" }), inline]), true);
  assert.equal(allocatesOnEveryPath([comb]), true);
  assert.equal(allocatesOnEveryPath([framed]), false); // the allocation is in a called function
  assert.equal(allocatesOnEveryPath([runtime]), false); // a C primitive
  assert.equal(allocatesOnEveryPath([big]), false); // Array.make
  assert.equal(allocatesOnEveryPath([dist]), false); // may be Array.make
  assert.equal(allocatesOnEveryPath([step("repeat", { count: 3, body: [inline] })]), false);
  assert.equal(allocatesOnEveryPath([step("attempt", { body: [inline] })]), false);
});

function firstDeallocLoops(framed: boolean): readonly number[] {
  const events: RunEvent[] = [];
  runScenario(
    scenario({ name: "backedge", seed: 2024, minorHeapWords: 16_384 }, (s) => {
      const m = s.main;
      m.memprof.start({ samplingRate: 1e-3, callstackSize: 0 });
      m.repeat(
        400,
        () => m.repeat(200, () => framed ? m.alloc(1, { at: "S.parse@s.ml:1:1-2" }) : m.alloc(1)),
      );
      m.memprof.stop();
    }),
    { onEvent: (e) => events.push(e) },
  );
  return events.find((e) => e.kind === "deallocMinor" && e.loops[0] >= 122)!.loops;
}

Deno.test("a loop allocating in a called function collects at its back-edge poll", () => {
  // OCaml 5.3.0: 122.109 when the allocation is in a function the loop calls (the loop polls),
  // 122.110 when it is in the loop itself (the next allocation notices the full heap).
  assert.deepEqual(firstDeallocLoops(true), [122, 109]);
  assert.deepEqual(firstDeallocLoops(false), [122, 110]);
});

Deno.test("an exception leaving the runtime lets pending callbacks run first (caml_raise)", () => {
  const events: RunEvent[] = [];
  runScenario(
    scenario({ name: "raise_pending" }, (s) => {
      s.main.memprof.start({
        samplingRate: 1,
        callstackSize: 0,
        tracker: { allocMinor: cb.track().on(2, { kind: "raise", exn: "E" }) },
      });
      s.main.attempt(() => s.main.allocCombined([2, 3]));
      s.main.memprof.stop();
    }),
    { onEvent: (e) => events.push(e) },
  );
  // The combined allocation is cancelled by the second callback's exception: the first
  // component's deallocation callback runs before the exception reaches the attempt.
  assert.deepEqual(
    events.map((e) => e.kind === "caught" ? "caught" : `${e.kind} ${"id" in e ? e.id : ""}`),
    ["allocMinor 1", "allocMinor 2", "deallocMinor 1", "caught"],
  );
});
