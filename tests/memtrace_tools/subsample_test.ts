// subsample's and strip-names' guarantees beyond the references: what is kept, the generator,
// argument checks; and every tool on truncated traces (memtrace's behaviour where it has one, a
// typed error where it crashes).
import assert from "node:assert/strict";
import {
  type AllocationSource,
  MemorySink,
  MemtraceFormatError,
  type Reader,
} from "../../lib/memtrace/mod.ts";
import { OCamlRandomState } from "../../lib/tracer/mod.ts";
import {
  flamegraph,
  hotspots,
  identify,
  OCAML_DEFAULT_RANDOM_SEED,
  stripNames,
  subsample,
  type SubsampleOptions,
  TraceToolError,
} from "../../lib/memtrace_tools/mod.ts";
import {
  bytes,
  EXTRA,
  firstByteDifference,
  readerOf,
  text,
  TRACES,
  withReader,
  written,
} from "./_fixtures.ts";

const SINGLE = bytes(TRACES, "single_1e-4.ctf");

function sub(data: Uint8Array, options: SubsampleOptions): Uint8Array {
  return withReader(data, "in.ctf", (r) => written((sink) => subsample(r, sink, options)));
}

interface Alloc {
  id: number;
  time: number;
  length: number;
  nsamples: number;
  source: AllocationSource;
  domain: number;
  backtrace: string;
}

/** The allocations of a trace, and whether every promote/collect names an allocated object. */
function allocations(data: Uint8Array): { allocs: Alloc[]; consistent: boolean } {
  const allocs: Alloc[] = [];
  const live = new Set<number>();
  let consistent = true;
  withReader(data, "t.ctf", (r: Reader) =>
    r.iter((time, ev) => {
      if (ev.kind === "alloc") {
        allocs.push({
          id: ev.objId,
          time,
          length: ev.length,
          nsamples: ev.nsamples,
          source: ev.source,
          domain: ev.domain,
          backtrace: ev.toString((c) => r.lookupLocationCode(c)).replace(/^.*?:/, ""),
        });
        live.add(ev.objId);
      } else {
        if (!live.has(ev.objId)) consistent = false;
        if (ev.kind === "collect") live.delete(ev.objId);
      }
    }));
  return { allocs, consistent };
}

for (const name of ["single_1e-4", "multi_mdtrace_3e-4.renumbered"]) {
  Deno.test(`subsample by 1 gives back ${name}.ctf byte for byte`, () => {
    // Random.int 1 is always 0: every sample is kept, ids are the writer's own, as in the input.
    const input = bytes(TRACES, `${name}.ctf`);
    assert.equal(firstByteDifference(sub(input, { factor: 1 }), input), -1);
  });
}

Deno.test("subsample keeps a subset of each allocation's samples, in order, with its details", () => {
  const before = allocations(SINGLE).allocs;
  for (const factor of [2, 10, 1000]) {
    const stats = withReader(SINGLE, "in", (r) => subsample(r, new MemorySink(), { factor }));
    const { allocs, consistent } = allocations(sub(SINGLE, { factor }));
    assert.ok(consistent, "a promote or collect names an object that was not kept");
    assert.equal(allocs.length, stats.keptAllocations);
    assert.equal(allocs.reduce((n, a) => n + a.nsamples, 0), stats.keptSamples);
    assert.equal(stats.allocations, before.length);
    assert.ok(stats.keptSamples < stats.samples, `factor ${factor} kept everything`);
    // Each kept allocation is one of the input's, in order, with fewer or as many samples.
    let j = 0;
    for (const a of allocs) {
      while (
        j < before.length &&
        !(before[j].time === a.time && before[j].length === a.length &&
          before[j].backtrace === a.backtrace && before[j].source === a.source)
      ) j++;
      assert.ok(j < before.length, `kept allocation at ${a.time} µs not found in the input`);
      assert.ok(a.nsamples >= 1 && a.nsamples <= before[j].nsamples);
      j++;
    }
  }
});

Deno.test("subsample keeps only allocations inside the window, in whole seconds", () => {
  // edge_writer_api has allocations at 0 s, 1 s, 100 s and two at 103 s.
  const input = bytes(TRACES, "edge_writer_api.ctf");
  const times = (w: { start: number; end: number }) =>
    allocations(sub(input, { factor: 1, window: w })).allocs.map((a) => a.time / 1e6);
  assert.deepEqual(times({ start: 1, end: 101 }), [1, 100]);
  assert.deepEqual(times({ start: 0, end: 1 }), [0]);
  assert.deepEqual(times({ start: 103, end: 104 }), [103, 103]);
  assert.deepEqual(times({ start: 5, end: 5 }), []);
  assert.deepEqual(times({ start: -10, end: 1000 }), [0, 1, 100, 103, 103]);
});

Deno.test("subsample divides the sample rate and keeps the other metadata", () => {
  const out = sub(SINGLE, { factor: 7, window: { start: 3, end: 4 } });
  const a = readerOf(SINGLE, "a").info, b = readerOf(out, "b").info;
  assert.equal(b.sampleRate, a.sampleRate / 7);
  assert.deepEqual({ ...b, sampleRate: 0 }, { ...a, sampleRate: 0 });
  assert.equal(allocations(out).allocs.length, 0); // the trace lasts 0.25 s
});

Deno.test("subsample draws from OCaml's default Random state unless given another", () => {
  const fresh = () => OCamlRandomState.make(OCAML_DEFAULT_RANDOM_SEED);
  const byDefault = sub(SINGLE, { factor: 10 });
  assert.equal(firstByteDifference(sub(SINGLE, { factor: 10, random: fresh() }), byDefault), -1);
  const other = sub(SINGLE, { factor: 10, random: OCamlRandomState.make([1, 2, 3]) });
  assert.notEqual(firstByteDifference(other, byDefault), -1);
  // A state already used continues where it is: a second run differs from a first.
  const s = fresh();
  sub(SINGLE, { factor: 10, random: s });
  assert.notEqual(firstByteDifference(sub(SINGLE, { factor: 10, random: s }), byDefault), -1);
});

Deno.test("subsample refuses a factor or window Random.int and the window cannot take", () => {
  const bad: SubsampleOptions[] = [
    { factor: 0 },
    { factor: -3 },
    { factor: 1.5 },
    { factor: 2 ** 30 },
    { factor: NaN },
    { factor: 2, window: { start: 5, end: 4 } },
    { factor: 2, window: { start: 0.5, end: 4 } },
  ];
  for (const options of bad) {
    assert.throws(
      () => sub(SINGLE, options),
      (e: unknown) => e instanceof TraceToolError && e.tool === "subsample",
      JSON.stringify(options),
    );
  }
  // The largest factor is accepted.
  assert.ok(sub(SINGLE, { factor: 2 ** 30 - 1 }).length > 0);
});

Deno.test("strip-names keeps every event's time, id, length, samples, source and domain", () => {
  for (const name of ["single_1e-4", "multi_mdtrace_3e-4.renumbered"]) {
    const input = bytes(TRACES, `${name}.ctf`);
    const out = withReader(input, name, (r) => written((sink) => stripNames(r, sink)));
    const a = allocations(input).allocs, b = allocations(out).allocs;
    // An empty backtrace prints as nothing after the "prefix:" of the event's text.
    assert.ok(a.every((x) => x.backtrace !== " "));
    assert.deepEqual(b, a.map((x) => ({ ...x, backtrace: " " })));
    const info = readerOf(out, "o").info;
    assert.equal(info.executableName, "<anonymous>");
    assert.equal(info.pid, 0n);
    assert.equal(info.startTime, 0);
  }
});

// Truncated traces.

const HEAD_40000 = SINGLE.slice(0, 40000);
const HEAD_250 = SINGLE.slice(0, 250);

Deno.test("the tools skip a cut last packet with memtrace's warning, as memtrace's do", () => {
  const file = "single_1e-4.head40000.ctf";
  const run = {
    flamegraph: (r: Reader) => flamegraph(r),
    hotspots: (r: Reader) => hotspots(r),
    identify: (r: Reader) => identify(r, { name: file }),
  };
  for (const [tool, f] of Object.entries(run)) {
    const warnings: string[] = [];
    const r = readerOf(HEAD_40000, file, warnings);
    assert.equal(f(r), text(EXTRA, `single_1e-4.head40000.${tool}.txt`), tool);
    assert.equal(
      warnings.map((w) => w + "\n").join(""),
      text(EXTRA, `single_1e-4.head40000.${tool}.stderr.txt`),
    );
  }
  const got = withReader(
    HEAD_40000,
    file,
    (r) => written((sink) => subsample(r, sink, { factor: 3 })),
  );
  assert.equal(
    firstByteDifference(got, bytes(EXTRA, "single_1e-4.head40000.subsample_3.ctf")),
    -1,
  );
});

Deno.test("the tools stop with a MemtraceFormatError where memtrace's hit a buffer underflow", () => {
  for (const tool of ["flamegraph", "hotspots", "identify"]) {
    assert.match(text(EXTRA, `single_1e-4.head250.${tool}.stderr.txt`), /Buffer underflow/);
  }
  const file = "single_1e-4.head250.ctf";
  const all: ((r: Reader) => unknown)[] = [
    flamegraph,
    hotspots,
    (r) => identify(r),
    (r) => subsample(r, new MemorySink(), { factor: 2 }),
    (r) => stripNames(r, new MemorySink()),
  ];
  for (const f of all) {
    assert.throws(
      () => withReader(HEAD_250, file, f),
      (e: unknown) =>
        e instanceof MemtraceFormatError && e.file === file && e.offset >= 200 &&
        e.offset <= 250,
    );
  }
  // Cut inside the trace-info packet: no reader at all.
  assert.throws(() => readerOf(SINGLE.slice(0, 100), file), MemtraceFormatError);
});
