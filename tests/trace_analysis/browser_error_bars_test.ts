/// <reference lib="dom" />
// The report's error bars in headless Chromium: each row's interval equals `trace top --json`'s
// bytesLow..bytesHigh (the page runs the same _interval.js), the whisker spans it around the
// estimate's bar, rows whose order sampling does not establish are marked ≈ exactly where the
// exact test and Benjamini-Hochberg say so, the chart's band holds the filtered live heap, and a
// screenshot of a row's error bar shows the bar and the whisker in their colours (read back
// from the PNG through a canvas). The screenshots are saved under out/trace_analysis_browser/
// (git-ignored). Skipped, saying why, without Chromium or the permissions playwright needs.
import assert from "node:assert/strict";
import { traceOk as trace } from "./_cli.ts";
import { benjaminiHochberg, rateTestPValue } from "../../lib/trace_analysis/_significance.ts";
import { statistics } from "../verbose.ts";
import { openReport, whySkipped } from "./_chromium.ts";

const TRACE = new URL("../fixtures/memtrace/single_1e-4.ctf", import.meta.url).pathname;
const OUT = new URL("../../out/trace_analysis_browser/", import.meta.url).pathname;

const skip = whySkipped();
if (skip !== undefined) console.log(`SKIPPED: the report's error bars in Chromium — ${skip}`);

function base64(bytes: Uint8Array): string {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(s);
}

Deno.test({
  name: "the report draws each estimate's interval as an error bar and marks insignificant ranks",
  ignore: skip !== undefined,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    Deno.mkdirSync(OUT, { recursive: true });
    const html = `${OUT}report-error-bars.html`;
    await trace("report", TRACE, "-o", html);
    const { browser, page, errors, set } = await openReport(html);
    try {
      const rows = () =>
        page.evaluate(() =>
          [...document.querySelectorAll<HTMLElement>("#table tbody tr")].map((tr) => {
            const box = (sel: string) => tr.querySelector(sel)!.getBoundingClientRect();
            const fill = box(".ebar-fill"), whisker = box(".ebar-whisker");
            return {
              key: tr.dataset.key!,
              samples: Number(tr.dataset.samples),
              bytes: Number(tr.dataset.bytes),
              low: Number(tr.dataset.bytesLow),
              high: Number(tr.dataset.bytesHigh),
              tie: tr.dataset.tie,
              mark: tr.querySelector(".tie") !== null,
              fillRight: fill.right,
              whiskerLeft: whisker.left,
              whiskerRight: whisker.right,
            };
          })
        );

      // The intervals are trace top's, at 95 % and at 99 %.
      for (const confidence of ["0.95", "0.99"]) {
        if (confidence !== "0.95") await set("table-confidence", confidence);
        const top = JSON.parse(
          await trace("top", TRACE, "--json", "--limit", "0", "--confidence", confidence),
        );
        const got = await rows();
        assert.ok(got.length >= 20, `${got.length} rows`);
        for (const [i, r] of got.entries()) {
          const want = top.rows[i];
          assert.equal(r.key, want.key);
          assert.equal(r.low, want.bytesLow, `${r.key} low at ${confidence}`);
          assert.equal(r.high, want.bytesHigh, `${r.key} high at ${confidence}`);
          assert.ok(r.low <= r.bytes && r.bytes <= r.high, r.key);
          // Drawn: the whisker spans the interval, around the end of the estimate's bar.
          assert.ok(
            r.whiskerLeft - 1 <= r.fillRight && r.fillRight <= r.whiskerRight + 1,
            `${r.key}: bar end ${r.fillRight} outside [${r.whiskerLeft}, ${r.whiskerRight}]`,
          );
        }
        // ≈ marks: the exact test of each row against the next, Benjamini-Hochberg over them.
        const q = benjaminiHochberg(
          got.slice(0, -1).map((r, i) => rateTestPValue(got[i + 1].samples, r.samples, 1e-4, 1e-4)),
        );
        const alpha = 1 - Number(confidence);
        for (let i = 0; i < got.length - 1; i++) {
          assert.equal(got[i].tie, q[i] <= alpha ? "0" : "1", `${got[i].key}: q ${q[i]}`);
          assert.equal(got[i].mark, !(q[i] <= alpha));
        }
        // Both kinds occur on this trace: its first site stands out, its tail does not.
        assert.equal(got[0].tie, "0");
        assert.ok(got.some((r) => r.tie === "1"));
      }
      const top99 = (await rows())[0];
      await set("table-confidence", "0.9");
      const top90 = (await rows())[0];
      assert.ok(top90.low > top99.low && top90.high < top99.high, "narrower at 90 %");
      await set("table-confidence", "0.95");

      // The chart's band holds the filtered live heap at every point (y grows downwards).
      const band = await page.evaluate(() => {
        const pts = (id: string) =>
          document.getElementById(id)!.getAttribute("points")!.trim().split(" ").map((p) =>
            Number(p.split(",")[1])
          );
        return { line: pts("live-filter"), band: pts("live-band") };
      });
      const n = band.line.length;
      assert.equal(band.band.length, 2 * n);
      for (let k = 0; k < n; k++) {
        const hi = band.band[k], lo = band.band[2 * n - 1 - k];
        assert.ok(hi <= band.line[k] + 0.05 && band.line[k] <= lo + 0.05, `point ${k}`);
      }

      // The screenshot: the first row's error bar, decoded through a canvas, shows the
      // estimate's bar (#93c5fd) and the whisker (#1e3a8a).
      const shot = await page.locator("#table tbody tr:first-child .ebar").screenshot();
      const colours = await page.evaluate(async (b64) => {
        const img = new Image();
        img.src = `data:image/png;base64,${b64}`;
        await img.decode();
        const c = document.createElement("canvas");
        c.width = img.width;
        c.height = img.height;
        const ctx = c.getContext("2d")!;
        ctx.drawImage(img, 0, 0);
        const px = ctx.getImageData(0, 0, c.width, c.height).data;
        const near = (r: number, g: number, b: number) => {
          let count = 0;
          for (let i = 0; i < px.length; i += 4) {
            if (Math.abs(px[i] - r) + Math.abs(px[i + 1] - g) + Math.abs(px[i + 2] - b) < 30) {
              count++;
            }
          }
          return count;
        };
        return { width: c.width, bar: near(0x93, 0xc5, 0xfd), whisker: near(0x1e, 0x3a, 0x8a) };
      }, base64(shot));
      assert.ok(colours.width >= 80, `${colours.width} px`);
      assert.ok(colours.bar >= 50, `bar pixels ${colours.bar}`);
      assert.ok(colours.whisker >= 10, `whisker pixels ${colours.whisker}`);
      Deno.writeFileSync(`${OUT}error-bar.png`, shot);
      await page.locator("#table-panel").screenshot({ path: `${OUT}report-error-bars.png` });
      assert.deepEqual(errors, []);
      statistics(`screenshots: ${OUT}report-error-bars.png, ${OUT}error-bar.png`);
    } finally {
      await browser.close();
    }
  },
});
