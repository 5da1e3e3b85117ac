// Where OCaml code enters the runtime without allocating: ocamlopt's Ipoll (loop back-edges,
// Sys.poll_actions) enters when young_ptr <= young_limit, and caml_callback turns a pending
// action into an interrupt before running a callback. The loop figures below are those the
// real OCaml 5.3.0 runtime gives for the same programs (checked with deno task diff).
import assert from "node:assert/strict";
import { Runtime } from "../../lib/runtime/mod.ts";
import { act, cb, type RunEvent, runScenario, scenario } from "../../lib/scenario/mod.ts";

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
  // pending (memprof's trigger resets leave one set in a profiled program). Without a profile,
  // the runtime entry at the middle of the heap (the GC trigger moving to its start) ran the
  // pending actions and left none.
  assert.equal(d.actionPending, false);
  d.poll();
  assert.equal(rt.minorCollections, 0);
  d.setActionPending();
  d.poll(); // the GC work due: fewer than 257 words remain, a minor collection
  assert.equal(rt.minorCollections, 1);
  assert.equal(d.youngPtr, d.youngEnd);
});

Deno.test("a poll above the limit does nothing, even with an action pending", () => {
  const rt = new Runtime({ minorHeapWords: 4096 });
  const d = rt.mainDomain;
  d.alloc(10);
  d.setActionPending();
  assert.ok(d.youngPtr > d.youngLimit);
  const entries = d.stats.runtimeEntries;
  d.poll();
  assert.equal(rt.minorCollections, 0);
  // caml_process_pending_actions would have cleared the flag.
  assert.equal(d.actionPending, true);
  assert.equal(d.stats.runtimeEntries, entries);
  // The same flag, with the poll's test passing (the limit moved by an interrupt): it acts.
  d.interrupt();
  d.poll();
  assert.equal(d.actionPending, false);
});

Deno.test("caml_callback turns a pending action into an interrupt", () => {
  const rt = new Runtime({ minorHeapWords: 4096 });
  const d = rt.mainDomain;
  // The pending actions ran: none is left (a runtime starts with the flag set).
  d.processPendingActions();
  assert.equal(d.actionPending, false);
  const limit = d.youngLimit;
  d.enterOCamlFromC();
  assert.equal(d.youngLimit, limit);
  d.setActionPending();
  d.enterOCamlFromC();
  assert.equal(d.youngLimit, Infinity);
  // The next allocation enters the runtime, which resets the limit.
  const entries = d.stats.runtimeEntries;
  d.alloc(1);
  assert.equal(d.stats.runtimeEntries, entries + 1);
  assert.ok(d.youngLimit !== Infinity);
});

function firstDeallocLoops(framed: boolean, raising = false): readonly number[] {
  const events: RunEvent[] = [];
  runScenario(
    scenario({ name: "backedge", seed: 2024, minorHeapWords: 16_384 }, (s) => {
      const m = s.main;
      m.memprof.start({
        samplingRate: 1e-3,
        callstackSize: 0,
        // A callback that may raise (it never does): the program's steps and loops get
        // exception handlers, which ocamlopt's polling analysis follows.
        tracker: raising ? { allocMinor: cb.track().on(1_000_000, act.raise("Never")) } : {},
      });
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

Deno.test("with a callback that may raise, a nested loop allocating inline polls at its back-edge", () => {
  // The inner loop's handler (the program logs an escaping exception and goes on) leads to the
  // outer loop's back-edge, which has no allocation: asmcomp/polling.ml follows that path (the
  // loop's first instruction, a bound check, may raise), so the inner loop polls too, and
  // collects at 122.109 as a loop allocating through a call does (OCaml 5.3.0, issue 22:
  // tests/differential/regressions/raising_tracker_nested_loop.ts).
  assert.deepEqual(firstDeallocLoops(false, true), [122, 109]);
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
