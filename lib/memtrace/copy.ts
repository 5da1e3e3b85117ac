/**
 * Re-encoding a trace: decode every event and write it back through the multiplexed writer,
 * keeping the pid and start time (memtrace's `test/copy.ml`). A v3 trace comes out identical.
 *
 * Where memtrace's copy would stop with `Invalid_argument` on a trace its reader accepted, the
 * copy raises {@linkcode MemtraceFormatError} (or {@linkcode MemtraceLimitError}) naming the
 * event's offset instead: a code used without a location definition, allocation ids that
 * memtrace's writer would not have given, trace info too large for a v3 packet.
 * @module
 */
import { type EventIteration, locationLookup, type Reader } from "./reader.ts";
import type { TraceSink } from "./sink.ts";
import { MultiplexedWriter } from "./writer.ts";
import { MemtraceArgumentError, MemtraceFormatError, MemtraceLimitError } from "./errors.ts";
import { MAX_PACKET_SIZE } from "./packet.ts";

/**
 * A copy in progress, advanced a number of packets at a time (so that a caller can let its
 * event loop run, e.g. to handle signals). {@linkcode copyTrace} runs one to the end.
 */
export class TraceCopier {
  /** Events copied so far. */
  events = 0;
  readonly #it: EventIteration;
  readonly #w: MultiplexedWriter;
  readonly #reader: Reader;
  #finished = false;

  /** Writes the trace-info packet of `reader`'s trace to `sink`; events follow with
   * {@linkcode advance}. */
  constructor(reader: Reader, sink: TraceSink) {
    this.#reader = reader;
    const info = reader.info;
    try {
      this.#w = MultiplexedWriter.create(sink, info, { getpid: () => info.pid });
    } catch (e) {
      if (e instanceof MemtraceArgumentError && e.message.startsWith("Trace.create: ")) {
        throw new MemtraceLimitError(
          `the trace info does not fit in a ${MAX_PACKET_SIZE}-byte v3 packet`,
          MAX_PACKET_SIZE,
          0,
          reader.fileName,
        );
      }
      throw e;
    }
    const lookup = locationLookup(reader);
    const w = this.#w;
    const start = info.startTime;
    this.#it = reader.iterateViews((ev) => {
      try {
        w.putEvent(lookup, start + ev.time, ev);
      } catch (e) {
        if (e instanceof MemtraceArgumentError && e.message === "Incorrect allocation ID") {
          this.#fail(`Incorrect allocation ID: the event has id ${ev.objId}`);
        }
        throw e;
      }
      this.events++;
    });
  }

  /** Copies up to `maxPackets` more packets of events (default: all); returns false once the
   * copy is complete (the last events flushed to the sink). */
  advance(maxPackets = Infinity): boolean {
    if (this.#finished) return false;
    if (this.#it.advance(maxPackets)) return true;
    this.#w.flush();
    this.#finished = true;
    return false;
  }

  /** Throws the format error `check` at the event being copied. */
  #fail(check: string): never {
    throw new MemtraceFormatError(check, this.#reader.eventOffset(), this.#reader.fileName);
  }
}

/** Copies every event of `reader` to `sink`; returns the number of events. */
export function copyTrace(reader: Reader, sink: TraceSink): number {
  const c = new TraceCopier(reader, sink);
  c.advance();
  return c.events;
}
