// gc-stats: every figure on the fixtures equals one computed here another way,
// from OCaml's own text dump of the same files (intervals and containment
// instead of a stack; counting instead of sorting for percentiles).
import { assert, assertEquals } from "./assert.ts";
import d8Image from "../fixtures/runtime_events/d8/18440.events" with { type: "bytes" };
import d8Dump from "../fixtures/runtime_events/d8/dump.txt" with { type: "text" };
import e10Image from "../fixtures/runtime_events/e10/18448.events" with { type: "bytes" };
import e10Dump from "../fixtures/runtime_events/e10/dump.txt" with { type: "text" };
import {
  computeGcStats,
  formatGcStats,
  type GcStats,
  type PauseRule,
  RuntimeEventsProducer,
  RuntimePhase,
} from "../../lib/runtime_events/mod.ts";
import { GC_STATS_PERCENTILES } from "../../lib/runtime_events/gc_stats.ts";
import {
  distribution,
  nearestRank,
  parsePercentile,
} from "../../lib/runtime_events/_percentiles.ts";
import { run } from "../../cli/events.ts";
import { eventsCliStub } from "./cli_stub.ts";
import { type DumpLine, parseDump } from "./dump_lines.ts";
import { counterClock } from "./helpers.ts";

const NOT_PAUSES = new Set(["explicit_gc_set", "explicit_gc_stat", "domain_condition_wait"]);
const OLLY = new Set(["major", "stw_leader", "interrupt_remote"]);

interface Interval {
  ring: number;
  name: string;
  from: number; // line index of the begin
  to: number; // line index of the end, Infinity when never ended
  ns: bigint;
}

/** Pauses under the "gc" rule: pause-phase intervals not inside another one, by line index. */
function gcRulePauses(lines: DumpLine[]) {
  const intervals: Interval[] = [];
  const open = new Map<string, { i: number; ts: bigint }[]>();
  lines.forEach((l, i) => {
    if (l.kind === "lost") {
      // Only at the start of a ring in these files: nothing is open yet.
      assert.ok(![...open.keys()].some((k) => k.startsWith(`${l.ring}/`) && open.get(k)!.length));
    }
    if ((l.kind !== "begin" && l.kind !== "end") || NOT_PAUSES.has(l.name)) return;
    const key = `${l.ring}/${l.name}`;
    const st = open.get(key) ?? [];
    open.set(key, st);
    if (l.kind === "begin") st.push({ i, ts: l.ts! });
    else {
      const b = st.pop();
      if (b) intervals.push({ ring: l.ring, name: l.name, from: b.i, to: i, ns: l.ts! - b.ts });
    }
  });
  for (const [key, st] of open) {
    for (const b of st) {
      intervals.push({ ring: +key.split("/")[0], name: "", from: b.i, to: Infinity, ns: -1n });
    }
  }
  const outer = intervals.filter((x) =>
    !intervals.some((y) => y !== x && y.ring === x.ring && y.from < x.from && x.to < y.to)
  );
  return {
    measured: outer.filter((x) => x.to !== Infinity),
    incomplete: outer.filter((x) => x.to === Infinity).length,
  };
}

/** olly's rule, replayed line by line. */
function ollyRulePauses(lines: DumpLine[]) {
  const current = new Map<number, { name: string; ts: bigint }>();
  const measured: { ring: number; ns: bigint }[] = [];
  for (const l of lines) {
    if (l.kind === "begin" && OLLY.has(l.name) && !current.has(l.ring)) {
      current.set(l.ring, { name: l.name, ts: l.ts! });
    } else if (l.kind === "end" && current.get(l.ring)?.name === l.name) {
      measured.push({ ring: l.ring, ns: l.ts! - current.get(l.ring)!.ts });
      current.delete(l.ring);
    }
  }
  return { measured, incomplete: current.size };
}

/** Smallest duration v with count(x <= v) / n >= p / 100, in exact integer arithmetic. */
function percentileByCounting(values: bigint[], p: string): bigint {
  const [int, frac = ""] = p.split(".");
  const num = BigInt(int + frac);
  const den = 100n * 10n ** BigInt(frac.length);
  const n = BigInt(values.length);
  let best: bigint | null = null;
  for (const v of values) {
    let c = 0n;
    for (const x of values) if (x <= v) c++;
    if (c * den >= num * n && (best === null || v < best)) best = v;
  }
  return best ?? (values.length === 0 ? 0n : values.reduce((a, b) => (a < b ? a : b)));
}

function independent(dump: string, rule: PauseRule) {
  const lines = parseDump(dump);
  const { measured, incomplete } = rule === "gc" ? gcRulePauses(lines) : ollyRulePauses(lines);
  const durations = measured.map((x) => x.ns);
  const n = durations.length;
  const total = durations.reduce((a, b) => a + b, 0n);
  const mean = Number(total) / n;
  const sumSq = durations.reduce((a, b) => a + Number(b) * Number(b), 0);
  const rings = [...new Set(lines.map((l) => l.ring))].sort((a, b) => a - b);
  const sum = (f: (l: DumpLine) => bigint) => lines.reduce((a, l) => a + f(l), 0n);
  const counter = (name: string, div: bigint, ring?: number) =>
    sum((l) =>
      l.kind === "counter" && l.name === name && (ring === undefined || l.ring === ring)
        ? BigInt(l.rest) / div
        : 0n
    );
  const timed = lines.filter((l) => l.ts !== null);
  const tsOf = (ring?: number) =>
    timed.filter((l) => ring === undefined || l.ring === ring).map((l) => l.ts!);
  const min = (a: bigint[]) => a.reduce((x, y) => (x < y ? x : y));
  const max = (a: bigint[]) => a.reduce((x, y) => (x > y ? x : y));
  const begins0 = (name: string) =>
    lines.filter((l) => l.ring === 0 && l.kind === "begin" && l.name === name).length;
  return {
    events: timed.length,
    firstNs: min(tsOf()),
    lastNs: max(tsOf()),
    gcTimeNs: total,
    count: n,
    incomplete,
    mean,
    stddev: Math.sqrt(sumSq / n - mean * mean),
    min: min(durations),
    max: max(durations),
    percentiles: GC_STATS_PERCENTILES.map((p) => percentileByCounting(durations, p)),
    domains: rings.map((r) => ({
      domain: r,
      gcNs: measured.filter((x) => x.ring === r).reduce((a, x) => a + x.ns, 0n),
      pauses: measured.filter((x) => x.ring === r).length,
      spanNs: max(tsOf(r)) - min(tsOf(r)),
      lostWords: sum((l) => (l.kind === "lost" && l.ring === r ? BigInt(l.rest) : 0n)),
      minorWords: counter("minor_allocated", 8n, r),
      promotedWords: counter("minor_promoted", 8n, r),
      majorWords: counter("major_allocated_words", 1n, r),
    })),
    minorWords: counter("minor_allocated", 8n),
    promotedWords: counter("minor_promoted", 8n),
    majorWords: counter("major_allocated_words", 1n),
    collections: {
      minor: begins0("minor"),
      major: begins0("major_gc_stw"),
      forcedMajor: begins0("explicit_gc_major") + begins0("explicit_gc_full_major"),
      compactions: begins0("explicit_gc_compact"),
    },
    lostWords: sum((l) => (l.kind === "lost" ? BigInt(l.rest) : 0n)),
    ringStart: lines.find((l) => l.kind === "lifecycle" && l.name === "ring_start")?.ts ?? null,
  };
}

function compare(s: GcStats, want: ReturnType<typeof independent>, what: string) {
  const eq = (a: unknown, b: unknown, field: string) => assertEquals(a, b, `${what}: ${field}`);
  eq(s.events, want.events, "events");
  eq(s.span.firstNs, Number(want.firstNs), "first");
  eq(s.span.lastNs, Number(want.lastNs), "last");
  eq(s.span.wallNs, Number(want.lastNs - want.firstNs), "wall");
  eq(s.span.ringStartNs, want.ringStart === null ? null : Number(want.ringStart), "ring start");
  eq(s.gcTimeNs, Number(want.gcTimeNs), "GC time");
  eq(s.latency.count, want.count, "pauses");
  eq(s.incompletePauses, want.incomplete, "incomplete");
  eq(s.latency.min, Number(want.min), "min");
  eq(s.latency.max, Number(want.max), "max");
  assert.ok(Math.abs(s.latency.mean - want.mean) < 1e-6, `${what}: mean`);
  assert.ok(Math.abs(s.latency.stddev - want.stddev) < 1e-3, `${what}: stddev`);
  eq(s.latency.percentiles.map((p) => p.value), want.percentiles.map(Number), "percentiles");
  eq(s.latency.percentiles.map((p) => p.percentile), [...GC_STATS_PERCENTILES], "percentile names");
  eq(
    s.domains.map((d) => [d.domain, d.gcNs, d.pauses, d.spanNs, d.lostWords]),
    want.domains.map((
      d,
    ) => [d.domain, Number(d.gcNs), d.pauses, Number(d.spanNs), Number(d.lostWords)]),
    "per domain",
  );
  eq(
    s.domains.map((d) => [d.minorWords, d.promotedWords, d.majorWords]),
    want.domains.map((d) => [d.minorWords, d.promotedWords, d.majorWords].map(Number)),
    "per-domain words",
  );
  eq(s.allocations.minorWords, Number(want.minorWords), "minor words");
  eq(s.allocations.promotedWords, Number(want.promotedWords), "promoted words");
  eq(s.allocations.majorWords, Number(want.majorWords), "major words");
  eq(
    s.allocations.totalWords,
    Number(want.minorWords - want.promotedWords + want.majorWords),
    "total words",
  );
  eq(s.collections, want.collections, "collections");
  eq(s.lostWords, Number(want.lostWords), "lost");
  eq(s.complete, want.lostWords === 0n, "complete");
}

for (const [name, image, dump] of [["d8", d8Image, d8Dump], ["e10", e10Image, e10Dump]] as const) {
  for (const rule of ["gc", "olly"] as const) {
    Deno.test(`gc-stats on ${name} with the ${rule} rule equals the figures computed from OCaml's dump`, () => {
      compare(computeGcStats(image, { pauses: rule }), independent(dump, rule), `${name}/${rule}`);
    });
  }
}

Deno.test("gc-stats on the fixtures: the figures that do not depend on the rule", () => {
  const d8 = computeGcStats(d8Image);
  assertEquals(d8.collections, { minor: 58, major: 25, forcedMajor: 1, compactions: 1 });
  assertEquals(d8.complete, true);
  assertEquals(d8.span.wallNs, 744480758892 - 744340150570);
  const e10 = computeGcStats(e10Image);
  assertEquals(e10.lostWords, 6471 + 2036 + 1436 + 1567);
  assertEquals(e10.span.ringStartNs, null);
  // One pause still open at the end of each file (the teardown's stw_leader on ring 0).
  assertEquals([d8.incompletePauses, e10.incompletePauses], [1, 1]);
});

Deno.test("percentiles are nearest-rank, computed in exact arithmetic", () => {
  assertEquals(nearestRank("70", 10), 7); // 0.7 * 10 is 7.000000000000001 in floating point
  assertEquals(nearestRank("25", 4), 1);
  assertEquals(nearestRank("50", 5), 3);
  assertEquals(nearestRank("99.9999", 223), 223);
  assertEquals(nearestRank("0", 10), 1);
  assertEquals(nearestRank("100", 10), 10);
  assertEquals(parsePercentile("99.99"), { num: 9999n, den: 100n });
  for (const bad of ["101", "-1", "abc", "1e2", "100.5"]) {
    assert.throws(() => parsePercentile(bad), RangeError, bad);
  }
  const d = distribution([5, 1, 4, 2, 3, 6, 7, 8, 9, 10], ["70", "100"]);
  assertEquals(d.percentiles.map((p) => [p.rank, p.value]), [[7, 7], [10, 10]]);
  assertEquals([d.count, d.total, d.mean, d.min, d.max], [10, 55, 5.5, 1, 10]);
  assertEquals(d.stddev, Math.sqrt(8.25));
  assertEquals(distribution([]).percentiles[0], { percentile: "25", rank: 1, value: 0 });
});

Deno.test("gc-stats measures outermost pauses and drops those cut by lost events", () => {
  const p = new RuntimeEventsProducer({ maxDomains: 1, logWsize: 9, clock: counterClock(0) });
  p.start(); // 0
  p.begin(0, RuntimePhase.EV_DOMAIN_CONDITION_WAIT); // 1: not a pause
  p.begin(0, RuntimePhase.EV_STW_HANDLER); // 2: a pause inside it
  p.begin(0, RuntimePhase.EV_MINOR); // 3: part of that pause
  p.end(0, RuntimePhase.EV_MINOR); // 4
  p.end(0, RuntimePhase.EV_STW_HANDLER); // 5: pause of 3 ns
  p.end(0, RuntimePhase.EV_DOMAIN_CONDITION_WAIT); // 6
  p.begin(0, RuntimePhase.EV_EXPLICIT_GC_FULL_MAJOR); // 7
  p.end(0, RuntimePhase.EV_EXPLICIT_GC_FULL_MAJOR); // 8: pause of 1 ns
  let s = computeGcStats(p.bytes);
  assertEquals([...s.latency.percentiles.map((x) => x.value)].slice(-1), [3]);
  assertEquals([s.latency.count, s.gcTimeNs, s.incompletePauses], [2, 4, 0]);
  assertEquals(s.collections.forcedMajor, 1);
  // olly counts neither: no major, stw_leader or interrupt_remote.
  assertEquals(computeGcStats(p.bytes, { pauses: "olly" }).latency.count, 0);
  // Now wrap the ring with a pause open: its end is after the gap, its begin is lost.
  p.begin(0, RuntimePhase.EV_MAJOR);
  for (let i = 0; i < 300; i++) p.counter(0, 5, 8 * i);
  p.end(0, RuntimePhase.EV_MAJOR);
  s = computeGcStats(p.bytes);
  assert.ok(s.lostWords > 0);
  assertEquals(s.latency.count, 0);
  assertEquals(s.complete, false);
  // The counters left in the ring are bytes by default, words on request.
  const words = computeGcStats(p.bytes, { counterUnits: "words" }).allocations.minorWords;
  assertEquals(s.allocations.minorWords * 8, words);
});

const stub = eventsCliStub;

Deno.test("events gc-stats prints the report or JSON, and rejects bad options", async () => {
  const files = { "d8.events": d8Image };
  let io = stub(files);
  assertEquals(await run(["gc-stats", "d8.events"], io), 0);
  assertEquals(io.out, formatGcStats(computeGcStats(d8Image), "d8.events"));
  assert.match(
    io.out,
    /^collections: minor 58, major 25, forcedMajor 1, compactions 1 \(counted on ring 0\)$/m,
  );
  assert.match(io.out, /^ {2}99\.9999 +223 +\d+$/m);
  io = stub(files);
  assertEquals(await run(["gc-stats", "d8.events", "--json", "--pauses", "olly"], io), 0);
  assertEquals(JSON.parse(io.out), computeGcStats(d8Image, { pauses: "olly" }));
  for (
    const args of [
      ["gc-stats"],
      ["gc-stats", "d8.events", "--pauses", "all"],
      ["gc-stats", "d8.events", "--counter-units", "kb"],
    ]
  ) {
    io = stub(files);
    assertEquals(await run(args, io), 2, args.join(" "));
  }
});

Deno.test("events --help lists export, gc-stats and watch, each with its own help", async () => {
  const io = stub({});
  assertEquals(await run(["--help"], io), 0);
  for (const c of ["export FILE --format chrome", "gc-stats FILE", "watch DIR PID"]) {
    assert.ok(io.out.includes(c), c);
  }
  for (const c of ["export", "gc-stats", "watch"]) {
    const h = stub({});
    assertEquals(await run([c, "--help"], h), 0);
    assert.match(h.out, new RegExp(`^Usage: memprof-lab events ${c} `));
  }
  for (
    const args of [
      ["watch"],
      ["watch", "/tmp"],
      ["watch", "/tmp", "12x"],
      ["watch", "/tmp", "12", "--path", "f"],
      ["watch", "--path", "f", "--interval", "0"],
      ["watch", "--path", "f", "--pauses", "x"],
    ]
  ) {
    const e = stub({});
    assertEquals(await run(args, e), 2, args.join(" "));
    assert.match(e.err, /^error: .*\nRun 'memprof-lab events( watch)? --help' for usage\.\n$/);
  }
});
