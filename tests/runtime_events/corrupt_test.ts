// Corrupt and truncated input: a typed error naming the ring and byte offset,
// or (where the input is merely odd) a clean read.
import { assert, assertEquals } from "./assert.ts";
import {
  customType,
  dumpImage,
  RuntimeEventsCursor,
  RuntimeEventsFormatError,
  RuntimeEventsProducer,
  RuntimePhase,
  Type,
} from "../../lib/runtime_events/mod.ts";
import { collector, counterClock, type Ev } from "./helpers.ts";

function sample(): { p: RuntimeEventsProducer; bytes: Uint8Array } {
  const p = new RuntimeEventsProducer({
    maxDomains: 2,
    logWsize: 10,
    pid: 3,
    clock: counterClock(),
  });
  const i = p.registerUserEvent("i", Type.int);
  const c = p.registerUserEvent(
    "c",
    customType({
      serialize: (b: Uint8Array) => {
        b.set([1, 2, 3]);
        return 3;
      },
    }),
  );
  p.start();
  p.begin(1, RuntimePhase.EV_MINOR);
  p.writeUser(1, i, 5);
  p.writeUser(1, c, null);
  p.end(1, RuntimePhase.EV_MINOR);
  return { p, bytes: p.bytes.slice() };
}

function expectError(
  bytes: Uint8Array,
  domain: number | null,
  offset: number,
  reason: RegExp,
): void {
  let err: unknown;
  try {
    new RuntimeEventsCursor(bytes).readAll({});
  } catch (e) {
    err = e;
  }
  assert.ok(
    err instanceof RuntimeEventsFormatError,
    `expected a RuntimeEventsFormatError, got ${err}`,
  );
  assertEquals(err.domain, domain);
  assertEquals(err.offset, offset);
  assert.match(err.reason, reason);
  assert.match(
    err.message,
    domain === null ? /at byte/ : new RegExp(`in ring ${domain} at byte ${offset}`),
  );
}

const set64 = (b: Uint8Array, at: number, v: bigint) =>
  new DataView(b.buffer, b.byteOffset).setBigUint64(at, v, true);

Deno.test("corrupt metadata header", async (t) => {
  const { bytes } = sample();
  await t.step("shorter than the header", () => {
    assert.throws(() => new RuntimeEventsCursor(bytes.subarray(0, 63)), RuntimeEventsFormatError);
  });
  await t.step("more than 4096 domains", () => {
    const b = bytes.slice();
    set64(b, 8, 5000n);
    assert.throws(() => new RuntimeEventsCursor(b), /max_domains 5000 exceeds 4096/);
  });
  await t.step("ring size fields disagree", () => {
    const b = bytes.slice();
    set64(b, 32, 1000n);
    expectError(b, null, 32, /ring_size_elements 1000/);
    set64(b, 32, 0n);
    expectError(b, null, 32, /ring_size_elements 0/);
  });
  await t.step("headers offset beyond the file", () => {
    const b = bytes.slice();
    set64(b, 40, 1n << 40n);
    expectError(b, null, 40, /headers_offset/);
  });
});

Deno.test("truncated file: ring data beyond the end names the ring and its offset", () => {
  const { p, bytes } = sample();
  const ring1 = p.layout.dataOffset + p.layout.ringSizeBytes;
  expectError(bytes.subarray(0, ring1 + 100), 1, ring1, /ring data .* beyond end of file/);
  // Cut inside the name table: reading the first user event's name fails.
  const names = p.layout.customEventsOffset;
  expectError(bytes.subarray(0, names + 10), 1, ring1 + 16, /name of user event 0/);
});

Deno.test("corrupt ring positions and messages", async (t) => {
  const { p } = sample();
  const hdr1 = p.layout.headersOffset + 80;
  const ring1 = p.layout.dataOffset + p.layout.ringSizeBytes;
  await t.step("tail too far ahead of head", () => {
    const b = p.bytes.slice();
    set64(b, hdr1 + 8, 5000n);
    expectError(b, 1, hdr1, /ring holds 5000 words/);
  });
  await t.step("positions beyond 2^53", () => {
    const b = p.bytes.slice();
    set64(b, hdr1 + 8, 1n << 60n);
    expectError(b, 1, hdr1 + 8, /beyond 2\^53/);
  });
  await t.step("zero-length message", () => {
    const b = p.bytes.slice();
    set64(b, ring1, 0n);
    expectError(b, 1, ring1, /invalid length 0/);
  });
  await t.step("message running past the tail", () => {
    const b = p.bytes.slice();
    set64(b, ring1, (40n << 54n) | (2n << 49n));
    expectError(b, 1, ring1, /runs past the ring tail/);
  });
  await t.step("message crossing the ring end", () => {
    const b = p.bytes.slice();
    const last = ring1 + p.layout.ringSizeBytes - 8;
    set64(b, hdr1, 1023n);
    set64(b, hdr1 + 8, 1030n);
    set64(b, last, (3n << 54n) | (2n << 49n));
    expectError(b, 1, last, /crosses the end of the ring/);
  });
  await t.step("counter without a value", () => {
    const b = p.bytes.slice();
    set64(b, ring1, (2n << 54n) | (4n << 49n)); // counter of length 2
    expectError(b, 1, ring1, /counter message without a value/);
  });
  await t.step("custom padding byte larger than the payload", () => {
    const b = p.bytes.slice();
    // Messages on ring 1: begin (2 words), int (3), custom (3) → custom payload at word 7.
    const padByte = ring1 + (5 + 2) * 8 + 7;
    assertEquals(b[padByte], 4);
    b[padByte] = 9;
    expectError(b, 1, padByte, /padding byte 9/);
  });
  await t.step("head beyond tail: lost words reported, nothing read", () => {
    const b = p.bytes.slice();
    set64(b, hdr1, 50n);
    const out: Ev[] = [];
    new RuntimeEventsCursor(b).readAll(collector(out));
    assertEquals(out.filter((e) => e.d === 1), [{ k: "lost", d: 1, words: 50 }]);
  });
  await t.step("unknown phase, counter and lifecycle ordinals still print", () => {
    const b = p.bytes.slice();
    set64(b, ring1, (2n << 54n) | (2n << 49n) | (4000n << 36n));
    assert.match(dumpImage(b), /^1 1001 begin unknown_phase_4000$/m);
  });
});
