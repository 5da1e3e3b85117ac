/**
 * Measures the HTML report on a large synthetic trace (not a test: timings vary with the
 * machine, so nothing is asserted). Writes a trace of EVENTS events (default 500,000) with the
 * project's MultiplexedWriter, builds its report as `deno task trace report` does, and, when
 * Chromium is at /usr/bin/chromium, loads it three times in headless Chromium for its first
 * paint, the time its views are all drawn, and the time a filter takes to redraw them.
 *
 *   deno run --allow-read --allow-write --allow-run --allow-env --allow-sys=homedir,osRelease \
 *     tests/trace_analysis/measure_report.ts [EVENTS] [DIR]
 * @module
 */
import { Reader } from "../../lib/memtrace/mod.ts";
import { aggregateTrace, buildReport } from "../../lib/trace_analysis/mod.ts";
import { syntheticTrace } from "./_synthetic.ts";

const events = Number(Deno.args[0] ?? 500_000);
const dir = Deno.args[1] ?? Deno.makeTempDirSync({ prefix: "trace_report_measure_" });
Deno.mkdirSync(dir, { recursive: true });
const tracePath = `${dir}/synthetic.ctf`, htmlPath = `${dir}/report.html`;

let t = performance.now();
Deno.writeFileSync(tracePath, syntheticTrace({ events, domains: 4, seed: 1 }));
console.log(
  `trace: ${tracePath}, ${Deno.statSync(tracePath).size} bytes, ${events} events ` +
    `(written in ${(performance.now() - t).toFixed(0)} ms)`,
);

const builds: number[] = [];
let html = "";
let stats = "";
for (let i = 0; i < 3; i++) {
  t = performance.now();
  const reader = Reader.open(tracePath);
  const data = aggregateTrace(reader);
  reader.close();
  const t1 = performance.now();
  html = buildReport(data);
  builds.push(performance.now() - t);
  stats =
    `aggregation ${(t1 - t).toFixed(0)} ms, page ${(performance.now() - t1).toFixed(0)} ms; ` +
    `${data.classes.node.length} classes, ${data.rows?.cls.length ?? 0} rows, ` +
    `${data.nodes.parent.length} stack nodes, grid ${data.grid.buckets} x ${data.grid.widthUs} us`;
}
Deno.writeTextFileSync(htmlPath, html);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`report: ${htmlPath}, ${new TextEncoder().encode(html).length} bytes`);
console.log(
  `build (read + aggregate + page), median of 3: ${median(builds).toFixed(0)} ms (${stats})`,
);

let chromium = "/usr/bin/chromium";
try {
  Deno.statSync(chromium);
} catch {
  chromium = "";
}
if (chromium === "") console.log("no Chromium at /usr/bin/chromium: paint times not measured");
else {
  const { chromium: pw } = await import("playwright-core");
  const browser = await pw.launch({ executablePath: chromium, args: ["--no-sandbox"] });
  const paints: number[] = [], drawn: number[] = [], filters: number[] = [];
  for (let i = 0; i < 3; i++) {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    await page.goto(`file://${htmlPath}`);
    await page.waitForSelector("body[data-ready='1']", { timeout: 120_000 });
    const m = await page.evaluate(`({
      paint: performance.getEntriesByName("first-contentful-paint")[0]?.startTime ?? -1,
      drawn: performance.getEntriesByName("report-rendered")[0]?.startTime ?? -1,
    })`) as { paint: number; drawn: number };
    paints.push(m.paint);
    drawn.push(m.drawn);
    filters.push(
      await page.evaluate(`(async () => {
        const t = performance.now();
        const el = document.getElementById("f-function");
        el.value = "fn1";
        el.dispatchEvent(new Event("input"));
        await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
        return performance.now() - t;
      })()`) as number,
    );
    await page.close();
  }
  await browser.close();
  console.log(
    `Chromium, median of 3 loads: first contentful paint ${median(paints).toFixed(0)} ms, ` +
      `all views drawn ${median(drawn).toFixed(0)} ms, a filter redraws them in ` +
      `${median(filters).toFixed(0)} ms`,
  );
}
