/**
 * memtrace's `subsample` tool (bin/subsample.ml): a trace as if sampled at a rate `factor`
 * times lower, optionally restricted to a window of time; byte-identical to memtrace's output.
 *
 * Each sample of each allocation inside the window is kept when OCaml's `Random.int factor`
 * returns 0, drawn from OCaml 5's default (unseeded) generator — LXM seeded as
 * `Random.State.make [| 314159265 |]` — one draw per sample, in file order. An allocation with
 * no sample left is dropped; kept ones are renumbered with the writer's next id, and promotions
 * and collections are kept for kept objects only. The sample rate is divided by `factor`; pid,
 * start time and the other metadata are kept.
 *
 * The window is in whole seconds since the trace start (µs ÷ 1,000,000, rounded toward zero),
 * half-open: `start ≤ s < end`. Unlike memtrace's tool, which takes any integer and fails with
 * `Invalid_argument("Random.int")` at the first sample when the factor is not in
 * [1, 2^30 − 1], we check the arguments first ({@linkcode TraceToolError}).
 *
 * Where we differ from memtrace's tool, so that hostile input cannot make it run for ever or
 * write a trace no reader takes:
 *
 * - An allocation of more than {@linkcode EXACT_DRAW_SAMPLES} samples (memtrace's tool draws
 *   once per sample: 2^53 − 1 draws would take centuries) keeps a Binomial(nsamples, 1/factor)
 *   number of them, one variate drawn by inversion or BTPE from uniforms taken from the same
 *   generator (53 bits of each 64-bit output). Its distribution is that of memtrace's count, but
 *   not its value, and the generator's state after it differs; traces whose allocations all
 *   have at most that many samples (every real trace of the fixtures has at most 6) come out
 *   byte-identical to memtrace's.
 * - Every input event goes through lib/memtrace's {@linkcode EventCopier} first: what `copy`
 *   refuses — trace info too large for a v3 packet, a code used but never defined, allocation
 *   ids memtrace's writer would not give — stops the subsample with copy's typed error at the
 *   event. Renumbered ids then follow the writer's, except a promotion written by another domain
 *   than the object's (never the case in a real trace): when renumbering would make it
 *   unreadable, it stops with {@linkcode TraceToolError}.
 * @module
 */
import {
  AllocEvent,
  CollectEvent,
  DISCARD_SINK,
  type Event,
  EventCopier,
  type Info,
  locationLookup,
  MemtraceArgumentError,
  MultiplexedWriter,
  PromoteEvent,
  type TraceSink,
} from "../memtrace/mod.ts";
import { binomial } from "./_binomial.ts";
import { OCamlRandomState } from "../tracer/mod.ts";
import { ShadowingMap } from "./_hashtbl.ts";
import { TraceToolError } from "./errors.ts";
import type { ToolPass, TraceInput } from "./input.ts";

/** The largest factor `Random.int` accepts: 2^30 − 1. */
export const MAX_SUBSAMPLE_FACTOR = 0x3fffffff;

/** Allocations of at most this many samples are subsampled as memtrace does, one
 * `Random.int factor` per sample; larger ones by one binomial variate (see the module's notes).
 * At about 1 µs per draw, this bounds the draws to 256 per allocation event (an event takes at
 * least 12 bytes of input). */
export const EXACT_DRAW_SAMPLES = 256;

/** The seed of OCaml 5's default `Random` state (`Random.State.make [| 314159265 |]`). */
export const OCAML_DEFAULT_RANDOM_SEED: readonly number[] = Object.freeze([314159265]);

/** Options of {@linkcode subsample}. */
export interface SubsampleOptions {
  /** Keep each sample with probability 1/factor: an integer from 1 to 2^30 − 1. */
  factor: number;
  /** Keep only allocations whose time, in whole seconds since the trace start, is in
   * [start, end). Default: all. */
  window?: { start: number; end: number };
  /** The generator to draw from. Default: a fresh OCaml 5 default state, as a new process has. */
  random?: OCamlRandomState;
  /** Called with every event written, as the output trace holds it (µs since the trace start,
   * ids renumbered, the kept samples): lets a caller analyse the output while it is written
   * (`trace subsample` reports how the top sites' intervals and ranks change). */
  onOutputEvent?: (now: number, ev: Event) => void;
}

/** Counts of a {@linkcode subsample} run. */
export interface SubsampleStats {
  /** Allocations read. */
  allocations: number;
  /** Allocations written (at least one sample kept). */
  keptAllocations: number;
  /** Samples read, over all allocations. */
  samples: number;
  /** Samples written. */
  keptSamples: number;
  /** Events written (allocations, promotions, collections). */
  events: number;
}

function checkInteger(what: string, v: number, min: number, max: number): void {
  if (!(Number.isInteger(v) && v >= min && v <= max)) {
    throw new TraceToolError(
      "subsample",
      `${what} must be an integer from ${min} to ${max}, got ${v}`,
    );
  }
}

/** Writes to `sink` the trace of `reader` subsampled by `options.factor`, exactly as memtrace's
 * `subsample` writes it. */
export function subsample(
  reader: TraceInput,
  sink: TraceSink,
  options: SubsampleOptions,
): SubsampleStats {
  const pass = startSubsample(reader, sink, options);
  reader.iter(pass.onEvent);
  return pass.finish();
}

/** {@linkcode subsample} as a pass the caller feeds with `reader`'s events (checking the options
 * and writing the trace info at once). */
export function startSubsample(
  reader: TraceInput,
  sink: TraceSink,
  options: SubsampleOptions,
): ToolPass<SubsampleStats> {
  const factor = options.factor;
  checkInteger("the factor", factor, 1, MAX_SUBSAMPLE_FACTOR);
  let start = -Infinity, end = Infinity;
  if (options.window !== undefined) {
    ({ start, end } = options.window);
    checkInteger("the window start", start, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
    checkInteger("the window end", end, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
    if (start > end) {
      throw new TraceToolError(
        "subsample",
        `the window starts (${start} s) after it ends (${end} s)`,
      );
    }
  }
  const rng = options.random ?? OCamlRandomState.make(OCAML_DEFAULT_RANDOM_SEED);
  const uniform = () => Number(rng.next() >> 11n) / 2 ** 53;
  // Copy's checks, on every input event (and first on the trace info: a typed error at 0).
  const check = new EventCopier(reader, DISCARD_SINK);
  const info: Info = { ...reader.info, sampleRate: reader.info.sampleRate / factor };
  const pid = info.pid;
  const w = MultiplexedWriter.create(sink, info, { getpid: () => pid });
  const lookup = locationLookup(reader);
  const remap = new ShadowingMap<number, number>();
  const observe = options.onOutputEvent;
  const stats: SubsampleStats = {
    allocations: 0,
    keptAllocations: 0,
    samples: 0,
    keptSamples: 0,
    events: 0,
  };
  const onEvent = (now: number, ev: Event) => {
    check.put(now, ev);
    const time = info.startTime + now;
    if (ev.kind === "alloc") {
      stats.allocations++;
      stats.samples += ev.nsamples;
      const seconds = (now - (now % 1_000_000)) / 1_000_000; // Int64.div: toward zero
      if (!(start <= seconds && seconds < end)) return;
      let samples = 0;
      if (ev.nsamples <= EXACT_DRAW_SAMPLES) {
        for (let i = 1; i <= ev.nsamples; i++) if (rng.int(factor) === 0) samples++;
      } else samples = binomial(ev.nsamples, 1 / factor, uniform);
      if (samples === 0) return;
      const id = w.nextAllocId(ev.domain);
      remap.add(ev.objId, id);
      const out = new AllocEvent(
        id,
        ev.length,
        ev.domain,
        samples,
        ev.source,
        ev.backtraceBuffer,
        ev.backtraceLength,
        ev.commonPrefix,
      );
      w.putEvent(lookup, time, out);
      observe?.(now, out);
      stats.keptAllocations++;
      stats.keptSamples += samples;
    } else {
      const id = remap.find(ev.objId);
      if (id === undefined) return;
      if (ev.kind === "promote") {
        const out = new PromoteEvent(id, ev.domain);
        try {
          w.putEvent(lookup, time, out);
          observe?.(now, out);
        } catch (e) {
          if (!(e instanceof MemtraceArgumentError && e.message === "Invalid ID in promotion")) {
            throw e;
          }
          throw new TraceToolError(
            "subsample",
            `object ${ev.objId} is promoted by domain ${ev.domain}, which did not allocate it: ` +
              `renumbered as ${id}, its promotion cannot be written (memtrace's writer refuses ` +
              `it too: Invalid ID in promotion)`,
            reader.fileName,
            reader.eventOffset(),
          );
        }
      } else {
        remap.remove(ev.objId);
        const out = new CollectEvent(id, ev.domain);
        w.putEvent(lookup, time, out);
        observe?.(now, out);
      }
    }
    stats.events++;
  };
  return {
    onEvent,
    finish() {
      w.flush();
      return stats;
    },
  };
}
