/**
 * A memprof profile: the configuration object `Gc.Memprof.start` returns (memprof.c keeps it on
 * the OCaml heap as a 9-field block; only its status field is ever written).
 *
 * @module
 */

import { isMinLambda } from "./rng.ts";

/** Profile status: sampling (0), stopped (1) or discarded (2), memprof.c's CONFIG_STATUS_*. */
export const ProfileStatus = {
  SAMPLING: 0,
  STOPPED: 1,
  DISCARDED: 2,
} as const;
/** A value of {@linkcode ProfileStatus}. */
export type ProfileStatus = typeof ProfileStatus[keyof typeof ProfileStatus];

/** Where a tracked block comes from (`Gc.Memprof.allocation_source`). */
export const AllocationSource = {
  NORMAL: 0,
  MARSHAL: 1,
  CUSTOM: 2,
} as const;
/** A value of {@linkcode AllocationSource}. */
export type AllocationSource = typeof AllocationSource[keyof typeof AllocationSource];

/** The record passed to allocation callbacks (`Gc.Memprof.allocation`). */
export interface AllocationInfo {
  /** Number of samples in this block (≥ 1). */
  readonly nSamples: number;
  /** Size of the block in words, excluding the header. */
  readonly size: number;
  /** Source of the allocation. */
  readonly source: AllocationSource;
  /** Callstack of the allocation, innermost frame first, at most `callstackSize` frames. */
  readonly callstack: readonly string[];
}

/**
 * A tracker (`Gc.Memprof.tracker`). Each callback returns a tracking value, or `undefined`/`null`
 * for OCaml's `None` (which stops tracking the block). A callback may throw (an OCaml exception),
 * stop or start profiles, discard, allocate, trigger GCs or switch threads through the runtime.
 * A missing callback behaves as OCaml's `fun _ -> None`.
 */
export interface Tracker<Minor = unknown, Major = unknown> {
  /** Called for a block sampled in the minor heap. */
  allocMinor?: (info: AllocationInfo) => Minor | null | undefined;
  /** Called for a block sampled in the major heap. */
  allocMajor?: (info: AllocationInfo) => Major | null | undefined;
  /** Called when a tracked minor block is promoted. */
  promote?: (value: Minor) => Major | null | undefined;
  /** Called when a tracked minor block dies. */
  deallocMinor?: (value: Minor) => void;
  /** Called when a tracked major block dies. */
  deallocMajor?: (value: Major) => void;
}

/** Arguments of {@linkcode Profile} construction (after validation by `start`). */
export interface ProfileParams {
  /** lambda, the fraction of words sampled. */
  readonly samplingRate: number;
  /** `1/log1p(-lambda)` with memprof.c's edge cases. */
  readonly oneLog1mLambda: number;
  /** Maximum callstack length recorded. */
  readonly callstackSize: number;
  /** The callbacks. */
  readonly tracker: Tracker<unknown, unknown>;
}

let nextProfileId = 0;

/** A profile (`Gc.Memprof.t`). Shared by all domains and threads that sample under it. */
export class Profile {
  /** A serial number, for debugging and logs. */
  readonly id: number = nextProfileId++;
  /** Current status; the only mutable field, as in memprof.c. */
  status: ProfileStatus = ProfileStatus.SAMPLING;
  /** lambda. */
  readonly samplingRate: number;
  /** `1/log1p(-lambda)`. */
  readonly oneLog1mLambda: number;
  /** Maximum callstack length. */
  readonly callstackSize: number;
  /** The callbacks. */
  readonly tracker: Tracker<unknown, unknown>;
  readonly #minLambda: boolean;

  /** Creates a sampling profile from validated parameters. */
  constructor(p: ProfileParams) {
    this.samplingRate = p.samplingRate;
    this.oneLog1mLambda = p.oneLog1mLambda;
    this.callstackSize = p.callstackSize;
    this.tracker = p.tracker;
    this.#minLambda = isMinLambda(p.oneLog1mLambda);
  }

  /** memprof.c's `Min_lambda`: sampling is effectively off. */
  get minLambda(): boolean {
    return this.#minLambda;
  }
}

/** The failures of `Gc.Memprof.start`, `stop` and `discard` that a profile's status causes,
 * worded as memprof.c words them (`caml_failwith`). The scenario validator checks a scenario's
 * memprof steps with these before it runs; tests/scenario/schema_test.ts checks that the
 * simulated runtime (memprof.ts) fails with the same words. */
export const MEMPROF_FAILURES = {
  /** `start` while a profile samples on the domain. */
  alreadyStarted: "Gc.Memprof.start: already started.",
  /** `stop` with no profile sampling on the domain. */
  noProfileRunning: "Gc.Memprof.stop: no profile running.",
  /** `discard` of a profile that still samples. */
  notStopped: "Gc.Memprof.discard: profile not stopped.",
  /** `discard` of a discarded profile. */
  alreadyDiscarded: "Gc.Memprof.discard: profile already discarded.",
} as const;

/** memprof.c's `Sampling(config)`: a profile exists and its status is sampling. */
export function isSampling(config: Profile | null): boolean {
  return config !== null && config.status === ProfileStatus.SAMPLING;
}
