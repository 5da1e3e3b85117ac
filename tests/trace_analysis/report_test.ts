// The HTML report, without a browser: self-contained, deterministic, and its embedded profile
// gives what `trace top` gives (browser_test.ts checks the page itself).
import assert from "node:assert/strict";
import { Reader } from "../../lib/memtrace/mod.ts";
import {
  aggregateTrace,
  buildReport,
  type GroupBy,
  type ProfileData,
  type Selector,
  topOf,
} from "../../lib/trace_analysis/mod.ts";
import { emptySelector } from "../../lib/trace_analysis/profile.ts";
import { packProfile, unpackProfile } from "../../lib/trace_analysis/select.ts";
import { syntheticTrace } from "./_synthetic.ts";
import { embeddedProfile } from "./_page.ts";

const FIXTURES = new URL("../fixtures/memtrace/", import.meta.url);
const TRACES: [string, Uint8Array][] = [
  ["single", Deno.readFileSync(new URL("single_1e-4.ctf", FIXTURES))],
  ["multi", Deno.readFileSync(new URL("multi_mdtrace_3e-4.renumbered.ctf", FIXTURES))],
  ["ocamlopt", Deno.readFileSync(new URL("ocamlopt.ctf", FIXTURES))],
  ["external", Deno.readFileSync(new URL("external_2e-5.ctf", FIXTURES))],
  ["synthetic", syntheticTrace({ events: 40_000, domains: 3, seed: 11 })],
];

Deno.test("a report is one self-contained page: nothing loaded from anywhere", () => {
  const data = aggregateTrace(Reader.fromBytes(TRACES[0][1]));
  const html = buildReport(data);
  assert.match(html, /^<!DOCTYPE html>\n<html lang="en">/);
  assert.doesNotMatch(html, /https?:\/\//i, "no URL at all");
  assert.doesNotMatch(html, /<link\b|<img\b|<iframe\b|@import|\bsrc=|\bfetch\(|XMLHttpRequest/i);
  assert.equal(html.match(/<script\b/g)?.length, 3, "the data, its rows and one inline script");
  assert.equal(html.match(/<style>/g)?.length, 1);
  assert.match(html, /<title>memtrace report: ocaml-examples\/wl_single<\/title>/);
  // Titles are escaped.
  assert.match(
    buildReport(data, { title: `<b>"x"&` }),
    /<title>memtrace report: &lt;b&gt;&quot;x&quot;&amp;<\/title>/,
  );
});

Deno.test("reports are deterministic", () => {
  const [, bytes] = TRACES[1];
  const a = buildReport(aggregateTrace(Reader.fromBytes(bytes)));
  const b = buildReport(aggregateTrace(Reader.fromBytes(bytes)));
  assert.equal(a, b);
});

/** An object's columns as plain arrays. */
function plain(o: object): Record<string, number[]> {
  return Object.fromEntries(
    Object.entries(o).map(([k, v]) => [k, Array.from(v as ArrayLike<number>)]),
  );
}

function rowsOf(data: ProfileData, sel: Selector, by: GroupBy) {
  const t = topOf(data, sel, { by, limit: 0 });
  return { totals: t.totals, rows: t.rows.map((r) => ({ ...r, frames: undefined })) };
}

Deno.test("the embedded profile gives trace top's rows under every filter but size", () => {
  for (const [name, bytes] of TRACES) {
    const data = aggregateTrace(Reader.fromBytes(bytes));
    const html = buildReport(data);
    const page = embeddedProfile(html);
    assert.deepEqual(page.grid, data.grid, name);
    assert.deepEqual(page.peak, data.peak, name);
    // (The aggregate hands columns over as typed arrays; the page has plain arrays.)
    assert.deepEqual(plain(page.nodes), plain(data.nodes), name);
    assert.deepEqual(plain(page.fnodes), plain(data.fnodes), name);
    const base = emptySelector();
    const k = data.peak?.bucket ?? 0;
    const selectors: Selector[] = [
      base,
      { ...base, live: "end" },
      { ...base, live: "peak" },
      { ...base, live: "bucket", liveBucket: Math.floor(k / 2) },
      { ...base, fromBucket: 2, toBucket: Math.max(2, data.grid.buckets - 3) },
      { ...base, domains: [data.stats.domains.at(-1)!], sources: [0] },
      { ...base, fn: "List", live: "peak" },
      { ...base, exclude: "Map" },
    ];
    for (const sel of selectors) {
      for (const by of ["site", "function", "stack"] as const) {
        assert.deepEqual(rowsOf(page, sel, by), rowsOf(data, sel, by), `${name} ${by}`);
      }
    }
  }
});

Deno.test("in the report, sizes are grouped in size classes; bounds on class edges select exactly", () => {
  for (const [name, bytes] of TRACES) {
    const data = aggregateTrace(Reader.fromBytes(bytes));
    const page = embeddedProfile(buildReport(data));
    assert.ok(page.classes.node.length <= data.classes.node.length);
    for (const [min, max] of [[1, 2], [3, 16], [17, 256], [257, null], [null, 4]]) {
      const sel = { ...emptySelector(), sizeMin: min, sizeMax: max };
      assert.deepEqual(
        rowsOf(page, sel, "site"),
        rowsOf(data, sel, "site"),
        `${name} ${min}..${max}`,
      );
    }
    // The classes: lengths 0, 1, 2 alone, then (2^(k-1), 2^k].
    for (let i = 0; i < page.classes.node.length; i++) {
      const lo = page.classes.length[i], hi = page.classes.lengthMax![i];
      assert.ok(lo === hi ? lo <= 2 : lo === hi / 2 + 1 && Number.isInteger(Math.log2(hi)), name);
    }
  }
});

Deno.test("packing then unpacking a profile keeps its rows (sizes aside)", () => {
  const data = aggregateTrace(Reader.fromBytes(TRACES[4][1]), { liveAtUs: 5000 });
  const page = unpackProfile(JSON.parse(JSON.stringify(packProfile(data))));
  const sum = (xs: ArrayLike<number>) => Array.from(xs).reduce((a, b) => a + b, 0);
  assert.equal(sum(page.rows!.samples), sum(data.rows!.samples));
  assert.equal(sum(page.liveAt!.samples), sum(data.liveAt!.samples));
  const exact = { ...emptySelector(), live: "exact" as const };
  assert.deepEqual(rowsOf(page, exact, "site"), rowsOf(data, exact, "site"));
});
