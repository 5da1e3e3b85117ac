// Loops as OCaml writes them: loop indices (`d.repeat(n, (i) => i.every(k, …))` for
// `if i mod k = o then …`), every enclosing index in the callback log, and Domain.join.
import assert from "node:assert/strict";
import { cb, type RunEvent, runScenario, scenario, ScenarioError } from "../../lib/scenario/mod.ts";

function allocLoops(build: Parameters<typeof scenario>[1]): (readonly number[])[] {
  const events: RunEvent[] = [];
  runScenario(scenario({ name: "loops" }, build), { onEvent: (e) => events.push(e) });
  return events.filter((e) => e.kind === "allocMinor").map((e) => e.loops);
}

Deno.test("every runs its body when the loop index is a multiple, or at the offset", () => {
  const loops = allocLoops((s) => {
    s.main.memprof.start({ samplingRate: 1, callstackSize: 0, tracker: { allocMinor: cb.none() } });
    s.main.repeat(3, (i) =>
      s.main.repeat(12, (j) => {
        j.every(5, () => s.main.alloc(1));
        i.every(2, () => j.every(6, () => s.main.alloc(1), 1));
      }));
    s.main.memprof.stop();
  });
  assert.deepEqual(loops, [
    [1, 5],
    [1, 10],
    [2, 1],
    [2, 5],
    [2, 7],
    [2, 10],
    [3, 5],
    [3, 10],
  ]);
});

Deno.test("the callback log prints every enclosing loop index, and - outside loops", () => {
  const sc = scenario({ name: "log" }, (s) => {
    s.main.memprof.start({ samplingRate: 1, callstackSize: 0, tracker: { allocMinor: cb.none() } });
    s.main.repeat(2, () => s.main.repeat(2, () => s.main.alloc(1)));
    s.main.alloc(1);
    s.main.memprof.stop();
  });
  const lines = runScenario(sc).callbackLog.trim().split("\n");
  // The profile's start and stop are lifecycle lines, outside the loops.
  assert.match(lines[0], /^i=- t=\d+ main@0 : Gc\.Memprof\.start p1$/);
  assert.match(lines.at(-1)!, /^i=- t=\d+ main@0 : Gc\.Memprof\.stop$/);
  const heads = lines.slice(1, -1).map((l) => l.split(" ")[0]);
  assert.deepEqual(heads, ["i=1.1", "i=1.2", "i=2.1", "i=2.2", "i=-"]);
});

Deno.test("loop indices are refused outside their loop and with bad periods", () => {
  assert.throws(
    () =>
      scenario({ name: "bad" }, (s) => {
        let kept: { every(p: number, b: () => void): void } | undefined;
        s.main.repeat(2, (i) => {
          kept = i;
        });
        kept!.every(2, () => s.main.alloc(1));
      }),
    (e: unknown) =>
      e instanceof ScenarioError && /loop index used outside its loop/.test(e.message),
  );
  assert.throws(
    () => scenario({ name: "bad" }, (s) => s.main.repeat(2, (i) => i.every(0, () => {}))),
    /every needs a whole number ≥ 1, got 0/,
  );
  assert.throws(
    () => scenario({ name: "bad" }, (s) => s.main.repeat(2, (i) => i.every(3, () => {}, 3))),
    /offset must be a whole number in \[0, 2\], got 3/,
  );
});

Deno.test("join ends the target at the join step, seen from the joining domain", () => {
  const events: RunEvent[] = [];
  const r = runScenario(
    scenario({ name: "join" }, (s) => {
      s.main.memprof.start({ samplingRate: 1, callstackSize: 0 });
      const w = s.main.spawn("w");
      w.repeat(3, () => w.alloc(2));
      s.main.join(w);
      s.main.alloc(1);
      s.main.memprof.stop();
    }),
    { onEvent: (e) => events.push(e) },
  );
  // Domain.spawn's allocations in the main domain (condition, mutex, term_sync and closure,
  // result), the worker's DLS array and three samples, then Domain.join's closure in the main
  // domain: the worker ended at the join, whose collection promotes what the program keeps of
  // the spawn and the worker's DLS array (a domain's state lives through its last collection)
  // and finds the rest dead; then the main domain's own sample.
  const allocs = events.flatMap((e) => e.kind === "allocMinor" ? [`${e.domain}:${e.size}`] : []);
  assert.deepEqual(allocs, [
    "0:2",
    "0:2",
    "0:3",
    "0:5",
    "0:2",
    "1:8",
    "1:2",
    "1:2",
    "1:2",
    "0:3",
    "0:1",
  ]);
  const kinds = events.map((e) => e.kind);
  const joinAt = 10; // the events after Domain.join's closure, before the last allocation
  assert.deepEqual(kinds.slice(joinAt, -1).filter((k) => k === "promote").length, 5);
  assert.ok(kinds.slice(joinAt, -1).every((k) => k === "promote" || k === "deallocMinor"));
  assert.equal(r.summary.steps, 8); // start, spawn, 3 allocations, join, allocation, stop
  // The worker's tracked blocks went to the orphans (adopted by the next domain that collects);
  // the allocations of its end (Ok, Finished) wait there for their callbacks.
  assert.equal(r.summary.balance[0].tracked, 11);
});

Deno.test("joins are refused for the main domain, a domain itself, or one not running", () => {
  assert.throws(
    () =>
      runScenario(scenario({ name: "j1" }, (s) => {
        const w = s.main.spawn("w");
        w.join(w);
      })),
    /a domain cannot join itself/,
  );
  assert.throws(
    () =>
      runScenario(scenario({ name: "j2" }, (s) => {
        const w = s.main.spawn("w");
        s.main.join(w);
        s.main.join(w);
      })),
    /domain "w" is not running/,
  );
  assert.throws(
    () =>
      runScenario(scenario({ name: "j3" }, (s) => {
        const w = s.main.spawn("w");
        s.main.join(w);
        w.alloc(1);
      })),
    /domain "w" is not running/,
  );
});
