/**
 * The "memprof alloc" figures, each measured in a fresh V8 isolate (a Worker), as the anchor
 * measures each rate in a fresh OCaml process.
 *
 * Why: V8 compiles the workload's loop with what it has seen so far. Measured one after the
 * other in one isolate, the later rates run code specialised for the earlier ones (the runtime
 * entry inlined into the loop or not, with different register allocation), and their figure
 * depends on the order of the lines rather than on the rate: λ = 1e-5 measured after "no
 * profile" gave 245 M allocations/s, in its own isolate 335–345.
 * @module
 */

/** What the worker is asked to measure. */
export interface AllocRequest {
  /** Sampling rate, or null for no profile. */
  lambda: number | null;
  /** Timed rounds (the median is returned). */
  rounds: number;
  /** Untimed rounds for at least this long first. */
  warmupSeconds: number;
}

/**
 * Median seconds of one round of bench/_alloc_workload.ts at `lambda`, measured in a new Worker
 * after warming up for `warmupSeconds` (default 1) — `rounds` timed rounds (default 9).
 */
export function allocSecondsInFreshIsolate(
  lambda: number | null,
  options: { rounds?: number; warmupSeconds?: number } = {},
): Promise<number> {
  const worker = new Worker(new URL("./_alloc_worker.ts", import.meta.url), { type: "module" });
  const request: AllocRequest = {
    lambda,
    rounds: options.rounds ?? 9,
    warmupSeconds: options.warmupSeconds ?? 1,
  };
  return new Promise<number>((resolve, reject) => {
    worker.onmessage = (e: MessageEvent<{ seconds?: number; error?: string }>) => {
      worker.terminate();
      if (e.data.seconds !== undefined) resolve(e.data.seconds);
      else reject(new Error(`allocation workload at λ=${lambda} failed: ${e.data.error}`));
    };
    worker.onerror = (e) => {
      e.preventDefault();
      worker.terminate();
      reject(new Error(`allocation workload at λ=${lambda} failed: ${e.message}`));
    };
    worker.postMessage(request);
  });
}
