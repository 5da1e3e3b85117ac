// The engine's structured events (RunOptions.onEvent) and harness frames
// (RunOptions.harnessFrames), from which the differential runner builds the simulation's log.
import assert from "node:assert/strict";
import {
  act,
  cb,
  keep,
  type RunEvent,
  type RunOptions,
  runScenario,
  type Scenario,
  scenario,
} from "../../lib/scenario/mod.ts";
import { scenarios } from "../../scenarios/index.ts";
import { small, twoDomains } from "./helpers.ts";

type AllocEvent = Extract<RunEvent, { kind: "allocMinor" | "allocMajor" }>;
type ExnEvent = Extract<RunEvent, { kind: "escaped" | "caught" | "tracerFailed" }>;
const isAlloc = (e: RunEvent): e is AllocEvent =>
  e.kind === "allocMinor" || e.kind === "allocMajor";
const isExn = (e: RunEvent): e is ExnEvent =>
  e.kind === "escaped" || e.kind === "caught" || e.kind === "tracerFailed";

function eventsOf(sc: Scenario, opts: RunOptions = {}): RunEvent[] {
  const events: RunEvent[] = [];
  runScenario(sc, { ...opts, onEvent: (e) => events.push(e) });
  return events;
}

const loops = scenario({ name: "ev_loops" }, (s) => {
  const m = s.main;
  m.memprof.start({ samplingRate: 1, callstackSize: 8 });
  m.call(
    "Ev.outer@ev.ml:1:0-5",
    () => m.repeat(2, () => m.repeat(5, () => m.alloc(1, { at: "Ev.leaf@ev.ml:2:0-5" }))),
  );
  m.alloc(2);
  m.minorGc();
  m.memprof.stop();
});

Deno.test("onEvent gives each allocation callback the indices of every enclosing loop", () => {
  const allocs = eventsOf(loops).filter(isAlloc);
  assert.equal(allocs.length, 11);
  assert.ok(allocs.every((e) => e.kind === "allocMinor"));
  const expected: number[][] = [];
  for (let i = 1; i <= 2; i++) for (let j = 1; j <= 5; j++) expected.push([i, j]);
  assert.deepEqual(allocs.slice(0, 10).map((e) => e.loops), expected);
  // After the loops end, none encloses the step.
  assert.deepEqual(allocs[10].loops, []);
  for (const e of allocs) {
    assert.equal(e.domain, 0);
    assert.equal(e.source, "normal");
  }
  assert.deepEqual(allocs.map((e) => e.size), [
    ...new Array(10).fill(1),
    2,
  ]);
});

Deno.test("onEvent numbers allocations from 1 in the order callbacks start", () => {
  const events = eventsOf(loops);
  const ids = events.filter(isAlloc).map((e) => e.id);
  assert.deepEqual(ids, Array.from({ length: 11 }, (_, i) => i + 1));
  // The minor collection ends every dropped block's tracking, outside any loop, in block order.
  const deallocs = events.filter((e) => e.kind === "deallocMinor");
  assert.deepEqual(
    deallocs.map((e) => e.kind === "deallocMinor" && [e.id, e.loops.length, e.outcome]),
    ids.map((id) => [id, 0, "unit"]),
  );
  assert.equal(events.length, 22);
  assert.ok(events.findIndex((e) => e.kind === "deallocMinor") > 10, "deallocations come last");
});

Deno.test("onEvent reports the callstack innermost first, as memprof records it", () => {
  const [first] = eventsOf(loops);
  assert.equal(first.kind, "allocMinor");
  assert.ok(first.kind === "allocMinor");
  assert.deepEqual(first.callstack, ["Ev.leaf@ev.ml:2:0-5", "Ev.outer@ev.ml:1:0-5"]);
  assert.equal(first.nSamples, 2); // rate 1: both words of a 1-word block with its header
});

Deno.test("onEvent records what each callback returned: some, none, unit or the exception", () => {
  const sc = scenario({ name: "ev_outcomes" }, (s) => {
    const m = s.main;
    m.memprof.start({
      samplingRate: 1,
      callstackSize: 4,
      tracker: {
        allocMinor: cb.track().raiseOn(2, "Boom"),
        promote: cb.none(),
        deallocMinor: cb.none().on(1, act.raise("Late")),
      },
    });
    m.alloc(1, { lifetime: keep.forever }); // tracked, then promoted (promote returns None)
    m.alloc(2); // raises Boom
    m.alloc(3); // tracked, then dies young (its dealloc raises Late)
    m.minorGc();
    m.memprof.stop();
  });
  const summary = eventsOf(sc).map((e) => isExn(e) ? [e.kind, e.exn] : [e.kind, e.id, e.outcome]);
  assert.deepEqual(summary, [
    ["allocMinor", 1, "some"],
    ["allocMinor", 2, { raise: "Boom" }],
    ["escaped", "Boom"],
    ["allocMinor", 3, "some"],
    // After the collection, tracked blocks in the order they were sampled.
    ["promote", 1, "none"],
    ["deallocMinor", 3, { raise: "Late" }],
    ["escaped", "Late"],
  ]);
});

Deno.test("onEvent reports an exception an attempt catches as caught, one that leaves a step as escaped", () => {
  const sc = scenario({ name: "ev_exn" }, (s) => {
    const m = s.main;
    m.memprof.start({
      samplingRate: 1,
      tracker: { allocMinor: cb.track().always(act.raise("MyExc")) },
    });
    m.repeat(2, () => m.alloc(1));
    m.repeat(3, () =>
      m.attempt(() => {
        m.alloc(1);
        m.alloc(7); // skipped: the first allocation's callback raises
      }));
    m.memprof.stop();
  });
  const exns = eventsOf(sc).filter(isExn);
  assert.deepEqual(exns, [
    { kind: "escaped", domain: 0, loops: [1], exn: "MyExc" },
    { kind: "escaped", domain: 0, loops: [2], exn: "MyExc" },
    { kind: "caught", domain: 0, loops: [1], exn: "MyExc" },
    { kind: "caught", domain: 0, loops: [2], exn: "MyExc" },
    { kind: "caught", domain: 0, loops: [3], exn: "MyExc" },
  ]);
  const sizes = eventsOf(sc).filter(isAlloc).map((e) => e.size);
  assert.deepEqual(sizes, [1, 1, 1, 1, 1]);
});

Deno.test("onEvent emits a callback's record before the callbacks its actions cause", () => {
  // The 2nd allocation's callback runs a minor collection: the deallocation callbacks it causes
  // run once that callback has returned, and their records follow its own.
  const sc = scenario({ name: "ev_order" }, (s) => {
    const m = s.main;
    m.memprof.start({
      samplingRate: 1,
      tracker: { allocMinor: cb.track().on(2, act.gc("minor")) },
    });
    m.alloc(1);
    m.alloc(2);
    m.alloc(3);
    m.memprof.stop();
  });
  const events = eventsOf(sc);
  const kinds = events.map((e) => `${e.kind} ${"id" in e ? e.id : ""}`);
  const second = kinds.indexOf("allocMinor 2");
  const firstDealloc = kinds.indexOf("deallocMinor 1");
  assert.ok(second >= 0 && firstDealloc > second, kinds.join(", "));
  assert.ok(kinds.indexOf("allocMinor 3") > firstDealloc, kinds.join(", "));
  // The record of the callback that collected was completed when it returned.
  assert.equal(events[second].kind === "allocMinor" && events[second].outcome, "some");
});

Deno.test("onEvent keeps a domain's own loop indices on spawned domains", () => {
  const events = eventsOf(twoDomains);
  const worker = events.filter((e) => e.domain === 1 && e.kind === "allocMinor");
  // (The worker's profile starts after its DLS array: only its loop's blocks are sampled.)
  assert.deepEqual(worker.map((e) => e.kind === "allocMinor" && e.size), [1, 1, 1]);
  assert.deepEqual(worker.map((e) => e.loops), [[1], [2], [3]]);
  const main = events.filter((e) => e.domain === 0 && e.kind === "allocMinor");
  assert.deepEqual(main.map((e) => e.loops), [[], []]);
});

Deno.test("harnessFrames adds <harness> frames below every callstack: 3 on main, 2 on spawned domains", () => {
  const events = eventsOf(twoDomains, { harnessFrames: { main: 3, spawned: 2 } });
  const stacks = events.flatMap((e) =>
    e.kind === "allocMinor" ? [[e.domain, e.callstack] as const] : []
  );
  const h = "<harness>";
  assert.deepEqual(stacks, [
    [0, ["Two.main@two.ml:1:0-5", h, h, h]],
    [1, ["Two.work@two.ml:2:0-5", h, h]],
    [1, ["Two.work@two.ml:2:0-5", h, h]],
    [1, ["Two.work@two.ml:2:0-5", h, h]],
    [0, [h, h, h]],
  ]);
});

Deno.test("harnessFrames count against the callstack size", () => {
  const sc = scenario({ name: "ev_trunc" }, (s) => {
    s.main.memprof.start({ samplingRate: 1, callstackSize: 2 });
    s.main.call("A.a@a.ml:1:0-1", () => s.main.alloc(1, { at: "A.b@a.ml:2:0-1" }));
    s.main.alloc(1);
    s.main.memprof.stop();
  });
  const stacks = eventsOf(sc, { harnessFrames: { main: 3, spawned: 2 } }).flatMap((e) =>
    e.kind === "allocMinor" ? [e.callstack] : []
  );
  assert.deepEqual(stacks, [["A.b@a.ml:2:0-1", "A.a@a.ml:1:0-1"], ["<harness>", "<harness>"]]);
});

Deno.test("onEvent changes nothing in a run", () => {
  for (const sc of [small, twoDomains, ...scenarios.slice(0, 6)]) {
    const plain = runScenario(sc);
    let n = 0;
    const observed = runScenario(sc, { onEvent: () => n++ });
    assert.ok(n > 0, sc.settings.name);
    assert.equal(observed.callbackLog, plain.callbackLog, sc.settings.name);
    assert.deepEqual(observed.ctf, plain.ctf, sc.settings.name);
    assert.deepEqual(observed.summary, plain.summary, sc.settings.name);
  }
});

Deno.test("harnessFrames omitted or zero adds no frame", () => {
  const plain = runScenario(small);
  const zero = runScenario(small, { harnessFrames: { main: 0, spawned: 0 } });
  assert.equal(zero.callbackLog, plain.callbackLog);
  assert.deepEqual(zero.ctf, plain.ctf);
  assert.ok(!plain.callbackLog.includes("<harness>"));
  const withFrames = runScenario(small, { harnessFrames: { main: 3, spawned: 2 } });
  assert.ok(withFrames.callbackLog.includes("<harness> <harness> <harness>]"));
  for (const e of eventsOf(small)) {
    if (e.kind === "allocMinor" || e.kind === "allocMajor") {
      assert.ok(!e.callstack.includes("<harness>"), JSON.stringify(e));
    }
  }
});
