/**
 * The loop of the fixtures/memprof_exact programs (tests/fixtures/memprof_exact): after a minor
 * collection, a profile at rate 0.01 with no callstacks, whose tracker logs into preallocated
 * arrays and returns None (it allocates nothing), runs 20,000 iterations of one allocation,
 * then is stopped and discarded.
 * @module
 */
import { cb, type ScenarioBuilder } from "../lib/scenario/mod.ts";

/** The fixture program's loop around `allocate`, one iteration's allocation. */
export function exactLoop(s: ScenarioBuilder, allocate: () => void): void {
  const main = s.main;
  main.minorGc();
  const p = main.memprof.start({
    samplingRate: 0.01,
    callstackSize: 0,
    tracker: { allocMinor: cb.none(), allocMajor: cb.none() },
  });
  main.repeat(20_000, allocate);
  main.memprof.stop();
  main.memprof.discard(p);
}
