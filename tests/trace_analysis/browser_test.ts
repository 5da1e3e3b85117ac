/// <reference lib="dom" />
// The HTML report in headless Chromium (driven by playwright-core): its table equals
// `trace top --json`, filters change every view accordingly, and a screenshot is saved under
// out/trace_analysis_browser/ (git-ignored). Without Chromium, or without the permissions
// playwright needs (--allow-env --allow-sys=homedir,osRelease, as `deno task test` gives), the
// tests are skipped with a message saying why.
import assert from "node:assert/strict";
import { traceOk as trace } from "./_cli.ts";
import { Reader } from "../../lib/memtrace/mod.ts";
import { aggregateTrace } from "../../lib/trace_analysis/mod.ts";
import { statistics } from "../verbose.ts";
import { openReport, whySkipped } from "./_chromium.ts";

const TRACE = new URL("../fixtures/memtrace/multi_mdtrace_3e-4.renumbered.ctf", import.meta.url)
  .pathname;
const OUT = new URL("../../out/trace_analysis_browser/", import.meta.url).pathname;

const skip = whySkipped();
if (skip !== undefined) console.log(`SKIPPED: the HTML report in headless Chromium — ${skip}`);

async function topJson(...args: string[]) {
  return JSON.parse(await trace("top", TRACE, "--json", "--limit", "15", ...args));
}

interface PageRow {
  key: string;
  samples: number;
  bytes: number;
  liveEndBytes: number;
  promotedShare: number;
  selfBytes?: number;
}

Deno.test({
  name: "the report's table, totals and views equal trace top's, before and after filtering",
  ignore: skip !== undefined,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    Deno.mkdirSync(OUT, { recursive: true });
    const html = `${OUT}report.html`;
    await trace("report", TRACE, "-o", html);
    const grid = aggregateTrace(Reader.open(TRACE)).grid;
    const { browser, page, errors, set, sync } = await openReport(html);
    try {
      const table = () =>
        page.evaluate(() => {
          const num = (s: string | undefined) => (s === undefined ? undefined : Number(s));
          const rows = [...document.querySelectorAll<HTMLElement>("#table tbody tr")].map(
            (tr) => ({
              key: tr.dataset.key!,
              samples: Number(tr.dataset.samples),
              bytes: Number(tr.dataset.bytes),
              liveEndBytes: Number(tr.dataset.liveEndBytes),
              promotedShare: Number(tr.dataset.promotedShare),
              selfBytes: num(tr.dataset.selfBytes),
            }),
          );
          const t = document.getElementById("totals")!.dataset;
          return {
            rows,
            totals: {
              samples: Number(t.samples),
              bytes: Number(t.bytes),
              liveEndBytes: Number(t.liveEndBytes),
              promotedShare: Number(t.promotedShare),
            },
            count: Number(document.getElementById("table")!.dataset.rowCount),
          };
        });
      const views = () =>
        page.evaluate(() => ({
          flameBytes: Number(document.getElementById("flame")!.dataset.totalBytes),
          flameBoxes: Number(document.getElementById("flame")!.dataset.boxes),
          chartMax: Number(document.getElementById("chart")!.dataset.filterMaxBytes),
          chartLast: Number(document.getElementById("chart")!.dataset.filterLastBytes),
        }));
      /** The page's rows and totals equal `trace top --json`'s. */
      const sameAsTop = async (args: string[], what: string) => {
        const json = await topJson(...args);
        const got = await table();
        assert.equal(got.count, json.rowCount, `${what}: row count`);
        const want = json.rows.map((r: PageRow) => ({
          key: r.key,
          samples: r.samples,
          bytes: r.bytes,
          liveEndBytes: r.liveEndBytes,
          promotedShare: r.promotedShare,
          selfBytes: r.selfBytes,
        }));
        assert.deepEqual(got.rows.slice(0, want.length), want, `${what}: top rows`);
        assert.deepEqual(got.totals, {
          samples: json.totals.samples,
          bytes: json.totals.bytes,
          liveEndBytes: json.totals.liveEndBytes,
          promotedShare: json.totals.promotedShare,
        }, `${what}: totals`);
        assert.ok(want.length > 0, what);
        return json;
      };

      // Unfiltered: sites, then functions.
      const all = await sameAsTop([], "all sites");
      const before = await views();
      assert.equal(before.flameBytes, all.totals.bytes);
      assert.ok(before.flameBoxes > 5);
      assert.equal(before.chartLast, all.totals.liveEndBytes);

      // The info panel gives the domains' number and ids (a list of ids alone read as a count).
      const domains = await page.evaluate(() => {
        const dts = [...document.querySelectorAll("#info-list dt")];
        const dt = dts.find((d) => d.textContent === "domains")!;
        return dt.nextElementSibling!.textContent!;
      });
      const ids = aggregateTrace(Reader.open(TRACE)).stats.domains;
      assert.equal(domains, `${ids.length} (ids ${ids.join(", ")})`);

      // The chart's axes: round byte values from 0 up to at least the highest point, times
      // from 0 to the trace's end, each labelled with its unit, placed where it belongs.
      const axes = await page.evaluate(() => {
        const ticks = (id: string) =>
          [...document.querySelectorAll<HTMLElement>(`#${id} .tick`)].map((t) => ({
            value: Number(t.dataset.value),
            label: t.textContent!,
            at: parseFloat(t.style.top || t.style.left),
          }));
        const chart = document.getElementById("chart")!;
        return {
          y: ticks("chart-y"),
          x: ticks("chart-x"),
          topBytes: Number(chart.dataset.axisTopBytes),
          endUs: Number(chart.dataset.axisEndUs),
          totalMax: Number(chart.dataset.totalMaxBytes),
        };
      });
      const BYTE_UNITS: Record<string, number> = { B: 1, KiB: 2 ** 10, MiB: 2 ** 20, GiB: 2 ** 30 };
      const TIME_UNITS: Record<string, number> = { "µs": 1, ms: 1e3, s: 1e6 };
      const checkAxis = (
        ticks: { value: number; label: string; at: number }[],
        units: Record<string, number>,
        what: string,
      ) => {
        assert.ok(ticks.length >= 3, `${what}: ${ticks.length} ticks`);
        assert.equal(ticks[0].value, 0, what);
        assert.equal(ticks[0].label, "0", what);
        for (const t of ticks.slice(1)) {
          const m = /^(\d+(?:\.\d+)?) (\S+)$/.exec(t.label);
          assert.ok(m !== null && m[2] in units, `${what}: label ${t.label}`);
          const v = Number(m[1]) * units[m[2]];
          assert.ok(Math.abs(v - t.value) <= 1e-6 * t.value, `${what}: ${t.label} is ${t.value}`);
        }
        for (let i = 1; i < ticks.length; i++) {
          assert.ok(ticks[i].value > ticks[i - 1].value, `${what}: values ascend`);
        }
        for (const t of ticks) assert.ok(t.at >= 0 && t.at <= 100, `${what}: ${t.at}%`);
      };
      checkAxis(axes.y, BYTE_UNITS, "live-heap axis");
      checkAxis(axes.x, TIME_UNITS, "time axis");
      assert.equal(axes.y.at(-1)!.value, axes.topBytes);
      assert.ok(axes.topBytes >= axes.totalMax && axes.totalMax > 0);
      assert.ok(axes.y.every((t, i) => i === 0 || t.at < axes.y[i - 1].at), "0 at the bottom");
      assert.equal(axes.endUs, grid.buckets * grid.widthUs);
      assert.ok(axes.x.at(-1)!.value <= axes.endUs);
      for (const t of axes.x) {
        assert.ok(Math.abs(t.at - (t.value / axes.endUs) * 100) < 0.01, `time tick ${t.label}`);
      }
      await set("table-by", "function");
      await sameAsTop(["--by", "function"], "all functions");

      // A function filter: fewer bytes in the table, the flame graph and the chart.
      await set("f-function", "List");
      const list = await sameAsTop(["--by", "function", "--function", "List"], "List functions");
      const filtered = await views();
      assert.equal(filtered.flameBytes, list.totals.bytes);
      assert.ok(filtered.flameBytes < before.flameBytes);
      assert.ok(filtered.chartMax < before.chartMax);
      assert.ok(filtered.flameBoxes < before.flameBoxes);

      // Live at the peak, then a time range on grid edges, then a domain and a source.
      const headers = () =>
        page.evaluate(() =>
          [...document.querySelectorAll<HTMLElement>("#table thead th")].map((th) =>
            th.dataset.column + ":" + th.textContent
          )
        );
      assert.deepEqual(await headers(), [
        "key:function",
        "samples:samples",
        "selfBytes:self",
        "bytes:total",
        "interval:95% interval of total",
        "liveEndBytes:live@end",
        "promotedShare:promoted",
      ]);
      await set("f-live", "peak");
      await sameAsTop(["--by", "function", "--function", "List", "--live-at", "peak"], "peak");
      assert.ok((await headers()).includes("liveEndBytes:of which live@end"));
      // Live at the end, bytes are the live@end bytes: the column is not repeated.
      await set("f-function", "");
      await set("f-live", "end");
      await sameAsTop(["--by", "function", "--live-at", "end"], "live at end");
      assert.ok(!(await headers()).some((h) => h.startsWith("liveEndBytes")));
      await set("f-live", "alloc");
      await set("f-function", "");
      await set("table-by", "site");
      const [a, b] = [Math.floor(grid.buckets / 4), Math.floor(grid.buckets / 2)];
      await set("f-from", String(a));
      await set("f-to", String(b));
      const window = [
        "--from",
        String((a * grid.widthUs) / 1e6),
        "--to",
        String(((b + 1) * grid.widthUs) / 1e6),
      ];
      await sameAsTop(window, "time window");
      await set("f-live", "bucket");
      await set("f-live-t", String(b));
      await sameAsTop(
        [...window, "--live-at", String(((b + 1) * grid.widthUs - 1) / 1e6)],
        "live at T",
      );
      await set("f-live", "alloc");
      await set("f-domain", "2");
      await set("f-source", "0");
      await sameAsTop([...window, "--domain", "2", "--source", "minor"], "domain 2 minor");
      await set("f-exclude", "Buffer");
      await sameAsTop(
        [...window, "--domain", "2", "--source", "minor", "--exclude", "Buffer"],
        "exclude",
      );

      // Focus on a function: the icicles show its callers and callees, valued by its total.
      await set("f-exclude", "");
      await set("f-domain", "");
      await set("f-source", "");
      await set("f-from", "0");
      await set("f-to", String(grid.buckets - 1));
      await set("table-by", "function");
      const fns = await topJson("--by", "function", "--limit", "0");
      const target = fns.rows.find((r: PageRow) => r.key === "Stdlib__List.init");
      assert.ok(target);
      await page.evaluate(() => {
        const link = [...document.querySelectorAll<HTMLElement>("#table tbody td.key a")]
          .find((x) => x.textContent === "Stdlib__List.init")!;
        link.click();
      });
      await page.waitForFunction(() =>
        document.getElementById("focus-name")!.textContent === "Stdlib__List.init"
      );
      const icicles = await page.evaluate(() => ({
        callees: Number(document.getElementById("icicle-callees")!.dataset.totalBytes),
        callers: Number(document.getElementById("icicle-callers")!.dataset.totalBytes),
        callerBoxes: Number(document.getElementById("icicle-callers")!.dataset.boxes),
      }));
      assert.equal(icicles.callees, target.bytes);
      assert.equal(icicles.callers, target.bytes);
      assert.ok(icicles.callerBoxes >= 2);

      // Filtering the focused function away: both panes say so instead of standing empty.
      await sync();
      await set("f-exclude", "Stdlib__List.init");
      const panes = await page.evaluate(() =>
        ["icicle-callees", "icicle-callers"].map((id) => {
          const pane = document.getElementById(id)!;
          return { text: pane.textContent, bytes: Number(pane.dataset.totalBytes) };
        })
      );
      for (const pane of panes) {
        assert.match(pane.text!, /^No samples of Stdlib__List\.init under the current filters/);
        assert.equal(pane.bytes, 0);
      }
      await set("f-exclude", "");

      // Zoom: clicking a flame frame makes it the root of the view.
      await page.evaluate(() => {
        const box = [...document.querySelectorAll<HTMLElement>("#flame .box")]
          .find((b) => b.textContent === "Wl_mdtrace.main_work")!;
        box.click();
      });
      await page.waitForFunction(() =>
        document.querySelector("#flame-path")!.textContent!.endsWith("Wl_mdtrace.main_work")
      );

      assert.deepEqual(errors, []);
      const shot = `${OUT}report.png`;
      await page.screenshot({ path: shot, fullPage: true });
      statistics(`screenshot: ${shot}`);
    } finally {
      await browser.close();
    }
  },
});
