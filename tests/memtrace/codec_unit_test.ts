/**
 * Unit tests of the memtrace codec's pieces: buffers and vints, 64-bit limits, OCaml/C printf
 * conversions, location and event printing, writer argument checks, reader errors and
 * warnings, and memtrace's packet rules.
 */
import assert from "node:assert/strict";
import { putVintAt, ReadBuf, Underflow, UnsafeInteger, WriteBuf } from "../../lib/memtrace/buf.ts";
import { CACHE_SIZE, hash1, hash2 } from "../../lib/memtrace/backtrace_codec.ts";
import { formatObjId, formatSpace4 } from "../../lib/memtrace/types.ts";
import { downgrade } from "./fuzz_harness.ts";
import {
  AllocationSource,
  AllocEvent,
  CollectEvent,
  type Info,
  Location,
  type LocationCode,
  MAX_PACKET_SIZE,
  MemorySink,
  MemtraceArgumentError,
  MemtraceFormatError,
  MultiplexedWriter,
  OBJ_IDS_PER_CHUNK,
  PidChangedError,
  PromoteEvent,
  Reader,
  Writer,
} from "../../lib/memtrace/mod.ts";
import { formatG, ocamlHexFloat, ocamlQuote, shortestG } from "../../lib/util/ocaml_printf.ts";
import listsV1 from "../fixtures/memtrace/lists_and_sets_v1_e8e7dbe.ctf" with {
  type: "bytes",
};
import edge from "../fixtures/memtrace/edge_writer_api.ctf" with { type: "bytes" };

const MAX = Number.MAX_SAFE_INTEGER;

const INFO: Info = {
  sampleRate: 0.01,
  wordSize: 64,
  executableName: "exec",
  hostName: "host",
  ocamlRuntimeParams: "runtime",
  pid: 42n,
  initialDomain: 0,
  startTime: 23_897_423,
  context: "context",
};

const LOC = (c: LocationCode) => [new Location("a.ml", c % 1000, 1, 2, `f${c}`)];
/** A one-word minor allocation at the trace's start, at location code 1. */
const ONE_WORD_AT_START = {
  time: INFO.startTime,
  length: 1,
  nsamples: 1,
  source: AllocationSource.Minor,
  callstack: [1],
  decode: LOC,
};

function bytesOf(write: (b: WriteBuf) => void): number[] {
  const b = new WriteBuf(new Uint8Array(64));
  write(b);
  return Array.from(b.buf.subarray(0, b.pos));
}

function reader(bytes: Uint8Array, warnings: string[] = []): Reader {
  return Reader.fromBytes(bytes, { onWarning: (m) => warnings.push(m) });
}

function readAll(bytes: Uint8Array, warnings: string[] = []) {
  return reader(bytes, warnings).readAll();
}

/** v3 packets of a trace: offset, size, alloc-id range, time range. */
function packets(bytes: Uint8Array) {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: { off: number; size: number; ids: [number, number]; times: [number, number] }[] = [];
  for (let off = 0; off < bytes.length;) {
    assert.equal(v.getUint32(off, true), 0xc1fc1fc1);
    const size = v.getUint32(off + 4, true) / 8;
    out.push({
      off,
      size,
      times: [Number(v.getBigInt64(off + 8, true)), Number(v.getBigInt64(off + 16, true))],
      ids: [Number(v.getBigInt64(off + 52, true)), Number(v.getBigInt64(off + 60, true))],
    });
    off += size;
  }
  return out;
}

/** Packets carrying allocations, as [first id, end id). */
function allocPackets(bytes: Uint8Array): [number, number][] {
  return packets(bytes).filter((p) => p.ids[1] > p.ids[0]).map((p) => p.ids);
}

function expectFormatError(f: () => unknown, check: string, offset?: number): void {
  assert.throws(f, (e: unknown) => {
    assert.ok(e instanceof MemtraceFormatError, `not a MemtraceFormatError: ${e}`);
    assert.equal(e.check, check);
    assert.ok(e.message.startsWith(`malformed trace: ${check} (at byte offset `), e.message);
    if (offset !== undefined) assert.equal(e.offset, offset);
    return true;
  });
}

// ---------------------------------------------------------------------------------------------

Deno.test("buf: vint encodings at every boundary", async (t) => {
  const cases: [number, number[]][] = [
    [0, [0]],
    [1, [1]],
    [252, [252]],
    [253, [253, 253, 0]],
    [254, [253, 254, 0]],
    [65535, [253, 0xff, 0xff]],
    [65536, [254, 0, 0, 1, 0]],
    [-1, [254, 0xff, 0xff, 0xff, 0xff]],
    [-252, [254, 0x04, 0xff, 0xff, 0xff]],
    [2 ** 31 - 1, [254, 0xff, 0xff, 0xff, 0x7f]],
    [-(2 ** 31), [254, 0, 0, 0, 0x80]],
    [2 ** 31, [255, 0, 0, 0, 0x80, 0, 0, 0, 0]],
    [-(2 ** 31) - 1, [255, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0xff]],
    [2 ** 32, [255, 0, 0, 0, 0, 1, 0, 0, 0]],
    [2 ** 40, [255, 0, 0, 0, 0, 0, 1, 0, 0]],
    [-(2 ** 40), [255, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff]],
    [MAX, [255, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x1f, 0]],
    [-MAX, [255, 1, 0, 0, 0, 0, 0, 0xe0, 0xff]],
  ];
  for (const [v, enc] of cases) {
    await t.step(`${v}`, () => {
      const got = bytesOf((b) => b.putVint(v));
      assert.deepEqual(got, enc);
      const r = new ReadBuf(Uint8Array.from(got), 0, got.length);
      assert.equal(r.getVint(), v);
      assert.equal(r.remaining(), 0);
    });
  }
  await t.step("a vint cut short underflows", () => {
    for (const enc of [[253, 1], [254, 1, 2, 3], [255, 1, 2, 3, 4, 5, 6, 7], []]) {
      const r = new ReadBuf(Uint8Array.from(enc), 0, enc.length);
      assert.throws(() => r.getVint(), Underflow);
    }
  });
});

Deno.test("buf: 64-bit values beyond ±(2^53-1) are refused, never rounded", async (t) => {
  const raw = (v: bigint) => bytesOf((b) => b.put64Big(v));
  await t.step("safe integers round-trip through put64/get64", () => {
    for (const v of [0, 1, -1, 2 ** 32, -(2 ** 32), 2 ** 52 + 1, MAX, -MAX]) {
      const enc = bytesOf((b) => b.put64(v));
      assert.deepEqual(enc, raw(BigInt(v)));
      assert.equal(new ReadBuf(Uint8Array.from(enc), 0, 8).get64(), v);
    }
  });
  await t.step("get64 throws UnsafeInteger outside the safe range", () => {
    for (const v of [2n ** 53n, -(2n ** 53n), 2n ** 53n + 1n, 2n ** 63n - 1n, -(2n ** 63n)]) {
      const r = new ReadBuf(Uint8Array.from(raw(v)), 0, 8);
      assert.throws(() => r.get64(), UnsafeInteger, `${v}`);
      assert.equal(new ReadBuf(Uint8Array.from(raw(v)), 0, 8).get64Big(), v);
    }
  });
  await t.step("so does a 255-prefixed vint holding 2^53", () => {
    const enc = [255, ...raw(2n ** 53n)];
    assert.throws(() => new ReadBuf(Uint8Array.from(enc), 0, 9).getVint(), UnsafeInteger);
  });
  await t.step("fixed-width reads past the end underflow", () => {
    const r = new ReadBuf(new Uint8Array(3), 0, 3);
    assert.throws(() => r.getU32(), Underflow);
    assert.throws(() => r.get64(), Underflow);
    assert.equal(r.get16(), 0);
    assert.throws(() => r.get16(), Underflow);
  });
});

Deno.test("buf: strings are NUL-terminated UTF-8, cut at the first NUL", () => {
  const enc = bytesOf((b) => {
    b.putString("ab\0cd");
    b.putString("é✓");
    b.putString("");
  });
  assert.deepEqual(enc, [0x61, 0x62, 0, 0xc3, 0xa9, 0xe2, 0x9c, 0x93, 0, 0]);
  const r = new ReadBuf(Uint8Array.from(enc), 0, enc.length);
  assert.equal(r.getString(), "ab");
  assert.equal(r.getString(), "é✓");
  assert.equal(r.getString(), "");
  // Bytes that are not UTF-8 come back one char per byte (Latin-1), nothing replaced.
  const bad = Uint8Array.from([0x61, 0xff, 0xc8, 0]);
  assert.equal(new ReadBuf(bad, 0, 4).getString(), "a\u00ff\u00c8");
  // An unterminated string underflows.
  assert.throws(() => new ReadBuf(Uint8Array.from([0x61, 0x62]), 0, 2).getString(), Underflow);
});

Deno.test("format: %.17g as C prints it", () => {
  const cases: [number, string][] = [
    [0.01, "0.01"],
    [2e-5, "2.0000000000000002e-05"],
    [3e-4, "0.00029999999999999997"],
    [1e-4, "0.0001"],
    [1, "1"],
    [1e22, "1e+22"],
    [123456, "123456"],
    [0.1, "0.10000000000000001"],
    [0, "0"],
    [-0, "-0"],
    [-2.5, "-2.5"],
    [1e100, "1e+100"],
    [5e-324, "4.9406564584124654e-324"],
    [NaN, "nan"],
    [Infinity, "inf"],
    [-Infinity, "-inf"],
  ];
  for (const [x, s] of cases) assert.equal(formatG(x, 17), s, `${x}`);
  // Other precisions, and the shortest form that reads back.
  assert.equal(formatG(0.5, 1), "0.5");
  assert.equal(formatG(123456, 3), "1.23e+05");
  assert.equal(formatG(100000, 6), "100000");
  assert.equal(formatG(1000000, 6), "1e+06");
  assert.equal(shortestG(0.1), "0.1");
  assert.equal(shortestG(2e-5), "2e-05");
  assert.equal(shortestG(1 / 3), "0.3333333333333333");
  assert.equal(formatG(1 / 3, 17), "0.33333333333333331");
});

Deno.test("format: %h hexadecimal floats as OCaml prints them", () => {
  const cases: [number, string][] = [
    [1, "0x1p+0"],
    [0.01, "0x1.47ae147ae147bp-7"],
    [0, "0x0p+0"],
    [-2, "-0x1p+1"],
    [0.5, "0x1p-1"],
    [1.5, "0x1.8p+0"],
    [1e-4, "0x1.a36e2eb1c432dp-14"],
    [5e-324, "0x0.0000000000001p-1022"],
    [2.2250738585072009e-308, "0x0.fffffffffffffp-1022"],
    [Number.MAX_VALUE, "0x1.fffffffffffffp+1023"],
    [NaN, "nan"],
    [Infinity, "infinity"],
    [-Infinity, "-infinity"],
  ];
  for (const [x, s] of cases) assert.equal(ocamlHexFloat(x), s, `${x}`);
});

Deno.test("format: %S quoted strings with OCaml escapes over UTF-8 bytes", () => {
  const cases: [string, string][] = [
    ["plain", '"plain"'],
    ['say "hi"', '"say \\"hi\\""'],
    ["back\\slash", '"back\\\\slash"'],
    ["a\nb\tc\rd\be", '"a\\nb\\tc\\rd\\be"'],
    ["\x01", '"\\001"'],
    ["\x7f", '"\\127"'],
    ["\0", '"\\000"'],
    // U+0208 is the UTF-8 bytes 200 136.
    ["\u0208", '"\\200\\136"'],
    ["é", '"\\195\\169"'],
    ["", '""'],
  ];
  for (const [s, q] of cases) assert.equal(ocamlQuote(s), q, JSON.stringify(s));
});

Deno.test("Location.toString is defname@filename:line:start-end", () => {
  assert.equal(new Location("foo.ml", 42, 100, 120, "func").toString(), "func@foo.ml:42:100-120");
  assert.equal(Location.unknown.toString(), "??@<unknown>:1:1-1");
  assert.equal(new Location("", 0, 0, 0, "").toString(), "@:0:0-0");
  assert.ok(new Location("a", 1, 2, 3, "d").equals(new Location("a", 1, 2, 3, "d")));
  assert.ok(!new Location("a", 1, 2, 3, "d").equals(new Location("a", 1, 2, 4, "d")));
});

Deno.test("Event.toString: %010d ids, % 4d common prefix, $code for unknown codes", async (t) => {
  await t.step("%010d and % 4d", () => {
    assert.equal(formatObjId(0), "0000000000");
    assert.equal(formatObjId(42), "0000000042");
    assert.equal(formatObjId(-5), "-000000005");
    assert.equal(formatObjId(-123456789), "-123456789");
    assert.equal(formatObjId(12345678901), "12345678901");
    assert.equal(formatSpace4(0), "   0");
    assert.equal(formatSpace4(5), "   5");
    assert.equal(formatSpace4(1000), " 1000");
    assert.equal(formatSpace4(-3), "  -3");
    assert.equal(formatSpace4(-1000), "-1000");
  });
  const lookup = (c: LocationCode): Location[] =>
    c === 1
      ? [new Location("foo.ml", 42, 100, 120, "func")]
      : c === 3
      ? [new Location("b.ml", 19, 97, 1023, "g"), new Location("inline", 1, 1, 1, "h")]
      : [];
  const ev = (id: number, src: AllocationSource, pfx: number, bt: number[], n = 1, len = 2) =>
    new AllocEvent(id, len, 0, n, src, Float64Array.from([...bt, 77, 77]), bt.length, pfx);
  await t.step("allocations", () => {
    assert.equal(
      ev(0, AllocationSource.Minor, 0, [1, 3]).toString(lookup),
      "0000000000 alloc 1 len=2 dom=0    0: func@foo.ml:42:100-120 g@b.ml:19:97-1023 " +
        "h@inline:1:1-1",
    );
    assert.equal(
      ev(7, AllocationSource.Major, 5, [99, 1], 3, 2166572391).toString(lookup),
      "0000000007 alloc_major 3 len=2166572391 dom=0    5: $99 func@foo.ml:42:100-120",
    );
    assert.equal(
      ev(-3, AllocationSource.External, 1000, []).toString(lookup),
      "-000000003 alloc_ext 1 len=2 dom=0  1000: ",
    );
    assert.equal(
      new AllocEvent(1, 1, 4, 1, 0, new Float64Array([1]), 1, -3).toString(lookup),
      "0000000001 alloc 1 len=1 dom=4   -3: func@foo.ml:42:100-120",
    );
  });
  await t.step("promotions and collections", () => {
    assert.equal(new PromoteEvent(2, 0).toString(), "0000000002 promote");
    assert.equal(new CollectEvent(-1, 3).toString(lookup), "-000000001 collect");
  });
  await t.step("the first events of the edge fixture", () => {
    const r = reader(edge);
    const lines: string[] = [];
    r.iter((dt, e) =>
      lines.push(`${dt} ${e.domain} ${e.toString((c) => r.lookupLocationCode(c))}`)
    );
    assert.equal(
      lines[0],
      "0 0 0000000000 alloc 1 len=42 dom=0    0: func@foo.ml:42:100-120 " +
        "aiosjdf@apiosdjfoaijsdf.ml:100:58-1023",
    );
    assert.equal(lines[3], "101000000 0 0000000001 collect");
    assert.equal(lines[6], "103000000 0 0000000004 alloc 1 len=2 dom=0    0: ??@<unknown>:1:1-1");
  });
});

Deno.test("Writer: argument checks", async (t) => {
  await t.step("location codes must be safe integers", () => {
    for (const bad of [2 ** 53, -(2 ** 53), 1.5, NaN, Infinity, -Infinity, 2 ** 64]) {
      const w = Writer.create(new MemorySink(), INFO);
      assert.throws(
        () =>
          w.putAlloc({
            ...ONE_WORD_AT_START,
            callstack: [1, bad],
          }),
        (e: unknown) =>
          e instanceof MemtraceArgumentError && e.message.startsWith("Trace.put_alloc: "),
        `${bad}`,
      );
    }
    // The extremes that are allowed.
    const sink = new MemorySink();
    const w = Writer.create(sink, INFO);
    w.putAlloc({
      ...ONE_WORD_AT_START,
      callstack: [MAX, -MAX, 0],
    });
    w.close();
    assert.deepEqual(readAll(sink.bytes())[0].event.kind, "alloc");
    const ev = readAll(sink.bytes())[0].event as AllocEvent;
    assert.deepEqual(ev.backtrace(), [0, -MAX, MAX]);
  });
  await t.step("dropSlots out of range", () => {
    const w = Writer.create(new MemorySink(), INFO);
    for (const d of [-1, 3, NaN]) {
      assert.throws(
        () =>
          w.putAlloc({
            ...ONE_WORD_AT_START,
            callstack: [1, 2],
            dropSlots: d,
          }),
        MemtraceArgumentError,
      );
    }
  });
  await t.step("nothing may be written after close", () => {
    const w = Writer.create(new MemorySink(), INFO);
    w.close();
    w.putAlloc(ONE_WORD_AT_START); // buffered
    assert.throws(() => w.flush(), MemtraceArgumentError);
  });
  await t.step("PidChangedError when the pid changes before a flush", () => {
    let pid = 42n;
    const sink = new MemorySink();
    const w = Writer.create(sink, INFO, { getpid: () => pid });
    w.putAlloc(ONE_WORD_AT_START);
    w.flush();
    const before = sink.size;
    pid = 43n;
    w.putAlloc({
      ...ONE_WORD_AT_START,
      time: INFO.startTime + 1,
    }); // buffered
    assert.throws(() => w.flush(), (e: unknown) => {
      assert.ok(e instanceof PidChangedError);
      assert.equal(e.expected, 42n);
      assert.equal(e.actual, 43n);
      assert.match(e.message, /^Pid_changed: /);
      return true;
    });
    assert.equal(sink.size, before, "nothing written by the forked writer");
  });
  await t.step("putEvent: mismatched domain, out-of-order time, wrong id", () => {
    const w = Writer.create(new MemorySink(), INFO);
    const alloc = (id: number, dom = 0) =>
      new AllocEvent(id, 1, dom, 1, 0, new Float64Array([1]), 1, 0);
    assert.throws(
      () => w.putEvent(LOC, INFO.startTime, alloc(0, 1)),
      { name: "MemtraceArgumentError", message: "Trace.put_event: mismatched domain fields" },
    );
    assert.throws(
      () => w.putEvent(LOC, INFO.startTime, alloc(5)),
      { name: "MemtraceArgumentError", message: "Incorrect allocation ID" },
    );
    const mw = MultiplexedWriter.create(new MemorySink(), INFO);
    mw.putEvent(LOC, INFO.startTime + 100, alloc(mw.nextAllocId(0)));
    assert.throws(
      () => mw.putEvent(LOC, INFO.startTime + 99, new PromoteEvent(0, 0)),
      { name: "MemtraceArgumentError", message: "Trace.put_event: out-of-order timestamps" },
    );
    assert.throws(
      () => mw.putEvent(LOC, INFO.startTime + 200, alloc(0)),
      { name: "MemtraceArgumentError", message: "Incorrect allocation ID" },
    );
    // Another domain keeps its own clock.
    mw.putEvent(LOC, INFO.startTime + 50, alloc(mw.nextAllocId(1), 1));
  });
});

Deno.test("Reader: malformed files", async (t) => {
  await t.step("a file of zeros is not a CTF packet", () => {
    expectFormatError(() => reader(new Uint8Array(200)), "Not a CTF packet", 0);
    expectFormatError(() => reader(new Uint8Array(20)), "Buffer underflow");
  });
  await t.step("an empty file", () => {
    expectFormatError(() => reader(new Uint8Array(0)), "Buffer underflow", 0);
  });
  await t.step("a future format version", () => {
    const b = edge.slice();
    b[28] = 4; // version field of the first packet header
    expectFormatError(() => reader(b), "trace format v004, but expected v003", 0);
    const c = edge.slice();
    const second = packets(edge)[1].off;
    c[second + 28] = 4;
    const r = reader(c);
    expectFormatError(() => r.iter(() => {}), "trace format v004, but expected v003", second);
  });
  await t.step("a truncated trace-info packet", () => {
    expectFormatError(() => reader(edge.slice(0, 100)), "trace info packet size");
  });
  await t.step("a location code of 2^53 in a file", () => {
    const sink = new MemorySink();
    const w = Writer.create(sink, INFO);
    w.putAlloc({
      ...ONE_WORD_AT_START,
      callstack: [MAX],
    });
    w.close();
    const b = sink.bytes().slice();
    // Every literal of MAX (location definition and backtrace) becomes 2^53.
    const lit = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x1f, 0];
    let n = 0;
    for (let i = 0; i + 8 <= b.length; i++) {
      if (lit.every((x, k) => b[i + k] === x)) {
        b.set([0, 0, 0, 0, 0, 0, 0x20, 0], i);
        n++;
      }
    }
    assert.ok(n >= 2);
    const r = reader(b);
    expectFormatError(() => r.iter(() => {}), "64-bit value out of range");
  });
  await t.step("a packet of a foreign pid is skipped with a warning", () => {
    const sink = new MemorySink();
    const w = Writer.create(sink, INFO);
    w.putAlloc(ONE_WORD_AT_START);
    w.flush();
    w.putCollect(INFO.startTime + 5, 0);
    w.flush();
    w.putPromote(INFO.startTime + 6, 0);
    w.close();
    const b = sink.bytes().slice();
    const pk = packets(b);
    // info, locations, alloc, collect, promote
    assert.equal(pk.length, 5);
    new DataView(b.buffer).setBigInt64(pk[3].off + 30, 1234n, true);
    const warnings: string[] = [];
    const evs = readAll(b, warnings).map((e) => e.event.toString(LOC));
    assert.deepEqual(warnings, ["skipping bad packet (wrong pid: 1234, but tracing 42)"]);
    assert.deepEqual(evs, [
      "0000000000 alloc 1 len=1 dom=0    0: f1@a.ml:1:1-2",
      "0000000000 promote",
    ]);
  });
  await t.step("a truncated last packet is skipped with a warning", () => {
    const warnings: string[] = [];
    const evs = readAll(edge.slice(0, edge.length - 10), warnings);
    assert.deepEqual(warnings, ["skipping truncated packet"]);
    // The last packet holds the five events after the 99 s gap.
    const all = readAll(edge);
    assert.equal(all.length, 7);
    assert.equal(evs.length, 2);
    assert.deepEqual(evs, all.slice(0, 2));
  });
  await t.step("the reader's default warning goes to console.error", () => {
    const b = edge.slice(0, edge.length - 10);
    const orig = console.error;
    const seen: unknown[] = [];
    console.error = (m: unknown) => seen.push(m);
    try {
      Reader.fromBytes(b).iter(() => {});
    } finally {
      console.error = orig;
    }
    assert.deepEqual(seen, ["skipping truncated packet"]);
  });
});

Deno.test("Reader: trace formats v1, v2 and v3", () => {
  // The same events under the three header layouts.
  const events = (b: Uint8Array) => readAll(b).map((e) => `${e.time} ${e.event.toString(LOC)}`);
  const sink = new MemorySink();
  const w = Writer.create(sink, INFO);
  for (let i = 0; i < 50; i++) {
    w.putAlloc({
      time: INFO.startTime + i * 1000,
      length: 1 + (i % 20),
      nsamples: 1,
      source: 0,
      callstack: [1, 2 + (i % 3), 9],
      decode: LOC,
    });
    if (i % 7 === 6) w.putCollect(INFO.startTime + i * 1000, i - 3);
    if (i % 10 === 9) w.flush();
  }
  w.close();
  const v3 = sink.bytes().slice();
  const v2 = downgrade(v3, 2), v1 = downgrade(v3, 1);
  assert.equal(v2.length, v3.length - 2 * packets(v3).length);
  assert.deepEqual(events(v2), events(v3));
  assert.deepEqual(events(v1), events(v3));
  assert.deepEqual(reader(v2).info, INFO);
  assert.deepEqual(reader(v1).info, { ...INFO, context: undefined });
});

Deno.test("Reader: the v1 and v3 fixtures", () => {
  const v1 = reader(listsV1);
  assert.equal(v1.info.context, undefined);
  assert.equal(v1.info.initialDomain, 0);
  assert.equal(v1.info.wordSize, 64);
  assert.equal(v1.readAll({ parseBacktraces: false }).length, 1727);
  const v3 = reader(edge);
  assert.deepEqual(v3.info, INFO);
  assert.equal(v3.sizeBytes(), 669);
  // An unknown code is refused, in memtrace's words.
  assert.throws(() => v3.lookupLocationCode(0x123), {
    name: "MemtraceArgumentError",
    message: "invalid location code 00000123",
  });
});

Deno.test("Writer: memtrace's packet rules", async (t) => {
  const twoAllocs = (gap: number, firstStack: number[]) => {
    const sink = new MemorySink();
    const w = Writer.create(sink, INFO);
    // The first packet starts at the trace start; the rule measures from there.
    w.putAlloc({
      ...ONE_WORD_AT_START,
      callstack: firstStack,
    });
    w.putAlloc({
      ...ONE_WORD_AT_START,
      time: INFO.startTime + gap,
    });
    w.close();
    return sink.bytes().slice();
  };
  await t.step("events more than 30 s apart land in different packets", () => {
    assert.deepEqual(allocPackets(twoAllocs(31_000_000, [1])), [[0, 1], [1, 2]]);
    assert.deepEqual(allocPackets(twoAllocs(30_000_001, [1])), [[0, 1], [1, 2]]);
    assert.deepEqual(allocPackets(twoAllocs(30_000_000, [1])), [[0, 2]]);
    const b = twoAllocs(31_000_000, [1]);
    const times = packets(b).filter((p) => p.ids[1] > p.ids[0]).map((p) => p.times);
    const t0 = INFO.startTime;
    assert.deepEqual(times, [[t0, t0], [t0 + 31_000_000, t0 + 31_000_000]]);
    assert.deepEqual(readAll(b).map((e) => e.time), [0, 31_000_000]);
    // Measured from the packet's start, not from the previous event.
    const sink = new MemorySink();
    const w = Writer.create(sink, INFO);
    for (const dt of [0, 20_000_000, 30_000_000, 30_000_001]) {
      w.putAlloc({
        ...ONE_WORD_AT_START,
        time: INFO.startTime + dt,
      });
    }
    w.close();
    assert.deepEqual(allocPackets(sink.bytes()), [[0, 3], [3, 4]]);
  });
  await t.step("more than 128 new locations flush before the next event", () => {
    const codes = (n: number) => Array.from({ length: n }, (_, i) => 1000 + i);
    assert.deepEqual(allocPackets(twoAllocs(1, codes(128))), [[0, 2]]);
    assert.deepEqual(allocPackets(twoAllocs(1, codes(129))), [[0, 1], [1, 2]]);
    // The location definitions come first, in their own packets.
    const b = twoAllocs(1, codes(129));
    const pk = packets(b);
    assert.equal(pk[1].ids[0], pk[1].ids[1]);
    assert.equal(readAll(b).length, 2);
  });
  await t.step("object ids come in chunks of 10,000 shared by all domains", () => {
    const sink = new MemorySink();
    const w0 = Writer.create(sink, INFO);
    const w1 = w0.forDomain(1);
    assert.equal(w1.domain, 1);
    assert.equal(w1.putAlloc(ONE_WORD_AT_START), 10_000);
    let last = -1;
    for (let i = 0; i < OBJ_IDS_PER_CHUNK + 1; i++) {
      last = w0.putAlloc({
        ...ONE_WORD_AT_START,
        time: INFO.startTime + i,
        callstack: [1, i % 7],
      });
    }
    assert.equal(last, 20_000);
    assert.equal(w1.nextAllocId(), 10_001);
    w1.flush();
    w0.close();
    // File order: domain 0's first chunk, domain 1's packet, domain 0's second chunk.
    const ids = readAll(sink.bytes()).map((e) => e.event.objId);
    assert.equal(ids.length, OBJ_IDS_PER_CHUNK + 2);
    assert.deepEqual(ids.slice(OBJ_IDS_PER_CHUNK - 1), [9_999, 10_000, 20_000]);
    assert.deepEqual(ids.slice(0, OBJ_IDS_PER_CHUNK), Array.from({ length: 10_000 }, (_, i) => i));
    for (const [a, b] of allocPackets(sink.bytes())) {
      assert.equal(Math.floor(a / 10_000), Math.floor((b - 1) / 10_000));
    }
  });
  await t.step("packets are at most 32 KiB", () => {
    const sink = new MemorySink();
    const w = Writer.create(sink, INFO);
    for (let i = 0; i < 20_000; i++) {
      w.putAlloc({
        time: INFO.startTime + i,
        length: 300,
        nsamples: 2,
        source: AllocationSource.Major,
        callstack: [i % 50, 7],
        decode: LOC,
      });
    }
    w.close();
    const pk = packets(sink.bytes());
    assert.ok(pk.length > 3);
    for (const p of pk) assert.ok(p.size <= MAX_PACKET_SIZE);
    assert.equal(readAll(sink.bytes()).length, 20_000);
  });
});

Deno.test("location codec: clamping, the unknown-location rule, NUL cuts", async (t) => {
  const roundTrip = (locs: Location[]): Location[] => {
    const sink = new MemorySink();
    const w = Writer.create(sink, INFO);
    w.putAlloc({
      time: INFO.startTime,
      length: 1,
      nsamples: 1,
      source: AllocationSource.Minor,
      callstack: [5],
      decode: () => locs,
    });
    w.close();
    const r = reader(sink.bytes().slice());
    r.iter(() => {});
    return r.lookupLocationCode(5);
  };
  const L = (line: number, start: number, end: number, file = "f.ml", def = "d") =>
    new Location(file, line, start, end, def);
  await t.step("line 20 bits, start 8 bits, end 10 bits: clamped, negatives to the limit", () => {
    assert.deepEqual(roundTrip([L(0xfffff, 0xff, 0x3ff)]), [L(0xfffff, 0xff, 0x3ff)]);
    assert.deepEqual(roundTrip([L(0x100000, 0x100, 0x400)]), [L(0xfffff, 0xff, 0x3ff)]);
    assert.deepEqual(roundTrip([L(-1, -1, -1)]), [L(0xfffff, 0xff, 0x3ff)]);
    assert.deepEqual(roundTrip([L(2 ** 40, 0, 2 ** 31)]), [L(0xfffff, 0, 0x3ff)]);
    assert.deepEqual(roundTrip([L(0, 0, 0)]), [L(0, 0, 0)]);
  });
  await t.step("up to 255 locations per code; 256 become the unknown location", () => {
    const many = (n: number) => Array.from({ length: n }, (_, i) => L(i, 1, 2));
    assert.deepEqual(roundTrip(many(255)), many(255));
    assert.deepEqual(roundTrip(many(256)), [Location.unknown]);
    assert.deepEqual(roundTrip([]), []);
  });
  await t.step("worst-case size over 4096 bytes becomes the unknown location", () => {
    // 9 + 6 + (file + 1) + (def + 1) bytes at worst.
    const f = (n: number) => "x".repeat(n);
    assert.deepEqual(roundTrip([L(1, 2, 3, f(4078))]), [L(1, 2, 3, f(4078))]);
    assert.deepEqual(roundTrip([L(1, 2, 3, f(4079))]), [Location.unknown]);
    // Sizes are UTF-8 bytes, not characters.
    assert.deepEqual(roundTrip([L(1, 2, 3, "é".repeat(2039))]), [L(1, 2, 3, "é".repeat(2039))]);
    assert.deepEqual(roundTrip([L(1, 2, 3, "é".repeat(2040))]), [Location.unknown]);
    // Bytes after a NUL still count towards the worst case.
    assert.deepEqual(roundTrip([L(1, 2, 3, "a\0" + f(4077))]), [Location.unknown]);
  });
  await t.step("names are cut at the first NUL", () => {
    assert.deepEqual(roundTrip([L(1, 2, 3, "a.ml\0junk", "fn\0x")]), [L(1, 2, 3, "a.ml", "fn")]);
  });
  await t.step("more than 31 file names: move-to-front misses and evictions", () => {
    const locs = Array.from({ length: 80 }, (_, i) => L(i, 0, 0, `f${i % 40}.ml`, `d${i % 33}`));
    assert.deepEqual(roundTrip(locs), locs);
  });
});

Deno.test("backtrace codec: code 0 starts out cached, as in memtrace", () => {
  // Both caches start zeroed, so code 0 is a hit in bucket 0 the first time: it decodes, but its
  // locations are never written (memtrace's behaviour, kept for byte compatibility).
  const sink = new MemorySink();
  const w = Writer.create(sink, INFO);
  const asked: number[] = [];
  const decode = (c: LocationCode) => {
    asked.push(c);
    return LOC(c);
  };
  w.putAlloc({
    ...ONE_WORD_AT_START,
    callstack: [0, 9, 0],
    decode,
  });
  w.close();
  const r = reader(sink.bytes().slice());
  const evs = r.readAll();
  assert.deepEqual((evs[0].event as AllocEvent).backtrace(), [0, 9, 0]);
  assert.deepEqual(asked, [9]);
  assert.throws(() => r.lookupLocationCode(0), MemtraceArgumentError);
});

Deno.test("backtrace codec: cache hashes equal OCaml's 63-bit arithmetic", () => {
  // memtrace: ((code * 0x4983723) lsr 11) land mask and ((code * 0xfdea731) lsr 21) land mask.
  // Bits 11..34 of the product are the same in 63-bit and 64-bit two's complement.
  const ref = (code: number, k: bigint, shift: bigint) =>
    Number((BigInt.asUintN(64, BigInt(code) * k) >> shift) & BigInt(CACHE_SIZE - 1));
  let seed = 0x2545f491;
  const next = () => {
    // xorshift32
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return seed >>> 0;
  };
  const codes = [0, 1, -1, 2, 0x7fffffff, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 35, MAX, -MAX];
  for (let i = 0; i < 20_000; i++) {
    const hi = next() % 2 ** 21, lo = next();
    const mag = [lo, lo % 65536, hi * 2 ** 32 + lo, (hi % 8) * 2 ** 32 + lo][i % 4];
    codes.push(i % 3 === 0 ? -mag : mag);
  }
  for (const c of codes) {
    assert.equal(hash1(c), ref(c, 0x4983723n, 11n), `hash1(${c})`);
    assert.equal(hash2(c), ref(c, 0xfdea731n, 21n), `hash2(${c})`);
  }
});

Deno.test("regressions: -0 in %h, exact ties in %g, fractional dropSlots", async (t) => {
  await t.step("hexFloat(-0) is OCaml's -0x0p+0", () => {
    assert.equal(ocamlHexFloat(-0), "-0x0p+0");
  });
  await t.step("formatG rounds exact decimal ties to even, as C's printf", () => {
    assert.equal(formatG(0.5 + 2 ** -18, 17), "0.50000381469726562");
    assert.equal(formatG(2.5, 1), "2");
    assert.equal(formatG(0.125, 2), "0.12");
    assert.equal(formatG(0.375, 2), "0.38");
  });
  await t.step("a fractional dropSlots is refused", () => {
    const w = Writer.create(new MemorySink(), {
      sampleRate: 0.01,
      wordSize: 64,
      executableName: "x",
      hostName: "h",
      ocamlRuntimeParams: "",
      pid: 1n,
      initialDomain: 0,
      startTime: 0,
      context: undefined,
    });
    for (const drop of [0.5, 1.5]) {
      assert.throws(
        () =>
          w.putAlloc({
            time: 0,
            length: 1,
            nsamples: 1,
            source: AllocationSource.Minor,
            callstack: [5, 6],
            decode: () => [],
            dropSlots: drop,
          }),
        MemtraceArgumentError,
      );
    }
  });
});

Deno.test("MemorySink joins packets written across its chunks, and goes on after bytes()", () => {
  const sink = new MemorySink();
  const want: number[] = [];
  let seed = 7;
  const piece = (n: number) => {
    const b = new Uint8Array(n);
    for (let i = 0; i < n; i++) b[i] = seed = (seed * 31 + 11) & 0xff;
    return b;
  };
  // Sizes around the first chunk (64 KiB) and the later ones (each as large as all before).
  for (const n of [1, 1000, 65535, 2, 40000, 70000, 0, 131072, 5, 300000]) {
    const b = piece(n);
    sink.write(b);
    for (const x of b) want.push(x);
    if (n === 2 || n === 5) assert.ok(same(sink.bytes(), want), `after ${want.length} bytes`);
  }
  assert.equal(sink.size, want.length);
  assert.ok(same(sink.bytes(), want));
});

function same(a: Uint8Array, b: readonly number[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

Deno.test("putVintAt writes the bytes WriteBuf.putVint writes", () => {
  const values = [0, 1, 252, 253, 254, 255, 0xffff, 0x10000, -1, -252, 2147483647, -2147483648];
  values.push(2147483648, -2147483649, 2 ** 40 + 3, -(2 ** 40) - 3, MAX, -MAX);
  for (const v of values) {
    const viaBuf = bytesOf((b) => b.putVint(v));
    const out = new Uint8Array(16);
    const end = putVintAt(out, 3, v);
    assert.deepEqual(Array.from(out.subarray(3, end)), viaBuf, `vint ${v}`);
  }
});
