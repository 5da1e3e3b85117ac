/**
 * The engine: runs a scenario through the simulated runtime (lib/runtime) and memprof
 * (lib/memprof), records runtime_events in a ring image (lib/runtime_events), and traces every
 * domain into a memtrace `.ctf` (lib/tracer). Everything runs on a virtual clock with seeded
 * generators: the same scenario and seed give byte-identical outputs.
 *
 * Steps are compiled once into closures; a `repeat` runs its body's closures in a plain loop, so
 * a loop of small allocations costs little more than the runtime's own allocation path, and
 * loops whose body only allocates run in bulk (`engine/_bulk.ts`).
 *
 * Scenarios with systhreads running programs of their own (`d.thread(name, body)`) run in a
 * resumable form: a thread that blocks — at a `yieldTo` or `join` step, or inside a callback
 * (`act.yieldTo`) — is suspended where it is, however deep in the runtime, while the thread it
 * names runs; the scheduler resumes it when the baton comes back. Both forms run the same
 * compiled steps: each runs as plain code as far as it can and returns what is left of it where
 * a thread may block, a generator (`Op`, `engine/_context.ts`), as the runtime's and memprof's
 * paths that may run callbacks do (`allocFirst`, `pollFirst`, …: lib/memprof/resumable.ts). A
 * plain run drives what is left to its end at once (`runToEnd`, which fails if a callback
 * blocks); a resumable run yields through it. Where no callback is due, the hot steps
 * (allocations, polls, loops, calls) make no generator; steps off the hot paths (a spawn, an
 * explicit collection, …) are written as generators, which they run up to where one yields.
 * bench/engine_forms_bench.ts compares the two forms.
 *
 * The engine's parts are in lib/scenario/engine/: the run's state (`_context.ts`, with its
 * callstacks in `_frames.ts`), the compilers of each family of steps (`_compile_alloc.ts`,
 * `_compile_runtime.ts`, `_compile_domains.ts`, `_compile_control.ts`), put together in
 * `_compile.ts`, the thread programs and their baton (`_threads.ts`), the trackers' callbacks
 * (`_callbacks.ts`) and the outputs (`_outputs.ts`).
 * @module
 */
import type { RunOptions, RunResult } from "./result.ts";
import type { Scenario } from "./spec.ts";
import { usesThreadPrograms } from "./walk.ts";
import { runToEnd } from "../memprof/mod.ts";
import { RunContext } from "./engine/_context.ts";
import { Callbacks } from "./engine/_callbacks.ts";
import { compile } from "./engine/_compile.ts";
import { Baton, mainProgram } from "./engine/_threads.ts";
import { runOutputs } from "./engine/_outputs.ts";

export { countLeafSteps, usesThreadPrograms } from "./walk.ts";
/**
 * Runs a (validated) scenario. Throws {@linkcode ScenarioError} when a step fails.
 *
 * @example Run a scenario and look at its summary and outputs
 * ```ts
 * import { runScenario, scenario } from "./mod.ts";
 * import assert from "node:assert/strict";
 *
 * const sc = scenario({ name: "demo" }, (s) => {
 *   s.main.memprof.start({ samplingRate: 0.01 });
 *   s.main.repeat(1_000, () => s.main.alloc(4));
 *   s.main.memprof.stop();
 * });
 * const result = runScenario(sc);
 * assert.equal(result.summary.allocations, 1_000);
 * assert.ok(result.ctf.length > 0 && result.traceDump.length > 0);
 * ```
 */
export function runScenario(sc: Scenario, options: RunOptions = {}): RunResult {
  return run(sc, options, { resumable: usesThreadPrograms(sc) });
}

/** @internal Runs `sc` in the resumable form whatever it holds: a scenario without thread
 * programs gives exactly what {@linkcode runScenario} gives (the tests check that the two
 * forms agree on every library scenario). */
export function runScenarioResumable(sc: Scenario, options: RunOptions = {}): RunResult {
  return run(sc, options, { resumable: true });
}

function run(
  sc: Scenario,
  options: RunOptions,
  { resumable }: { readonly resumable: boolean },
): RunResult {
  const ctx = new RunContext(sc, options);
  if (resumable) {
    const baton = new Baton(ctx);
    baton.run(compile(ctx, new Callbacks(ctx, baton), baton));
  } else {
    // Without a baton no callback blocks: the program runs to its end at once.
    const top = compile(ctx, new Callbacks(ctx, undefined), undefined);
    runToEnd(mainProgram(ctx, top), `scenario ${sc.settings.name}`);
  }
  return runOutputs(ctx);
}
