// The reader streams: a trace of about a gigabyte, served on the fly by a ByteSource that
// repeats one packet, is read through a 32 KiB window, never held whole.
import assert from "node:assert/strict";
import {
  AllocationSource,
  type ByteSource,
  Location,
  MAX_PACKET_SIZE,
  MemorySink,
  Reader,
  Writer,
} from "../../lib/memtrace/mod.ts";

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

Deno.test("a ~1 GB trace is read through a 32 KiB window, never whole", () => {
  const { head, packet } = parts();
  // Each copy is a location packet plus an event packet: the events' ids restart with each
  // copy, which the reader accepts (alloc id sync is checked within a packet).
  const copies = Math.ceil(1e9 / packet.length);
  const src = new RepeatingSource(head, packet, copies);
  const r = Reader.fromSource(src);
  let events = 0;
  r.iter(() => events++, { parseBacktraces: false });
  assert.equal(events, 100 * copies);
  assert.ok(src.size() >= 1e9);
  assert.ok(src.maxRequest <= MAX_PACKET_SIZE, `asked for ${src.maxRequest} bytes at once`);
  assert.ok(src.reads >= src.size() / MAX_PACKET_SIZE, "the file was read piece by piece");
});
