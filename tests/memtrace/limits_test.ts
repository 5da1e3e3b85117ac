// Hostile input for the memtrace reader, dump and copy, one test per break found by the
// campaign of issue 11: every one ends in one typed error naming the offset, or reads within
// the documented limits (docs/memtrace.md, "Limits and errors").
import assert from "node:assert/strict";
import {
  AllocationSource,
  copyTrace,
  dumpTraceTo,
  dumpTraceToString,
  type Info,
  Location,
  type LocationCode,
  MAX_BACKTRACE_FRAMES,
  MAX_NSAMPLES,
  MemorySink,
  MemtraceArgumentError,
  MemtraceFormatError,
  MemtraceLimitError,
  Reader,
  Writer,
} from "../../lib/memtrace/mod.ts";
import { concat, parseTrace } from "./fuzz_harness.ts";
import edge from "../fixtures/memtrace/edge_writer_api.ctf" with { type: "bytes" };
import single from "../fixtures/memtrace/single_1e-4.ctf" with { type: "bytes" };

const INFO: Info = {
  sampleRate: 0.01,
  wordSize: 64,
  executableName: "exec",
  hostName: "host",
  ocamlRuntimeParams: "",
  pid: 42n,
  initialDomain: 0,
  startTime: 1_000_000,
  context: undefined,
};

const LOC = (c: LocationCode) => [new Location("a.ml", Math.abs(c) % 1000, 1, 2, `f${c}`)];

/** A trace written by our writer: `write` puts events on the writer. */
function trace(write: (w: Writer) => void, info: Info = INFO): Uint8Array {
  const sink = new MemorySink();
  const w = Writer.create(sink, info);
  write(w);
  w.close();
  return sink.bytes().slice();
}

/** The info packet of a trace (its first packet). */
function infoPacket(info: Info = INFO): Uint8Array {
  return trace(() => {}, info).slice(0, parseTrace(trace(() => {}, info))[0].size);
}

/** A v3 event packet of pid 42 holding `body`, with the dummy cache verifier. */
function packet(o: {
  domain?: number;
  time?: number;
  ids?: [number, number];
  body: Uint8Array;
}): Uint8Array {
  const h = new Uint8Array(68);
  const v = new DataView(h.buffer);
  v.setUint32(0, 0xc1fc1fc1, true);
  v.setUint32(4, (68 + o.body.length) * 8, true);
  v.setBigInt64(8, BigInt(o.time ?? INFO.startTime), true);
  v.setBigInt64(16, BigInt(o.time ?? INFO.startTime), true);
  v.setUint16(28, 3, true);
  v.setBigInt64(30, INFO.pid, true);
  v.setUint16(38, o.domain ?? 0, true);
  v.setUint16(40, 0xffff, true);
  v.setBigInt64(52, BigInt(o.ids?.[0] ?? 0), true);
  v.setBigInt64(60, BigInt(o.ids?.[1] ?? 0), true);
  return concat(h, o.body);
}

/** A short alloc event (1 word, one sample) at the start time: common prefix, then codewords. */
function shortAlloc(prefix: number, codewords: number[][]): Uint8Array {
  const vint = prefix < 253
    ? [prefix]
    : prefix <= 0xffff
    ? [253, prefix & 0xff, prefix >> 8]
    : [254, prefix & 0xff, (prefix >> 8) & 0xff, (prefix >> 16) & 0xff, prefix >>> 24];
  const word = (101 * 2 ** 25 + (INFO.startTime % 2 ** 25)) >>> 0;
  return new Uint8Array([
    word & 0xff,
    (word >> 8) & 0xff,
    (word >> 16) & 0xff,
    word >>> 24,
    ...vint,
    codewords.length,
    ...codewords.flat(),
  ]);
}

/** A codeword: bucket hit followed by `n` predicted frames (1 + n frames in all). */
const hit = (bucket: number, n: number) => [(bucket << 2) | 2, bucket >> 6, n];

function expectError<E extends MemtraceFormatError>(
  f: () => unknown,
  cls: new (...a: never[]) => E,
  check: string | RegExp,
  offset?: number,
): E {
  let err: unknown;
  try {
    f();
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof cls, `expected a ${cls.name}, got ${err}`);
  if (typeof check === "string") assert.equal(err.check, check);
  else assert.match(err.check, check);
  if (offset !== undefined) assert.equal(err.offset, offset, err.message);
  return err;
}

// ---------------------------------------------------------------------------------------------

Deno.test("a code without a location definition dumps as $code and stops a copy at its event", () => {
  for (const code of [42, -5]) {
    const full = trace((w) =>
      w.putAlloc({
        time: INFO.startTime,
        length: 2,
        nsamples: 1,
        source: AllocationSource.Minor,
        callstack: [code],
        decode: LOC,
      })
    );
    // Drop the packet of location definitions (the second): the code stays undefined.
    const pk = parseTrace(full);
    assert.equal(pk[1].events[0].code, 1, "the second packet defines locations");
    const bytes = concat(full.subarray(0, pk[1].off), full.subarray(pk[2].off));
    const event = parseTrace(bytes)[1].events[0].off;
    const dump = dumpTraceToString(Reader.fromBytes(bytes));
    assert.match(dump, new RegExp(`^0 0 0000000000 alloc 1 len=2 dom=0 {4}0: \\$${code}$`, "m"));
    // memtrace prints codes with %08x: a negative one as its 63-bit two's complement.
    const hex = code === 42 ? "0000002a" : "7ffffffffffffffb";
    expectError(
      () => copyTrace(Reader.fromBytes(bytes), new MemorySink()),
      MemtraceFormatError,
      `invalid location code ${hex}`,
      event,
    );
    const r = Reader.fromBytes(bytes);
    r.iter(() => {});
    assert.throws(() => r.lookupLocationCode(code), {
      name: "MemtraceArgumentError",
      message: `invalid location code ${hex}`,
    });
  }
});

Deno.test("copy refuses allocation ids memtrace's writer would not give, naming the event", () => {
  const bytes = trace((w) => {
    for (let i = 0; i < 3; i++) {
      w.putAlloc({
        time: INFO.startTime,
        length: 1,
        nsamples: 1,
        source: 0,
        callstack: [1, 2],
        decode: LOC,
      });
    }
  });
  const pk = parseTrace(bytes);
  const events = pk[2];
  // Shift both ends of the packet's id range: the reader's alloc id sync still holds.
  const v = new DataView(bytes.buffer, bytes.byteOffset);
  v.setBigInt64(events.off + 52, 7n, true);
  v.setBigInt64(events.off + 60, 10n, true);
  assert.deepEqual(Reader.fromBytes(bytes).readAll().map((e) => e.event.objId), [7, 8, 9]);
  expectError(
    () => copyTrace(Reader.fromBytes(bytes), new MemorySink()),
    MemtraceFormatError,
    "Incorrect allocation ID: the event has id 7",
    events.events[0].off,
  );
});

Deno.test("copy refuses trace info that cannot fit a v3 packet (long Latin-1 strings) with a typed error", () => {
  const name = "A".repeat(20_000);
  const bytes = trace(() => {}, { ...INFO, executableName: name });
  // Bytes that are not UTF-8 are read as Latin-1; written back as UTF-8 they double.
  const at = bytes.indexOf(0x41);
  bytes.fill(0xe9, at, at + 20_000);
  const r = Reader.fromBytes(bytes);
  assert.equal(r.info.executableName, "\u00e9".repeat(20_000));
  expectError(
    () => copyTrace(r, new MemorySink()),
    MemtraceLimitError,
    "the trace info does not fit in a 32768-byte v3 packet",
    0,
  );
  assert.throws(() => Writer.create(new MemorySink(), r.info), {
    name: "MemtraceArgumentError",
    message: "Trace.create: the trace info does not fit in a 32768-byte packet",
  });
});

Deno.test("format version 0 is refused with memtrace's message", () => {
  const b = edge.slice();
  b[28] = 0;
  expectError(
    () => Reader.fromBytes(b),
    MemtraceFormatError,
    "trace format v000, but expected v003",
    0,
  );
  const c = edge.slice();
  c[parseTrace(edge)[1].off + 28] = 0;
  const r = Reader.fromBytes(c);
  expectError(() => r.iter(() => {}), MemtraceFormatError, "trace format v000, but expected v003");
});

/** Info, then packets of short allocs each reusing the whole previous backtrace and adding 256
 * frames with one 3-byte codeword: 256·k frames after k events, in about 9·k bytes. */
function growingTrace(events: number): { bytes: Uint8Array; offsets: number[] } {
  const parts: Uint8Array[] = [infoPacket()];
  const offsets: number[] = [];
  let at = parts[0].length, id = 0;
  for (let first = 0; first < events;) {
    const body: Uint8Array[] = [];
    let size = 68, n = 0;
    while (first + n < events && size < 30_000) {
      const ev = shortAlloc(256 * (first + n), [hit(5, 255)]);
      offsets.push(at + size);
      body.push(ev);
      size += ev.length;
      n++;
    }
    const p = packet({ ids: [id, id + n], body: concat(...body) });
    parts.push(p);
    at += p.length;
    id += n;
    first += n;
  }
  return { bytes: concat(...parts), offsets };
}

Deno.test("a backtrace of more than 2^20 frames is refused at its event", () => {
  const k = MAX_BACKTRACE_FRAMES / 256;
  const { bytes, offsets } = growingTrace(k + 2);
  let longest = 0, n = 0;
  const err = expectError(
    () =>
      Reader.fromBytes(bytes).iter((_, ev) => {
        n++;
        if (ev.kind === "alloc") longest = Math.max(longest, ev.backtraceLength);
      }),
    MemtraceLimitError,
    `backtrace of more than ${MAX_BACKTRACE_FRAMES} frames`,
    offsets[k],
  );
  assert.equal(err.limit, MAX_BACKTRACE_FRAMES);
  assert.match(err.message, /^trace exceeds a limit: backtrace of more than 1048576 frames/);
  assert.equal(n, k);
  assert.equal(longest, MAX_BACKTRACE_FRAMES);
  // The limit is an option.
  expectError(
    () => Reader.fromBytes(bytes, { maxBacktraceFrames: 1000 }).iter(() => {}),
    MemtraceLimitError,
    "backtrace of more than 1000 frames",
    offsets[3],
  );
});

Deno.test("repeated long backtraces: iter shares one buffer, readAll and the dump stop at their budgets", () => {
  // One 65,536-frame backtrace, then 3,000 events (11 bytes each) sharing all of it but the
  // last frame, in two packets.
  const grow = growingTrace(256);
  const one = shortAlloc(65_536 - 1, [hit(9, 0)]);
  const repeat = new Uint8Array(1500 * one.length);
  for (let i = 0; i < 1500; i++) repeat.set(one, i * one.length);
  const bytes = concat(
    grow.bytes,
    packet({ ids: [256, 1756], body: repeat }),
    packet({ ids: [1756, 3256], body: repeat }),
  );
  assert.ok(bytes.length < 40_000);
  let frames = 0;
  const buffers = new Set<Float64Array>();
  Reader.fromBytes(bytes).iter((_, ev) => {
    if (ev.kind === "alloc") {
      frames += ev.backtraceLength;
      buffers.add(ev.backtraceBuffer);
    }
  });
  assert.ok(frames > 190_000_000, `${frames} frames in all`);
  assert.ok(buffers.size < 20, "events share the domain's buffer");
  expectError(
    () => Reader.fromBytes(bytes).readAll({ maxTotalFrames: 10_000_000 }),
    MemtraceLimitError,
    "readAll: more than 10000000 backtrace frames in all (iterate instead)",
  );
  // The dump streams in chunks of about 64 KiB, each line piece by piece, and stops at its budget.
  let chars = 0, biggest = 0;
  const err = expectError(
    () =>
      dumpTraceTo(Reader.fromBytes(bytes), (t) => {
        chars += t.length;
        biggest = Math.max(biggest, t.length);
      }, { maxOutputChars: 40_000_000 }),
    MemtraceLimitError,
    "dump output of more than 40000000 characters",
  );
  assert.ok(chars <= 40_000_000 && chars > 39_000_000, `${chars} characters`);
  assert.ok(biggest < 1 << 17, `a chunk of ${biggest} characters`);
  assert.ok(err.offset > grow.bytes.length && err.offset < bytes.length);
});

Deno.test("the default dump budget grows with the input: 64 Mi characters plus 4,096 per byte", () => {
  // A 3 KiB trace whose frames each print 255 locations (the most a code can stand for).
  const locs = Array.from({ length: 255 }, (_, i) => new Location("ab", i, 1, 2, "cd"));
  const bytes = trace((w) => {
    const stack = Array.from({ length: 4000 }, () => 77);
    w.putAlloc({
      time: INFO.startTime,
      length: 2,
      nsamples: 1,
      source: AllocationSource.Minor,
      callstack: stack,
      decode: () => locs,
    });
    for (let i = 0; i < 40; i++) {
      w.putAlloc({
        time: INFO.startTime,
        length: 2,
        nsamples: 1,
        source: 0,
        callstack: stack,
        decode: () => locs,
      });
    }
  });
  assert.ok(bytes.length < 4000, `${bytes.length} bytes`);
  let chars = 0;
  const err = expectError(
    () => dumpTraceTo(Reader.fromBytes(bytes), (t) => chars += t.length),
    MemtraceLimitError,
    /^dump output of more than \d+ characters$/,
  );
  assert.equal(err.limit, 64 * 2 ** 20 + 4096 * err.offset);
  assert.ok(chars <= err.limit);
});

Deno.test("per-domain state is allocated lazily: 65,535 empty packets of distinct domains", () => {
  const info = infoPacket();
  const empty = packet({ body: new Uint8Array(0) });
  const bytes = new Uint8Array(info.length + 65_535 * empty.length);
  bytes.set(info);
  for (let d = 0; d < 65_535; d++) {
    empty[38] = d & 0xff;
    empty[39] = d >> 8;
    bytes.set(empty, info.length + d * empty.length);
  }
  const before = Deno.memoryUsage().rss;
  let n = 0;
  Reader.fromBytes(bytes).iter(() => n++);
  const grown = Deno.memoryUsage().rss - before;
  assert.equal(n, 0);
  // 160 KiB of backtrace cache per domain would be 10 GiB; each domain now costs a few bytes.
  assert.ok(grown < 256 * 2 ** 20, `resident memory grew by ${grown} bytes`);
});

Deno.test("backtrace caches for more domains than the input size allows are refused", () => {
  const info = infoPacket();
  const parts = [info];
  let at = info.length, id = 0;
  const offsets: number[] = [];
  for (let d = 0; d < 200; d++) {
    const p = packet({ domain: d, ids: [id, id + 1], body: shortAlloc(0, [hit(1, 0)]) });
    offsets.push(at + 68);
    parts.push(p);
    at += p.length;
    id++;
  }
  const bytes = concat(...parts);
  // 64 domains, plus one per 4 KiB read: at the 65th domain's event (offset about 5 KiB), 65.
  const err = expectError(
    () => Reader.fromBytes(bytes).iter(() => {}),
    MemtraceLimitError,
    /^backtrace caches \(163840 bytes each\) for more than 65 domains within the first \d+ bytes$/,
    offsets[65],
  );
  assert.equal(err.limit, 65);
  // Without backtraces, no cache is needed.
  let n = 0;
  Reader.fromBytes(bytes).iter(() => n++, { parseBacktraces: false });
  assert.equal(n, 200);
});

Deno.test("a stream is read as it comes, once", () => {
  let at = 0, reads = 0;
  const stream = {
    readSync(p: Uint8Array): number | null {
      if (at === single.length) return null;
      const n = Math.min(p.length, 1000, single.length - at);
      p.set(single.subarray(at, at + n));
      at += n;
      reads++;
      return n;
    },
  };
  const r = Reader.fromStream(stream, { name: "pipe" });
  assert.equal(r.sizeBytes(), 0);
  const got = dumpTraceToString(r).split("\n");
  const want = dumpTraceToString(Reader.fromBytes(single)).split("\n");
  assert.equal(got[9], "size_bytes: 0");
  got[9] = want[9];
  assert.deepEqual(got, want);
  assert.ok(reads >= single.length / 1000);
  assert.throws(() => r.iter(() => {}), MemtraceArgumentError);
});

Deno.test("nsamples: a count below 1 is refused at its field, up to 2^53 - 1 is read", () => {
  const withSamples = (n: number) =>
    trace((w) => {
      w.putAlloc({
        time: 1_000_010,
        length: 100,
        nsamples: n,
        source: AllocationSource.Major,
        callstack: [1],
        decode: LOC,
      });
    });
  const samplesOf = (bytes: Uint8Array) =>
    Reader.fromBytes(bytes).readAll().map((e) => e.event.kind === "alloc" && e.event.nsamples);
  for (const n of [1, 2, 252, 253, 65_535, 65_536, 2 ** 31 - 1, 2 ** 32, MAX_NSAMPLES]) {
    assert.deepEqual(samplesOf(withSamples(n)), [n], `nsamples ${n}`);
  }
  // -1 takes the vint's signed 32-bit form, as memtrace's writer also writes 2^32 - 1 (its reader
  // reads it back as -1); -2^40 the 64-bit form.
  for (const n of [0, -1, -(2 ** 31), -(2 ** 40)]) {
    const bytes = withSamples(n);
    assert.throws(
      () => Reader.fromBytes(bytes, { name: "t.ctf" }).readAll(),
      (e: unknown) =>
        e instanceof MemtraceFormatError && e.check === "nsamples at least 1" &&
        e.message.startsWith("malformed trace: nsamples at least 1 (at byte offset ") &&
        e.file === "t.ctf" && e.offset > 0 && e.offset < bytes.length,
      `nsamples ${n}`,
    );
  }
  // Beyond 2^53 - 1, the 64-bit vint itself is refused.
  assert.throws(
    () => Reader.fromBytes(withSamples(2 ** 53)).readAll(),
    (e: unknown) => e instanceof MemtraceFormatError && e.check === "64-bit value out of range",
  );
});
