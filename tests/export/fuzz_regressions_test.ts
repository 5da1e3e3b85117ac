// Escapes the scenario fuzz campaign found (issue 23: tests/export/fuzz_harness.ts), each fixed at
// its cause: validating or exporting these scenarios ends with a program or a ScenarioError /
// ExportError, never a TypeError or a RangeError.
import assert from "node:assert/strict";
import { ExportError, exportOCaml } from "../../lib/export/mod.ts";
import { MAX_PROGRAM_CHARS } from "../../lib/export/ocaml.ts";
import { keep, type Scenario, scenario, ScenarioError } from "../../lib/scenario/mod.ts";
import threadExit from "../../scenarios/thread_exit_in_callback.ts";
import refLoop from "../../scenarios/ref_loop.ts";
import service from "../../scenarios/service.ts";

// deno-lint-ignore no-explicit-any
type Loose = any;

/** `sc` with its steps replaced. */
function withSteps(sc: Scenario, steps: Loose[]): Scenario {
  return { ...sc, steps } as Scenario;
}

Deno.test("a step of a kind holding a body but without one is refused (was TypeError: steps is not iterable)", () => {
  for (const kind of ["call", "attempt", "repeat", "when", "blocking", "threadSpawn"]) {
    // A gc step whose kind was changed: it has no body.
    const step = { at: "99", kind, domain: "main", what: "minor" };
    assert.throws(
      () => exportOCaml(withSteps(refLoop, [...refLoop.steps, step])),
      // (repeat and when fail on their count or loop first: a ScenarioError all the same)
      (e: unknown) => e instanceof ScenarioError && e.step === "99",
      kind,
    );
  }
  // The first fuzzed case: refLoop's first step turned into a blocking section.
  const first = { ...refLoop.steps[0], kind: "blocking" } as Loose;
  assert.throws(
    () => exportOCaml(withSteps(refLoop, [first, ...refLoop.steps.slice(1)])),
    (e: unknown) =>
      e instanceof ScenarioError && /a body must be an array of steps/.test(e.message),
  );
});

Deno.test("a step that is not an object among the top-level steps is refused, even when a callback looks for thread programs (was TypeError)", () => {
  // act.exitThread makes the validator list the thread programs (the threadSpawn steps at the top
  // level) while it checks the first step, before it has checked the later ones.
  for (const bad of [null, undefined, 7, "x"]) {
    assert.throws(
      () => exportOCaml(withSteps(threadExit, [...threadExit.steps, bad])),
      (e: unknown) => e instanceof ScenarioError && /not a step/.test(e.message),
      String(bad),
    );
  }
});

Deno.test("30,000 unmarshal steps export (was RangeError: Maximum call stack size exceeded)", () => {
  // Each unmarshal leaves its blocks among the harness's initial blocks: 150,000 of them, once
  // spread as the arguments of one push.
  const sc = scenario({ name: "many_unmarshals" }, (s) => {
    s.main.memprof.start({ samplingRate: 0.01, callstackSize: 4 });
    for (let i = 0; i < 30_000; i++) {
      s.main.unmarshal([3, 2, 2, 2, 2], { lifetime: keep.steps(3) });
    }
    s.main.memprof.stop();
  });
  const p = exportOCaml(sc);
  assert.ok(p.source.length > 30_000 && p.source.length <= MAX_PROGRAM_CHARS);
});

Deno.test("a scenario whose program would exceed MAX_PROGRAM_CHARS is refused with ExportError, early (was 228 MB of program, 3 GB resident)", () => {
  // The scenario campaign's case: 3,112 copies of service's main call, 4 MB of JSON, whose
  // program (a match over 257 sizes at each drawn allocation) came to 228 M characters.
  const main = service.steps.find((st) => st.kind === "call")!;
  const steps = [...service.steps];
  const at = steps.indexOf(main);
  steps.splice(at, 0, ...Array.from({ length: 3_112 }, () => main));
  const t0 = performance.now();
  assert.throws(
    () => exportOCaml(withSteps(service, steps)),
    (e: unknown) =>
      e instanceof ExportError &&
      /the program would be more than 16777216 characters/.test(e.reason),
  );
  // Refused as the bound is crossed, not after writing it all (which took seconds).
  assert.ok(performance.now() - t0 < 5_000);
});

Deno.test("a size choice of 200,000 values validates and exports (was RangeError: Maximum call stack size exceeded)", () => {
  // Math.max(...values) in the validator (maxSize) and the export, Math.min(...) for major blocks.
  const choice = Array.from({ length: 200_000 }, (_, i) => 300 + i);
  const base = scenario({ name: "big_choice" }, (s) => {
    s.main.memprof.start({ samplingRate: 0.01, callstackSize: 4 });
    s.main.alloc(300);
    s.main.alloc(300, { source: "array" });
    s.main.alloc(300, { source: "major" });
    s.main.memprof.stop();
  });
  const steps = base.steps.map((st) => st.kind === "alloc" ? { ...st, size: { choice } } : st);
  const p = exportOCaml(withSteps(base, steps));
  assert.ok(p.source.includes("| 200299 ->") || p.source.length > 200_000);
  // The smallest size of a direct major allocation is still checked.
  const small = steps.map((st) =>
    st.kind === "alloc" && st.source === "major" ? { ...st, size: { choice: [...choice, 3] } } : st
  );
  assert.throws(
    () => exportOCaml(withSteps(base, small)),
    /a direct major allocation of 3 words/,
  );
});

Deno.test("a combined allocation whose lifetimes or frames are not one per size is refused (was TypeError: st.lifetimes is not iterable)", () => {
  const sc = scenario({ name: "comb" }, (s) => {
    s.main.memprof.start({ samplingRate: 1, callstackSize: 4 });
    s.main.allocCombined([1, 2, 3]);
    s.main.memprof.stop();
  });
  const comb = sc.steps.find((st) => st.kind === "allocCombined")!;
  const bad: [string, Loose, RegExp][] = [
    ["lifetimes", true, /lifetimes must be one lifetime per component, got/],
    ["lifetimes", undefined, /lifetimes must be one lifetime per component, got/],
    ["lifetimes", { kind: "x" }, /lifetimes must be one lifetime per component, got/],
    ["lifetimes", [{ kind: "drop" }], /has 3 sizes but 1 lifetimes/],
    ["frames", [[]], /has 3 sizes but 1 frame lists/],
  ];
  for (const [key, value, want] of bad) {
    const steps = sc.steps.map((st) => st === comb ? { ...st, [key]: value } : st);
    assert.throws(
      () => exportOCaml(withSteps(sc, steps)),
      (e: unknown) => e instanceof ScenarioError && want.test(e.message),
      `${key} = ${JSON.stringify(value)}`,
    );
  }
});
