import assert from "node:assert/strict";
import { allocSecondsInFreshIsolate } from "../../bench/_alloc_isolated.ts";

Deno.test("an allocation round measured in a fresh isolate takes a positive, finite time", async () => {
  const seconds = await allocSecondsInFreshIsolate(1e-4, { rounds: 1, warmupSeconds: 0 });
  assert.ok(Number.isFinite(seconds) && seconds > 0, `got ${seconds}`);
});

Deno.test("a workload failing in its isolate rejects with the rate and the cause", async () => {
  await assert.rejects(
    allocSecondsInFreshIsolate(2, { rounds: 1, warmupSeconds: 0 }),
    (e: Error) => /λ=2 failed: OCamlInvalidArgument: Gc\.Memprof\.start/.test(e.message),
  );
});
