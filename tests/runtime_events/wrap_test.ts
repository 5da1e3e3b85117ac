// A small ring wrapping many times: the consumer must report exactly the
// overwritten words (OCaml's lost_events figure), resynchronise at the head,
// and deliver exactly the events still in the ring, never garbage.
import { assert, assertEquals } from "./assert.ts";
import {
  customType,
  RuntimeCounter,
  RuntimeEventsCursor,
  RuntimeEventsProducer,
  RuntimePhase,
  Type,
} from "../../lib/runtime_events/mod.ts";
import { collector, counterClock, type Ev, prng } from "./helpers.ts";

/**
 * An independent model of one flight-recorder ring: messages with absolute
 * positions, padding at the ring end, oldest messages dropped when full.
 */
class RingModel {
  msgs: { pos: number; len: number; ev: Ev | null }[] = [];
  head = 0;
  tail = 0;
  constructor(readonly size: number) {}
  write(len: number, ev: Ev): void {
    const off = this.tail % this.size;
    const pad = this.size - off < len ? this.size - off : 0;
    while (this.tail + len + pad - this.head >= this.size) {
      this.head += this.msgs.shift()!.len;
    }
    if (pad) {
      this.msgs.push({ pos: this.tail, len: pad, ev: null });
      this.tail += pad;
    }
    this.msgs.push({ pos: this.tail, len, ev });
    this.tail += len;
  }
  /** What a cursor at `pos` gets: lost words (if any), then the events. */
  read(d: number, pos: number): { events: Ev[]; pos: number } {
    const events: Ev[] = [];
    if (this.head > pos) {
      events.push({ k: "lost", d, words: this.head - pos });
      pos = this.head;
    }
    for (const m of this.msgs) if (m.pos >= pos && m.ev) events.push(m.ev);
    return { events, pos: this.tail };
  }
}

function scenario(
  seed: number,
  logWsize: number,
  domains: number,
  total: number,
  pollEvery: number,
) {
  const rand = prng(seed);
  let now = 5000;
  const p = new RuntimeEventsProducer({ maxDomains: domains, logWsize, pid: 77, clock: () => now });
  const unit = p.registerUserEvent("w.unit", Type.unit);
  const int = p.registerUserEvent("w.int", Type.int);
  const span = p.registerUserEvent("w.span", Type.span);
  const blob = p.registerUserEvent(
    "w.blob",
    customType({
      serialize: (buf: Uint8Array, n: number) => {
        for (let i = 0; i < n; i++) buf[i] = (n + i) & 0xff;
        return n;
      },
    }),
  );
  const size = 2 ** logWsize;
  const models = Array.from({ length: domains }, () => new RingModel(size));
  p.start();
  // Ring start went to domain 0.
  models[0].write(3, { k: "lifecycle", d: 0, ts: 5000n, ev: 0, data: 77n });
  const cursor = new RuntimeEventsCursor(p.bytes);
  const modelPos = new Array(domains).fill(0);
  const got: Ev[] = [];
  const want: Ev[] = [];
  const poll = () => {
    cursor.readAll(collector(got));
    for (let d = 0; d < domains; d++) {
      const r = models[d].read(d, modelPos[d]);
      want.push(...r.events);
      modelPos[d] = r.pos;
    }
  };
  /** A custom event of `n` payload bytes, written and modelled. */
  const writeBlob = (d: number, ts: bigint, n: number) => {
    p.writeUser(d, blob, n);
    const payload = Array.from({ length: n }, (_, i) => (n + i) & 0xff);
    const ev = { k: "custom" as const, d, ts, name: "w.blob", payload, decoded: undefined };
    models[d].write(2 + Math.floor((n + 8) / 8), ev);
  };
  for (let i = 0; i < total; i++) {
    now++;
    const ts = BigInt(now);
    const d = Math.floor(rand() * domains);
    const r = rand();
    if (r < 0.3) {
      const phase = Math.floor(rand() * 48);
      if (rand() < 0.5) {
        p.begin(d, phase);
        models[d].write(2, { k: "begin", d, ts, phase });
      } else {
        p.end(d, phase);
        models[d].write(2, { k: "end", d, ts, phase });
      }
    } else if (r < 0.5) {
      const value = BigInt(Math.floor(rand() * 2 ** 40));
      p.counter(d, RuntimeCounter.EV_C_MINOR_ALLOCATED, value);
      models[d].write(3, {
        k: "counter",
        d,
        ts,
        counter: RuntimeCounter.EV_C_MINOR_ALLOCATED,
        value,
      });
    } else if (r < 0.65) {
      const v = Math.floor(rand() * 2 ** 31) * (rand() < 0.5 ? -1 : 1);
      p.writeUser(d, int, v);
      models[d].write(3, { k: "int", d, ts, name: "w.int", value: BigInt(v) });
    } else if (r < 0.75) {
      p.writeUser(d, unit);
      models[d].write(2, { k: "unit", d, ts, name: "w.unit" });
    } else if (r < 0.85) {
      const s = rand() < 0.5 ? "begin" : "end";
      p.writeUser(d, span, s);
      models[d].write(2, { k: "span", d, ts, name: "w.span", span: s });
    } else if (r < 0.97) {
      writeBlob(d, ts, Math.floor(rand() * 200));
    } else {
      // Occasionally a large message (alloc: 22 words, or a near-maximal custom one).
      if (rand() < 0.5) {
        p.alloc(Math.floor(rand() * 150));
        p.allocFlush(d);
        const ev = { k: "alloc" as const, d, ts, buckets: [] as bigint[] };
        models[d].write(22, ev);
      } else {
        writeBlob(d, ts, 1000 + Math.floor(rand() * 24));
      }
    }
    if (pollEvery > 0 && i % pollEvery === pollEvery - 1) poll();
  }
  poll();
  // Alloc buckets are checked elsewhere; compare the rest exactly.
  const strip = (e: Ev) => e.k === "alloc" ? { ...e, buckets: [] } : e;
  return { got: got.map(strip), want, p, models };
}

Deno.test("small ring wrapping many times: exact lost words and surviving events", async (t) => {
  await t.step("one read at the end (a late cursor)", () => {
    const { got, want, models } = scenario(1, 9, 3, 20_000, 0);
    assertEquals(got, want);
    const lost = got.filter((e) => e.k === "lost");
    // Each ring reports its loss once, equal to its head (the cursor started at 0).
    assertEquals(lost.length, 3);
    for (const e of lost) assertEquals(e.k === "lost" && e.words, models[e.d].head);
    for (const m of models) assert.ok(m.head > 50 * 512, "the ring wrapped many times");
  });
  for (const every of [7, 100, 333, 1000]) {
    await t.step(`polling every ${every} events`, () => {
      const { got, want } = scenario(every, 9, 2, 10_000, every);
      assertEquals(got, want);
      if (every >= 333) assert.ok(got.some((e) => e.k === "lost"));
    });
  }
  await t.step("a ring of 2^10 words with one domain", () => {
    const { got, want } = scenario(99, 10, 1, 30_000, 250);
    assertEquals(got, want);
  });
});

Deno.test("producer head and tail agree with the model and the image", () => {
  const { p, models } = scenario(5, 9, 2, 5000, 0);
  const view = new DataView(p.bytes.buffer);
  for (let d = 0; d < 2; d++) {
    assertEquals(p.ringHead(d), models[d].head);
    assertEquals(p.ringTail(d), models[d].tail);
    const at = p.layout.headersOffset + d * 80;
    assertEquals(Number(view.getBigUint64(at, true)), models[d].head);
    assertEquals(Number(view.getBigUint64(at + 8, true)), models[d].tail);
  }
});

Deno.test("readPoll with maxEvents resumes where it stopped", () => {
  const p = new RuntimeEventsProducer({
    maxDomains: 1,
    logWsize: 12,
    pid: 1,
    clock: counterClock(),
  });
  p.start();
  for (let i = 0; i < 50; i++) p.begin(0, RuntimePhase.EV_MINOR);
  const cursor = new RuntimeEventsCursor(p.bytes);
  const seen: bigint[] = [];
  const cb = { runtimeBegin: (_d: number, ts: bigint) => seen.push(ts) };
  assertEquals(cursor.readPoll(cb, 10), 10);
  assertEquals(seen.length, 9); // the first event was the ring start (lifecycle)
  let n = 0;
  while (cursor.readPoll(cb, 10) > 0) n++;
  assertEquals(seen.length, 50);
  assertEquals(n, 5);
  assertEquals(seen, Array.from({ length: 50 }, (_, i) => BigInt(1001 + i)));
});

Deno.test("a callback that throws stops the poll; the event is delivered again", () => {
  const p = new RuntimeEventsProducer({
    maxDomains: 1,
    logWsize: 12,
    pid: 1,
    clock: counterClock(),
  });
  p.start();
  p.begin(0, RuntimePhase.EV_MINOR);
  p.end(0, RuntimePhase.EV_MINOR);
  const cursor = new RuntimeEventsCursor(p.bytes);
  let fail = true;
  const seen: string[] = [];
  const cb = {
    runtimeBegin: () => {
      if (fail) throw new Error("boom");
      seen.push("begin");
    },
    runtimeEnd: () => seen.push("end"),
  };
  assert.throws(() => cursor.readPoll(cb), /boom/);
  fail = false;
  cursor.readAll(cb);
  assertEquals(seen, ["begin", "end"]);
});
