// The reader streams: a trace of about a gigabyte, served on the fly by a ByteSource that
// repeats one packet, is read through a 32 KiB window, never held whole. Regular files are read
// through a larger window (FILE_WINDOW_BYTES), handed on from closed readers to new ones.
import assert from "node:assert/strict";
import {
  AllocationSource,
  type ByteSource,
  FILE_WINDOW_BYTES,
  Location,
  MAX_PACKET_SIZE,
  MemorySink,
  MemtraceArgumentError,
  Reader,
  Writer,
} from "../../lib/memtrace/mod.ts";
import { sized } from "../tier.ts";

/** A trace: the info packet, then one packet of location definitions at the start time. */
function parts(): { head: Uint8Array; packet: Uint8Array } {
  const sink = new MemorySink();
  const info = {
    sampleRate: 1e-4,
    wordSize: 64,
    executableName: "big",
    hostName: "h",
    ocamlRuntimeParams: "",
    pid: 7n,
    initialDomain: 0,
    startTime: 1_000_000,
    context: undefined,
  };
  const w = Writer.create(sink, info);
  const headLen = sink.size;
  // 100 allocations at the start time with distinct codes: their definitions go out in a
  // location packet, then one event packet. Both only hold events at the start time, so that
  // repeating them keeps every check (time bounds, monotone times, alloc id sync) satisfied.
  const locs = (c: number) => [new Location("big.ml", c, 1, 2, `Big.f${c}`)];
  for (let c = 1; c <= 100; c++) {
    w.putAlloc({
      time: 1_000_000,
      length: 2,
      nsamples: 1,
      source: AllocationSource.Minor,
      callstack: [c],
      decode: locs,
    });
  }
  w.flush();
  const all = sink.bytes().slice();
  return { head: all.slice(0, headLen), packet: all.slice(headLen) };
}

/** A source of `copies` repetitions of the packet after the head, made up as it is read. */
class RepeatingSource implements ByteSource {
  maxRequest = 0;
  reads = 0;
  constructor(readonly head: Uint8Array, readonly packet: Uint8Array, readonly copies: number) {}
  size(): number {
    return this.head.length + this.packet.length * this.copies;
  }
  read(pos: number, dst: Uint8Array, off: number, len: number): number {
    this.reads++;
    this.maxRequest = Math.max(this.maxRequest, len);
    const end = Math.min(this.size(), pos + len);
    let n = 0;
    for (let p = pos; p < end;) {
      let chunk: Uint8Array, at: number;
      if (p < this.head.length) {
        chunk = this.head;
        at = p;
      } else {
        chunk = this.packet;
        at = (p - this.head.length) % this.packet.length;
      }
      const k = Math.min(chunk.length - at, end - p);
      dst.set(chunk.subarray(at, at + k), off + n);
      n += k;
      p += k;
    }
    return n;
  }
  close(): void {}
}

/** The size of the trace read through a window: about 1 GB; 100 MB in the quick tier
 * (tests/tier.ts). */
const BIG = sized(1e9, 1e8);

Deno.test(`a ~${BIG / 1e6} MB trace is read through a 32 KiB window, never whole`, () => {
  const { head, packet } = parts();
  // Each copy is a location packet plus an event packet: the events' ids restart with each
  // copy, which the reader accepts (alloc id sync is checked within a packet).
  const copies = Math.ceil(BIG / packet.length);
  const src = new RepeatingSource(head, packet, copies);
  const r = Reader.fromSource(src);
  let events = 0;
  r.iter(() => events++, { parseBacktraces: false });
  assert.equal(events, 100 * copies);
  assert.ok(src.size() >= BIG);
  assert.ok(src.maxRequest <= MAX_PACKET_SIZE, `asked for ${src.maxRequest} bytes at once`);
  assert.ok(src.reads >= src.size() / MAX_PACKET_SIZE, "the file was read piece by piece");
});

/** Every field of every event of `r`, backtraces included, as text lines. */
function eventLines(r: Reader): string[] {
  const out: string[] = [];
  r.iterViews((v) => {
    const bt = Array.from(v.backtraceBuffer.subarray(0, v.backtraceLength)).join(",");
    out.push(
      `${v.kind} ${v.time} ${v.objId} ${v.domain} ${v.length} ${v.nsamples} ${v.source} ` +
        `${v.commonPrefix} ${bt}`,
    );
  });
  return out;
}

const OCAMLOPT = new URL("../fixtures/memtrace/ocamlopt.ctf", import.meta.url);

Deno.test("windowBytes: a source is asked for at most the window at once, with the same events", () => {
  const { head, packet } = parts();
  const copies = Math.ceil(3e6 / packet.length);
  const small = new RepeatingSource(head, packet, copies);
  const large = new RepeatingSource(head, packet, copies);
  const a = eventLines(Reader.fromSource(small));
  const b = eventLines(Reader.fromSource(large, { windowBytes: FILE_WINDOW_BYTES }));
  assert.equal(a.length, 100 * copies);
  assert.deepEqual(b, a);
  assert.equal(small.maxRequest, MAX_PACKET_SIZE);
  assert.ok(large.maxRequest > MAX_PACKET_SIZE && large.maxRequest <= FILE_WINDOW_BYTES);
  assert.ok(large.reads * 4 < small.reads, `${large.reads} reads against ${small.reads}`);
  for (const bad of [MAX_PACKET_SIZE - 1, 2 ** 30 + 1, 40_000.5, NaN]) {
    assert.throws(
      () => Reader.fromSource(new RepeatingSource(head, packet, 1), { windowBytes: bad }),
      MemtraceArgumentError,
    );
  }
});

Deno.test("a file read through the default window, or a 32 KiB one, gives what is read in place", () => {
  const bytes = Deno.readFileSync(OCAMLOPT);
  const inPlace = eventLines(Reader.fromBytes(bytes));
  assert.equal(inPlace.length, 3499);
  for (const windowBytes of [undefined, MAX_PACKET_SIZE, MAX_PACKET_SIZE + 1]) {
    const r = Reader.open(OCAMLOPT, windowBytes === undefined ? {} : { windowBytes });
    assert.deepEqual(eventLines(r), inPlace, `window ${windowBytes}`);
    r.close();
  }
});

Deno.test("a closed reader keeps its locations, refuses to iterate, and its window serves the next", () => {
  const dir = Deno.makeTempDirSync();
  try {
    // Two different files, read one after the other and overlapping: a window handed on by a
    // closed reader must not carry anything over, and a reader still open keeps its own.
    const { head, packet } = parts();
    const other = `${dir}/other.ctf`;
    const copies = 2000;
    const whole = new Uint8Array(head.length + copies * packet.length);
    whole.set(head);
    for (let i = 0; i < copies; i++) whole.set(packet, head.length + i * packet.length);
    Deno.writeFileSync(other, whole);
    const expectOther = eventLines(Reader.fromBytes(whole));
    const expectOcamlopt = eventLines(Reader.fromBytes(Deno.readFileSync(OCAMLOPT)));

    const first = Reader.open(OCAMLOPT);
    const codes = new Set<number>();
    first.iterViews((v) => {
      for (let i = 0; i < v.backtraceLength; i++) codes.add(v.backtraceBuffer[i]);
    });
    first.close();
    assert.throws(() => first.iterViews(() => {}), MemtraceArgumentError);
    const inPlace = Reader.fromBytes(Deno.readFileSync(OCAMLOPT));
    eventLines(inPlace);
    for (const c of codes) {
      assert.deepEqual(first.lookupLocationCode(c), inPlace.lookupLocationCode(c));
    }

    const second = Reader.open(other);
    const it = second.iterate(() => {});
    it.advance(1);
    const third = Reader.open(OCAMLOPT);
    assert.deepEqual(eventLines(third), expectOcamlopt);
    third.close();
    second.close();
    assert.throws(() => it.advance(), MemtraceArgumentError);
    const fourth = Reader.open(other);
    assert.deepEqual(eventLines(fourth), expectOther);
    fourth.close();
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
