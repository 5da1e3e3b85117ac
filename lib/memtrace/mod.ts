/**
 * memtrace's trace format: reading and writing `.ctf` files byte-compatible with Jane Street's
 * memtrace (format v3 written; v1–v3 read). {@linkcode Reader} and {@linkcode Writer} are the
 * main entry points; {@linkcode dumpTrace} prints a trace as memtrace's `dump` does.
 *
 * memtrace's allocation source (minor, major, external: the on-disk codes) is exported as
 * {@linkcode MemtraceAllocationSource}, distinct from memprof's `AllocationSource`.
 *
 * @example Write a trace to memory and read it back
 * ```ts
 * import { Location, MemorySink, MemtraceAllocationSource, Reader, Writer } from "./mod.ts";
 * import assert from "node:assert/strict";
 *
 * const sink = new MemorySink();
 * const w = Writer.create(sink, {
 *   sampleRate: 1e-4,
 *   wordSize: 64,
 *   executableName: "demo",
 *   hostName: "host",
 *   ocamlRuntimeParams: "",
 *   pid: 42n,
 *   initialDomain: 0,
 *   startTime: 1_700_000_000_000_000,
 *   context: undefined,
 * }, { getpid: () => 42n });
 * const here = [new Location("demo.ml", 3, 2, 20, "Demo.f")];
 * const id = w.putAlloc({ time: 1_700_000_000_000_010, length: 4, nsamples: 1, source: MemtraceAllocationSource.Minor, callstack: [1], decode: () => here });
 * w.putCollect(1_700_000_000_000_020, id);
 * w.close();
 *
 * const r = Reader.fromBytes(sink.bytes());
 * const lines: string[] = [];
 * r.iter((dt, ev) => lines.push(`${dt} ${ev.toString((c) => r.lookupLocationCode(c))}`));
 * r.close();
 * assert.equal(lines.length, 2);
 * assert.match(lines[0], /Demo\.f@demo\.ml:3:2-20/);
 * ```
 * @module
 */
export {
  AllocationSource,
  AllocEvent,
  CollectEvent,
  type DomainId,
  type Event,
  type EventView,
  type Info,
  Location,
  type LocationCode,
  type LocationLookup,
  MAIN_DOMAIN,
  MemtraceAllocationSource,
  type ObjId,
  PromoteEvent,
  Timedelta,
  Timestamp,
} from "./types.ts";
export {
  MemtraceArgumentError,
  MemtraceFormatError,
  MemtraceLimitError,
  PidChangedError,
} from "./errors.ts";
// The parent classes of MemtraceArgumentError (lib/util's OCaml exceptions), for `instanceof`.
export { OCamlException, OCamlInvalidArgument } from "../util/ocaml_exceptions.ts";
export {
  type AllocationToWrite,
  MultiplexedWriter,
  OBJ_IDS_PER_CHUNK,
  Writer,
  type WriterOptions,
} from "./writer.ts";
export {
  BYTES_PER_DOMAIN_CACHE,
  type ByteSource,
  BytesSource,
  type EventIteration,
  FILE_WINDOW_BYTES,
  FileSource,
  formatLocationCodeHex,
  FREE_DOMAIN_CACHES,
  type IterOptions,
  type LocatedLocations,
  locationLookup,
  MAX_BACKTRACE_FRAMES,
  MAX_NSAMPLES,
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
export { type CopySource, copyTrace, DISCARD_SINK, EventCopier, TraceCopier } from "./copy.ts";
