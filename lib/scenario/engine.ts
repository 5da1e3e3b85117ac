/**
 * The engine: runs a scenario through the simulated runtime (lib/runtime) and memprof
 * (lib/memprof), records runtime_events in a ring image (lib/runtime_events), and traces every
 * domain into a memtrace `.ctf` (lib/tracer). Everything runs on a virtual clock with seeded
 * generators: the same scenario and seed give byte-identical outputs.
 *
 * Steps are compiled once into closures; a `repeat` runs its body's closures in a plain loop, so
 * a loop of small allocations costs little more than the runtime's own allocation path.
 *
 * Scenarios with systhreads running programs of their own (`d.thread(name, body)`) run in a
 * resumable form instead: each thread's steps compile to generators, so that a thread that
 * blocks — at a `yieldTo` or `join` step, or inside a callback (`act.yieldTo`) — is suspended
 * where it is, however deep in the runtime, while the thread it names runs; the scheduler
 * resumes it when the baton comes back. The runtime's and memprof's paths that may run
 * callbacks are written once, as generators (`allocG`, `runCallbacksG`, …), which the plain
 * methods drive to their end (the hottest run as plain code until a callback needs the generator:
 * lib/memprof/resumable.ts). Every other scenario runs the plain closures, whose steps off the
 * hot paths are those generators driven to their end too, and whose callbacks without actions
 * make no generator; loops whose body only allocates run in bulk in both forms
 * (`engine/_bulk.ts`). bench/engine_forms_bench.ts compares the two forms.
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
import { segmentStarts, usesThreadPrograms } from "./walk.ts";
import { harnessJoin } from "./engine/_compile_domains.ts";
import { finalTurnsBegin, waitBegins, waitEnds } from "./engine/_domain_waits.ts";
import { RunContext } from "./engine/_context.ts";
import { Callbacks } from "./engine/_callbacks.ts";
import { compilePlain, compileResumable } from "./engine/_compile.ts";
import { Baton } from "./engine/_threads.ts";
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
    baton.run(compileResumable(ctx, new Callbacks(ctx, baton), baton));
  } else {
    compilePlain(ctx, new Callbacks(ctx, undefined))();
    // Leave nothing pending: callbacks of the last steps run at a final poll of each domain
    // (with the export's harness and several domains, each resumes first: RunContext.drain).
    const multi = options.exportHarness === true && sc.domains.length > 1;
    // The first to resume joins the domain that ended the last segment (the export's harness).
    let trailing = multi ? segmentStarts(sc).trailingJoins : [];
    finalTurnsBegin(ctx);
    for (const d of ctx.names.domains.values()) {
      if (!d.alive) continue;
      waitEnds(ctx, d);
      for (const ended of trailing) harnessJoin(ctx, d, ended, "end");
      trailing = [];
      if (multi) ctx.drain(d, "end");
      ctx.cur = d;
      ctx.guard("end", () => d.processPendingActions());
      waitBegins(ctx, d);
    }
  }
  return runOutputs(ctx);
}
