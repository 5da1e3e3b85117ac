/**
 * The interface through which the simulated runtime reports runtime_events (phases, counters,
 * lifecycle events), with OCaml 5.3's numeric ordinals from lib/runtime_events/enums.ts.
 *
 * @module
 */

export { Lifecycle, RuntimeCounter, RuntimePhase } from "../runtime_events/enums.ts";

/** Receives the runtime's events. lib/runtime_events can implement it to fill a ring. */
export interface RuntimeEventsSink {
  /** A phase begins on a domain (`CAML_EV_BEGIN`). */
  beginPhase(domainId: number, phase: number): void;
  /** A phase ends (`CAML_EV_END`). */
  endPhase(domainId: number, phase: number): void;
  /** A counter event (`CAML_EV_COUNTER`). */
  counter(domainId: number, counter: number, value: number): void;
  /** A lifecycle event (`CAML_EV_LIFECYCLE`), with its optional payload (e.g. a pid). */
  lifecycle(domainId: number, event: number, data?: number): void;
  /** Whether events are being recorded now (writing one then takes time; default true). */
  readonly active?: boolean;
}

/** A sink that drops everything (the default). */
export const NULL_SINK: RuntimeEventsSink = {
  beginPhase() {},
  endPhase() {},
  counter() {},
  lifecycle() {},
};

/** One recorded event of {@linkcode RecordingSink}. */
export type RecordedEvent =
  | { kind: "begin" | "end"; domain: number; phase: number }
  | { kind: "counter"; domain: number; counter: number; value: number }
  | { kind: "lifecycle"; domain: number; event: number; data?: number };

/** A sink that keeps every event in an array (for tests and summaries). */
export class RecordingSink implements RuntimeEventsSink {
  /** Events in emission order. */
  readonly events: RecordedEvent[] = [];
  /** Records a phase beginning. */
  beginPhase(domain: number, phase: number): void {
    this.events.push({ kind: "begin", domain, phase });
  }
  /** Records a phase end. */
  endPhase(domain: number, phase: number): void {
    this.events.push({ kind: "end", domain, phase });
  }
  /** Records a counter. */
  counter(domain: number, counter: number, value: number): void {
    this.events.push({ kind: "counter", domain, counter, value });
  }
  /** Records a lifecycle event. */
  lifecycle(domain: number, event: number, data?: number): void {
    this.events.push(
      data === undefined ? { kind: "lifecycle", domain, event } : {
        kind: "lifecycle",
        domain,
        event,
        data,
      },
    );
  }
}
