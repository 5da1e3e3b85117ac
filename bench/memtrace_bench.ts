/**
 * Trace codec throughput on ocamlopt.ctf (3,499 events, deep backtraces: 116 frames on average).
 * Each iteration processes the whole trace once: events/s = iter/s × 3,499.
 * Reference, memtrace's native OCaml on this machine: decode 4.0 M events/s, copy 1.0 M events/s.
 */
import {
  copyTrace,
  type Event,
  MemorySink,
  MultiplexedWriter,
  Reader,
  type Timestamp,
} from "../lib/memtrace/mod.ts";
import ocamlopt from "../tests/fixtures/memtrace/ocamlopt.ctf" with { type: "bytes" };
import single from "../tests/fixtures/memtrace/single_1e-4.ctf" with { type: "bytes" };

const EVENTS = Reader.fromBytes(ocamlopt).readAll().length;
const SINGLE_EVENTS = Reader.fromBytes(single).readAll().length;

let sink = 0;

Deno.bench(
  `decode ocamlopt.ctf [${EVENTS} events/iter]`,
  { group: "decode", baseline: true },
  () => {
    const r = Reader.fromBytes(ocamlopt);
    r.iter((_dt, ev) => {
      sink += ev.objId;
    });
  },
);

Deno.bench(
  `decode ocamlopt.ctf without backtraces [${EVENTS} events/iter]`,
  { group: "decode" },
  () => {
    const r = Reader.fromBytes(ocamlopt);
    r.iter((_dt, ev) => {
      sink += ev.objId;
    }, { parseBacktraces: false });
  },
);

Deno.bench(`decode single_1e-4.ctf [${SINGLE_EVENTS} events/iter]`, { group: "decode" }, () => {
  const r = Reader.fromBytes(single);
  r.iter((_dt, ev) => {
    sink += ev.objId;
  });
});

Deno.bench(`copy (decode+encode) ocamlopt.ctf [${EVENTS} events/iter]`, { group: "copy" }, () => {
  copyTrace(Reader.fromBytes(ocamlopt), new MemorySink());
});

// Encode alone: the events decoded once up front, then written.
const reader = Reader.fromBytes(ocamlopt);
const decoded: { time: Timestamp; event: Event }[] = reader.readAll().map((e) => ({
  time: e.time + reader.info.startTime,
  event: e.event,
}));
const lookup = (c: number) => reader.lookupLocationCode(c);

Deno.bench(`encode ocamlopt.ctf [${EVENTS} events/iter]`, { group: "copy" }, () => {
  const w = MultiplexedWriter.create(new MemorySink(), reader.info);
  for (const { time, event } of decoded) w.putEvent(lookup, time, event);
  w.flush();
});

globalThis.addEventListener("unload", () => {
  if (sink === 0.5) console.log(sink); // keeps the loops observable
});
