// Enums, header words, layout arithmetic, OCaml text formats and statistics.
import { assert, assertEquals } from "./assert.ts";
import e10Image from "../fixtures/runtime_events/e10/18448.events" with {
  type: "bytes",
};
import {
  computeStats,
  counterName,
  eventsFilePath,
  formatStats,
  Lifecycle,
  lifecycleName,
  phaseName,
  RuntimeCounter,
  RuntimeEventsProducer,
  RuntimePhase,
} from "../../lib/runtime_events/mod.ts";
import {
  computeLayout,
  headerHigh,
  packHeader,
  unpackHeader,
  unpackHeaderHigh,
} from "../../lib/runtime_events/layout.ts";
import {
  COUNTER_NAMES,
  LIFECYCLE_NAMES,
  PHASE_NAMES,
  RuntimeMessageType,
  UserMessageType,
} from "../../lib/runtime_events/enums.ts";
import { ocamlHexFloat, ocamlQuote } from "../../lib/util/ocaml_printf.ts";

Deno.test("enums: OCaml 5.3 ordinals and printed names", () => {
  assertEquals(Object.keys(RuntimePhase).length, 48);
  assertEquals(Object.keys(RuntimeCounter).length, 26);
  assertEquals(Object.keys(Lifecycle).length, 8);
  assertEquals(PHASE_NAMES.length, 48);
  assertEquals(COUNTER_NAMES.length, 26);
  assertEquals(LIFECYCLE_NAMES.length, 8);
  // Ordinals are dense and in declaration order.
  assertEquals(Object.values(RuntimePhase), [...Array(48).keys()]);
  assertEquals(Object.values(RuntimeCounter), [...Array(26).keys()]);
  // Names: constructor without the prefix, except compaction phases.
  for (const [k, v] of Object.entries(RuntimePhase)) {
    const expected = k.startsWith("EV_COMPACT")
      ? k.replace("EV_COMPACT", "compaction").toLowerCase()
      : k.slice(3).toLowerCase();
    assertEquals(phaseName(v), expected);
  }
  for (const [k, v] of Object.entries(RuntimeCounter)) {
    assertEquals(counterName(v), k.slice(5).toLowerCase());
  }
  for (const [k, v] of Object.entries(Lifecycle)) {
    assertEquals(lifecycleName(v), k.slice(3).toLowerCase());
  }
  // Spot checks against the 5.3 header (trunk differs).
  assertEquals(RuntimePhase.EV_MINOR, 11);
  assertEquals(RuntimePhase.EV_MAJOR_MEMPROF_CLEAN, 37);
  assertEquals(RuntimePhase.EV_COMPACT_RELEASE, 47);
  assertEquals(RuntimeCounter.EV_C_FORCE_MINOR_MEMPROF, 3);
  assertEquals(RuntimeCounter.EV_C_MAJOR_SLICE_BUDGET, 25);
  assertEquals(Lifecycle.EV_DOMAIN_TERMINATE, 7);
  assertEquals(phaseName(99), "unknown_phase_99");
});

Deno.test("header words pack as length<<54 | is_user<<53 | type<<49 | id<<36", () => {
  const word = packHeader(3, false, RuntimeMessageType.EV_LIFECYCLE, Lifecycle.EV_RING_START);
  assertEquals(word, (3n << 54n) | (1n << 49n));
  assertEquals(BigInt(headerHigh(3, false, 1, 0)) << 32n, word);
  const user = packHeader(130, true, UserMessageType.EV_USER_MSG_TYPE_CUSTOM, 8191);
  assertEquals(BigInt(headerHigh(130, true, 4, 8191)) << 32n, user);
  assertEquals(unpackHeader(user), { length: 130, isUser: true, type: 4, id: 8191 });
  assertEquals(unpackHeaderHigh(headerHigh(1023, false, 15, 47)), {
    length: 1023,
    isUser: false,
    type: 15,
    id: 47,
  });
  // The first message of the e10 fixture's ring 0 at its head, read raw.
  const view = new DataView(e10Image.buffer, e10Image.byteOffset);
  const layout = computeLayout(128, 10);
  const head = Number(view.getBigUint64(64, true));
  const first = unpackHeader(view.getBigUint64(layout.dataOffset + (head % 1024) * 8, true));
  assertEquals(first.isUser, false);
  assertEquals(first.length, 2);
  assertEquals(first.type, RuntimeMessageType.EV_BEGIN);
  assertEquals(first.id, RuntimePhase.EV_MINOR_LOCAL_ROOTS_PROMOTE);
});

Deno.test("layout arithmetic equals the real files'", () => {
  assertEquals(computeLayout(8, 16), {
    maxDomains: 8,
    logWsize: 16,
    ringSizeElements: 65536,
    ringSizeBytes: 524288,
    headersOffset: 64,
    dataOffset: 704,
    customEventsOffset: 4195008,
    totalSize: 5243584,
  });
  assertEquals(computeLayout(128, 10).totalSize, 2107456);
  assertEquals(eventsFilePath("/tmp/", 18440), "/tmp/18440.events");
  assertEquals(eventsFilePath("/", 1), "/1.events");
  assertEquals(eventsFilePath("", 1), "./1.events");
});

Deno.test("OCaml %S and %h formats", () => {
  assertEquals(ocamlQuote("hello"), '"hello"');
  assertEquals(ocamlQuote('a"b\\c\n\t\r\b'), '"a\\"b\\\\c\\n\\t\\r\\b"');
  assertEquals(ocamlQuote(new Uint8Array([0, 31, 127, 200])), '"\\000\\031\\127\\200"');
  assertEquals(ocamlQuote("é"), '"\\195\\169"');
  const cases: [number, string][] = [
    [3.25, "0x1.ap+1"],
    [0, "0x0p+0"],
    [-0, "-0x0p+0"],
    [1, "0x1p+0"],
    [2 / 3, "0x1.5555555555555p-1"],
    [1 / 3, "0x1.5555555555555p-2"],
    [5e-324, "0x0.0000000000001p-1022"],
    [Number.MAX_VALUE, "0x1.fffffffffffffp+1023"],
    [-1.5, "-0x1.8p+0"],
    [Infinity, "infinity"],
    [-Infinity, "-infinity"],
    [NaN, "nan"],
  ];
  for (const [x, s] of cases) assertEquals(ocamlHexFloat(x), s, String(x));
});

Deno.test("stats: exact phase durations and lost-event figures", () => {
  let now = 0;
  const p = new RuntimeEventsProducer({ maxDomains: 2, logWsize: 10, pid: 1, clock: () => now });
  p.start();
  // Ten minor GCs of 10, 20, …, 100 ns on ring 1, one nested major slice.
  for (let i = 1; i <= 10; i++) {
    now += 1000;
    p.begin(1, RuntimePhase.EV_MINOR);
    now += i * 10;
    p.end(1, RuntimePhase.EV_MINOR);
  }
  p.begin(1, RuntimePhase.EV_MAJOR_SLICE);
  now += 5;
  p.begin(1, RuntimePhase.EV_MAJOR_SLICE);
  now += 5;
  p.end(1, RuntimePhase.EV_MAJOR_SLICE);
  now += 5;
  p.end(1, RuntimePhase.EV_MAJOR_SLICE);
  p.end(1, RuntimePhase.EV_MAJOR); // an end without begin
  p.counter(1, RuntimeCounter.EV_C_MINOR_PROMOTED, 3);
  const stats = computeStats(p.bytes);
  const ring1 = stats.domains.find((d) => d.domain === 1)!;
  assertEquals(ring1.begins, 12);
  assertEquals(ring1.ends, 13);
  assertEquals(ring1.counters, 1);
  assertEquals(ring1.events, 26);
  const minor = ring1.phases.find((x) => x.phase === RuntimePhase.EV_MINOR)!;
  assertEquals(
    {
      count: minor.count,
      total: minor.totalNs,
      p50: minor.p50Ns,
      p99: minor.p99Ns,
      max: minor.maxNs,
    },
    { count: 10, total: 550, p50: 50, p99: 100, max: 100 },
  );
  const slice = ring1.phases.find((x) => x.phase === RuntimePhase.EV_MAJOR_SLICE)!;
  assertEquals([slice.count, slice.totalNs, slice.maxNs], [2, 20, 15]);
  const major = ring1.phases.find((x) => x.phase === RuntimePhase.EV_MAJOR)!;
  assertEquals([major.count, major.unmatchedEnds], [0, 1]);
  const text = formatStats(stats);
  assert.match(text, /^domain 1: events 26 \(begins 12, ends 13, counters 1,/m);
  assert.match(text, /^ {2}minor +10 +550 +50 +100 +100 +0 +0$/m);

  // On the wrapped fixture, the lost words are OCaml's figures; the estimate is smaller.
  const e10 = computeStats(e10Image);
  assertEquals(e10.domains.map((d) => d.lostWords), [6471, 2036, 1436, 1567]);
  for (const d of e10.domains) {
    assert.ok(d.lostEventsEstimate > 0 && d.lostEventsEstimate < d.lostWords);
  }
});
