/**
 * memtrace's trace format: reading and writing `.ctf` files byte-compatible with Jane Street's
 * memtrace (format v3 written; v1–v3 read).
 *
 * ```ts
 * import { Reader } from "./mod.ts";
 * const r = Reader.open("trace.ctf");
 * r.iter((dt, ev) => console.log(dt, ev.toString((c) => r.lookupLocationCode(c))));
 * ```
 * @module
 */
export * from "./types.ts";
export * from "./errors.ts";
export { MultiplexedWriter, OBJ_IDS_PER_CHUNK, Writer, type WriterOptions } from "./writer.ts";
export {
  type ByteSource,
  BytesSource,
  FileSource,
  type IterOptions,
  Reader,
  type ReaderOptions,
} from "./reader.ts";
export { FileSink, MemorySink, type TraceSink } from "./sink.ts";
export { MAX_PACKET_SIZE, MEMTRACE_VERSION } from "./packet.ts";
export { dumpTrace, dumpTraceToString, infoLines, type TraceStats, traceStats } from "./dump.ts";
export { copyTrace } from "./copy.ts";
