/**
 * memtrace's `strip_names` tool (bin/strip_names.ml): the trace without anything that names the
 * program — executable and host `<anonymous>`, pid 0, start time 0, no context, empty backtraces
 * (so no locations) — keeping event times, object ids, lengths, sample counts, sources and
 * domains, the sample rate, word size and GC parameters. Byte-identical to memtrace's output
 * (format v3).
 *
 * Object ids are written as they are, so they must be the ids a fresh writer hands out in the
 * same order; memtrace's tool fails with `Invalid_argument("Incorrect allocation ID")` on a trace
 * where they are not (for instance one whose first domain is not domain 0). We stop there with a
 * {@linkcode TraceToolError} naming the allocation.
 * @module
 */
import {
  AllocEvent,
  type Event,
  type Info,
  MAIN_DOMAIN,
  MemtraceArgumentError,
  MultiplexedWriter,
  type TraceSink,
} from "../memtrace/mod.ts";
import { TraceToolError } from "./errors.ts";
import type { ToolPass, TraceInput } from "./input.ts";

const NO_BACKTRACE = new Float64Array(0);

/** Writes to `sink` the anonymised trace of `reader`, as memtrace's `strip_names` does; returns
 * the number of events written. */
export function stripNames(reader: TraceInput, sink: TraceSink): number {
  const pass = startStripNames(reader, sink);
  reader.iter(pass.onEvent);
  return pass.finish();
}

/** {@linkcode stripNames} as a pass the caller feeds with `reader`'s events (writing the trace
 * info at once). */
export function startStripNames(reader: TraceInput, sink: TraceSink): ToolPass<number> {
  const src = reader.info;
  const info: Info = {
    sampleRate: src.sampleRate,
    wordSize: src.wordSize,
    ocamlRuntimeParams: src.ocamlRuntimeParams,
    executableName: "<anonymous>",
    hostName: "<anonymous>",
    pid: 0n,
    initialDomain: MAIN_DOMAIN,
    startTime: 0,
    context: undefined,
  };
  const w = MultiplexedWriter.create(sink, info, { getpid: () => 0n });
  const noLocations = (): never => {
    throw new Error("strip-names: a stripped event has no location to decode");
  };
  let n = 0;
  const onEvent = (time: number, ev: Event) => {
    let out: Event = ev;
    if (ev.kind === "alloc") {
      out = new AllocEvent(
        ev.objId,
        ev.length,
        ev.domain,
        ev.nsamples,
        ev.source,
        NO_BACKTRACE,
        0,
        0,
      );
    }
    try {
      w.putEvent(noLocations, info.startTime + time, out);
    } catch (e) {
      if (e instanceof MemtraceArgumentError && e.message === "Incorrect allocation ID") {
        throw new TraceToolError(
          "strip-names",
          `allocation ${ev.objId} of domain ${ev.domain} at ${time} µs does not have the id a ` +
            `writer gives it (memtrace's strip_names fails here too: Incorrect allocation ID)`,
          reader.fileName,
          reader.eventOffset(),
        );
      }
      throw e;
    }
    n++;
  };
  return {
    onEvent,
    finish() {
      w.flush();
      return n;
    },
  };
}
