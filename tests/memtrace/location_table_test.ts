import assert from "node:assert/strict";
import { ReadBuf, Underflow } from "../../lib/memtrace/buf.ts";
import { LocationTable } from "../../lib/memtrace/_location_table.ts";
import {
  Location,
  MAX_PACKET_SIZE,
  MemorySink,
  MemtraceFormatError,
  Reader,
  Writer,
} from "../../lib/memtrace/mod.ts";
import ocamlopt from "../fixtures/memtrace/ocamlopt.ctf" with { type: "bytes" };

/** A cursor over `bytes` (NUL-terminated strings one after the other). */
function cursor(bytes: number[]): ReadBuf {
  const b = new ReadBuf(new Uint8Array(bytes), 0, bytes.length);
  b.pos = 0;
  return b;
}

/** Defines `code` as one location naming strings `file` and `fn` of `table`. */
function define(table: LocationTable, code: number, file: number, fn: number, line = 7): boolean {
  table.begin();
  table.addLocation(line, 2, 30, file, fn);
  return table.commit(code);
}

/** A writer of a small trace to `sink`. */
function newWriter(sink: MemorySink): Writer {
  return Writer.create(sink, {
    sampleRate: 1e-4,
    wordSize: 64,
    executableName: "t",
    hostName: "h",
    ocamlRuntimeParams: "",
    pid: 1n,
    initialDomain: 0,
    startTime: 1_700_000_000_000_000,
    context: undefined,
  });
}

Deno.test("a location table decodes a code's strings only when the code is looked up", () => {
  const t = new LocationTable();
  const b = cursor([...new TextEncoder().encode("a.ml"), 0, ...new TextEncoder().encode("A.f"), 0]);
  const file = t.addString(b), fn = t.addString(b);
  assert.equal(b.pos, 9);
  assert.ok(define(t, 1 << 40, file, fn));
  assert.equal(t.size, 1);
  const locs = t.get(1 << 40);
  assert.deepEqual(locs, [new Location("a.ml", 7, 2, 30, "A.f")]);
  assert.equal(t.get(1 << 40), locs, "the same array on every lookup");
  assert.equal(t.get(5), undefined);
});

Deno.test("a location table keeps a string's bytes when the buffer it was read from changes", () => {
  const t = new LocationTable();
  const bytes = [0x66, 0x2e, 0x6d, 0x6c, 0];
  const b = cursor(bytes);
  const s = t.addString(b);
  b.buf.fill(0x7a);
  assert.ok(define(t, 3, s, s));
  assert.equal(t.get(3)?.[0].filename, "f.ml");
});

Deno.test("a location table raises Underflow where getString would on a string without NUL", () => {
  const t = new LocationTable();
  const bytes = [0x61, 0x62, 0x63, 0, 0x64];
  const b = new ReadBuf(new Uint8Array(bytes), 0, 3);
  b.pos = 0;
  assert.throws(() => t.addString(b), (e) => e instanceof Underflow && e.pos === 3);
  const c = new ReadBuf(new Uint8Array(bytes), 0, 3);
  c.pos = 0;
  assert.throws(() => c.getString(), (e) => e instanceof Underflow && e.pos === 3);
});

Deno.test("a location table accepts a redefinition that says the same with strings sent again", () => {
  const t = new LocationTable();
  const enc = new TextEncoder();
  const b = cursor([...enc.encode("x.ml"), 0, ...enc.encode("X.g"), 0, ...enc.encode("x.ml"), 0]);
  const file = t.addString(b), fn = t.addString(b), again = t.addString(b);
  assert.ok(define(t, 9, file, fn));
  assert.ok(define(t, 9, again, fn), "same bytes under another string number");
  assert.equal(t.size, 1);
  assert.equal(define(t, 9, file, fn, 8), false, "another line");
  assert.equal(define(t, 9, fn, fn), false, "another filename");
  assert.deepEqual(t.get(9), [new Location("x.ml", 7, 2, 30, "X.g")], "the first one is kept");
});

Deno.test("a location table compares strings as decoded: a Latin-1 byte equals its UTF-8 form", () => {
  const t = new LocationTable();
  // 0xE9 alone is not UTF-8: it decodes as Latin-1 "é", which UTF-8 writes C3 A9.
  const b = cursor([0xe9, 0, 0xc3, 0xa9, 0, 0x65, 0]);
  const latin1 = t.addString(b), utf8 = t.addString(b), e = t.addString(b);
  assert.ok(define(t, 4, latin1, e));
  assert.ok(define(t, 4, utf8, e));
  assert.equal(define(t, 4, e, e), false);
  assert.equal(t.get(4)?.[0].filename, "é");
});

Deno.test("a location table drops the locations of a definition left unfinished", () => {
  const t = new LocationTable();
  const b = cursor([0x61, 0]);
  const s = t.addString(b);
  t.begin();
  t.addLocation(1, 1, 1, s, s);
  t.addLocation(2, 1, 1, s, s); // an error stops the definition here
  assert.ok(define(t, 11, s, s, 5));
  assert.deepEqual(t.get(11)?.map((l) => l.line), [5]);
});

Deno.test("a reader's lookups after a second iteration give the first definitions", () => {
  const sink = new MemorySink();
  const w = newWriter(sink);
  const here = (c: number) => [new Location(`m${c}.ml`, c, 1, 9, `M${c}.f`)];
  for (let i = 0; i < 50; i++) {
    w.putAlloc({
      time: 1_700_000_000_000_010 + i,
      length: 2,
      nsamples: 1,
      source: 0,
      callstack: [i % 7 + 1, i % 5 + 100],
      decode: here,
    });
  }
  w.close();
  const r = Reader.fromBytes(sink.bytes());
  r.iterViews(() => {});
  const first = r.lookupLocationCode(3);
  r.iterViews(() => {});
  assert.equal(r.lookupLocationCode(3), first);
  assert.deepEqual(first, here(3));
  assert.deepEqual(r.lookupLocationCode(104), here(104));
});

Deno.test("ocamlopt.ctf's locations read through the 32 KiB window equal those read in place", () => {
  const path = Deno.makeTempFileSync({ suffix: ".ctf" });
  try {
    Deno.writeFileSync(path, ocamlopt);
    const inPlace = Reader.fromBytes(ocamlopt);
    const streamed = Reader.open(path, { windowBytes: MAX_PACKET_SIZE });
    const codes = new Set<number>();
    inPlace.iterViews((v) => {
      for (let i = 0; i < v.backtraceLength; i++) codes.add(v.backtraceBuffer[i]);
    });
    streamed.iterViews(() => {});
    streamed.close();
    assert.ok(codes.size > 1000);
    for (const c of codes) {
      assert.deepEqual(streamed.lookupLocationCode(c), inPlace.lookupLocationCode(c));
    }
  } finally {
    Deno.removeSync(path);
  }
});

/** A one-allocation trace whose code 0x5eed0 is defined as two locations in one file, the
 * second one's function name sent as a string; returns it with the offset of the code's bytes. */
function traceWithDefinition(): { bytes: Uint8Array; codeAt: number } {
  const sink = new MemorySink();
  const w = newWriter(sink);
  const locs = [new Location("a.ml", 1, 2, 3, "A.f"), new Location("a.ml", 4, 5, 6, "A.g")];
  w.putAlloc({
    time: 1_700_000_000_000_010,
    length: 2,
    nsamples: 1,
    source: 0,
    callstack: [0x5eed0],
    decode: () => locs,
  });
  w.close();
  const bytes = sink.bytes().slice();
  const code = [0xd0, 0xee, 0x05, 0, 0, 0, 0, 0];
  const codeAt = bytes.findIndex((_, i) => code.every((c, k) => bytes[i + k] === c));
  assert.ok(codeAt > 0);
  return { bytes, codeAt };
}

/** The format error reading `bytes` raises. */
function formatError(bytes: Uint8Array): MemtraceFormatError {
  try {
    Reader.fromBytes(bytes).iterViews(() => {});
  } catch (e) {
    if (e instanceof MemtraceFormatError) return e;
    throw e;
  }
  assert.fail("no error");
}

Deno.test("a move-to-front index naming an empty filename slot fails after its location's 6 bytes", () => {
  const { bytes, codeAt } = traceWithDefinition();
  // The first location's filename index (bits 6..10 of its high 16 bits) set to 7: empty.
  const high = codeAt + 8 + 1 + 4;
  const v = bytes[high] | (bytes[high + 1] << 8);
  const patched = (v & ~(0x1f << 6)) | (7 << 6);
  bytes[high] = patched & 0xff;
  bytes[high + 1] = patched >>> 8;
  const e = formatError(bytes);
  assert.equal(e.check, "location table index");
  assert.equal(e.offset, codeAt + 8 + 1 + 6);
});

Deno.test("a move-to-front index naming an empty function-name slot fails where it is read", () => {
  const { bytes, codeAt } = traceWithDefinition();
  // The first location: 6 bytes, "a.ml\0", "A.f\0"; the second's function name (index 31, sent
  // as a string) becomes index 4, an empty slot of a.ml's table.
  const second = codeAt + 8 + 1 + 6 + 5 + 4;
  const high = second + 4;
  const v = bytes[high] | (bytes[high + 1] << 8);
  assert.equal((v >>> 11) & 0x1f, 31);
  const patched = (v & ~(0x1f << 11)) | (4 << 11);
  bytes[high] = patched & 0xff;
  bytes[high + 1] = patched >>> 8;
  const e = formatError(bytes);
  assert.equal(e.check, "location table index");
  assert.equal(e.offset, second + 6);
});
