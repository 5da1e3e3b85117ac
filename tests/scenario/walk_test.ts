// The step tree's walker (lib/scenario/walk.ts) and the release queue (lib/scenario/schedule.ts).
import assert from "node:assert/strict";
import { act, cb, scenario } from "../../lib/scenario/mod.ts";
import {
  countLeafSteps,
  findStep,
  forEachStep,
  isStepKind,
  someAction,
  STEP_FAMILIES,
  usesThreadPrograms,
  visitStep,
} from "../../lib/scenario/walk.ts";
import { ReleaseQueue } from "../../lib/scenario/schedule.ts";

const tree = scenario({ name: "tree" }, (s) => {
  const m = s.main;
  m.alloc(1); // 1
  m.call("T.f@t.ml:1:0-1", () => { // 2
    m.repeat(3, (i) => { // 2.1
      m.alloc(2); // 2.1.1
      i.every(2, () => m.poll()); // 2.1.2, its poll 2.1.2.1
    });
    m.attempt(() => m.minorGc()); // 2.2, 2.2.1
  });
  m.blocking(() => m.poll()); // 3, 3.1
});

Deno.test("forEachStep visits each step before the steps it holds, with the context its parent gave", () => {
  const seen: string[] = [];
  forEachStep(tree.steps, 0, (st, depth) => {
    seen.push(`${st.at}@${depth}`);
    return st.kind === "attempt" ? undefined : depth + 1;
  });
  assert.deepEqual(seen, [
    "1@0",
    "2@0",
    "2.1@1",
    "2.1.1@2",
    "2.1.2@2",
    "2.1.2.1@3",
    "2.2@1", // its body left out
    "3@0",
    "3.1@1",
  ]);
});

Deno.test("findStep gives the first step in that order that passes the test", () => {
  assert.equal(findStep(tree.steps, (st) => st.kind === "poll")?.at, "2.1.2.1");
  assert.equal(findStep(tree.steps, (st) => st.kind === "gc")?.at, "2.2.1");
  assert.equal(findStep(tree.steps, (st) => st.kind === "spawn"), undefined);
});

Deno.test("countLeafSteps counts loop bodies once per iteration and every's body on each", () => {
  // 1 + 3 × (alloc + poll) + gc + blocking and its poll
  assert.equal(countLeafSteps(tree.steps), 1 + 3 * 2 + 1 + 2);
});

Deno.test("visitStep calls the function of the step's kind", () => {
  const kinds = Object.keys(STEP_FAMILIES);
  const visitor = Object.fromEntries(kinds.map((k) => [k, () => k])) as never;
  for (const st of tree.steps) assert.equal(visitStep(st, visitor), st.kind);
  assert.ok(kinds.every(isStepKind));
  assert.ok(!isStepKind("toString") && !isStepKind(3));
});

Deno.test("someAction looks into the trackers of the profiles actions start", () => {
  const inner = {
    samplingRate: 1,
    callstackSize: 0,
    tracker: { promote: cb.track().on(1, act.raise()) },
  };
  const tracker = { allocMinor: cb.track().on(1, act.stop(), act.start(inner)) };
  assert.ok(someAction(tracker, (a) => a.kind === "raise"));
  assert.ok(!someAction(tracker, (a) => a.kind === "gc"));
  const threads = scenario({ name: "threads" }, (s) => {
    s.main.thread("t", (t) => t.alloc(1));
    s.main.memprof.start({ tracker: { allocMinor: cb.track().on(1, act.yieldTo("t")) } });
  });
  assert.ok(usesThreadPrograms(threads));
  assert.ok(!usesThreadPrograms(tree));
});

Deno.test("the release queue runs releases in order of step, then of scheduling", () => {
  const q = new ReleaseQueue();
  const ran: number[] = [];
  // A fixed pseudo-random order of steps, several at each step.
  const steps = Array.from({ length: 200 }, (_, k) => (k * 7919) % 37);
  steps.forEach((step, k) => q.push(step, () => ran.push(k)));
  assert.equal(q.size, 200);
  assert.equal(q.next, 0);
  q.runDue(17);
  const want = steps.map((step, k) => ({ step, k })).sort((a, b) => a.step - b.step || a.k - b.k);
  assert.deepEqual(ran, want.filter((x) => x.step <= 17).map((x) => x.k));
  q.runDue(Infinity);
  assert.deepEqual(ran, want.map((x) => x.k));
  assert.equal(q.next, Infinity);
});
