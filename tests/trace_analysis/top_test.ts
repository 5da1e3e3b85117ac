// `trace top` (lib/trace_analysis) against the independent computation of _naive.ts, on every
// real trace of tests/fixtures/memtrace and on a synthetic multi-domain trace.
import assert from "node:assert/strict";
import { Reader } from "../../lib/memtrace/mod.ts";
import {
  aggregateTrace,
  type AnalysisFilter,
  analyzeTrace,
  type DiffRow,
  formatDiff,
  formatTop,
  type GroupBy,
  topOf,
  TraceAnalysisError,
} from "../../lib/trace_analysis/mod.ts";
import { SOURCES } from "../../lib/trace_analysis/filter.ts";
import { STACK_TEXT_CHARS } from "../../lib/trace_analysis/select.ts";
import { boundedStackKey, naiveGroups, naiveLiveAt, naiveObjects } from "./_naive.ts";
import { syntheticTrace } from "./_synthetic.ts";
import { sized } from "../tier.ts";

const FIXTURES = new URL("../fixtures/memtrace/", import.meta.url);
const TRACES: [string, Uint8Array][] = [
  "single_1e-4.ctf",
  "ocamlopt.ctf",
  "external_2e-5.ctf",
  "multi_mdtrace_3e-4.renumbered.ctf",
  "lists_and_sets_v1_e8e7dbe.ctf",
  "edge_writer_api.ctf",
].map((f) => [f, Deno.readFileSync(new URL(f, FIXTURES))]);
TRACES.push(["synthetic", syntheticTrace({ events: 30_000, domains: 3, seed: 5 })]);

const naiveCache = new Map<Uint8Array, ReturnType<typeof naiveObjects>>();
function objectsOf(bytes: Uint8Array) {
  let o = naiveCache.get(bytes);
  if (o === undefined) naiveCache.set(bytes, o = naiveObjects(bytes));
  return o;
}

function analyze(bytes: Uint8Array, filter: AnalysisFilter) {
  return analyzeTrace(Reader.fromBytes(bytes), filter);
}

/** Compares every row of `trace top` (no limit) with the naive sums. */
function check(name: string, bytes: Uint8Array, by: GroupBy, filter: AnalysisFilter): number {
  const { data, selector } = analyze(bytes, filter);
  const top = topOf(data, selector, { by, limit: 0 });
  const liveAt = filter.liveAt === "peak" ? data.peak!.timeUs : filter.liveAt;
  const naive = naiveGroups(objectsOf(bytes), by, {
    ...filter,
    sources: filter.sources?.map((s) => SOURCES[s]),
    liveAt,
  });
  const what = `${name} by ${by} ${JSON.stringify(filter)}`;
  const bps = data.info.wordSize / 8 / data.info.sampleRate;
  const expected = [...naive.groups].filter(([, g]) => g.samples > 0);
  assert.equal(top.rows.length, expected.length, `${what}: row count`);
  assert.equal(top.rowCount, expected.length, what);
  if (by === "stack") {
    // Rows in the order of samples, then of the stacks' whole texts (never built: ranked), with
    // keys bounded to STACK_TEXT_CHARS.
    expected.sort(([ka, a], [kb, b]) => b.samples - a.samples || (ka < kb ? -1 : ka > kb ? 1 : 0));
    assert.deepEqual(
      top.rows.map((r) => [r.key, r.samples, r.promotedSamples, r.liveEndBytes]),
      expected.map(([k, g]) => [
        boundedStackKey(k, STACK_TEXT_CHARS),
        g.samples,
        g.promoted,
        g.liveEnd * bps,
      ]),
      what,
    );
    for (const row of top.rows) {
      const shown = row.frames!.join(";") || "(no location)";
      assert.equal(
        (row.framesOmitted! > 0 ? `(${row.framesOmitted} outer frames);` : "") + shown,
        row.key,
      );
      assert.ok(row.key.length <= STACK_TEXT_CHARS + 30 || row.frames!.length === 1, row.key);
    }
    assert.equal(top.totals.samples, naive.total.samples, `${what}: total samples`);
    return top.rows.length;
  }
  for (const row of top.rows) {
    const g = naive.groups.get(row.key);
    assert.ok(g, `${what}: unexpected row ${row.key}`);
    assert.equal(row.samples, g.samples, `${what}: samples of ${row.key}`);
    assert.equal(row.promotedSamples, g.promoted, `${what}: promoted of ${row.key}`);
    assert.equal(row.liveEndBytes, g.liveEnd * bps, `${what}: live@end of ${row.key}`);
    assert.equal(row.bytes, g.samples * bps, `${what}: bytes of ${row.key}`);
    if (by === "function") assert.equal(row.selfSamples, g.self, `${what}: self of ${row.key}`);
  }
  assert.equal(top.totals.samples, naive.total.samples, `${what}: total samples`);
  assert.equal(top.totals.promotedSamples, naive.total.promoted, `${what}: total promoted`);
  assert.equal(top.totals.liveEndBytes, naive.total.liveEnd * bps, `${what}: total live@end`);
  // Largest first; functions by self.
  for (let i = 1; i < top.rows.length; i++) {
    const a = top.rows[i - 1], b = top.rows[i];
    const ka = by === "function" ? a.selfSamples! : a.samples;
    const kb = by === "function" ? b.selfSamples! : b.samples;
    assert.ok(ka >= kb, `${what}: order at ${i}`);
  }
  return top.rows.length;
}

Deno.test("top by site, function and stack equals the naive sums on every fixture trace", () => {
  for (const [name, bytes] of TRACES) {
    for (const by of ["site", "function", "stack"] as const) {
      const rows = check(name, bytes, by, {});
      if (name !== "edge_writer_api.ctf") assert.ok(rows > 1, `${name}: several ${by} rows`);
    }
  }
});

Deno.test("top's filters select what the naive computation selects", () => {
  // Every filter on every trace; in the quick tier (tests/tier.ts) filter k on trace t when
  // (t + k) % 3 is 0: each filter on two or three of the seven traces, each trace with five.
  const stride = sized(1, 3);
  for (const [t, [name, bytes]] of TRACES.entries()) {
    const objects = objectsOf(bytes);
    const end = Math.max(...objects.map((o) => o.time));
    const mid = Math.round(end / 2);
    const domains = [...new Set(objects.map((o) => o.domain))].sort();
    const filters: AnalysisFilter[] = [
      { liveAt: "end" },
      { liveAt: mid },
      { liveAt: 0 },
      { fromUs: Math.round(end / 4), toUs: Math.round((3 * end) / 4) },
      { fromUs: mid, liveAt: "end" },
      { toUs: mid, liveAt: Math.round((3 * end) / 4) },
      { domains: [domains.at(-1)!] },
      { sources: ["major", "external"] },
      { sources: ["minor"], sizeMin: 3, sizeMax: 16 },
      { sizeMin: 257 },
      { function: "List" },
      { exclude: "Map", liveAt: mid },
      { function: "fn1", exclude: "fn2" },
      { liveAt: "peak" },
      { liveAt: "peak", domains: [domains[0]], sizeMax: 8 },
    ];
    for (const [k, f] of filters.entries()) {
      if ((t + k) % stride !== 0) continue;
      for (const by of ["site", "function"] as const) check(name, bytes, by, f);
    }
  }
});

Deno.test("the peak is the grid bucket end where the naive live heap is largest", () => {
  for (const [name, bytes] of TRACES) {
    const data = aggregateTrace(Reader.fromBytes(bytes));
    const objects = objectsOf(bytes);
    const w = data.grid.widthUs;
    let best = -1, at = -1;
    for (let k = 0; k < data.grid.buckets; k++) {
      const live = naiveLiveAt(objects, (k + 1) * w - 1);
      if (live > best) [best, at] = [live, k];
    }
    assert.ok(data.peak, name);
    assert.equal(data.peak.bucket, at, `${name}: peak bucket`);
    assert.equal(data.peak.samples, best, `${name}: peak samples`);
    assert.equal(data.peak.timeUs, (at + 1) * w - 1, name);
    // The grid covers the trace: at most 128 buckets, the last holding the last event.
    assert.ok(data.grid.buckets <= 128 && data.grid.buckets * w > data.stats.durationUs, name);
    assert.ok((data.grid.buckets - 1) * w <= data.stats.durationUs, name);
  }
});

Deno.test("a coarser grid gives the same totals and the same exact live-at counts", () => {
  const bytes = TRACES.find(([n]) => n === "synthetic")![1];
  const fine = aggregateTrace(Reader.fromBytes(bytes), { liveAtUs: 12_345 });
  const coarse = aggregateTrace(Reader.fromBytes(bytes), { liveAtUs: 12_345, maxBuckets: 4 });
  assert.ok(coarse.grid.buckets <= 4 && coarse.grid.widthUs > fine.grid.widthUs);
  const sum = (xs: ArrayLike<number>) => Array.from(xs).reduce((a, b) => a + b, 0);
  assert.equal(sum(coarse.rows!.samples), sum(fine.rows!.samples));
  assert.equal(sum(coarse.grid.alloc), sum(fine.grid.alloc));
  assert.equal(sum(coarse.grid.end), sum(fine.grid.end));
  assert.deepEqual(coarse.liveAt, fine.liveAt);
  assert.ok(coarse.rows!.cls.length < fine.rows!.cls.length);
});

Deno.test("top --limit keeps the largest rows; the table prints them with units", () => {
  const bytes = TRACES[0][1];
  const { data, selector } = analyze(bytes, {});
  const all = topOf(data, selector, { limit: 0 });
  const five = topOf(data, selector, { limit: 5 });
  assert.deepEqual(five.rows, all.rows.slice(0, 5));
  assert.equal(five.rowCount, all.rowCount);
  const lines = formatTop(five, "single_1e-4.ctf");
  assert.match(
    lines[0],
    /^# single_1e-4\.ctf: ocaml-examples\/wl_single, 8073 events, 0\.251825 s/,
  );
  assert.match(lines[1], /allocations by site: \d+ sites, top 5 shown/);
  assert.match(lines[2], /^# low\.\.high: 95% confidence interval, exact binomial/);
  assert.match(
    lines[3],
    /^samples +bytes +bytesLow\.\.bytesHigh +liveEndBytes +promotedShare +site$/,
  );
  assert.equal(lines.length, 4 + 5 + 1);
  assert.match(
    lines[4],
    new RegExp(` ${five.rows[0].samples} .* MiB .* MiB\\.\\..* MiB .*${escape(five.rows[0].key)}$`),
  );
  assert.match(lines.at(-1)!, /\(total\)$/);
  const fn = formatTop(topOf(data, selector, { by: "function", limit: 3 }), "x");
  assert.match(
    fn[3],
    /^samples +selfBytes +bytes +bytesLow\.\.bytesHigh +liveEndBytes +promotedShare +function$/,
  );
});

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

Deno.test("bad filters are refused with a TraceAnalysisError naming the option", () => {
  const bytes = TRACES[0][1];
  for (
    const [filter, option] of [
      [{ fromUs: 10, toUs: 10 }, "to"],
      [{ fromUs: -1 }, "from"],
      [{ liveAt: Number.NaN }, "live-at"],
      [{ sizeMin: 1.5 }, "size"],
      [{ sources: ["tiny" as "minor"] }, "source"],
      [{ domains: [-2] }, "domain"],
    ] as const
  ) {
    assert.throws(
      () => analyze(bytes, filter as AnalysisFilter),
      (e) => e instanceof TraceAnalysisError && e.option === option,
      JSON.stringify(filter),
    );
  }
});

Deno.test("top and diff tables of 300,000 rows (--limit 0) print (was RangeError: Maximum call stack size exceeded)", () => {
  // Issue 23: the column widths were Math.max(...cells), one argument per row; a trace of some
  // 150,000 sites (a few MB) printed with --limit 0 went beyond what a call's arguments may be.
  const n = 300_000;
  const rows = Array.from({ length: n }, (_, i) => ({
    key: `S.f${i}@s.ml:${i}:0-1`,
    samples: 1,
    bytes: 8,
    selfBytes: 8,
    liveEndBytes: 0,
    promotedSamples: 0,
    promotedShare: 0,
  }));
  const info = { executableName: "x", sampleRate: 1, events: n, durationUs: 1 };
  const top = formatTop({
    trace: { ...info, wordSize: 64, bytesPerSample: 8, samples: n, peak: null },
    by: "site",
    measure: "allocated",
    liveAt: null,
    totals: { samples: n, bytes: 8 * n, liveEndBytes: 0, promotedSamples: 0, promotedShare: 0 },
    rowCount: n,
    rows,
  });
  assert.equal(top.length, n + 5);
  const row = (i: number): DiffRow => ({
    key: `k${i}`,
    allocBytesA: 8,
    allocBytesB: 16,
    allocDelta: 8,
    liveBytesA: 0,
    liveBytesB: 0,
    liveDelta: 0,
    samplesA: 1,
    samplesB: 2,
  });
  const diff = formatDiff({
    a: info,
    b: info,
    by: "site",
    live: { kind: "end", timeUsA: null, timeUsB: null },
    sort: "alloc",
    totals: row(-1),
    rowCount: n,
    rows: Array.from({ length: n }, (_, i) => row(i)),
  });
  assert.equal(diff.length, n + 6);
});
