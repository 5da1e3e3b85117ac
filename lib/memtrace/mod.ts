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
  BYTES_PER_DOMAIN_CACHE,
  type ByteSource,
  BytesSource,
  type EventIteration,
  FileSource,
  formatLocationCodeHex,
  FREE_DOMAIN_CACHES,
  type IterOptions,
  MAX_BACKTRACE_FRAMES,
  READ_ALL_MAX_FRAMES,
  type ReadableStreamSync,
  type ReadAllOptions,
  Reader,
  type ReaderOptions,
  StreamSource,
} from "./reader.ts";
export { FileSink, MemorySink, type TraceSink } from "./sink.ts";
export { MAX_PACKET_SIZE, MEMTRACE_VERSION } from "./packet.ts";
export {
  DUMP_BASE_CHARS,
  DUMP_CHARS_PER_INPUT_BYTE,
  type DumpOptions,
  dumpTrace,
  dumpTraceTo,
  dumpTraceToString,
  infoLines,
  type TraceStats,
  traceStats,
} from "./dump.ts";
export { copyTrace, TraceCopier } from "./copy.ts";
