/**
 * runtime_events producer and consumer throughput. Each benchmark handles a
 * batch of events per iteration, so events/s = events / (time per iteration).
 *
 * Before the table, one line per group gives our figure for user int events (median of 5
 * passes after warm-up) next to the real OCaml 5.3 runtime doing the same through the stdlib's
 * `Runtime_events` (bench/_anchors.ts's `ocamlRuntimeEventsPerSecond`, anchors/events.ml), with
 * the ratio ours ÷ OCaml's in M events/s (above 1.00 is faster), both with rings of 2^16 words:
 *
 * - write: 100,000 `writeUser` calls with the default monotonic clock (one clock read per event,
 *   as the runtime's `caml_time_counter`), against `Runtime_events.User.write`; a second line
 *   gives our virtual clock (a counter, no clock read) against the same anchor;
 * - read: a fresh cursor reading a full ring of user int events and counting them, against a
 *   fresh `create_cursor None` on the anchor's own (paused) full ring and `read_poll`.
 *
 * The anchor is built with the toolchain of `deno task ocaml setup` (MEMPROF_LAB_OCAML_PREFIX,
 * .ci/.tools/ocaml-5.3.0 or the user cache) and needs --allow-run --allow-write --allow-env;
 * without them, or without the toolchain, the line says why and gives our figure alone. The
 * table itself needs no permission beyond reading.
 *
 * Run: deno bench --allow-read --allow-write --allow-run --allow-env bench/runtime_events_bench.ts
 *
 * @module
 */
import d8Image from "../tests/fixtures/runtime_events/d8/18440.events" with { type: "bytes" };
import {
  DecoderRegistry,
  RuntimeCounter,
  RuntimeEventsCursor,
  RuntimeEventsProducer,
  RuntimePhase,
  Type,
} from "../lib/runtime_events/mod.ts";
import { dumpCallbacks } from "../lib/runtime_events/dump.ts";
import { refCustomDecoder } from "../tests/runtime_events/fixture_decoders.ts";
import { ocamlRuntimeEventsPerSecond } from "./_anchors.ts";
import { medianSeconds, printSideBySide } from "./_side_by_side.ts";

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

/** N user int events written through `p`, on ring 2. */
function userIntWriter(p: RuntimeEventsProducer): () => void {
  const ev = p.registerUserEvent("bench.int", Type.int);
  return () => {
    for (let i = 0; i < N; i++) p.writeUser(2, ev, i);
  };
}

const writeIntsVirtual = userIntWriter(producer());
Deno.bench(
  `write: ${N} user int events, virtual clock`,
  { group: "write", baseline: true },
  writeIntsVirtual,
);

const monotonic = new RuntimeEventsProducer({ maxDomains: 4, logWsize: 16, pid: 1 });
monotonic.start();
const writeIntsMonotonic = userIntWriter(monotonic);
Deno.bench(
  `write: ${N} user int events, default monotonic clock`,
  { group: "write" },
  writeIntsMonotonic,
);

// A full ring of user int events to consume: 2^16 words hold the ring-start event (3 words) and
// 21,844 events of 3 words (header, timestamp, value).
const full = producer();
const evFull = full.registerUserEvent("bench.int", Type.int);
for (let i = 0; i < 30_000; i++) full.writeUser(0, evFull, i);
const fullImage = full.bytes;
let consumed = 0;
new RuntimeEventsCursor(fullImage).readAll({ userInt: () => consumed++ });

/** A fresh cursor reading the full ring, counting its user int events. */
function readFullRing(): void {
  let n = 0;
  new RuntimeEventsCursor(fullImage).readAll({ userInt: () => n++ });
  if (n !== consumed) throw new Error("short read");
}

Deno.bench(`read: ${consumed} user int events (one full ring)`, { group: "read" }, readFullRing);

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

/** Events per second of `pass` (handling `events` events), in millions. */
function mEventsPerSecond(pass: () => void, events: number): number {
  return events / medianSeconds(pass, { warmupSeconds: 0.5 }) / 1e6;
}

function report(): void {
  console.log("\nruntime_events against OCaml 5.3 (median of 5 passes; this machine, now):");
  const ocaml = (mode: "write" | "read") => {
    const v = ocamlRuntimeEventsPerSecond(mode, { events: N });
    return typeof v === "string" ? v : v / 1e6;
  };
  const writeAnchor = ocaml("write");
  const lines = [
    {
      group: "write",
      label: `${N} user int events`,
      value: mEventsPerSecond(writeIntsMonotonic, N),
      anchor: writeAnchor,
      note: "both read a monotonic clock per event: ours performance.now() in Deno, " +
        "OCaml clock_gettime(CLOCK_MONOTONIC)",
    },
    {
      group: "write",
      label: `${N} user int events, virtual clock`,
      value: mEventsPerSecond(writeIntsVirtual, N),
      anchor: writeAnchor,
      note: "ours reads no clock (a counter), OCaml reads CLOCK_MONOTONIC per event",
    },
    {
      group: "read",
      label: `one full ring of user int events (${consumed} here)`,
      value: mEventsPerSecond(readFullRing, consumed),
      anchor: ocaml("read"),
      note: "a fresh cursor each pass; ours reads an image in memory, OCaml its mapped ring file",
    },
  ];
  for (const { group, label, value, anchor, note } of lines) {
    printSideBySide({
      group,
      label,
      ours: { value, unit: "M events/s" },
      anchor,
      anchorName: "OCaml 5.3",
      note,
    });
  }
  console.log();
}

report();
