/**
 * Re-encoding a trace: decode every event and write it back through the multiplexed writer,
 * keeping the pid and start time (memtrace's `test/copy.ml`). A v3 trace comes out identical.
 * @module
 */
import type { Reader } from "./reader.ts";
import type { TraceSink } from "./sink.ts";
import { MultiplexedWriter } from "./writer.ts";
import type { LocationCode } from "./types.ts";

/** Copies every event of `reader` to `sink`; returns the number of events. */
export function copyTrace(reader: Reader, sink: TraceSink): number {
  const info = reader.info;
  const w = MultiplexedWriter.create(sink, info, { getpid: () => info.pid });
  const lookup = (c: LocationCode) => reader.lookupLocationCode(c);
  const start = info.startTime;
  let n = 0;
  reader.iter((dt, ev) => {
    w.putEvent(lookup, start + dt, ev);
    n++;
  });
  w.flush();
  return n;
}
