/**
 * Confidence intervals for the estimates of a sampled trace, from memprof's sampling model:
 * each word (header included) is sampled independently with probability λ, the trace's sample
 * rate, so the samples of any set of blocks of `n` words in all are Binomial(n, λ). The interval
 * for `n` is exact (see `_interval.js`): no normal approximation, whatever the count. Bytes are
 * words × bytes per word, as the estimates are (samples ÷ λ × bytes per word).
 * @module
 */
import * as core from "./_interval.js";
import { TraceAnalysisError } from "./errors.ts";
import type { ProfileData } from "./profile.ts";

/** The confidence of intervals when none is given: 0.95. */
export const DEFAULT_CONFIDENCE = 0.95;

/** P(X ≤ s) for X ~ Binomial(n, p), exact (summed term by term in log space). */
export const binomialCdf: (s: number, n: number, p: number) => number = core.binomialCdf;

/** P(X ≥ s) for X ~ Binomial(n, p), exact. */
export const binomialUpper: (s: number, n: number, p: number) => number = core.binomialUpper;

/** Counts (and binomial variances) up to which tails are summed exactly: 2^16. Beyond, the
 * normal limit with continuity correction (within about 1/2,000 of the interval's width of the
 * exact bounds at the switch, closer beyond, for rates up to 0.3). */
export const EXACT_LIMIT: number = core.EXACT_LIMIT;

/** ln Γ(x) for x ≥ 0.5. */
export const logGamma: (x: number) => number = core.logGamma;

/**
 * The exact interval `[low, high]` of the number of words behind `samples` samples at `rate`:
 * the integers `n` under which neither P(X ≥ samples) nor P(X ≤ samples) is below
 * (1 − confidence) / 2. Throws a `RangeError` for a rate outside (0, 1] or a confidence
 * outside (0, 1).
 *
 * @example Three samples at rate 1e-4
 * ```ts
 * import { wordsInterval } from "./intervals.ts";
 * import assert from "node:assert/strict";
 *
 * const [low, high] = wordsInterval(3, 1e-4, 0.95);
 * assert.ok(low < 30_000 && 30_000 < high); // the estimate, 3 / 1e-4 words, is inside
 * ```
 */
export const wordsInterval: (
  samples: number,
  rate: number,
  confidence: number,
) => [number, number] = core.wordsInterval;

/** The interval at `otherRate` for what `samples` at `rate` estimate, had the other trace's
 * samples come out at their expected number (`round(samples ÷ rate × otherRate)`). */
export const whatIfInterval: (
  samples: number,
  rate: number,
  otherRate: number,
  confidence: number,
) => [number, number] = core.whatIfInterval;

/** `confidence` checked: a number in (0, 1) (a {@linkcode TraceAnalysisError} otherwise). */
export function checkConfidence(confidence: number): number {
  if (!(confidence > 0 && confidence < 1)) {
    throw new TraceAnalysisError("confidence", `must be a number in (0, 1); got ${confidence}`);
  }
  return confidence;
}

/** A decimal number from the command line (`0.95`, `1e-5`), or a {@linkcode TraceAnalysisError}
 * naming `option`. */
export function parseNumber(option: string, text: string): number {
  const s = text.trim();
  const v = Number(s);
  if (s === "" || !Number.isFinite(v)) {
    throw new TraceAnalysisError(option, `expected a number, got '${text}'`);
  }
  return v;
}

/** `rate` checked for `--what-if-rate`: a number in (0, 1]. */
export function checkRate(rate: number, option = "what-if-rate"): number {
  if (!(rate > 0 && rate <= 1)) {
    throw new TraceAnalysisError(option, `must be a sample rate in (0, 1]; got ${rate}`);
  }
  return rate;
}

/** Whether a profile's rate allows intervals (a rate in (0, 1]; a hostile trace may say 0). */
export function hasIntervals(data: ProfileData): boolean {
  const r = data.info.sampleRate;
  return r > 0 && r <= 1;
}

/** Interval bounds in bytes, or nulls where the trace's rate allows none. */
export interface BytesInterval {
  /** Lower bound, bytes. */
  low: number | null;
  /** Upper bound, bytes. */
  high: number | null;
}

/** The interval in bytes of `samples` samples of `data` (at `otherRate` for a what-if). */
export function bytesInterval(
  data: ProfileData,
  samples: number,
  confidence: number,
  otherRate?: number,
): BytesInterval {
  if (!hasIntervals(data) || !Number.isInteger(samples) || samples < 0) {
    return { low: null, high: null };
  }
  const wb = data.info.wordSize / 8;
  const [lo, hi] = otherRate === undefined
    ? wordsInterval(samples, data.info.sampleRate, confidence)
    : whatIfInterval(samples, data.info.sampleRate, otherRate, confidence);
  return Number.isFinite(lo) && Number.isFinite(hi)
    ? { low: lo * wb, high: hi * wb }
    : { low: null, high: null };
}

/** The estimate of `samples` samples at `rate` of `wordSize`-bit words, in bytes, with its
 * interval (nulls when the rate is not in (0, 1], as a hostile trace may say). */
export function estimateWithInterval(
  samples: number,
  rate: number,
  wordSize: number,
  confidence: number,
): { bytes: number | null; low: number | null; high: number | null } {
  if (!(rate > 0 && rate <= 1) || !Number.isInteger(samples) || samples < 0) {
    return { bytes: null, low: null, high: null };
  }
  const wb = wordSize / 8;
  const [lo, hi] = wordsInterval(samples, rate, confidence);
  return Number.isFinite(lo) && Number.isFinite(hi)
    ? { bytes: (samples / rate) * wb, low: lo * wb, high: hi * wb }
    : { bytes: (samples / rate) * wb, low: null, high: null };
}

/** How the intervals are computed, for the outputs' metadata. */
export const INTERVAL_METHOD: string =
  "exact binomial: samples ~ Binomial(words, sample rate), words inverted by both tails";
