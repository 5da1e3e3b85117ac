/// <reference lib="dom" />
// A report page built on a coarser time grid (a row budget under the profile's rows:
// lib/trace_analysis/coarsen.ts) in headless Chromium: it says so, its grid is the coarse one,
// and its table equals `trace top --json` for a time window and for the objects live at the end
// of a coarse interval. Skipped, saying why, without Chromium or playwright's permissions.
import assert from "node:assert/strict";
import { traceOk as trace } from "./_cli.ts";
import { Reader } from "../../lib/memtrace/mod.ts";
import { aggregateTrace, buildReport } from "../../lib/trace_analysis/mod.ts";
import { openReport, whySkipped } from "./_chromium.ts";
import { embeddedProfile } from "./_page.ts";

const TRACE = new URL("../fixtures/memtrace/multi_mdtrace_3e-4.renumbered.ctf", import.meta.url)
  .pathname;

const skip = whySkipped();
if (skip !== undefined) console.log(`SKIPPED: a coarse-grid report in headless Chromium — ${skip}`);

Deno.test({
  name: "a report on a coarser grid says so, and its views equal trace top's on that grid",
  ignore: skip !== undefined,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const data = aggregateTrace(Reader.open(TRACE));
    const rows = embeddedProfile(buildReport(data)).rows!.cls.length;
    // One row over the budget: the grid is merged in pairs once (or more), not down to one.
    const html = buildReport(data, { rows: rows - 1 });
    const grid = embeddedProfile(html).grid;
    assert.ok(grid.buckets < data.grid.buckets && grid.buckets > 4, `${grid.buckets} buckets`);
    const dir = Deno.makeTempDirSync({ prefix: "report_coarse_" });
    Deno.writeTextFileSync(`${dir}/report.html`, html);
    const { browser, page, errors, set } = await openReport(`${dir}/report.html`);
    try {
      const shown = await page.evaluate(() => ({
        note: document.getElementById("grid-note")?.textContent ?? "",
        max: Number((document.getElementById("f-live-t") as HTMLInputElement).max),
      }));
      assert.match(shown.note, new RegExp(`^Time grid: ${grid.buckets} intervals of `));
      assert.equal(shown.max, grid.buckets - 1);
      const table = () =>
        page.evaluate(() => ({
          keys: [...document.querySelectorAll<HTMLElement>("#table tbody tr")].map((tr) =>
            `${tr.dataset.key} ${tr.dataset.samples} ${tr.dataset.liveEndBytes}`
          ),
          samples: Number(document.getElementById("totals")!.dataset.samples),
        }));
      const sameAsTop = async (args: string[], what: string) => {
        const json = JSON.parse(await trace("top", TRACE, "--json", "--limit", "15", ...args));
        const got = await table();
        assert.deepEqual(
          got.keys.slice(0, json.rows.length),
          json.rows.map((r: { key: string; samples: number; liveEndBytes: number }) =>
            `${r.key} ${r.samples} ${r.liveEndBytes}`
          ),
          what,
        );
        assert.equal(got.samples, json.totals.samples, what);
        assert.ok(json.rows.length > 0, what);
      };
      await sameAsTop([], "all");
      const [a, b] = [1, Math.floor(grid.buckets / 2)];
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
        "live at the end of a coarse interval",
      );
      assert.deepEqual(errors, []);
    } finally {
      await browser.close();
      Deno.removeSync(dir, { recursive: true });
    }
  },
});
