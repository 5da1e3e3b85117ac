/**
 * How long the simulated runtime's collections take: a deterministic cost model that advances
 * the virtual clock inside each phase it reports to runtime_events, so that a scenario's ring
 * says something about GC time (and the trace's later events come later).
 *
 * The defaults were fitted on rings of a real OCaml 5.3.0 program (one domain, amd64; minor
 * collections promoting 0 to 64,000 words, major slices of up to 100,000 words of work), read
 * with lib/runtime_events: a minor collection costs about 1.9 µs plus 2 ns per word promoted; a
 * major slice about 80 ns plus 0.5 ns per word swept or marked; a cycle's end about 11 µs (its minor
 * collection apart). docs/runtime_events.md gives the figures and how close the simulation
 * comes. Scenarios can override any of them (`settings.gcTime`).
 *
 * @module
 */

import type { RuntimeEventsSink } from "./events.ts";

/** Costs in nanoseconds. */
export interface GcTimeModel {
  /** A minor collection's fixed part (its phases, the stop-the-world around it). */
  readonly minorFixedNs: number;
  /** Per word promoted (headers included). */
  readonly perPromotedWordNs: number;
  /** Per remembered-set entry. */
  readonly perRememberedNs: number;
  /** A major slice's fixed part. */
  readonly sliceFixedNs: number;
  /** Per word swept. */
  readonly perSweptWordNs: number;
  /** Per word marked. */
  readonly perMarkedWordNs: number;
  /** A phase change's stop-the-world. */
  readonly phaseChangeNs: number;
  /** A cycle's end: heap cycling and marking the roots (its minor collection apart). */
  readonly cycleEndNs: number;
  /** Each memprof phase (scanning or cleaning a domain's entries). */
  readonly memprofPhaseNs: number;
  /** Writing one event to the ring (so that no two of the runtime's events share a time). */
  readonly perEventNs: number;
}

/** The fitted defaults (see the module doc). */
export const DEFAULT_GC_TIME: GcTimeModel = {
  minorFixedNs: 1_850,
  perPromotedWordNs: 2,
  perRememberedNs: 3,
  sliceFixedNs: 80,
  perSweptWordNs: 0.5,
  perMarkedWordNs: 0.5,
  phaseChangeNs: 60,
  cycleEndNs: 11_000,
  memprofPhaseNs: 50,
  perEventNs: 30,
};

/** A named phase of a minor collection's fixed part (see {@linkcode GcClock.minorShare}). */
export type MinorPart =
  | "globalRoots"
  | "finalizersOldify"
  | "memprofRoots"
  | "rememberedSetPromote"
  | "rememberedSet"
  | "localRootsPromote"
  | "localRoots"
  | "memprofClean"
  | "finalized"
  | "finalizersAdmin"
  | "clear";

/** Fractions of a minor collection's fixed part spent in each of its phases (from the fit). */
const MINOR_SHARES: Readonly<Record<MinorPart, number>> = {
  globalRoots: 0.03,
  finalizersOldify: 0.02,
  memprofRoots: 0.03,
  rememberedSetPromote: 0.02,
  rememberedSet: 0.12,
  localRootsPromote: 0.02,
  localRoots: 0.09,
  memprofClean: 0.03,
  finalized: 0.02,
  finalizersAdmin: 0.02,
  clear: 0.02,
};

/**
 * A sink that passes events on and spends {@linkcode GcTimeModel.perEventNs} after each (in a
 * real ring, consecutive events of a collection are some 30 ns apart).
 */
export class TimedSink implements RuntimeEventsSink {
  readonly #sink: RuntimeEventsSink;
  readonly #spend: () => void;
  /** Events go to `sink`; `spend` is called after each while the sink is active. */
  constructor(sink: RuntimeEventsSink, spend: () => void) {
    this.#sink = sink;
    this.#spend = spend;
  }
  /** Passes a phase's beginning on. */
  beginPhase(domain: number, phase: number): void {
    this.#sink.beginPhase(domain, phase);
    if (this.#sink.active !== false) this.#spend();
  }
  /** Passes a phase's end on. */
  endPhase(domain: number, phase: number): void {
    this.#sink.endPhase(domain, phase);
    if (this.#sink.active !== false) this.#spend();
  }
  /** Passes a counter on. */
  counter(domain: number, counter: number, value: number): void {
    this.#sink.counter(domain, counter, value);
    if (this.#sink.active !== false) this.#spend();
  }
  /** Passes a lifecycle event on. */
  lifecycle(domain: number, event: number, data?: number): void {
    this.#sink.lifecycle(domain, event, data);
  }
}

/** The part of a minor collection's fixed cost outside its named phases. */
const MINOR_REST_SHARE = 1 - Object.values(MINOR_SHARES).reduce((a, b) => a + b, 0);

/** A sink that timestamps with the virtual clock, and the clock's advance. */
export class GcClock {
  readonly #sink: RuntimeEventsSink;
  readonly #advance: (ns: number) => void;
  /** The cost model. */
  readonly model: GcTimeModel;
  #carry = 0;

  /** Phases go to `sink`; `advance` moves the virtual clock by whole nanoseconds. */
  constructor(sink: RuntimeEventsSink, advance: (ns: number) => void, model: GcTimeModel) {
    this.#sink = sink;
    this.#advance = advance;
    this.model = model;
  }

  /** Spends `ns` nanoseconds (fractions carried to the next call). */
  spend(ns: number): void {
    const total = ns + this.#carry;
    const whole = Math.floor(total);
    this.#carry = total - whole;
    if (whole > 0) this.#advance(whole);
  }

  /** A phase of `ns` nanoseconds with nothing inside. */
  phase(domain: number, phase: number, ns: number): void {
    this.#sink.beginPhase(domain, phase);
    this.spend(ns);
    this.#sink.endPhase(domain, phase);
  }

  /** A phase of `ns` nanoseconds in which `inside` runs (and may write events) first. */
  phaseAround(domain: number, phase: number, ns: number, inside: () => void): void {
    this.#sink.beginPhase(domain, phase);
    inside();
    this.spend(ns);
    this.#sink.endPhase(domain, phase);
  }

  /** The share of the minor collection's fixed part spent in `part`. */
  minorShare(part: MinorPart): number {
    return this.model.minorFixedNs * MINOR_SHARES[part];
  }

  /** What is left of the minor collection's fixed part outside its named phases. */
  minorRest(): number {
    return this.model.minorFixedNs * MINOR_REST_SHARE;
  }
}
