// The plain engine makes no generator for a sampled allocation whose callbacks have no actions
// (issue 26): its tracker's callbacks run their begin and end at once, and the runtime's slow
// path hands on no rest (tests/runtime/plain_paths_test.ts). A callback with an action runs its
// body as a generator to its end.
import assert from "node:assert/strict";
import { act, cb, runScenario, scenario } from "../../lib/scenario/mod.ts";
import { generatorSteps } from "../runtime/_generator_steps.ts";

Deno.test("a plain run's samples make no generator when their callbacks have no actions", () => {
  const sc = scenario({ name: "plain_samples" }, (s) => {
    s.main.memprof.start({ samplingRate: 0.05, callstackSize: 4 });
    s.main.repeat(2000, () => s.main.alloc(2));
  });
  let summary: ReturnType<typeof runScenario>["summary"] | undefined;
  const steps = generatorSteps(() => summary = runScenario(sc).summary);
  assert.ok(
    summary!.callbacks.allocMinor > 100,
    `samples were taken (${summary!.callbacks.allocMinor})`,
  );
  assert.equal(summary!.minorCollections, 0);
  assert.equal(steps, 0);
});

Deno.test("a plain loop's back-edge polls make no generator when no callback is due", () => {
  // Inside a call, the loop polls at its back-edge: after some samples young_ptr sits at
  // young_limit, so the poll enters the runtime (amd64's jbe), with nothing to run. Generators
  // are made only where a collection's callbacks run, a few per minor collection, and once for
  // the steps around it: what is left of the allocation that collected (its callbacks, then the
  // rest of the step) is the rest of the loop and of the call (lib/scenario/engine/_context.ts,
  // `Op`), which a plain run then drives to their end.
  const sc = scenario({ name: "plain_polls" }, (s) => {
    s.main.memprof.start({ samplingRate: 1e-3, callstackSize: 16 });
    s.main.call(
      "B.main@b.ml:1:0-10",
      () => s.main.repeat(200_000, () => s.main.alloc(2, { at: "B.loop@b.ml:5:4-20" })),
    );
  });
  let summary: ReturnType<typeof runScenario>["summary"] | undefined;
  const steps = generatorSteps(() => summary = runScenario(sc).summary);
  const { allocMinor, deallocMinor } = summary!.callbacks;
  assert.ok(
    allocMinor > 400 && deallocMinor > 400,
    `callbacks ran (${allocMinor}, ${deallocMinor})`,
  );
  assert.ok(summary!.minorCollections >= 1);
  assert.ok(
    steps <= 10 * summary!.minorCollections + 5,
    `${steps} generator steps for ${summary!.minorCollections} minor collections`,
  );
});

Deno.test("a callback with an action runs its body as a generator", () => {
  const sc = scenario({ name: "plain_samples_alloc" }, (s) => {
    s.main.memprof.start({
      samplingRate: 0.05,
      callstackSize: 4,
      tracker: { allocMinor: cb.track().always(act.alloc(1)) },
    });
    s.main.repeat(2000, () => s.main.alloc(2));
  });
  let calls = 0;
  const steps = generatorSteps(() => calls = runScenario(sc).summary.callbacks.allocMinor);
  assert.ok(calls > 100);
  assert.ok(steps >= calls, `${steps} steps for ${calls} callbacks`);
});
