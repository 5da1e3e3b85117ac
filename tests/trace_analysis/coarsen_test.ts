// The report's coarser time grid (lib/trace_analysis/coarsen.ts): merging buckets in pairs gives
// what aggregating with buckets twice as wide gives, and a page over its row budget is built on
// such a grid, holds at most that many rows, keeps its totals and says so.
import assert from "node:assert/strict";
import { Reader } from "../../lib/memtrace/mod.ts";
import { aggregateTrace, buildReport } from "../../lib/trace_analysis/mod.ts";
import { coarsenGrid } from "../../lib/trace_analysis/coarsen.ts";
import { packedRowCounts } from "../../lib/trace_analysis/_pack.ts";
import { emptySelector } from "../../lib/trace_analysis/profile.ts";
import {
  liveSeries,
  packProfile,
  selectionTotals,
  selectSamples,
} from "../../lib/trace_analysis/select.ts";
import { syntheticTrace } from "./_synthetic.ts";
import { embeddedProfile } from "./_page.ts";

const FIXTURES = new URL("../fixtures/memtrace/", import.meta.url);
const TRACES: [string, Uint8Array][] = [
  ["multi", Deno.readFileSync(new URL("multi_mdtrace_3e-4.renumbered.ctf", FIXTURES))],
  ["ocamlopt", Deno.readFileSync(new URL("ocamlopt.ctf", FIXTURES))],
  ["external", Deno.readFileSync(new URL("external_2e-5.ctf", FIXTURES))],
  ["synthetic", syntheticTrace({ events: 40_000, domains: 3, seed: 5 })],
];

Deno.test("merging buckets in pairs gives the aggregation with buckets twice as wide", () => {
  for (const [name, bytes] of TRACES) {
    let data = aggregateTrace(Reader.fromBytes(bytes));
    assert.ok(data.grid.buckets > 64, `${name}: ${data.grid.buckets} buckets`);
    for (let max = 64; max >= 2 && data.grid.buckets > max; max /= 2) {
      data = coarsenGrid(data);
      const wide = aggregateTrace(Reader.fromBytes(bytes), { maxBuckets: max });
      assert.equal(data.grid.widthUs, wide.grid.widthUs, `${name} ${max}`);
      assert.deepEqual(data.peak, wide.peak, `${name} ${max}`);
      assert.equal(
        JSON.stringify(packProfile(data)),
        JSON.stringify(packProfile(wide)),
        `${name}, ${max} buckets`,
      );
    }
  }
});

Deno.test("the rows counted for each coarser grid are those its packing gives", () => {
  for (const [name, bytes] of TRACES) {
    const data = aggregateTrace(Reader.fromBytes(bytes));
    const counts = packedRowCounts(data);
    assert.equal(counts.length, 8);
    let merged = data;
    for (let times = 0; times < 8; times++) {
      const packed = packProfile(merged) as { rows: { cls: number[] } };
      assert.equal(counts[times], packed.rows.cls.length, `${name}, merged ${times} times`);
      // Merging k times at once is merging once, k times.
      assert.equal(
        JSON.stringify(packProfile(coarsenGrid(data, times))),
        JSON.stringify(packed),
        `${name}, merged ${times} times`,
      );
      merged = coarsenGrid(merged);
    }
    assert.ok(counts[0] > counts[7], name);
  }
});

Deno.test("a page over its row budget is built on a coarser grid and says so", () => {
  const data = aggregateTrace(Reader.fromBytes(TRACES[3][1]));
  const whole = embeddedProfile(buildReport(data));
  assert.doesNotMatch(buildReport(data), /grid-note/);
  const n = whole.rows!.cls.length;
  assert.ok(n > 2_000, `${n} rows`);
  for (const budget of [Math.floor(n / 2), Math.floor(n / 8)]) {
    const html = buildReport(data, { rows: budget });
    const page = embeddedProfile(html);
    // One interval has at most 4 rows a class: a budget under that may not be met, and then
    // the grid goes down to one interval.
    const rows = page.rows!.cls.length;
    if (budget >= 4 * page.classes.node.length) assert.ok(rows <= budget, `${rows} rows`);
    else assert.ok(rows <= budget || page.grid.buckets === 1, `${rows} rows`);
    assert.ok(rows <= 4 * page.classes.node.length || page.grid.buckets > 1);
    assert.ok(page.grid.buckets < whole.grid.buckets);
    // Totals are those of the whole page; the live heap is the fine grid's at every other end.
    const all = (d: typeof page) => selectionTotals(selectSamples(d, emptySelector()));
    assert.deepEqual(all(page), all(whole));
    const ratio = page.grid.widthUs / whole.grid.widthUs;
    const fine = liveSeries(whole, null, null, null), coarse = liveSeries(page, null, null, null);
    for (let k = 0; k < page.grid.buckets; k++) {
      assert.equal(coarse[k], fine[Math.min(whole.grid.buckets - 1, (k + 1) * ratio - 1)]);
    }
    const note = /<p class="summary-note" id="grid-note">([^<]*)<\/p>/.exec(html);
    assert.ok(note, "the page says its grid is coarser");
    assert.match(
      note[1],
      new RegExp(
        `^Time grid: ${page.grid.buckets} intervals? of ${
          page.grid.widthUs.toLocaleString("en-US")
        } µs, merged from the ${whole.grid.buckets} intervals of ${
          whole.grid.widthUs.toLocaleString("en-US")
        } µs .* fewer rows of its time cube: ${rows.toLocaleString("en-US")} \\(budget ${
          budget.toLocaleString("en-US")
        };`,
      ),
    );
  }
});
