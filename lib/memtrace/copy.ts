/**
 * Re-encoding a trace: decode every event and write it back through the multiplexed writer,
 * keeping the pid and start time (memtrace's `test/copy.ml`). A v3 trace comes out identical.
 *
 * Where memtrace's copy would stop with `Invalid_argument` on a trace its reader accepted, the
 * copy raises {@linkcode MemtraceFormatError} (or {@linkcode MemtraceLimitError}) naming the
 * event's offset instead: a code used without a location definition, allocation ids that
 * memtrace's writer would not have given, trace info too large for a v3 packet.
 * {@linkcode EventCopier} makes these checks event by event, for tools that write another trace
 * from a reader's (memtrace_tools' subsample runs every input event through one).
 * @module
 */
import {
  type EventIteration,
  type LocatedLocations,
  locationLookup,
  type Reader,
} from "./reader.ts";
import type { TraceSink } from "./sink.ts";
import { MultiplexedWriter } from "./writer.ts";
import { MemtraceArgumentError, MemtraceFormatError, MemtraceLimitError } from "./errors.ts";
import { MAX_PACKET_SIZE } from "./packet.ts";
import type { Event, EventView, Info, Location, LocationCode, Timedelta } from "./types.ts";

/** What {@linkcode EventCopier} reads from: a {@linkcode Reader} is one. */
export interface CopySource extends LocatedLocations {
  /** The trace's metadata. */
  readonly info: Info;
}

/** A sink that drops every packet: for {@linkcode EventCopier} used as a check only. */
export const DISCARD_SINK: TraceSink = { write() {} };

/**
 * Writes a reader's events, as they are delivered, through a {@linkcode MultiplexedWriter}
 * keeping the trace's info (pid and start time included), with copy's checks: the info must fit
 * a v3 packet ({@linkcode MemtraceLimitError} at offset 0), every code used must be defined and
 * every allocation must carry the id the writer gives ({@linkcode MemtraceFormatError} at the
 * event's offset). Over {@linkcode DISCARD_SINK}, it checks that a trace can be copied.
 */
export class EventCopier {
  readonly #w: MultiplexedWriter;
  readonly #src: CopySource;
  readonly #lookup: (code: LocationCode) => readonly Location[];
  readonly #start: number;

  /** Writes the trace-info packet of `src`'s trace to `sink`. */
  constructor(src: CopySource, sink: TraceSink) {
    this.#src = src;
    const info = src.info;
    this.#start = info.startTime;
    this.#lookup = locationLookup(src);
    try {
      this.#w = MultiplexedWriter.create(sink, info, { getpid: () => info.pid });
    } catch (e) {
      if (e instanceof MemtraceArgumentError && e.message.startsWith("Trace.create: ")) {
        throw new MemtraceLimitError(
          `the trace info does not fit in a ${MAX_PACKET_SIZE}-byte v3 packet`,
          MAX_PACKET_SIZE,
          0,
          src.fileName,
        );
      }
      throw e;
    }
  }

  /** Writes `ev`, delivered by the source at `time` since the trace start (during the source's
   * iteration: errors name the event's offset). */
  put(time: Timedelta, ev: Event | Readonly<EventView>): void {
    try {
      this.#w.putEvent(this.#lookup, this.#start + time, ev);
    } catch (e) {
      if (e instanceof MemtraceArgumentError && e.message === "Incorrect allocation ID") {
        throw new MemtraceFormatError(
          `Incorrect allocation ID: the event has id ${ev.objId}`,
          this.#src.eventOffset(),
          this.#src.fileName,
        );
      }
      throw e;
    }
  }

  /** Writes out what is buffered. */
  flush(): void {
    this.#w.flush();
  }
}

/**
 * A copy in progress, advanced a number of packets at a time (so that a caller can let its
 * event loop run, e.g. to handle signals). {@linkcode copyTrace} runs one to the end.
 */
export class TraceCopier {
  /** Events copied so far. */
  events = 0;
  readonly #it: EventIteration;
  readonly #copier: EventCopier;
  #finished = false;

  /** Writes the trace-info packet of `reader`'s trace to `sink`; events follow with
   * {@linkcode advance}. */
  constructor(reader: Reader, sink: TraceSink) {
    const copier = this.#copier = new EventCopier(reader, sink);
    this.#it = reader.iterateViews((ev) => {
      copier.put(ev.time, ev);
      this.events++;
    });
  }

  /** Copies up to `maxPackets` more packets of events (default: all); returns false once the
   * copy is complete (the last events flushed to the sink). */
  advance(maxPackets = Infinity): boolean {
    if (this.#finished) return false;
    if (this.#it.advance(maxPackets)) return true;
    this.#copier.flush();
    this.#finished = true;
    return false;
  }
}

/** Copies every event of `reader` to `sink`; returns the number of events. */
export function copyTrace(reader: Reader, sink: TraceSink): number {
  const c = new TraceCopier(reader, sink);
  c.advance();
  return c.events;
}
