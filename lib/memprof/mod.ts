/**
 * A port of OCaml 5.3's memprof.c (`Gc.Memprof`): {@linkcode MemprofDomain} is one domain's
 * memprof state (its `start`, `stop`, sampling and callbacks), {@linkcode Profile} a started
 * profile, {@linkcode MemprofRng} the bit-exact sampling generator.
 *
 * Internals (entry tables, orphan tables, invariant checkers) live in their own files and are
 * not part of this entry point.
 *
 * @example Start a profile in the simulated runtime and sample allocations
 * ```ts
 * import { Runtime } from "../runtime/mod.ts";
 * import { type AllocationInfo, AllocationSource, ProfileStatus } from "./mod.ts";
 * import assert from "node:assert/strict";
 *
 * const rt = new Runtime();
 * const d = rt.mainDomain;
 * const seen: AllocationInfo[] = [];
 * const profile = d.memprofStart({
 *   samplingRate: 1, // every word sampled
 *   callstackSize: 0,
 *   tracker: { allocMinor: (info) => void seen.push(info) },
 * });
 * d.alloc(3);
 * d.memprofStop();
 * assert(seen.length === 1 && seen[0].nSamples === 4); // 3 words + header
 * assert(seen[0].source === AllocationSource.NORMAL);
 * assert(profile.status === ProfileStatus.STOPPED);
 * ```
 * @module
 */

export {
  BlockedOutsideResumableRun,
  Blocking,
  type CallbackResult,
  discard,
  type ExnResult,
  MemprofDomain,
  type MemprofHost,
  MemprofShared,
  MemprofThread,
  type Resumable,
  runToEnd,
  type StartOptions,
} from "./memprof.ts";
export {
  type AllocationInfo,
  AllocationSource,
  isSampling,
  Profile,
  type ProfileParams,
  ProfileStatus,
  type Tracker,
} from "./profile.ts";
export { OCamlException, OCamlFailure, OCamlInvalidArgument, ThreadExit } from "./errors.ts";
export { MemprofRng, oneLog1mLambda } from "./rng.ts";
