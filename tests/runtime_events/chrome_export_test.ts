// Chrome trace-event export: valid JSON that nests, and the events of the
// fixtures checked one by one against OCaml's own dump of the same files.
import { assert, assertEquals } from "./assert.ts";
import d8Image from "../fixtures/runtime_events/d8/18440.events" with { type: "bytes" };
import d8Dump from "../fixtures/runtime_events/d8/dump.txt" with { type: "text" };
import e10Image from "../fixtures/runtime_events/e10/18448.events" with { type: "bytes" };
import e10Dump from "../fixtures/runtime_events/e10/dump.txt" with { type: "text" };
import singleCtf from "../fixtures/memtrace/single_1e-4.ctf" with { type: "bytes" };
import {
  alignTrace,
  chromeTraceJson,
  exportChromeTrace,
  RuntimeEventsProducer,
  RuntimePhase,
  traceInstants,
  Type,
} from "../../lib/runtime_events/mod.ts";
import { nsToMicrosText } from "../../lib/runtime_events/chrome_export.ts";
import { Reader } from "../../lib/memtrace/mod.ts";
import { runScenario } from "../../lib/scenario/mod.ts";
import service from "../../scenarios/service.ts";
import { run } from "../../cli/events.ts";
import { eventsCliStub } from "./cli_stub.ts";
import { type TraceEventJson, validateChromeTrace } from "./chrome_validate.ts";
import { type DumpLine, parseDump } from "./dump_lines.ts";
import { counterClock, prng } from "./helpers.ts";

const fixtures = [
  { name: "d8", image: d8Image, dump: d8Dump, pid: 18440 },
  { name: "e10", image: e10Image, dump: e10Dump, pid: 18448 },
];

function exported(image: Uint8Array, options = {}): TraceEventJson[] {
  const text = chromeTraceJson(exportChromeTrace(image, options));
  const v = validateChromeTrace(text);
  assertEquals(v.errors, []);
  return v.events;
}

const ns = (us: number) => BigInt(Math.round(us * 1000));

/** Phase spans expected from a dump, with per-(ring, phase) stacks of begins. */
function expectedPhases(lines: DumpLine[]) {
  const open = new Map<string, bigint[]>();
  const last = new Map<number, bigint>();
  const spans: string[] = [];
  const orphans: string[] = [];
  for (const l of lines) {
    if (l.ts !== null) last.set(l.ring, l.ts);
    if (l.kind === "lost") {
      for (const k of open.keys()) if (k.startsWith(`${l.ring} `)) open.delete(k);
    }
    if (l.kind !== "begin" && l.kind !== "end") continue;
    const k = `${l.ring} ${l.name}`;
    if (l.kind === "begin") open.set(k, [...(open.get(k) ?? []), l.ts!]);
    else {
      const st = open.get(k) ?? [];
      const b = st.pop();
      if (b === undefined) orphans.push(`${l.ring} ${l.name} ${l.ts}`);
      else spans.push(`${l.ring} ${l.name} ${b} ${l.ts! - b}`);
    }
  }
  for (const [k, st] of open) {
    const ring = Number(k.split(" ")[0]);
    for (const b of st) spans.push(`${k} ${b} ${last.get(ring)! - b}`);
  }
  return { spans: spans.sort(), orphans: orphans.sort() };
}

Deno.test("export of the d8 and e10 fixtures is valid trace-event JSON with one track per domain", () => {
  for (const f of fixtures) {
    const events = exported(f.image);
    const meta = events.filter((e) => e.ph === "M");
    // Metadata first: the process, then each domain's name and order.
    assertEquals(events.slice(0, meta.length), meta);
    assertEquals(meta[0], {
      name: "process_name",
      ph: "M",
      ts: 0,
      pid: f.pid === 18440 ? 18440 : 1,
      tid: 0,
      args: { name: `OCaml ${f.pid === 18440 ? 18440 : 1} (runtime_events)` },
    });
    const rings = [...new Set(parseDump(f.dump).map((l) => l.ring))].sort();
    assertEquals(
      meta.filter((e) => e.name === "thread_name").map((e) => [e.tid, e.args!.name]),
      rings.map((r) => [r, `domain ${r}`]),
    );
    assert.ok(events.every((e) => e.ph === "M" || rings.includes(e.tid)));
  }
});

Deno.test("export gives every phase begin/end pair of the dump as an X of the exact duration", () => {
  for (const f of fixtures) {
    const events = exported(f.image);
    const want = expectedPhases(parseDump(f.dump));
    const got = events.filter((e) => e.ph === "X").map((e) =>
      `${e.tid} ${e.name} ${ns(e.ts)} ${ns(e.dur!)}`
    ).sort();
    assertEquals(got, want.spans, f.name);
    const orphans = events.filter((e) =>
      e.ph === "i" && e.cat === "gc" && e.args?.unmatched !== undefined
    ).map((e) => `${e.tid} ${e.name} ${ns(e.ts)}`).sort();
    assertEquals(orphans, want.orphans, f.name);
  }
  // e10 wrapped: some ends lost their begins; d8 did not.
  assert.ok(expectedPhases(parseDump(e10Dump)).orphans.length > 0);
});

Deno.test("export gives counters, user ints, lifecycle, unit and custom events of the dump", () => {
  for (const f of fixtures) {
    const events = exported(f.image);
    const lines = parseDump(f.dump);
    const counters = lines.filter((l) => l.kind === "counter").map((l) =>
      `${l.ring} ${l.name} (domain ${l.ring}) ${l.ts} ${l.rest}`
    );
    const ints = lines.filter((l) => l.kind === "user" && l.rest.startsWith("int ")).map((l) =>
      `${l.ring} ${l.name} (domain ${l.ring}) ${l.ts} ${l.rest.slice(4)}`
    );
    assertEquals(
      events.filter((e) => e.ph === "C").map((e) =>
        `${e.tid} ${e.name} ${ns(e.ts)} ${e.args!.value}`
      ).sort(),
      [...counters, ...ints].sort(),
    );
    const lifecycle = lines.filter((l) => l.kind === "lifecycle").map((l) =>
      `${l.ring} ${l.name} ${l.ts} ${l.rest === "None" ? "" : l.rest.slice(5)}`
    );
    assertEquals(
      events.filter((e) => e.cat === "lifecycle").map((e) =>
        `${e.tid} ${e.name} ${ns(e.ts)} ${e.args?.data ?? ""}`
      ).sort(),
      lifecycle.sort(),
    );
    const units = lines.filter((l) =>
      l.kind === "user" && (l.rest === "unit" || l.rest.startsWith("custom "))
    ).map((l) => `${l.ring} ${l.name} ${l.ts}`);
    assertEquals(
      events.filter((e) => e.ph === "i" && e.cat === "user" && e.args?.unmatched === undefined)
        .map((e) => `${e.tid} ${e.name} ${ns(e.ts)}`).sort(),
      units.sort(),
    );
    // Span user events: B/E pairs at the dump's timestamps.
    const spanLines = lines.filter((l) => l.kind === "user" && l.rest.startsWith("span "));
    const be = events.filter((e) => e.ph === "B" || e.ph === "E");
    assertEquals(
      be.filter((e) => e.ph === "B").map((e) => `${e.tid} ${e.name} ${ns(e.ts)}`).sort(),
      spanLines.filter((l) => l.rest === "span begin").map((l) => `${l.ring} ${l.name} ${l.ts}`)
        .sort(),
    );
  }
});

Deno.test("export places each ring's lost words as a lost_events instant at its first event", () => {
  const events = exported(e10Image);
  const lines = parseDump(e10Dump);
  const want = lines.filter((l) => l.kind === "lost").map((l) => {
    const first = lines.find((x) => x.ring === l.ring && x.ts !== null)!;
    return `${l.ring} ${first.ts} ${l.rest}`;
  });
  assertEquals(want.length, 4);
  assertEquals(
    events.filter((e) => e.name === "lost_events").map((e) =>
      `${e.tid} ${ns(e.ts)} ${e.args!.words}`
    ).sort(),
    want.sort(),
  );
  assertEquals(exported(d8Image).filter((e) => e.name === "lost_events"), []);
});

Deno.test("export writes timestamps as exact decimal microseconds", () => {
  assertEquals(nsToMicrosText(0n), "0");
  assertEquals(nsToMicrosText(1n), "0.001");
  assertEquals(nsToMicrosText(1230n), "1.23");
  assertEquals(nsToMicrosText(1000n), "1");
  assertEquals(nsToMicrosText(744340150570n), "744340150.57");
  assertEquals(nsToMicrosText(9007199254740993n), "9007199254740.993");
  assertEquals(nsToMicrosText(-1500n), "-1.5");
  const text = chromeTraceJson(exportChromeTrace(d8Image));
  // ring_start at 744340150570 ns, the first user span at 744340262526 ns.
  assert.match(text, /"name":"ring_start","cat":"lifecycle","ph":"i","ts":744340150\.57,/);
  assert.match(text, /"name":"ref\.span","cat":"user","ph":"B","ts":744340262\.526,/);
  // Same input, byte-identical output.
  assertEquals(chromeTraceJson(exportChromeTrace(d8Image)), text);
});

Deno.test("export closes a crossing phase at the outer end and turns a lone end into an instant", () => {
  const p = new RuntimeEventsProducer({
    maxDomains: 2,
    logWsize: 10,
    pid: 7,
    clock: counterClock(1000),
  });
  const span = p.registerUserEvent("app.span", Type.span);
  p.start(); // 1000
  p.begin(0, RuntimePhase.EV_MINOR); // 1001
  p.writeUser(0, span, "begin"); // 1002
  p.begin(0, RuntimePhase.EV_MAJOR); // 1003
  p.end(0, RuntimePhase.EV_MINOR); // 1004: closes major and the span first
  p.end(0, RuntimePhase.EV_MAJOR); // 1005: its begin is gone
  p.writeUser(0, span, "end"); // 1006: likewise
  p.begin(1, RuntimePhase.EV_STW_HANDLER); // 1007: never ends
  p.writeUser(1, span, "begin"); // 1008: never ends
  p.counter(1, 5, 10); // 1009
  const events = exported(p.bytes).filter((e) => e.ph !== "M");
  const show = (e: TraceEventJson) =>
    [e.ph, e.tid, e.name, ns(e.ts), e.dur === undefined ? "" : ns(e.dur), JSON.stringify(e.args)]
      .join(" ");
  assertEquals(events.map(show), [
    "i 0 ring_start 1000  " + JSON.stringify({ data: 7 }),
    "X 0 minor 1001 3 ",
    "B 0 app.span 1002  ",
    "X 0 major 1003 1 " + JSON.stringify({ truncated: "closed by the end of minor" }),
    "E 0 app.span 1004  ",
    "i 0 major 1005  " + JSON.stringify({ unmatched: "end without begin" }),
    "i 0 app.span 1006  " + JSON.stringify({ unmatched: "end without begin" }),
    "X 1 stw_handler 1007 2 " + JSON.stringify({ truncated: "no end in the ring" }),
    "B 1 app.span 1008  ",
    "C 1 minor_allocated (domain 1) 1009  " + JSON.stringify({ value: 10 }),
    "E 1 app.span 1009  ",
  ]);
});

Deno.test("export of random nested, crossing and wrapped rings always nests (seeded)", () => {
  const phases = [RuntimePhase.EV_MINOR, RuntimePhase.EV_MAJOR, RuntimePhase.EV_STW_LEADER];
  let wrapped = 0;
  for (let seed = 1; seed <= 60; seed++) {
    const rnd = prng(seed);
    let t = 0;
    const p = new RuntimeEventsProducer({
      maxDomains: 3,
      logWsize: 9,
      pid: seed,
      clock: () => (t += Math.floor(rnd() * 3)), // repeated timestamps too
    });
    const span = p.registerUserEvent("s", Type.span);
    p.start();
    const open: number[][] = [[], [], []];
    const n = 200 + Math.floor(rnd() * 1200);
    for (let i = 0; i < n; i++) {
      const d = Math.floor(rnd() * 3);
      const r = rnd();
      if (r < 0.35) {
        const ph = phases[Math.floor(rnd() * 3)];
        open[d].push(ph);
        p.begin(d, ph);
      } else if (r < 0.7 && open[d].length > 0) {
        // Mostly the innermost, sometimes an outer one (crossing), sometimes forgotten.
        const k = rnd() < 0.85 ? open[d].length - 1 : Math.floor(rnd() * open[d].length);
        const [ph] = open[d].splice(k, 1);
        if (rnd() < 0.95) p.end(d, ph);
      } else if (r < 0.8) {
        p.writeUser(d, span, rnd() < 0.5 ? "begin" : "end");
      } else {
        p.counter(d, 4, i);
      }
    }
    const trace = exportChromeTrace(p.bytes);
    if (trace.summary.lostWords > 0) wrapped++;
    const v = validateChromeTrace(chromeTraceJson(trace));
    assertEquals(v.errors, [], `seed ${seed}`);
  }
  assert.ok(wrapped > 10, `only ${wrapped} runs wrapped`);
});

Deno.test("export --with-trace puts memtrace events on their domain's track at anchor + t·1000", () => {
  const reader = Reader.fromBytes(singleCtf);
  const all = reader.readAll({ parseBacktraces: false });
  const trace = exportChromeTrace(d8Image, {
    extraInstants: (anchors) => traceInstants(reader, alignTrace(anchors).anchorNs),
  });
  const text = chromeTraceJson(trace);
  const v = validateChromeTrace(text);
  assertEquals(v.errors, []);
  const mem = v.events.filter((e) => e.cat === "memtrace");
  assertEquals(mem.length, all.length);
  assertEquals(trace.summary.extraInstants, all.length);
  // Anchored at d8's EV_RING_START; events in trace order.
  const anchor = 744340150570n;
  const want = all.map(({ time, event }) =>
    `${event.domain} ${anchor + BigInt(time) * 1000n} ${
      event.kind === "alloc" ? ["alloc", "alloc_major", "alloc_ext"][event.source] : event.kind
    } ${event.objId}`
  ).sort();
  assertEquals(mem.map((e) => `${e.tid} ${ns(e.ts)} ${e.name} ${e.args!.id}`).sort(), want);
  const alloc = mem.find((e) => e.name.startsWith("alloc"))!;
  assertEquals(Object.keys(alloc.args!), ["id", "words", "samples"]);
  // Anchors: ring start if present, else the first event left, else what is given.
  assertEquals(alignTrace({ ringStartNs: 5n, firstNs: 3n }), { anchorNs: 5n, basis: "ring_start" });
  assertEquals(alignTrace({ ringStartNs: null, firstNs: 3n }), {
    anchorNs: 3n,
    basis: "first_event",
  });
  assertEquals(alignTrace({ ringStartNs: 5n, firstNs: 3n }, 0n), { anchorNs: 0n, basis: "given" });
});

Deno.test("export of a scenario run's ring and trace, aligned on the shared virtual clock", () => {
  const res = runScenario(service);
  const reader = Reader.fromBytes(res.ctf);
  const all = reader.readAll({ parseBacktraces: false });
  const trace = exportChromeTrace(res.eventsImage, {
    extraInstants: () => traceInstants(reader, 0n),
  });
  const v = validateChromeTrace(chromeTraceJson(trace));
  assertEquals(v.errors, []);
  // The ring (2^16 words) overflows: GC phases are kept, the oldest events (the spans) are lost.
  assert.ok(trace.summary.phases > 0 && trace.summary.lostWords > 0);
  // With a ring large enough for everything, the user spans are there and nothing is lost.
  const big = runScenario({ ...service, settings: { ...service.settings, ringLog2: 20 } });
  const whole = exportChromeTrace(big.eventsImage!, {});
  assert.ok(whole.summary.spans > 0 && whole.summary.lostWords === 0);
  const mem = v.events.filter((e) => e.cat === "memtrace");
  assertEquals(mem.length, all.length);
  // The engine's trace clock is the ring clock in whole microseconds.
  assertEquals(mem.map((e) => ns(e.ts)), all.map((x) => BigInt(x.time) * 1000n));
});

const stub = eventsCliStub;

Deno.test("events export writes the JSON to stdout or to -o, with a summary and warnings", async () => {
  const files = { "18448.events": e10Image, "d8.events": d8Image, "t.ctf": singleCtf };
  let io = stub(files);
  assertEquals(await run(["export", "d8.events", "--format", "chrome"], io), 0);
  assertEquals(
    io.out,
    chromeTraceJson(exportChromeTrace(d8Image, { otherData: { ringFile: "d8.events" } })),
  );
  io = stub(files);
  assertEquals(await run(["export", "18448.events", "--format", "chrome", "-o", "x.json"], io), 0);
  const text = io.written.get("x.json")!;
  assertEquals(validateChromeTrace(text).errors, []);
  // The ring lost EV_RING_START: the pid comes from the file name.
  assert.match(text, /"pid":18448,/);
  assert.match(
    io.err,
    /^wrote x\.json: 4 domain track\(s\), \d+ phases, .*11510 ring words lost\n$/,
  );
  io = stub(files);
  assertEquals(
    await run(["export", "18448.events", "--format", "chrome", "--with-trace", "t.ctf"], io),
    0,
  );
  assert.match(io.err, /warning: 18448\.events has no EV_RING_START/);
  assert.match(
    io.err,
    /warning: t\.ctf is the trace of process \d+, 18448\.events of process 18448/,
  );
  assert.match(io.out, /"memtraceAnchor":"first_event"/);
  for (
    const args of [
      ["export", "d8.events"],
      ["export", "d8.events", "--format", "pprof"],
      ["export", "d8.events", "--format", "chrome", "--trace-anchor-ns", "5"],
      [
        "export",
        "d8.events",
        "--format",
        "chrome",
        "--with-trace",
        "t.ctf",
        "--trace-anchor-ns",
        "x",
      ],
    ]
  ) {
    io = stub(files);
    assertEquals(await run(args, io), 2, args.join(" "));
    assert.match(io.err, /^error: .*\nRun 'memprof-lab events( export)? --help' for usage\.\n$/);
  }
  io = stub(files);
  assertEquals(
    await run(["export", "d8.events", "--format", "chrome", "--with-trace", "no.ctf"], io),
    1,
  );
  assertEquals(io.err, "error: no such file: no.ctf\n");
});

Deno.test("the structural check rejects what viewers reject", () => {
  const wrap = (events: unknown[]) => JSON.stringify({ traceEvents: events });
  const ev = (ph: string, ts: number, more: Record<string, unknown> = {}) => ({
    name: "a",
    ph,
    ts,
    pid: 1,
    tid: 0,
    ...more,
  });
  const bad: [string, string, RegExp][] = [
    ["crossing X", wrap([ev("X", 0, { dur: 5 }), ev("X", 3, { dur: 5 })]), /crosses/],
    ["X crossing a B/E pair", wrap([ev("B", 0), ev("X", 1, { dur: 5 }), ev("E", 2)]), /crosses/],
    ["unclosed B", wrap([ev("B", 0)]), /B without E/],
    ["E without B", wrap([ev("E", 0)]), /E a without B/],
    ["E closing another name", wrap([ev("B", 0), ev("E", 1, { name: "b" })]), /closes B a/],
    ["time going back", wrap([ev("i", 5), ev("i", 4)]), /goes back/],
    ["negative dur", wrap([ev("X", 0, { dur: -1 })]), /dur >= 0/],
    ["no ts", wrap([{ name: "a", ph: "i", pid: 1, tid: 0 }]), /no finite ts/],
    ["counter without values", wrap([ev("C", 0, { args: { v: "x" } })]), /numeric args/],
    ["unknown metadata", wrap([ev("M", 0, { name: "colour", args: {} })]), /unknown metadata/],
  ];
  for (const [what, text, re] of bad) {
    const errors = validateChromeTrace(text).errors;
    assert.ok(errors.some((e) => re.test(e)), `${what}: ${errors.join("; ")}`);
  }
  assert.throws(() => validateChromeTrace('{"traceEvents":[{"ph":"i",}]}'), SyntaxError);
  // Touching and zero-length spans nest.
  const ok = wrap([ev("X", 0, { dur: 2 }), ev("X", 2, { dur: 0 }), ev("X", 2, { dur: 1 })]);
  assertEquals(validateChromeTrace(ok).errors, []);
});

Deno.test("the validator reads times exactly beyond 2^53 ns: spans ending at one time nest", () => {
  // Found by the fuzz campaign (issue 23): a corrupt ring's time of ~2^61 ns, to which the
  // times after it are clamped; as doubles, the two ends differ by rounding and seemed to cross.
  const wrap = (events: unknown[]) => JSON.stringify({ traceEvents: events });
  const x = (ts: string, dur: string) =>
    `{"name":"a","ph":"X","ts":${ts},"dur":${dur},"pid":1,"tid":0}`;
  const text = `{"traceEvents":[${x("744649020.878", "2305843009213992.216")},${
    x("744649302.317", "2305843009213710.777")
  }]}`;
  assertEquals(validateChromeTrace(text).errors, []);
  // …and still sees a crossing of one nanosecond there.
  const crossing = `{"traceEvents":[${x("744649020.878", "2305843009213992.216")},${
    x("744649302.317", "2305843009213710.778")
  }]}`;
  assert.ok(validateChromeTrace(crossing).errors.some((e) => /crosses/.test(e)));
  assertEquals(validateChromeTrace(wrap([])).errors, []);
});

Deno.test("user events of an empty name slot are exported under a name (found by fuzzing)", () => {
  // Issue 23: a wiped or corrupt name table made `"name":""` events, which trace viewers need
  // named. Each kind of user event, with its slot emptied, gets `(unnamed user event <id>)`.
  const p = new RuntimeEventsProducer({
    maxDomains: 1,
    logWsize: 10,
    pid: 7,
    clock: counterClock(),
  });
  const unit = p.registerUserEvent("u", Type.unit);
  const int = p.registerUserEvent("i", Type.int);
  const span = p.registerUserEvent("s", Type.span);
  p.start();
  p.writeUser(0, unit);
  p.writeUser(0, int, 5);
  p.writeUser(0, span, "begin");
  p.writeUser(0, span, "end");
  p.writeUser(0, span, "end");
  const bytes = p.bytes;
  bytes.fill(0, p.layout.customEventsOffset, p.layout.customEventsOffset + 3 * 128);
  const events = exported(bytes);
  const user = events.filter((e) => e.cat === "user");
  assertEquals(user.map((e) => `${e.ph} ${e.name}`), [
    "i (unnamed user event 0)",
    "C (unnamed user event 1) (domain 0)",
    "B (unnamed user event 2)",
    "E (unnamed user event 2)",
    // the second end, unmatched, an instant of that name
    "i (unnamed user event 2)",
  ]);
});
