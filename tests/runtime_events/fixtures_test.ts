// Real OCaml 5.3 ring files: our dump must equal OCaml's consumer output, and
// our producer must lay out a file exactly as the real runtime did.
import { assert, assertEquals } from "./assert.ts";
import d8Image from "../fixtures/runtime_events/d8/18440.events" with {
  type: "bytes",
};
import d8Dump from "../fixtures/runtime_events/d8/dump.txt" with { type: "text" };
import d8Header from "../fixtures/runtime_events/d8/header.txt" with { type: "text" };
import e10Image from "../fixtures/runtime_events/e10/18448.events" with {
  type: "bytes",
};
import e10Dump from "../fixtures/runtime_events/e10/dump.txt" with { type: "text" };
import e10Header from "../fixtures/runtime_events/e10/header.txt" with {
  type: "text",
};
import {
  customType,
  DecoderRegistry,
  dumpImage,
  RuntimeEventsCursor,
  RuntimeEventsProducer,
  Type,
} from "../../lib/runtime_events/mod.ts";
import {
  computeLayout,
  METADATA_HEADER_SIZE,
  readMetadataHeader,
  RING_HEADER_SIZE,
} from "../../lib/runtime_events/layout.ts";
import { refCustomDecoder } from "./fixture_decoders.ts";

const fixtures = [
  {
    name: "d8",
    pid: 18440,
    image: d8Image,
    dump: d8Dump,
    header: d8Header,
    maxDomains: 8,
    log: 16,
  },
  {
    name: "e10",
    pid: 18448,
    image: e10Image,
    dump: e10Dump,
    header: e10Header,
    maxDomains: 128,
    log: 10,
  },
];

function decoders(): DecoderRegistry {
  return new DecoderRegistry().register("ref.custom", refCustomDecoder);
}

/** Parses header.txt: `key: value` lines, `ring N: head=H tail=T`, `custom_event N: "name"`. */
function parseHeaderTxt(text: string) {
  const fields = new Map<string, bigint>();
  const rings = new Map<number, { head: number; tail: number }>();
  const names = new Map<number, string>();
  for (const line of text.trim().split("\n")) {
    let m = /^ring (\d+): head=(\d+) tail=(\d+)$/.exec(line);
    if (m) {
      rings.set(+m[1], { head: +m[2], tail: +m[3] });
      continue;
    }
    m = /^custom_event (\d+): "(.*)"$/.exec(line);
    if (m) {
      names.set(+m[1], m[2]);
      continue;
    }
    m = /^(\w+): (\d+)$/.exec(line);
    if (m) fields.set(m[1], BigInt(m[2]));
  }
  return { fields, rings, names };
}

for (const fx of fixtures) {
  Deno.test(`fixture ${fx.name}: dump equals OCaml's consumer output exactly`, () => {
    const out = dumpImage(fx.image, { decoders: decoders() });
    const got = out.split("\n");
    const want = fx.dump.split("\n");
    // Compare line by line first for a readable failure, then the whole text.
    for (let i = 0; i < Math.max(got.length, want.length); i++) {
      if (got[i] !== want[i]) assertEquals(got[i], want[i], `line ${i + 1}`);
    }
    assertEquals(out, fx.dump);
  });

  Deno.test(`fixture ${fx.name}: metadata, ring positions and names match header.txt`, () => {
    const h = parseHeaderTxt(fx.header);
    assertEquals(BigInt(fx.image.byteLength), h.fields.get("file_size"));
    const view = new DataView(fx.image.buffer, fx.image.byteOffset, fx.image.byteLength);
    const md = readMetadataHeader(view);
    assertEquals(md.version, h.fields.get("version"));
    assertEquals(md.maxDomains, h.fields.get("max_domains"));
    assertEquals(md.ringHeaderSizeBytes, h.fields.get("ring_header_size_bytes"));
    assertEquals(md.ringSizeBytes, h.fields.get("ring_size_bytes"));
    assertEquals(md.ringSizeElements, h.fields.get("ring_size_elements"));
    assertEquals(md.headersOffset, h.fields.get("headers_offset"));
    assertEquals(md.dataOffset, h.fields.get("data_offset"));
    assertEquals(md.customEventsOffset, h.fields.get("custom_events_offset"));
    for (const [ring, { head, tail }] of h.rings) {
      const at = METADATA_HEADER_SIZE + ring * RING_HEADER_SIZE;
      assertEquals(Number(view.getBigUint64(at, true)), head);
      assertEquals(Number(view.getBigUint64(at + 8, true)), tail);
    }
    // The pid in the file name is the one the runtime wrote (ring start, domain spawn).
    const pids = new Set<bigint>();
    new RuntimeEventsCursor(fx.image).readAll({
      lifecycle: (_d, _ts, ev, data) => ev !== 1 && ev !== 3 && data !== null && pids.add(data),
    });
    assertEquals([...pids], [BigInt(fx.pid)]);
    const seen: string[] = [];
    const cursor = new RuntimeEventsCursor(fx.image, { decoders: decoders() });
    const note = (_d: number, _ts: bigint, ev: { id: number; name: string }) =>
      seen.push(`${ev.id}:${ev.name}`);
    cursor.readAll({ userUnit: note, userInt: note, userSpan: note, userCustom: note });
    for (const entry of new Set(seen)) {
      const [id, name] = entry.split(/:(.*)/s);
      assertEquals(name, h.names.get(+id));
    }
  });

  Deno.test(`fixture ${fx.name}: our producer writes the same header, ring headers and name table`, () => {
    const p = new RuntimeEventsProducer({
      maxDomains: fx.maxDomains,
      logWsize: fx.log,
      pid: fx.pid,
      clock: () => 0,
    });
    for (const name of ["ref.unit", "ref.int", "ref.span"]) {
      p.registerUserEvent(
        name,
        name === "ref.int" ? Type.int : name === "ref.span" ? Type.span : Type.unit,
      );
    }
    p.start();
    p.registerUserEvent("ref.custom", Type.unit); // type does not matter for the table
    const ours = p.bytes;
    const layout = computeLayout(fx.maxDomains, fx.log);
    assertEquals(ours.byteLength, fx.image.byteLength);
    // Metadata header: byte-identical.
    assertEquals(ours.subarray(0, 64), fx.image.subarray(0, 64));
    // Ring headers: padding words are zero in both; head/tail differ (different events).
    for (let d = 0; d < fx.maxDomains; d++) {
      const at = 64 + d * RING_HEADER_SIZE + 16;
      assertEquals(ours.subarray(at, at + 64), fx.image.subarray(at, at + 64), `ring ${d} padding`);
    }
    // Custom event names table: byte-identical.
    assertEquals(
      ours.subarray(layout.customEventsOffset),
      fx.image.subarray(layout.customEventsOffset),
    );
  });
}

/**
 * Reads every event of `image` and writes it again through `producer`, with
 * a clock replaying the original timestamps. Ring start becomes `start()`,
 * ring resume `pause()` + `resume()`, and ring stop `destroy()`, whose
 * teardown hook writes the events the real runtime recorded after it.
 */
function replayInto(image: Uint8Array, producer: RuntimeEventsProducer, clock: { now: bigint }) {
  type Call = (p: RuntimeEventsProducer) => void;
  const calls: { ts: bigint; call: Call; stop?: boolean }[] = [];
  const unit = producer.registerUserEvent("ref.unit", Type.unit);
  const int = producer.registerUserEvent("ref.int", Type.int);
  const span = producer.registerUserEvent("ref.span", Type.span);
  // The real custom payloads hold stale bytes from OCaml's reused buffer between
  // the data and the final padding byte; this serializer copies them too.
  const custom = producer.registerUserEvent(
    "ref.custom",
    customType({
      serialize: (buf: Uint8Array, v: { full: Uint8Array; len: number }) => {
        buf.set(v.full);
        return v.len;
      },
    }),
  );
  let words = 0;
  new RuntimeEventsCursor(image).readAll({
    message: (_d, _pos, w) => words = w,
    runtimeBegin: (d, ts, ph) => calls.push({ ts, call: (p) => p.begin(d, ph) }),
    runtimeEnd: (d, ts, ph) => calls.push({ ts, call: (p) => p.end(d, ph) }),
    runtimeCounter: (d, ts, c, v) => calls.push({ ts, call: (p) => p.counter(d, c, v) }),
    lifecycle: (d, ts, ev, data) => {
      if (ev === 0) calls.push({ ts, call: (p) => p.start(d) });
      else if (ev === 1) calls.push({ ts, call: () => {}, stop: true });
      else if (ev === 3) calls.push({ ts, call: (p) => (p.pause(d), p.resume(d)) });
      else calls.push({ ts, call: (p) => p.lifecycle(d, ev, data ?? 0n) });
    },
    userUnit: (d, ts) => calls.push({ ts, call: (p) => p.writeUser(d, unit) }),
    userInt: (d, ts, _e, v) => calls.push({ ts, call: (p) => p.writeUser(d, int, v) }),
    userSpan: (d, ts, _e, s) => calls.push({ ts, call: (p) => p.writeUser(d, span, s) }),
    userCustom: (d, ts, _e, payload) => {
      const full = new Uint8Array(payload.buffer, payload.byteOffset, (words - 2) * 8 - 1).slice();
      const v = { full, len: payload.length };
      calls.push({ ts, call: (p) => p.writeUser(d, custom, v) });
    },
  });
  const replay = (from: number): void => {
    for (let i = from; i < calls.length; i++) {
      const { ts, call, stop } = calls[i];
      clock.now = ts;
      if (!stop) {
        call(producer);
        continue;
      }
      // The program's exit: EV_RING_STOP, then events written during the
      // stop-the-world teardown (here `begin stw_leader`), then nothing.
      producer.destroy(0, () => replay(i + 1));
      return;
    }
  };
  replay(0);
}

Deno.test("fixture d8: decoding every event and writing it back gives the identical file", () => {
  const clock = { now: 0n };
  const producer = new RuntimeEventsProducer({
    maxDomains: 8,
    logWsize: 16,
    pid: 18440,
    preserve: true,
    clock: () => clock.now,
  });
  replayInto(d8Image, producer, clock);
  assert.ok(!producer.started);
  assertEquals(producer.bytes, d8Image);
});

Deno.test("fixture e10: the surviving events of the wrapped rings write back to the same dump", () => {
  const clock = { now: 0n };
  const producer = new RuntimeEventsProducer({
    maxDomains: 128,
    logWsize: 10,
    pid: 18448,
    preserve: true,
    clock: () => clock.now,
  });
  // Ring start was overwritten in the real rings: start on an unused ring instead.
  producer.start(127);
  replayInto(e10Image, producer, clock);
  assert.ok(!producer.started);
  const ours = dumpImage(producer.bytes, { decoders: decoders() });
  const want = e10Dump.split("\n").filter((l) => !/^\d+ lost_events /.test(l)).join("\n");
  assertEquals(ours.split("\n").filter((l) => !l.startsWith("127 ")).join("\n"), want);
  // No ring wrapped in the replay: every surviving event fitted in its ring.
  for (let d = 0; d < 4; d++) assertEquals(producer.ringHead(d), 0);
});
