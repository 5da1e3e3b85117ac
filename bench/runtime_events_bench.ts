/**
 * runtime_events producer and consumer throughput. Each benchmark handles a
 * batch of N events per iteration, so events/s = N / (time per iteration).
 * Run: `deno bench bench/runtime_events_bench.ts` (no permissions needed).
 *
 * @module
 */
import d8Image from "../tests/fixtures/runtime_events/d8/18440.events" with { type: "bytes" };
import {
  DecoderRegistry,
  dumpCallbacks,
  RuntimeCounter,
  RuntimeEventsCursor,
  RuntimeEventsProducer,
  RuntimePhase,
  Type,
} from "../lib/runtime_events/mod.ts";
import { refCustomDecoder } from "../tests/runtime_events/fixture_decoders.ts";

const N = 100_000;

/** A producer with a virtual clock (as the engine uses), rings of 2^16 words. */
function producer() {
  let t = 1_000_000;
  const p = new RuntimeEventsProducer({ maxDomains: 4, logWsize: 16, pid: 1, clock: () => t++ });
  p.start();
  return p;
}

const pPhase = producer();
Deno.bench(`write: ${N} phase events (begin/end pairs), virtual clock`, { group: "write" }, () => {
  for (let i = 0; i < N; i += 2) {
    pPhase.begin(0, RuntimePhase.EV_MINOR);
    pPhase.end(0, RuntimePhase.EV_MINOR);
  }
});

const pCounter = producer();
Deno.bench(`write: ${N} counters, virtual clock`, { group: "write" }, () => {
  for (let i = 0; i < N; i++) pCounter.counter(1, RuntimeCounter.EV_C_MINOR_PROMOTED, i);
});

const pInt = producer();
const evInt = pInt.registerUserEvent("bench.int", Type.int);
Deno.bench(`write: ${N} user int events, virtual clock`, { group: "write", baseline: true }, () => {
  for (let i = 0; i < N; i++) pInt.writeUser(2, evInt, i);
});

const pIntRealDefault = new RuntimeEventsProducer({ maxDomains: 4, logWsize: 16, pid: 1 });
pIntRealDefault.start();
const evIntReal = pIntRealDefault.registerUserEvent("bench.int", Type.int);
Deno.bench(`write: ${N} user int events, default monotonic clock`, { group: "write" }, () => {
  for (let i = 0; i < N; i++) pIntRealDefault.writeUser(2, evIntReal, i);
});

// A full ring of user int events (2^16 words / 3 = 21,845 events) to consume.
const full = producer();
const evFull = full.registerUserEvent("bench.int", Type.int);
for (let i = 0; i < 30_000; i++) full.writeUser(0, evFull, i);
const fullImage = full.bytes;
let consumed = 0;
new RuntimeEventsCursor(fullImage).readAll({ userInt: () => consumed++ });

Deno.bench(`read: ${consumed} user int events (one full ring)`, { group: "read" }, () => {
  let n = 0;
  new RuntimeEventsCursor(fullImage).readAll({ userInt: () => n++ });
  if (n !== consumed) throw new Error("short read");
});

const phases = producer();
for (let i = 0; i < 40_000; i++) {
  phases.begin(0, RuntimePhase.EV_MINOR);
  phases.end(0, RuntimePhase.EV_MINOR);
}
let phaseEvents = 0;
new RuntimeEventsCursor(phases.bytes).readAll({
  runtimeBegin: () => phaseEvents++,
  runtimeEnd: () => phaseEvents++,
});
Deno.bench(`read: ${phaseEvents} phase events (one full ring)`, { group: "read" }, () => {
  let n = 0;
  new RuntimeEventsCursor(phases.bytes).readAll({ runtimeBegin: () => n++, runtimeEnd: () => n++ });
  if (n !== phaseEvents) throw new Error("short read");
});

const decoders = new DecoderRegistry().register("ref.custom", refCustomDecoder);
Deno.bench("read: d8 fixture dump text (6,819 lines)", { group: "read" }, () => {
  let n = 0;
  new RuntimeEventsCursor(d8Image, { decoders }).readAll(dumpCallbacks(() => n++, { decoders }));
  if (n !== 6819) throw new Error(`dumped ${n} lines`);
});
