// Callback actions that fail at run time (a call the runtime refuses, a thread that cannot take
// the baton) stop the run with the step running the callback and the action's path in the
// scenario, as the validator names actions: `step 3, callback allocMinor, act.start: …`.
import assert from "node:assert/strict";
import {
  act,
  cb,
  keep,
  type ProfileSpec,
  runScenario,
  scenario,
  type ScenarioBuilder,
  ScenarioError,
} from "../../lib/scenario/mod.ts";
import { runScenarioResumable } from "../../lib/scenario/engine.ts";

/** Runs `build` (in the form `run` gives) and checks the error's step, path and message. */
function failsAt(
  build: (s: ScenarioBuilder) => void,
  want: { step: string; within: string; problem: string },
  run = runScenario,
): void {
  const sc = scenario({ name: "acts", minorHeapWords: 8192 }, build);
  assert.throws(
    () => run(sc),
    (e: unknown) => {
      assert.ok(e instanceof ScenarioError, String(e));
      assert.deepEqual({ step: e.step, within: e.within, problem: e.problem }, want);
      assert.equal(
        e.message,
        `scenario acts, step ${want.step}, ${want.within}: ${want.problem}`,
      );
      return true;
    },
  );
}

Deno.test("a call a callback's action makes and the runtime refuses names the step, the callback and the action, in both forms", () => {
  for (const run of [runScenario, runScenarioResumable]) {
    failsAt(
      (s) => {
        s.main.memprof.start({
          samplingRate: 1,
          tracker: { allocMinor: cb.track().on(1, act.stop(), act.stop()) },
        });
        s.main.alloc(2);
      },
      {
        step: "2",
        within: "callback allocMinor, act.stop",
        problem: "Gc.Memprof.stop: no profile running.",
      },
      run,
    );
  }
  failsAt(
    (s) => {
      s.main.memprof.start({
        samplingRate: 1,
        tracker: {
          promote: cb.track().on(1, act.start({ samplingRate: 1, callstackSize: 0, tracker: {} })),
        },
      });
      s.main.alloc(2, { lifetime: keep.forever });
      s.main.minorGc();
    },
    {
      step: "3",
      within: "callback promote, act.start",
      problem: "Gc.Memprof.start: already started.",
    },
  );
});

Deno.test("an action of a profile a callback started is named through the action that started it", () => {
  const inner: ProfileSpec = {
    name: "inner",
    samplingRate: 1,
    callstackSize: 0,
    tracker: { promote: cb.track().on(1, act.discard()) },
  };
  failsAt(
    (s) => {
      s.main.memprof.start({
        samplingRate: 1,
        tracker: { allocMinor: cb.track().on(1, act.stop(), act.start(inner)) },
      });
      s.main.alloc(2); // its callback stops p1 and starts inner
      s.main.alloc(3, { lifetime: keep.forever }); // tracked by inner
      s.main.minorGc(); // inner's promote discards inner, which is running
    },
    {
      step: "4",
      within: "callback allocMinor, act.start, callback promote, act.discard",
      problem: "Gc.Memprof.discard: profile not stopped.",
    },
  );
});

Deno.test("a refused action in a callback run at a loop's back-edge names the loop", () => {
  // Runtime allocations do not allocate inline: the loop polls at its back-edge, where the
  // pending callbacks run.
  failsAt(
    (s) => {
      s.main.memprof.start({
        samplingRate: 1,
        tracker: { allocMinor: cb.track().on(2, act.stop(), act.stop()) },
      });
      s.main.repeat(4, () => s.main.alloc(2, { source: "runtime" }));
    },
    {
      step: "2",
      within: "callback allocMinor, act.stop",
      problem: "Gc.Memprof.stop: no profile running.",
    },
  );
});

Deno.test("an action switching to a thread that exited names the action", () => {
  failsAt(
    (s) => {
      const t = s.main.thread("t");
      s.main.memprof.start({
        samplingRate: 1,
        tracker: { allocMinor: cb.track().on(1, act.switchThread("t")) },
      });
      t.exit();
      s.main.alloc(2);
    },
    {
      step: "4",
      within: "callback allocMinor, act.switchThread",
      problem: 'cannot switch to thread "t"',
    },
  );
});

Deno.test("passing the baton from a callback to a thread that ended names the action", () => {
  failsAt(
    (s) => {
      const t = s.main.thread("t", (t) => t.alloc(1));
      s.main.join(t);
      s.main.memprof.start({
        samplingRate: 1,
        tracker: { allocMinor: cb.track().on(1, act.yieldTo("t")) },
      });
      s.main.alloc(2);
    },
    {
      step: "4",
      within: "callback allocMinor, act.yieldTo",
      problem: 'thread "t" has ended',
    },
  );
});

Deno.test("an OCaml exception an action raises is no failure: the step logs it and the run goes on", () => {
  const sc = scenario({ name: "raises" }, (s) => {
    s.main.memprof.start({
      samplingRate: 1,
      tracker: { allocMinor: cb.track().on(1, act.raise("Boom")) },
    });
    s.main.alloc(2);
    s.main.alloc(2);
  });
  for (const run of [runScenario, runScenarioResumable]) {
    const r = run(sc);
    assert.equal(r.summary.exceptions, 1);
    assert.match(r.callbackLog, /\[2\] exception Boom escaped/);
  }
});
