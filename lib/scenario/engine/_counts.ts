/**
 * What a run counts for its summary (result.ts `RunSummary`): allocations and words, samples and
 * callbacks, exceptions, words the ring lost, and the loop the fixture logs' headers name. The
 * compiled steps add to it; only the summary (_outputs.ts) reads it.
 * @module
 */
import type { CallbackKind } from "../result.ts";

/** The counters of one run. */
export class RunCounts {
  /** Blocks allocated. */
  allocations = 0;
  /** Words allocated, headers included. */
  words = 0;
  /** Samples of the allocation callbacks. */
  samples = 0;
  /** Allocation callbacks so far (each callback's serial number). */
  serial = 0;
  /** Callbacks run, by kind. */
  readonly callbacks: Record<CallbackKind, number> = {
    allocMinor: 0,
    allocMajor: 0,
    promote: 0,
    deallocMinor: 0,
    deallocMajor: 0,
  };
  /** OCaml exceptions raised by callbacks (escaped or caught). */
  exceptions = 0;
  /** Words the ring lost (overwritten before the dump read them). */
  lostWords = 0;
  /** Minor collections before the first profile started. */
  minorsAtFirstStart = 0;
  /** The longest loop run so far and the minor collections during it (log headers). */
  mainLoop: { count: number; minors: number; domain: number } = { count: 0, minors: 0, domain: 0 };
}
