// The report's summary (lib/trace_analysis/summary.ts) and the aggregation without the cube:
// what they keep exact, that reading with the plan's merges gives the summary of the whole
// profile, and that `trace report` states it on the page.
import assert from "node:assert/strict";
import { Reader } from "../../lib/memtrace/mod.ts";
import {
  aggregateTrace,
  buildReport,
  type ProfileData,
  type Selector,
  topOf,
} from "../../lib/trace_analysis/mod.ts";
import { emptySelector } from "../../lib/trace_analysis/profile.ts";
import {
  groupBy,
  liveSeries,
  packProfile,
  selectionTotals,
  selectSamples,
} from "../../lib/trace_analysis/select.ts";
import { OTHER_STACKS, summarizeProfile, summaryPlan } from "../../lib/trace_analysis/summary.ts";
import { foldedStacks } from "../../lib/trace_analysis/folded.ts";
import { syntheticTrace } from "./_synthetic.ts";
import { trace } from "./_cli.ts";
import { embeddedProfile as embedded } from "./_page.ts";

// About 1,500 stacks over 3 domains, all three sources.
const BYTES = syntheticTrace({ events: 40_000, domains: 3, seed: 5 });
const FIXTURES = new URL("../fixtures/memtrace/", import.meta.url);
const OCAMLOPT = new URL("ocamlopt.ctf", FIXTURES).pathname;

function full(bytes = BYTES): ProfileData {
  return aggregateTrace(Reader.fromBytes(bytes));
}

function sel(patch: Partial<Selector>): Selector {
  return { ...emptySelector(), ...patch };
}

Deno.test("a summary keeps totals, the time views and the domain, source and size filters exact", () => {
  const data = full();
  const plan = summaryPlan(data, { stacks: 40, sites: 10 });
  assert.ok(plan !== null);
  const sum = summarizeProfile(data, plan);
  const s = sum.summary!;
  // The counts the page states, computed here from the classes.
  const perNode = new Map<number, number>();
  for (const g of groupBy(data, selectSamples(data, emptySelector()), "stack")) {
    perNode.set(g.node!, g.samples);
  }
  assert.equal(s.stacks, perNode.size);
  assert.equal(s.stacksKept, 40 + (perNode.has(-1) ? 1 : 0));
  assert.equal(s.samples, data.stats.samples);
  const heaviest = [...perNode].filter(([n]) => n >= 0).sort((x, y) => y[1] - x[1] || x[0] - y[0])
    .slice(0, 40);
  assert.equal(
    s.samplesKept,
    heaviest.reduce((a, [, w]) => a + w, 0) + (perNode.get(-1) ?? 0),
  );
  assert.equal(s.sitesKept, 10);
  assert.ok(s.samplesKept < s.samples, "something was merged");
  // Fewer nodes, locations and functions than the whole profile.
  assert.ok(sum.nodes.parent.length < data.nodes.parent.length);
  assert.ok(sum.functions.includes(OTHER_STACKS));
  const nb = data.grid.buckets;
  const selectors: Selector[] = [
    sel({}),
    sel({ live: "end" }),
    sel({ live: "peak" }),
    sel({ live: "bucket", liveBucket: Math.floor(nb / 2) }),
    sel({ fromBucket: 3, toBucket: nb - 4 }),
    sel({ domains: [1] }),
    sel({ sources: [1, 2] }),
    sel({ sizeMin: 3, sizeMax: 40 }),
    sel({ domains: [0, 2], live: "end", sizeMin: 17 }),
  ];
  for (const x of selectors) {
    const name = JSON.stringify(x);
    assert.deepEqual(
      selectionTotals(selectSamples(sum, x)),
      selectionTotals(selectSamples(data, x)),
      name,
    );
  }
  assert.deepEqual(liveSeries(sum, null, null, null), liveSeries(data, null, null, null));
  // The stacks kept are the same rows, whatever the filter.
  for (const x of selectors) {
    const whole = new Map(groupBy(data, selectSamples(data, x), "stack").map((g) => [g.key, g]));
    for (const g of groupBy(sum, selectSamples(sum, x), "stack")) {
      if (g.key.startsWith(OTHER_STACKS)) continue;
      const w = whole.get(g.key);
      assert.ok(w, g.key);
      assert.deepEqual([g.samples, g.promoted, g.liveEnd], [w.samples, w.promoted, w.liveEnd]);
    }
  }
  // The frame (other stacks) holds what was merged; its sites kept hold their share.
  const stacks = groupBy(sum, selectSamples(sum, emptySelector()), "stack");
  const other = stacks.filter((g) => g.key.startsWith(OTHER_STACKS));
  assert.equal(other.reduce((a, g) => a + g.samples, 0), s.samples - s.samplesKept);
  assert.equal(
    other.filter((g) => g.key.includes(";")).reduce((a, g) => a + g.samples, 0),
    s.samplesOfSitesKept,
  );
  assert.equal(other.length, 1 + s.sitesKept);
});

Deno.test("reading with the plan's merges gives the summary of the whole profile", () => {
  for (const bytes of [BYTES, Deno.readFileSync(OCAMLOPT)]) {
    const data = full(bytes);
    for (const [stacks, sites] of [[40, 10], [300, 0], [1, 500]]) {
      const plan = summaryPlan(data, { stacks, sites })!;
      const merged = aggregateTrace(Reader.fromBytes(bytes), { mergeStacks: plan.mergeStacks });
      // Fewer classes were built while reading.
      assert.ok(merged.classes.node.length < data.classes.node.length);
      assert.equal(
        JSON.stringify(packProfile(summarizeProfile(merged, plan))),
        JSON.stringify(packProfile(summarizeProfile(data, plan))),
        `${stacks} stacks, ${sites} sites`,
      );
    }
  }
});

Deno.test("no summary when the stacks fit; a summary is not summarised again", () => {
  const data = full();
  assert.equal(summaryPlan(data), null, "1,500 stacks are under the default 2,000");
  assert.doesNotMatch(buildReport(data), /summary-note/);
  const plan = summaryPlan(data, { stacks: 40 })!;
  assert.equal(summaryPlan(summarizeProfile(data, plan), { stacks: 40 }), null);
});

Deno.test("the page states the summary with the counts left out, and its totals stay exact", () => {
  const data = full();
  const html = buildReport(data, { stacks: 40, sites: 10 });
  const s = summaryPlan(data, { stacks: 40, sites: 10 })!.summary;
  const note = /<p class="summary-note" id="summary-note">([^<]*)<\/p>/.exec(html);
  assert.ok(note, "the page says it is a summary");
  const en = (n: number) => n.toLocaleString("en-US");
  assert.ok(
    note[1].includes(`the ${en(s.stacksKept)} stacks with the most samples, of ${en(s.stacks)}`),
  );
  assert.ok(
    note[1].includes(
      `The other ${en(s.stacks - s.stacksKept)} stacks (${en(s.samples - s.samplesKept)} samples`,
    ),
  );
  assert.ok(note[1].includes(`${s.sitesKept} of their ${en(s.sitesMerged)} sites stay`));
  const page = embedded(html);
  assert.deepEqual(page.summary, s);
  for (const x of [sel({}), sel({ live: "end" }), sel({ domains: [2], sources: [0] })]) {
    assert.equal(
      selectionTotals(selectSamples(page, x)).samples,
      selectionTotals(selectSamples(data, x)).samples,
    );
  }
});

Deno.test("without the cube: the same top, folded stacks and live-at counts; peak refused", () => {
  const files = ["single_1e-4.ctf", "multi_mdtrace_3e-4.renumbered.ctf", "ocamlopt.ctf"];
  const traces = [BYTES, ...files.map((f) => Deno.readFileSync(new URL(f, FIXTURES)))];
  for (const bytes of traces) {
    for (const liveAtUs of [undefined, 20_000]) {
      const withCube = aggregateTrace(Reader.fromBytes(bytes), { liveAtUs });
      const without = aggregateTrace(Reader.fromBytes(bytes), { liveAtUs, cube: false });
      assert.equal(without.rows, null);
      assert.deepEqual(without.peak, withCube.peak);
      const modes: Selector[] = [
        sel({}),
        sel({ live: "end" }),
        sel({ domains: [0], sizeMax: 10 }),
        ...(liveAtUs === undefined ? [] : [sel({ live: "exact" })]),
      ];
      for (const x of modes) {
        for (const by of ["site", "function", "stack"] as const) {
          assert.deepEqual(
            topOf(without, x, { by, limit: 0 }),
            topOf(withCube, x, { by, limit: 0 }),
          );
        }
        assert.deepEqual(foldedStacks(without, x), foldedStacks(withCube, x));
      }
      assert.throws(() => selectSamples(without, sel({ live: "peak" })), /no cube/);
      assert.throws(() => selectSamples(without, sel({ fromBucket: 1 })), /no cube/);
    }
  }
});

Deno.test("trace report --stacks: the page buildReport makes, from a file (two passes) or a FIFO (one)", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "trace_summary_" });
  try {
    const expected = buildReport(full(Deno.readFileSync(OCAMLOPT)), { stacks: 100 });
    assert.match(expected, /summary-note/);
    const r = await trace("report", OCAMLOPT, "--stacks", "100", "-o", `${dir}/file.html`);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(Deno.readTextFileSync(`${dir}/file.html`), expected);
    // A FIFO: read once, with the whole cube, summarised after.
    const fifo = `${dir}/trace.fifo`;
    const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
    assert.equal(made.code, 0, "mkfifo");
    const reading = trace("report", fifo, "--stacks", "100", "-o", `${dir}/pipe.html`);
    const w = await Deno.open(fifo, { write: true });
    await w.write(Deno.readFileSync(OCAMLOPT));
    w.close();
    const piped = await reading;
    assert.equal(piped.code, 0, piped.stderr);
    // The same page, but for the trace's size, which a pipe does not tell (0, as memtrace says).
    const fromPipe = embedded(Deno.readTextFileSync(`${dir}/pipe.html`)), page = embedded(expected);
    assert.equal(fromPipe.info.sizeBytes, 0);
    fromPipe.info.sizeBytes = page.info.sizeBytes;
    assert.deepEqual(fromPipe, page);
    // --stacks 0: no summary.
    const all = await trace("report", OCAMLOPT, "--stacks", "0", "-o", `${dir}/all.html`);
    assert.equal(all.code, 0, all.stderr);
    assert.doesNotMatch(Deno.readTextFileSync(`${dir}/all.html`), /summary-note/);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
