/**
 * A random differential campaign: scenarios `0 … count-1` of a seed (or one shard of them),
 * judged by a pool of workers, each scenario in a worker that is ended if it overruns its time.
 * @module
 */
import type { RandomOutcome } from "./random.ts";
import { randomScenarioName } from "./random.ts";

/** What every worker needs to judge a scenario. */
export interface WorkerConfig {
  /** The native compiler command. */
  readonly ocamlopt: readonly string[];
  /** A folder the workers build in (each scenario in a subfolder, removed after). */
  readonly cacheDir: string;
  /** Longest a real program may run, in ms. */
  readonly timeoutMs: number;
  /** Runs of each generated program that must print the same log. */
  readonly firstRuns: number;
  /** Lines of context around a difference. */
  readonly context: number;
  /** Shrink differences. */
  readonly shrink: boolean;
  /** Longest time spent shrinking one difference, in ms. */
  readonly shrinkMs: number;
  /** Scenarios not to shrink (listed as known differences: their failures are expected). */
  readonly noShrink?: readonly string[];
}

/** A message to a worker. */
export interface WorkerRequest {
  readonly seed: number;
  readonly index: number;
  readonly config: WorkerConfig;
}

/** A message from a worker. */
export type WorkerReply =
  | { readonly kind: "progress"; readonly message: string }
  | { readonly kind: "outcome"; readonly outcome: RandomOutcome }
  | { readonly kind: "failure"; readonly message: string };

/** Which scenarios a campaign runs: `count` of `seed`, those of shard `shard.index` (from 1) of
 * `shard.of` (scenario `i` is in shard `i mod of + 1`). */
export interface CampaignPlan {
  /** The campaign's seed. */
  readonly seed: number;
  /** Scenarios 0 to `count` - 1. */
  readonly count: number;
  /** Only shard `index` (from 1) of `of`. */
  readonly shard?: { readonly index: number; readonly of: number };
}

/** The indices a plan runs, in order. */
export function planIndices(plan: CampaignPlan): number[] {
  const out: number[] = [];
  for (let i = 0; i < plan.count; i++) {
    if (plan.shard === undefined || i % plan.shard.of === plan.shard.index - 1) out.push(i);
  }
  return out;
}

/** One scenario's end: its outcome, or why the worker could not give one. */
export type CampaignItem =
  | { readonly kind: "outcome"; readonly outcome: RandomOutcome }
  | {
    readonly kind: "failure";
    readonly index: number;
    readonly name: string;
    readonly message: string;
  };

/** Options of {@linkcode runCampaign}. */
export interface CampaignOptions {
  /** Which scenarios to judge. */
  readonly plan: CampaignPlan;
  /** What each worker needs to judge one (toolchain, cache, options). */
  readonly config: WorkerConfig;
  /** Workers judging at once (default 2). */
  readonly jobs?: number;
  /** Longest time one scenario may take, shrinking included, in ms (default 900,000). */
  readonly scenarioTimeoutMs?: number;
  /** Called as each scenario ends (in the order they end). */
  readonly onItem: (item: CampaignItem) => void;
  /** Progress messages, with the scenario's name. */
  readonly onProgress?: (name: string, message: string) => void;
  /** The worker module (tests give a stand-in). */
  readonly workerUrl?: string;
}

/** Runs the campaign; resolves when every scenario of the plan has ended. */
export async function runCampaign(opts: CampaignOptions): Promise<void> {
  const queue = planIndices(opts.plan);
  const jobs = Math.max(1, Math.min(opts.jobs ?? 2, queue.length));
  const url = opts.workerUrl ?? new URL("./_campaign_worker.ts", import.meta.url).href;
  const timeout = opts.scenarioTimeoutMs ?? 900_000;
  const lane = async (): Promise<void> => {
    let worker: Worker | undefined;
    try {
      for (;;) {
        const index = queue.shift();
        if (index === undefined) return;
        worker ??= new Worker(url, { type: "module" });
        const item = await judgeIn(worker, index, opts, timeout);
        if (item.kind === "failure") {
          // The worker may be stuck or broken: a fresh one takes the next scenario.
          worker.terminate();
          worker = undefined;
        }
        opts.onItem(item);
      }
    } finally {
      worker?.terminate();
    }
  };
  await Promise.all(Array.from({ length: jobs }, lane));
}

function judgeIn(
  worker: Worker,
  index: number,
  opts: CampaignOptions,
  timeoutMs: number,
): Promise<CampaignItem> {
  const { seed } = opts.plan;
  const name = randomScenarioName(seed, index);
  return new Promise((resolve) => {
    const done = (item: CampaignItem) => {
      clearTimeout(timer);
      worker.onmessage = null;
      worker.onerror = null;
      resolve(item);
    };
    const timer = setTimeout(() =>
      done({
        kind: "failure",
        index,
        name,
        message: `did not finish within ${Math.round(timeoutMs / 1000)} s (generation, ` +
          "simulation, export or shrinking; the worker was stopped)",
      }), timeoutMs);
    worker.onmessage = (e: MessageEvent<WorkerReply>) => {
      const m = e.data;
      if (m.kind === "progress") opts.onProgress?.(name, m.message);
      else if (m.kind === "outcome") done({ kind: "outcome", outcome: m.outcome });
      else done({ kind: "failure", index, name, message: m.message });
    };
    worker.onerror = (e) => {
      e.preventDefault();
      done({ kind: "failure", index, name, message: `worker error: ${e.message}` });
    };
    worker.postMessage({ seed, index, config: opts.config } satisfies WorkerRequest);
  });
}
