// Slow paths written once (issue 26): every runtime and memprof path that may run callbacks is a
// generator, and its plain method only drives it to its end (`runToEnd`), in front of which only
// a bump-pointer fast path may stand; the scenario engine compiles each step once, for both of a
// run's forms. tests/runtime/_twins.ts finds the pairs; this holds their count at zero twins,
// and checks that a plain path fails clearly when a callback blocks.
import assert from "node:assert/strict";
import { pairsOf, tsFiles } from "./_twins.ts";
import { Runtime } from "../../lib/runtime/mod.ts";
import { BlockedOutsideResumableRun, Blocking, runToEnd } from "../../lib/memprof/mod.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

async function pairsIn(paths: readonly string[]) {
  const out = [];
  for (const f of await tsFiles(paths.map((p) => ROOT + p))) {
    out.push(...pairsOf(f.slice(ROOT.length), await Deno.readTextFile(f)));
  }
  return out;
}

Deno.test("the runtime and memprof have no plain/resumable twins", async () => {
  const pairs = await pairsIn(["lib/runtime", "lib/memprof"]);
  const twins = pairs.filter((p) => p.kind === "twin");
  assert.deepEqual(
    twins.map((p) => `${p.file}:${p.plain.line} ${p.plain.name} ~ ${p.resumable.name}`),
    [],
  );
  // The plain forms are still there, each driving its generator (fast paths: alloc and
  // allocCombined; the poll drives what its plain part leaves, `pollFirst`).
  const fast = pairs.filter((p) => p.kind === "fast").map((p) => p.plain.name).sort();
  assert.deepEqual(fast, ["alloc", "allocCombined"]);
  assert.ok(pairs.filter((p) => p.kind === "driver").length >= 10);
});

Deno.test("the scenario engine has no plain/resumable twins", async () => {
  // Its steps compile once, into closures that run as plain code up to where a thread may
  // block and return what is left (lib/scenario/engine/_context.ts, `Op`): plain runs drive
  // that to its end, resumable ones yield through it. What pairs remain drive a generator.
  const pairs = await pairsIn(["lib/scenario/engine", "lib/scenario/engine.ts"]);
  const twins = pairs.filter((p) => p.kind === "twin");
  assert.deepEqual(
    twins.map((p) => `${p.file}:${p.plain.line} ${p.plain.name} ~ ${p.resumable.name}`),
    [],
  );
});

Deno.test("the twin counter tells a twin from a driver and a fast path", () => {
  const text = `
export class D {
  alloc(w: number): number {
    const p = this.ptr - w;
    if (p >= this.limit) {
      this.ptr = p;
      return p;
    }
    return runToEnd(this.#slowG(w), "alloc");
  }
  *allocG(w: number): Resumable<number> {
    return yield* this.#slowG(w);
  }
  minor(): void {
    runToEnd(this.minorG(), "Gc.minor");
  }
  *minorG(): Resumable<void> {
    yield* this.pendingG();
  }
  poll(): void {
    if (this.ptr <= this.limit) this.pending();
  }
  *pollG(): Resumable<void> {
    if (this.ptr <= this.limit) yield* this.pendingG();
  }
}
function stepOp(run: Run): () => void {
  return () => run.tick();
}
function* stepG(run: Run): Resumable<void> {
  yield* run.tickG();
}
`;
  const kinds = pairsOf("x.ts", text).map((p) => `${p.plain.name}:${p.kind}`);
  assert.deepEqual(kinds, ["alloc:fast", "minor:driver", "poll:twin", "stepOp:twin"]);
});

Deno.test("runToEnd returns what the computation returns", () => {
  // deno-lint-ignore require-yield
  function* answer() {
    return 42;
  }
  assert.equal(runToEnd(answer(), "answer"), 42);
});

/** A runtime whose every minor allocation is sampled by a callback that blocks its thread;
 * `onUnwound` runs when the callback's body is unwound. */
function blockingRuntime(onUnwound: () => void): Runtime {
  const rt = new Runtime({ minorHeapWords: 4096 });
  rt.mainDomain.memprofStart({
    samplingRate: 1,
    tracker: {
      allocMinor: () =>
        new Blocking((function* () {
          try {
            yield "another thread";
            return 1;
          } finally {
            onUnwound();
          }
        })()),
    },
  });
  return rt;
}

Deno.test("a callback blocking on a plain path fails naming the operation, unwound", () => {
  let unwound = false;
  const rt = blockingRuntime(() => unwound = true);
  const roots = rt.roots.size;
  // Array.make's callback runs at its pending actions, while a local root holds the array.
  assert.throws(
    () => rt.mainDomain.makeArray(3),
    (e: unknown) =>
      e instanceof BlockedOutsideResumableRun && e.operation === "Array.make" &&
      /^Array\.make: a callback blocked its thread/.test(e.message),
  );
  assert.ok(unwound, "the callback's own finally ran");
  assert.equal(rt.roots.size, roots, "the local root of Array.make was released");
  // An allocation from OCaml code names the allocation slow path.
  const rt2 = blockingRuntime(() => {});
  assert.throws(
    () => {
      for (let k = 0; k < 10; k++) rt2.mainDomain.alloc(1);
    },
    (e: unknown) =>
      e instanceof BlockedOutsideResumableRun && e.operation === "caml_alloc_small_dispatch",
  );
});
