// pprof (decoded with pprof-format), speedscope (validated against speedscope's own schema)
// and folded-stack exports.
import assert from "node:assert/strict";
import { gunzipSync } from "node:zlib";
import { Ajv } from "ajv";
import { Profile } from "pprof-format";
import { Reader } from "../../lib/memtrace/mod.ts";
import { keep, runScenario, scenario } from "../../lib/scenario/mod.ts";
import {
  analyzeTrace,
  foldedStacks,
  pprofOf,
  speedscopeOf,
  topOf,
} from "../../lib/trace_analysis/mod.ts";
import { naiveObjects } from "./_naive.ts";
import { syntheticTrace } from "./_synthetic.ts";
import schema from "../fixtures/speedscope/file-format-schema.json" with { type: "json" };

const FIXTURES = new URL("../fixtures/memtrace/", import.meta.url);
const single = Deno.readFileSync(new URL("single_1e-4.ctf", FIXTURES));
const multi = Deno.readFileSync(new URL("multi_mdtrace_3e-4.renumbered.ctf", FIXTURES));
const synthetic = syntheticTrace({ events: 20_000, domains: 2, seed: 9 });

/** A run at rate 1: 12 blocks of 4 words kept, 30 of 2 words dropped, 3 major of 400 kept. */
function exactRun(): Uint8Array {
  return runScenario(
    scenario({ name: "exact", seed: 3 }, (s) => {
      const m = s.main;
      m.memprof.start({ samplingRate: 1 });
      m.call("Exact.main@exact.ml:1:0-9", () => {
        m.repeat(12, () => m.alloc(4, { lifetime: keep.forever, at: "Exact.a@exact.ml:2:0-9" }));
        m.repeat(30, () => m.alloc(2, { at: "Exact.b@exact.ml:3:0-9" }));
        m.repeat(
          3,
          () =>
            m.alloc(400, { source: "major", lifetime: keep.forever, at: "Exact.c@exact.ml:4:0-9" }),
        );
      });
      m.fullMajor();
      m.memprof.stop();
    }),
  ).ctf;
}

function decodePprof(bytes: Uint8Array): Profile {
  assert.deepEqual([bytes[0], bytes[1]], [0x1f, 0x8b], "gzip magic");
  return Profile.decode(new Uint8Array(gunzipSync(bytes)));
}

Deno.test("the pprof export decodes with pprof-format: heap sample types, sums equal trace top", () => {
  for (const bytes of [single, multi, synthetic]) {
    const { data, selector } = analyzeTrace(Reader.fromBytes(bytes), { lengths: "exact" });
    const p = decodePprof(pprofOf(data, selector));
    const str = (i: number | bigint) => p.stringTable.strings[Number(i)];
    assert.deepEqual(
      p.sampleType.map((t) => `${str(t.type)}/${str(t.unit)}`),
      ["alloc_objects/count", "alloc_space/bytes", "inuse_objects/count", "inuse_space/bytes"],
    );
    assert.equal(str(p.defaultSampleType), "alloc_space");
    assert.equal(BigInt(p.timeNanos), BigInt(data.info.startTime) * 1000n);
    const top = topOf(data, selector, { limit: 0 });
    const sum = (k: number) => p.sample.reduce((a, s) => a + Number(s.value[k]), 0);
    // Each sample's value is rounded to a whole byte.
    assert.ok(Math.abs(sum(1) - top.totals.bytes) <= p.sample.length / 2);
    assert.ok(Math.abs(sum(3) - top.totals.liveEndBytes) <= p.sample.length / 2);
    // Every sample's leaf location is the site of its class; sums by site equal trace top's.
    const locs = new Map(p.location.map((l) => [Number(l.id), l]));
    const fns = new Map(p.function.map((f) => [Number(f.id), f]));
    const bySite = new Map<string, number>();
    for (const s of p.sample) {
      const leaf = locs.get(Number(s.locationId[0]))!;
      const fn = fns.get(Number(leaf.line[0].functionId))!;
      const site = `${str(fn.name)}@${str(fn.filename)}:${leaf.line[0].line}:${
        leaf.line[0].column
      }`;
      bySite.set(site, (bySite.get(site) ?? 0) + Number(s.value[1]));
      const labels = new Map(s.label.map((l) => [str(l.key), l]));
      assert.ok(labels.has("bytes") && labels.has("domain") && labels.has("source"));
    }
    for (const row of top.rows) {
      const site = row.key.replace(/-\d+$/, "");
      const got = bySite.get(site);
      assert.ok(got !== undefined, site);
      assert.ok(Math.abs(got - row.bytes) <= p.sample.length / 2, site);
    }
  }
});

Deno.test("the pprof export counts objects exactly at rate 1", () => {
  const { data, selector } = analyzeTrace(Reader.fromBytes(exactRun()), { lengths: "exact" });
  const p = decodePprof(pprofOf(data, selector));
  const total = (k: number) => p.sample.reduce((a, s) => a + Number(s.value[k]), 0);
  assert.equal(total(0), 12 + 30 + 3); // alloc_objects
  assert.equal(total(1), (12 * 5 + 30 * 3 + 3 * 401) * 8); // alloc_space
  assert.equal(total(2), 12 + 3); // inuse_objects
  assert.equal(total(3), (12 * 5 + 3 * 401) * 8); // inuse_space
  // With --live-at peak, "in use" is the peak's live heap.
  const peak = analyzeTrace(Reader.fromBytes(exactRun()), {
    liveAt: "peak",
    lengths: "exact",
  });
  const q = decodePprof(pprofOf(peak.data, peak.selector));
  assert.equal(
    q.sample.reduce((a, s) => a + Number(s.value[3]), 0),
    topOf(peak.data, peak.selector).totals.bytes,
  );
});

Deno.test("the speedscope export validates against speedscope's published schema", () => {
  const ajv = new Ajv({ strict: false });
  const validate = ajv.compile(schema);
  for (const bytes of [single, multi, synthetic, exactRun()]) {
    const { data, selector } = analyzeTrace(Reader.fromBytes(bytes), { liveAt: "peak" });
    const file = speedscopeOf(data, selector);
    const json = JSON.parse(JSON.stringify(file));
    assert.ok(validate(json), JSON.stringify(validate.errors));
    const alloc = topOf(data, { ...selector, live: "alloc" }).totals.bytes;
    const live = topOf(data, selector).totals.bytes;
    assert.equal(file.profiles.length, 2);
    assert.ok(Math.abs(file.profiles[0].endValue - alloc) < 1e-6 * alloc + 1e-9);
    assert.ok(Math.abs(file.profiles[1].endValue - live) < 1e-6 * live + 1e-9);
    for (const prof of file.profiles) {
      const sum = prof.weights.reduce((a, b) => a + b, 0);
      assert.ok(Math.abs(sum - prof.endValue) <= 1e-6 * prof.endValue);
      assert.ok(prof.weights.every((w) => w > 0));
      for (const s of prof.samples) {
        assert.ok(s.every((f) => f >= 0 && f < file.shared.frames.length));
      }
    }
  }
  // A broken file does not validate (the schema is really applied).
  assert.equal(validate({ $schema: "https://www.speedscope.app/file-format-schema.json" }), false);
});

Deno.test("folded stacks equal the naive fold by function path, weighted in bytes", () => {
  for (const bytes of [single, synthetic, exactRun()]) {
    const { data, selector } = analyzeTrace(Reader.fromBytes(bytes));
    const bps = data.info.wordSize / 8 / data.info.sampleRate;
    const expected = new Map<string, number>();
    for (const o of naiveObjects(bytes)) {
      const path = o.fns.filter((f, i) => i === 0 || o.fns[i - 1] !== f).join(";") ||
        "(no location)";
      expected.set(path, (expected.get(path) ?? 0) + o.n);
    }
    const lines = foldedStacks(data, selector);
    assert.equal(lines.length, expected.size);
    assert.deepEqual(lines, [...lines].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    for (const line of lines) {
      const m = /^(.*) (\d+)$/.exec(line)!;
      assert.ok(m, line);
      assert.equal(Number(m[2]), Math.round(expected.get(m[1])! * bps), line);
    }
  }
});

Deno.test("exports are deterministic", () => {
  const { data, selector } = analyzeTrace(Reader.fromBytes(single), { lengths: "exact" });
  assert.deepEqual(pprofOf(data, selector), pprofOf(data, selector));
  const again = analyzeTrace(Reader.fromBytes(single), { lengths: "exact" });
  assert.deepEqual(pprofOf(again.data, again.selector), pprofOf(data, selector));
  assert.deepEqual(speedscopeOf(again.data, again.selector), speedscopeOf(data, selector));
});
