// A plain run makes no generator where no callback blocks (issue 26): the allocation slow path,
// memprof's sampling and a poll's pending actions run as plain code up to the first callback
// due, and hand on the rest of the path as a generator only when one is to run in a loop,
// blocks or raises. Counted by wrapping the generators' shared `next` (./_generator_steps.ts).
import assert from "node:assert/strict";
import { Runtime } from "../../lib/runtime/mod.ts";
import { Blocking } from "../../lib/memprof/mod.ts";
import { generatorSteps } from "./_generator_steps.ts";

Deno.test("the step counter sees the generators a plain path drives", () => {
  // Gc.minor is a generator run to its end: at least one step.
  const rt = new Runtime({ minorHeapWords: 4096 });
  assert.ok(generatorSteps(() => rt.mainDomain.minorGc()) >= 1);
  function* two() {
    yield 1;
    yield 2;
  }
  assert.equal(generatorSteps(() => [...two()]), 3);
});

Deno.test("sampled allocations whose callbacks return make no generator", () => {
  const rt = new Runtime({ minorHeapWords: 1 << 16 });
  const d = rt.mainDomain;
  let allocs = 0;
  d.memprofStart({
    samplingRate: 0.05,
    callstackSize: 4,
    tracker: { allocMinor: () => ++allocs, deallocMinor: () => {} },
  });
  d.poll(); // the start's own pending state
  const steps = generatorSteps(() => {
    // 2,000 × 3 words: well inside the minor heap, so no collection's callbacks run here.
    for (let i = 0; i < 2000; i++) d.alloc(2);
    d.poll();
    d.processPendingActions();
  });
  assert.ok(allocs > 100, `samples were taken (${allocs})`);
  assert.equal(rt.minorCollections, 0);
  assert.equal(steps, 0);
});

Deno.test("a callback that raises or blocks hands on the rest of the path", () => {
  const rt = new Runtime({ minorHeapWords: 4096 });
  const d = rt.mainDomain;
  let mode: "raise" | "block" = "raise";
  d.memprofStart({
    samplingRate: 1,
    tracker: {
      allocMinor: () => {
        if (mode === "raise") throw new Error("in callback");
        // deno-lint-ignore require-yield
        return new Blocking((function* () {
          return 7;
        })());
      },
    },
  });
  // The raise goes through caml_raise's pending actions: a generator, and the exception out.
  let raised: unknown;
  const onRaise = generatorSteps(() => {
    try {
      d.alloc(2);
    } catch (e) {
      raised = e;
    }
  });
  assert.equal((raised as Error).message, "in callback");
  assert.ok(onRaise >= 1);
  // A Blocking whose body does not yield: run to its end on the plain path.
  mode = "block";
  let addr = -1;
  const onBlock = generatorSteps(() => addr = d.alloc(2));
  assert.ok(onBlock >= 1);
  assert.equal(addr, d.youngPtr);
  assert.equal(d.memprof.entries.size, 1, "the block is tracked with the value its body returned");
  assert.equal(d.memprof.entries.userData[0], 7);
});
