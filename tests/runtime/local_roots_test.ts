// Runtime allocations that run pending actions hold their result in a local root meanwhile
// (caml_uniform_array_make, intern_end in OCaml 5.3): a minor collection run by the value's own
// allocation callback promotes it instead of killing it.
import assert from "node:assert/strict";
import { act, cb, keep, type RunEvent, runScenario, scenario } from "../../lib/scenario/mod.ts";

function kinds(events: RunEvent[]): string[] {
  return events.map((e) => `${e.kind} ${"id" in e ? e.id : ""}`.trim());
}

function run(build: Parameters<typeof scenario>[1]): RunEvent[] {
  const events: RunEvent[] = [];
  runScenario(scenario({ name: "local_roots_unit" }, build), { onEvent: (e) => events.push(e) });
  return events;
}

const collectingTracker = { allocMinor: cb.track().always(act.gc("minor")) };

Deno.test("Array.make's own callback running Gc.minor promotes the array, even unkept", () => {
  const events = run((s) => {
    s.main.memprof.start({ samplingRate: 1, callstackSize: 0, tracker: collectingTracker });
    s.main.alloc(10, { source: "array" });
    s.main.memprof.stop();
  });
  // Promoted while the primitive holds it; unreachable once it returned: dies at the next
  // collection (the final Gc.full_major of the run has none, so no deallocation is logged).
  assert.deepEqual(kinds(events), ["allocMinor 1", "promote 1"]);
});

Deno.test("an unmarshalled value stays alive through its blocks' own callbacks", () => {
  const events = run((s) => {
    s.main.memprof.start({ samplingRate: 1, callstackSize: 0, tracker: collectingTracker });
    s.main.unmarshal([3, 2], { lifetime: keep.forever });
    s.main.memprof.stop();
  });
  // Both blocks are sampled; the first callback's Gc.minor promotes both (the second block is
  // reachable from the root intern_end holds), then the second callback runs (sampled while young).
  assert.deepEqual(kinds(events), ["allocMinor 1", "promote 1", "allocMinor 2", "promote 2"]);
});

Deno.test("the program receives the moved array: a kept array survives later collections", () => {
  const events = run((s) => {
    s.main.memprof.start({ samplingRate: 1, callstackSize: 0, tracker: collectingTracker });
    s.main.alloc(10, { source: "array", lifetime: keep.forever });
    s.main.fullMajor();
    s.main.memprof.stop();
    s.main.fullMajor();
  });
  // No deallocation: the root the program keeps points where the block moved.
  assert.deepEqual(kinds(events), ["allocMinor 1", "promote 1"]);
});
