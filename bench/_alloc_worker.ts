/**
 * Worker side of {@linkcode allocSecondsInFreshIsolate}: measures one round of the allocation
 * workload at the rate it is sent, in this worker's own V8 isolate, and posts back the median
 * seconds.
 * @module
 */
/// <reference lib="deno.worker" />
import { allocWorkload } from "./_alloc_workload.ts";
import { medianSeconds } from "./_side_by_side.ts";
import type { AllocRequest } from "./_alloc_isolated.ts";

self.onmessage = (e: MessageEvent<AllocRequest>) => {
  const { lambda, rounds, warmupSeconds } = e.data;
  try {
    const seconds = medianSeconds(allocWorkload(lambda), { warmup: 3, warmupSeconds, rounds });
    self.postMessage({ seconds });
  } catch (err) {
    self.postMessage({ error: String(err) });
  }
  self.close();
};
