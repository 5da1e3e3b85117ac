/// <reference lib="deno.worker" />
/**
 * A worker of the random campaign (campaign.ts): it judges the scenarios it is sent, one at a
 * time, each in a build folder of its own that it removes afterwards. The pool ends a worker that
 * overruns its time (a simulation that does not end cannot be interrupted otherwise).
 * @module
 */
import { judgeRandom, randomScenarioName } from "./random.ts";
import { diffScenario } from "./run.ts";
import type { WorkerReply, WorkerRequest } from "./campaign.ts";

self.onmessage = async (e: MessageEvent<WorkerRequest>) => {
  const { seed, index, config } = e.data;
  const name = randomScenarioName(seed, index);
  const cacheDir = `${config.cacheDir}/${name}`;
  try {
    const outcome = await judgeRandom(seed, index, {
      diff: (sc, { verify }) =>
        diffScenario(sc, {
          ocamlopt: config.ocamlopt,
          cacheDir,
          timeoutMs: config.timeoutMs,
          firstRuns: verify ? config.firstRuns : 1,
          context: config.context,
          // Random campaigns judge callbacks; rings are `diff --rings`'s, for named scenarios.
          rings: "never",
        }),
      shrink: config.shrink && !(config.noShrink ?? []).includes(name),
      shrinkMs: config.shrinkMs,
      onProgress: (message) =>
        self.postMessage({ kind: "progress", message } satisfies WorkerReply),
    });
    self.postMessage({ kind: "outcome", outcome } satisfies WorkerReply);
  } catch (err) {
    const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    self.postMessage({ kind: "failure", message } satisfies WorkerReply);
  } finally {
    try {
      Deno.removeSync(cacheDir, { recursive: true });
    } catch { /* never built */ }
  }
};
