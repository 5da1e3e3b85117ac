// Producer → consumer round trips for every event kind, several domains,
// custom events, pause/resume, destroy and user event registration rules.
import { assert, assertEquals } from "./assert.ts";
import {
  bytesType,
  customType,
  DecoderRegistry,
  dumpImage,
  Lifecycle,
  MAX_CUSTOM_EVENTS,
  OCamlInvalidArgument,
  RuntimeCounter,
  RuntimeEventsCursor,
  RuntimeEventsProducer,
  RuntimePhase,
  Type,
} from "../../lib/runtime_events/mod.ts";
import { counterClock, type Ev, readEvents } from "./helpers.ts";
import { encodeRefCustom, refCustomDecoder } from "./fixture_decoders.ts";

function producer(opts: { maxDomains?: number; logWsize?: number } = {}) {
  return new RuntimeEventsProducer({
    maxDomains: opts.maxDomains ?? 4,
    logWsize: opts.logWsize ?? 12,
    pid: 4242,
    clock: counterClock(),
  });
}

Deno.test("round trip: every runtime event kind with exact values", () => {
  const p = producer();
  p.start();
  p.begin(0, RuntimePhase.EV_MINOR);
  p.counter(0, RuntimeCounter.EV_C_MINOR_PROMOTED, 8424);
  p.counter(0, RuntimeCounter.EV_C_MAJOR_HEAP_WORDS, (1n << 63n) + 5n); // OCaml int: low 63 bits
  p.counter(0, RuntimeCounter.EV_C_MAJOR_SLICE_BUDGET, 2 ** 40 + 3);
  p.end(0, RuntimePhase.EV_MINOR);
  p.alloc(0);
  p.alloc(3);
  p.alloc(3);
  p.alloc(10);
  p.alloc(99);
  p.alloc(100);
  p.alloc(1e6);
  p.allocFlush(0);
  p.alloc(5);
  p.allocFlush(0);
  p.lifecycle(0, Lifecycle.EV_FORK_PARENT, -12);
  p.lifecycle(0, Lifecycle.EV_FORK_CHILD, 0);
  p.begin(0, RuntimePhase.EV_COMPACT_RELEASE);
  const events = readEvents(p.bytes);
  const b1 = Array<bigint>(20).fill(0n);
  b1[0] = 1n;
  b1[3] = 2n;
  b1[10] = 1n;
  b1[18] = 1n;
  b1[19] = 2n;
  const b2 = Array<bigint>(20).fill(0n);
  b2[0] = 1n; // bucket 0 is never reset, as in OCaml
  b2[5] = 1n;
  assertEquals(events, [
    { k: "lifecycle", d: 0, ts: 1000n, ev: Lifecycle.EV_RING_START, data: 4242n },
    { k: "begin", d: 0, ts: 1001n, phase: RuntimePhase.EV_MINOR },
    { k: "counter", d: 0, ts: 1002n, counter: RuntimeCounter.EV_C_MINOR_PROMOTED, value: 8424n },
    { k: "counter", d: 0, ts: 1003n, counter: RuntimeCounter.EV_C_MAJOR_HEAP_WORDS, value: 5n },
    {
      k: "counter",
      d: 0,
      ts: 1004n,
      counter: RuntimeCounter.EV_C_MAJOR_SLICE_BUDGET,
      value: 2n ** 40n + 3n,
    },
    { k: "end", d: 0, ts: 1005n, phase: RuntimePhase.EV_MINOR },
    { k: "alloc", d: 0, ts: 1006n, buckets: b1 },
    { k: "alloc", d: 0, ts: 1007n, buckets: b2 },
    { k: "lifecycle", d: 0, ts: 1008n, ev: Lifecycle.EV_FORK_PARENT, data: -12n },
    { k: "lifecycle", d: 0, ts: 1009n, ev: Lifecycle.EV_FORK_CHILD, data: null },
    { k: "begin", d: 0, ts: 1010n, phase: RuntimePhase.EV_COMPACT_RELEASE },
  ]);
  assert.equal(
    dumpImage(p.bytes).split("\n").slice(6, 8).join("\n"),
    "0 1006 alloc [1;0;0;2;0;0;0;0;0;0;1;0;0;0;0;0;0;0;1;2]\n" +
      "0 1007 alloc [1;0;0;0;0;1;0;0;0;0;0;0;0;0;0;0;0;0;0;0]",
  );
});

Deno.test("round trip: several domains are read ring by ring, with spawn/terminate", () => {
  const p = producer({ maxDomains: 4 });
  p.start();
  for (let d = 1; d < 4; d++) p.domainSpawn(d);
  for (let i = 0; i < 5; i++) {
    for (let d = 0; d < 4; d++) p.begin(d, RuntimePhase.EV_MAJOR_SLICE);
    for (let d = 3; d >= 0; d--) p.end(d, RuntimePhase.EV_MAJOR_SLICE);
  }
  for (let d = 1; d < 4; d++) p.domainTerminate(d);
  const events = readEvents(p.bytes);
  assertEquals(events.map((e) => e.d), [...events.map((e) => e.d)].sort());
  for (let d = 1; d < 4; d++) {
    const mine = events.filter((e) => e.d === d);
    assertEquals(mine.length, 12);
    assertEquals(mine[0], {
      k: "lifecycle",
      d,
      ts: BigInt(1000 + d), // spawned right after the ring start at 1000
      ev: Lifecycle.EV_DOMAIN_SPAWN,
      data: 4242n,
    });
    assertEquals(mine[11].k === "lifecycle" && mine[11].ev, Lifecycle.EV_DOMAIN_TERMINATE);
  }
  // Timestamps within a ring increase.
  for (let d = 0; d < 4; d++) {
    const ts = events.filter((e) => e.d === d).map((e) => "ts" in e ? e.ts : 0n);
    for (let i = 1; i < ts.length; i++) assert.ok(ts[i] > ts[i - 1]);
  }
});

Deno.test("round trip: user unit, int (32-bit truncation), span and custom events", async (t) => {
  const p = producer();
  const evUnit = p.registerUserEvent("ref.unit", Type.unit);
  const evInt = p.registerUserEvent("ref.int", Type.int);
  const evSpan = p.registerUserEvent("ref.span", Type.span);
  const refType = customType({
    serialize: (buf: Uint8Array, v: { label: string; n: bigint; x: number }) =>
      encodeRefCustom(buf, v),
  });
  const evCustom = p.registerUserEvent("ref.custom", refType);
  p.start();
  p.writeUser(0, evSpan, "begin");
  p.writeUser(0, evUnit);
  const ints = [
    42,
    -7,
    (1n << 62n) - 1n, // max_int
    -(1n << 62n), // min_int
    0x7fffffff,
    0x80000000,
    0x100000005,
    -0x80000001,
  ];
  for (const v of ints) p.writeUser(0, evInt, v);
  p.writeUser(1, evCustom, { label: "hello", n: 1234567n, x: 3.25 });
  p.writeUser(1, evCustom, { label: "", n: -1n, x: -0 });
  p.writeUser(0, evSpan, "end");
  const decoders = new DecoderRegistry().register("ref.custom", refCustomDecoder);

  await t.step("values as OCaml's consumer reads them", () => {
    const evs = readEvents(p.bytes, { decoders }).filter((e) => e.k !== "lifecycle");
    const ints = evs.filter((e) => e.k === "int").map((e) => e.k === "int" ? e.value : 0n);
    // The real runtime stores a C int: the same values as the d8 fixture dump.
    assertEquals(ints, [42n, -7n, -1n, 0n, 2147483647n, -2147483648n, 5n, 2147483647n]);
    assertEquals(evs[0], { k: "span", d: 0, ts: 1001n, name: "ref.span", span: "begin" });
    assertEquals(evs[1], { k: "unit", d: 0, ts: 1002n, name: "ref.unit" });
    assertEquals(evs[10], { k: "span", d: 0, ts: 1013n, name: "ref.span", span: "end" });
  });

  await t.step("dump text matches the reference format", () => {
    const dump = dumpImage(p.bytes, { decoders });
    assert.match(
      dump,
      /^1 1011 user "ref\.custom" custom \{label="hello"; n=1234567; x=0x1\.ap\+1\}$/m,
    );
    assert.match(dump, /^1 1012 user "ref\.custom" custom \{label=""; n=-1; x=-0x0p\+0\}$/m);
    // Without a decoder the payload prints as hex.
    assert.match(
      dumpImage(p.bytes),
      /^1 1012 user "ref\.custom" custom 00ffffffffffffffff0000000000000080$/m,
    );
  });

  await t.step("custom payload: final byte counts the padding; stale bytes remain", () => {
    const q = producer();
    const raw = customType({
      serialize: (buf: Uint8Array, n: number) => {
        for (let i = 0; i < n; i++) buf[i] = 0xa0 + i;
        return n;
      },
    });
    const ev = q.registerUserEvent("raw", raw);
    q.start();
    const lens = [16, 3, 0, 7, 8, 1023];
    for (const n of lens) q.writeUser(2, ev, n);
    const got = readEvents(q.bytes).filter((e) => e.k === "custom");
    assertEquals(got.map((e) => e.k === "custom" ? e.payload.length : -1), lens);
    // Look at the raw ring words of the 3-byte event: 1 word, last byte = 7 - 3 = 4,
    // bytes 3..6 left over from the 16-byte event before it (OCaml reuses its buffer).
    const cursor = new RuntimeEventsCursor(q.bytes);
    const positions: number[] = [];
    cursor.readAll({ message: (d, pos, words) => d === 2 && positions.push(pos, words) });
    const base = q.layout.dataOffset + 2 * q.layout.ringSizeBytes;
    const second = base + positions[2] * 8 + 16;
    assertEquals(positions[3], 3);
    assertEquals([...q.bytes.subarray(second, second + 8)], [
      0xa0,
      0xa1,
      0xa2,
      0xa3,
      0xa4,
      0xa5,
      0xa6,
      4,
    ]);
    assertEquals(positions.filter((_, i) => i % 2 === 1), [5, 3, 3, 3, 4, 130]);
  });

  await t.step("truncateUserInt: false keeps the whole value", () => {
    const q = new RuntimeEventsProducer({
      maxDomains: 1,
      logWsize: 10,
      pid: 1,
      truncateUserInt: false,
      clock: counterClock(),
    });
    const ev = q.registerUserEvent("i", Type.int);
    q.start();
    q.writeUser(0, ev, (1n << 62n) - 1n);
    q.writeUser(0, ev, -0x80000001);
    q.writeUser(0, ev, 2 ** 40);
    const got = readEvents(q.bytes).filter((e) => e.k === "int").map((e) =>
      e.k === "int" && e.value
    );
    assertEquals(got, [(1n << 62n) - 1n, -0x80000001n, 2n ** 40n]);
  });

  await t.step("serializer errors and bad lengths", () => {
    const q = producer();
    const bad = q.registerUserEvent("bad", customType({ serialize: () => 1024 }));
    q.start();
    assert.throws(() => q.writeUser(0, bad, 0), RangeError);
    assert.throws(() => q.writeUser(0, evInt as never, 1.5), TypeError);
  });
});

Deno.test("an unknown name of a built-in type still decodes; unknown custom prints as hex", () => {
  const p = producer();
  const a = p.registerUserEvent("a", Type.int);
  p.start();
  p.writeUser(0, a, 9);
  // Wipe the name table slot: OCaml resolves such events under the empty name.
  const bytes = p.bytes;
  bytes.fill(0, p.layout.customEventsOffset, p.layout.customEventsOffset + 128);
  const dump = dumpImage(bytes);
  assert.match(dump, /^0 1001 user "" int 9$/m);
});

Deno.test("pause and resume emit once; EV_RING_PAUSE is not recorded by default", () => {
  for (const recordPause of [false, true]) {
    const p = new RuntimeEventsProducer({
      maxDomains: 2,
      logWsize: 10,
      pid: 7,
      recordPause,
      clock: counterClock(),
    });
    const u = p.registerUserEvent("u", Type.unit);
    p.start();
    p.begin(0, RuntimePhase.EV_MINOR);
    assert.ok(p.active);
    p.pause();
    p.pause();
    assert.ok(!p.active);
    p.begin(0, RuntimePhase.EV_MAJOR);
    p.counter(1, RuntimeCounter.EV_C_MINOR_ALLOCATED, 1);
    p.writeUser(1, u);
    p.alloc(3);
    p.allocFlush(0);
    p.resume();
    p.resume();
    p.end(0, RuntimePhase.EV_MINOR);
    const names = readEvents(p.bytes).map((e) =>
      e.k === "lifecycle" ? `lifecycle ${e.ev}` : `${e.k} ${"phase" in e ? e.phase : ""}`
    );
    assertEquals(names, [
      `lifecycle ${Lifecycle.EV_RING_START}`,
      `begin ${RuntimePhase.EV_MINOR}`,
      ...(recordPause ? [`lifecycle ${Lifecycle.EV_RING_PAUSE}`] : []),
      `lifecycle ${Lifecycle.EV_RING_RESUME}`,
      `end ${RuntimePhase.EV_MINOR}`,
    ]);
  }
});

Deno.test("destroy records EV_RING_STOP without payload; preserve keeps the image", () => {
  const p = new RuntimeEventsProducer({
    maxDomains: 1,
    logWsize: 10,
    pid: 9,
    preserve: true,
    clock: counterClock(),
  });
  p.begin(0, RuntimePhase.EV_MINOR); // not started: dropped
  p.start();
  p.pause();
  p.destroy(); // written even while paused
  p.begin(0, RuntimePhase.EV_MINOR); // destroyed: dropped
  assert.ok(!p.started);
  assertEquals(
    dumpImage(p.bytes),
    "0 1000 lifecycle ring_start Some 9\n0 1001 lifecycle ring_stop None\n",
  );
  const cursor = new RuntimeEventsCursor(p.bytes);
  let words = 0;
  cursor.readAll({ message: (_d, _p, w) => words += w });
  assertEquals(words, 5); // 3 for ring start, 2 for ring stop
  // Restarting reuses the preserved image, as OCaml reopens the file.
  p.start();
  assert.ok(p.started);
  assertEquals(dumpImage(p.bytes), "0 1002 lifecycle ring_start Some 9\n");

  const q = new RuntimeEventsProducer({ maxDomains: 1, logWsize: 10, pid: 9 });
  q.start();
  q.destroy();
  assert.throws(() => q.bytes, /no image/);
});

Deno.test("user event registration: OCaml's limits and messages", () => {
  const p = producer();
  assert.throws(
    () => p.registerUserEvent("x".repeat(128), Type.unit),
    new OCamlInvalidArgument(
      "Runtime_events.User.register: maximum length for event name exceeded",
    ),
  );
  assert.throws(
    () => p.registerUserEvent("a\0b", Type.unit),
    new OCamlInvalidArgument("Runtime_events.User.register: event name has null characters"),
  );
  // 127 bytes (UTF-8) is the longest accepted name; failed attempts used indices 0 and 1.
  const long = p.registerUserEvent("é".repeat(63) + "x", Type.unit);
  assertEquals(long.index, 2);
  for (let i = 3; i < MAX_CUSTOM_EVENTS; i++) p.registerUserEvent(`e${i}`, Type.unit);
  assert.throws(
    () => p.registerUserEvent("one-too-many", Type.unit),
    new OCamlInvalidArgument(
      "Runtime_events.User.register: maximum number of custom events exceeded",
    ),
  );
  p.start();
  const at = p.layout.customEventsOffset + (MAX_CUSTOM_EVENTS - 1) * 128;
  assertEquals(new TextDecoder().decode(p.bytes.subarray(at, at + 5)), "e8191");
});

Deno.test("producer option validation", () => {
  assert.throws(() => new RuntimeEventsProducer({ logWsize: 8 }), RangeError);
  assert.throws(() => new RuntimeEventsProducer({ logWsize: 31 }), RangeError);
  assert.throws(() => new RuntimeEventsProducer({ maxDomains: 0 }), RangeError);
  const p = producer({ maxDomains: 2 });
  p.start();
  assert.throws(() => p.begin(2, RuntimePhase.EV_MINOR), RangeError);
  assert.throws(() => p.begin(-1, RuntimePhase.EV_MINOR), RangeError);
});

Deno.test("a save that throws leaves no temporary behind (save and saveSync)", async () => {
  const p = producer();
  p.start();
  const dir = await Deno.makeTempDir();
  try {
    // <pid>.events is a folder that is not empty: the temporary is written, the rename throws.
    await Deno.mkdir(`${dir}/4242.events/x`, { recursive: true });
    await assert.rejects(() => p.save(dir));
    assertEquals([...Deno.readDirSync(dir)].map((e) => e.name), ["4242.events"]);
    assert.throws(() => p.saveSync(dir));
    assertEquals([...Deno.readDirSync(dir)].map((e) => e.name), ["4242.events"]);
    // Nothing was taken as saved; the next save, once the way is clear, works.
    await Deno.remove(`${dir}/4242.events`, { recursive: true });
    assertEquals(p.saveSync(dir), `${dir}/4242.events`);
    assertEquals(await Deno.readFile(`${dir}/4242.events`), p.bytes);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("save writes <pid>.events through a temporary file (or fails cleanly without permission)", async () => {
  const p = producer();
  p.start();
  p.begin(0, RuntimePhase.EV_MINOR);
  const granted = (await Deno.permissions.query({ name: "write" })).state === "granted" &&
    (await Deno.permissions.query({ name: "read" })).state === "granted";
  if (!granted) {
    await assert.rejects(() => p.save("/nonexistent-dir-for-test"));
    assert.throws(() => p.saveSync("."));
    return;
  }
  const dir = await Deno.makeTempDir();
  try {
    const path = await p.save(dir);
    assertEquals(path, `${dir}/4242.events`);
    assertEquals(await Deno.readFile(path), p.bytes);
    assertEquals([...Deno.readDirSync(dir)].map((e) => e.name), ["4242.events"]);
    const cursor = await RuntimeEventsCursor.openPid(dir, 4242);
    const evs: Ev[] = [];
    cursor.readAll({ runtimeBegin: (d, ts, phase) => evs.push({ k: "begin", d, ts, phase }) });
    assertEquals(evs.length, 1);
    // A cursor on a file follows a producer that saves again: reload keeps the positions.
    p.end(0, RuntimePhase.EV_MINOR);
    await p.save(dir);
    await cursor.reload();
    cursor.readAll({ runtimeEnd: (d, ts, phase) => evs.push({ k: "end", d, ts, phase }) });
    assertEquals(evs.map((e) => e.k), ["begin", "end"]);
    p.destroy(); // not preserved: the saved file goes too
    assertEquals([...Deno.readDirSync(dir)].length, 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the producer can serve as the simulated runtime's events sink", () => {
  // The shape of lib/runtime's RuntimeEventsSink, restated here so this test
  // does not depend on that module.
  interface Sink {
    beginPhase(domainId: number, phase: number): void;
    endPhase(domainId: number, phase: number): void;
    counter(domainId: number, counter: number, value: number): void;
    lifecycle(domainId: number, event: number, data?: number): void;
  }
  const p = producer();
  const sink: Sink = p;
  p.start();
  sink.beginPhase(1, RuntimePhase.EV_MINOR_MEMPROF_ROOTS);
  sink.counter(1, RuntimeCounter.EV_C_FORCE_MINOR_MEMPROF, 1);
  sink.lifecycle(1, Lifecycle.EV_DOMAIN_SPAWN, 4242);
  sink.lifecycle(1, Lifecycle.EV_FORK_CHILD);
  sink.endPhase(1, RuntimePhase.EV_MINOR_MEMPROF_ROOTS);
  assertEquals(
    dumpImage(p.bytes),
    [
      "0 1000 lifecycle ring_start Some 4242",
      "1 1001 begin minor_memprof_roots",
      "1 1002 counter force_minor_memprof 1",
      "1 1003 lifecycle domain_spawn Some 4242",
      "1 1004 lifecycle fork_child None",
      "1 1005 end minor_memprof_roots",
      "",
    ].join("\n"),
  );
});

Deno.test("bytesType writes raw payloads", () => {
  const p = producer();
  const raw = p.registerUserEvent("raw", bytesType());
  p.start();
  p.writeUser(0, raw, [1, 2, 3]);
  p.writeUser(0, raw, new Uint8Array(1023).fill(7));
  assert.throws(() => p.writeUser(0, raw, new Uint8Array(1024)), RangeError);
  const got = readEvents(p.bytes).filter((e) => e.k === "custom");
  assertEquals(got.map((e) => e.k === "custom" && e.payload.length), [3, 1023]);
  assertEquals(got[0].k === "custom" && got[0].payload, [1, 2, 3]);
  assert.match(dumpImage(p.bytes), /^0 1001 user "raw" custom 010203$/m);
});
