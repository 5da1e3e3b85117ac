/**
 * The HTML report: one self-contained file (no network: stylesheet, script and data inlined)
 * showing a trace's info, its live heap over time, a flame graph, callers/callees icicles of a
 * focused function and a sortable table of sites, functions or stacks, under filters (time
 * range, live at end/peak/T, domain, source, size, function) that update every view.
 *
 * The page embeds the profile's tables ({@linkcode ProfileData}, packed: sizes grouped into
 * size classes, rows as differences, in bytes: _row_bytes.js), not the events, so its size follows the number of
 * distinct stacks, classes and time buckets, not the trace's length; a profile with more than
 * `REPORT_STACKS` stacks or `REPORT_CLASSES` classes is summarised first (summary.ts: the heaviest stacks whole, the others
 * merged into one frame), and the page says so with the counts of what was left out. The JSON and the rows'
 * bytes are each gzipped and base64-encoded; the page inflates them with the browser's own `DecompressionStream`. Its script
 * runs the very selection functions `trace top` uses.
 * @module
 */
import { gzipSync } from "node:zlib";
import selectSource from "../_select.js" with { type: "text" };
import intervalSource from "../_interval.js" with { type: "text" };
import rowBytesSource from "../_row_bytes.js" with { type: "text" };
import { encodeRowBytes } from "../_row_bytes.js";
import clientSource from "./client.js" with { type: "text" };
import styleSource from "./style.css" with { type: "text" };
import type { ProfileData, ProfileSummary } from "../profile.ts";
import { type PackedRows, packProfile } from "../select.ts";
import { packedRowCounts } from "../_pack.ts";
import { OTHER_STACKS, summarizeProfile, summaryPlan } from "../summary.ts";
import { coarsenGrid, REPORT_ROWS } from "../coarsen.ts";

/** Options of {@linkcode buildReport}. */
export interface ReportOptions {
  /** Shown in the page title and header (default: the executable name). */
  title?: string;
  /** Most stacks the page keeps whole (default `REPORT_STACKS`, 2,000): a profile with more
   * is summarised (summary.ts), and the page says so. */
  stacks?: number;
  /** Most sites kept under `(other stacks)` in a summary (default `REPORT_SITES`, 200). */
  sites?: number;
  /** Most classes of the stacks kept (default `REPORT_CLASSES`, 16,000): a profile with more
   * is summarised too. */
  classes?: number;
  /** Most rows of the time cube the page holds (default `REPORT_ROWS`, 400,000): past them, the
   * page's time grid is coarsened (coarsen.ts), and the page says so. */
  rows?: number;
}

function share(part: number, whole: number): string {
  return whole > 0 ? `${(100 * part / whole).toFixed(1)}%` : "0%";
}

/** The page's sentence on a summary: what it kept, what it merged, what that means. */
export function summaryNote(s: ProfileSummary): string {
  const en = (n: number) => n.toLocaleString("en-US");
  return `Summary: this page holds the ${en(s.stacksKept)} stacks with the most samples, of ${
    en(s.stacks)
  } (${share(s.samplesKept, s.samples)} of the samples). The other ${
    en(s.stacks - s.stacksKept)
  } stacks (${en(s.samples - s.samplesKept)} samples, ${
    share(s.samples - s.samplesKept, s.samples)
  }) are merged into one frame “${OTHER_STACKS}”, under which ${en(s.sitesKept)} of their ${
    en(s.sitesMerged)
  } sites stay (${
    share(s.samplesOfSitesKept, s.samples - s.samplesKept)
  } of their samples); the rest are merged into the frame itself. Totals, the time views and the domain, source and size filters are exact; the function filters and the tables by function and stack do not see inside the merged stacks. ('trace top' and 'trace export' read every stack.)`;
}

function escapeHtml(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(
    /"/g,
    "&quot;",
  );
}

function base64(bytes: Uint8Array): string {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(s);
}

/** The selection functions as a classic script: their `export` keywords dropped. */
function inlineScript(): string {
  const script =
    [selectSource, intervalSource, rowBytesSource].map((s) =>
      s.replace(/^export (function|const) /gm, "$1 ")
    ).join(
      "\n",
    ) + "\n" + clientSource;
  if (/<\/script|<!--/i.test(script)) throw new Error("report script holds a closing tag");
  return script;
}

/** The page's sentence on a coarsened time grid. */
export function gridNote(
  fine: { buckets: number; widthUs: number },
  coarse: { buckets: number; widthUs: number },
  rows: number,
  budget: number,
): string {
  const en = (n: number) => n.toLocaleString("en-US");
  const us = (n: number) => `${en(n)} µs`;
  return `Time grid: ${en(coarse.buckets)} interval${coarse.buckets === 1 ? "" : "s"} of ${
    us(coarse.widthUs)
  }, merged from the ${en(fine.buckets)} intervals of ${
    us(fine.widthUs)
  } of the trace's analysis, so that the page holds fewer rows of its time cube: ${
    en(rows)
  } (budget ${
    en(budget)
  }; one interval has at most 4 rows a class). The time views and filters are exact on this grid. ('trace top --from/--to/--live-at' read exact times.)`;
}

/** The report of a profile, as one HTML document (deterministic: no clock, no randomness). */
export function buildReport(data: ProfileData, options: ReportOptions = {}): string {
  const title = options.title ?? data.info.executableName;
  const plan = summaryPlan(data, {
    stacks: options.stacks,
    sites: options.sites,
    classes: options.classes,
  });
  if (plan !== null) data = summarizeProfile(data, plan);
  let note = data.summary === undefined
    ? ""
    : `<p class="summary-note" id="summary-note">${escapeHtml(summaryNote(data.summary))}</p>\n`;
  // The page's rows grow with the buckets each class's objects span: past the budget, buckets
  // are merged in pairs (coarsen.ts) until the rows fit (with one bucket, 4 rows a class). How
  // many rows each coarser grid gives is counted first, so that the rows are packed once.
  const rowBudget = options.rows ?? REPORT_ROWS;
  const fine = data.grid;
  const rowCounts = packedRowCounts(data);
  let times = 0;
  for (let b = fine.buckets; rowCounts[times] > rowBudget && b > 1; times++) b = Math.ceil(b / 2);
  data = coarsenGrid(data, times);
  const packedProfile = packProfile(data, { typedRows: true }) as { rows: PackedRows };
  if (data.grid !== fine) {
    note += `<p class="summary-note" id="grid-note">${
      escapeHtml(gridNote(fine, data.grid, packedProfile.rows.cls.length, rowBudget))
    }</p>\n`;
  }
  const { rows, ...rest } = packedProfile;
  // The rows (most of the data) as bytes, the rest as JSON: see _row_bytes.js.
  const { bytes, widths } = encodeRowBytes(rows);
  const json = new TextEncoder().encode(
    JSON.stringify({ ...rest, rows: { count: rows.cls.length, widths } }),
  );
  const packed = base64(gzipSync(json));
  const packedRows = base64(gzipSync(bytes));
  const nb = Math.max(0, data.grid.buckets - 1);
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>memtrace report: ${escapeHtml(title)}</title>
<style>
${styleSource}</style>
</head>
<body>
<header>
<h1>memtrace report: ${escapeHtml(title)}</h1>
<p id="selection"></p>
${note}</header>
<main>
<div class="side">
<section class="panel" id="info"><h2>Trace</h2><dl id="info-list"></dl>
<p class="note">Bytes are estimates: samples ÷ sample rate × bytes per word, with exact binomial confidence intervals (each word is sampled with probability the sample rate). A site is the innermost known location of a backtrace.</p></section>
<section class="panel filters" id="filters"><h2>Filters</h2>
<label for="f-from">allocated from <span class="value" id="f-from-value"></span></label>
<input type="range" id="f-from" min="0" max="${nb}" step="1" value="0">
<label for="f-to">allocated until <span class="value" id="f-to-value"></span></label>
<input type="range" id="f-to" min="0" max="${nb}" step="1" value="${nb}">
<label for="f-live">measure</label>
<select id="f-live">
<option value="alloc">allocations</option>
<option value="end">live at end</option>
<option value="peak">live at peak</option>
<option value="bucket">live at T</option>
</select>
<label for="f-live-t">T <span class="value" id="f-live-t-value"></span></label>
<input type="range" id="f-live-t" min="0" max="${nb}" step="1" value="${nb}">
<label for="f-domain">domain</label>
<select id="f-domain"><option value="">all</option></select>
<label for="f-source">source</label>
<select id="f-source"><option value="">all</option><option value="0">minor</option><option value="1">major</option><option value="2">external</option></select>
<label>size in words (min, max)</label>
<div class="pair"><input type="number" id="f-size-min" min="0" placeholder="min"><input type="number" id="f-size-max" min="0" placeholder="max"></div>
<label for="f-function">function contains</label>
<input type="text" id="f-function" placeholder="e.g. List.map">
<label for="f-exclude">no function contains</label>
<input type="text" id="f-exclude">
<button type="button" id="f-reset">Reset filters</button>
</section>
</div>
<div class="views">
<section class="panel" id="timeline"><h2>Live heap over time</h2>
<div class="chart-box">
<div class="axis-y" id="chart-y" aria-hidden="true"></div>
<svg id="chart" viewBox="0 0 1000 200" preserveAspectRatio="none" role="img" aria-label="live heap over time"></svg>
<div class="axis-corner"></div>
<div class="axis-x" id="chart-x" aria-hidden="true"></div>
</div>
<div class="legend"><b style="background:#9ca3af"></b>whole trace<b style="background:#2563eb"></b>filter<b style="background:#2563eb;opacity:0.18"></b>its confidence interval<b style="background:#dc2626"></b>peak <span id="chart-scale"></span></div>
<p class="note">Vertical axis: estimated live bytes; horizontal axis: time since the trace start. Each point is the live heap at the end of an interval of the time grid. Click to measure objects live at that time.</p></section>
<section class="panel" id="flame-panel"><h2>Flame graph</h2>
<div class="toolbar"><span id="flame-path"></span> — click a frame to zoom, double-click to focus on its function. <a id="flame-reset">reset zoom</a></div>
<div class="scroll" id="flame-scroll"><div class="graph" id="flame"></div></div></section>
<section class="panel" id="focus-panel"><h2>Callers and callees of <span id="focus-name">—</span></h2>
<div class="icicles"><div><h3>callees (what it calls)</h3><div class="scroll"><div class="graph" id="icicle-callees"></div></div></div>
<div><h3>callers (what calls it)</h3><div class="scroll"><div class="graph" id="icicle-callers"></div></div></div></div></section>
<section class="panel" id="table-panel"><h2>Table</h2>
<div class="toolbar">by <select id="table-by"><option value="site">site</option><option value="function">function</option><option value="stack">stack</option></select> — confidence <select id="table-confidence"><option value="0.9">90%</option><option value="0.95" selected>95%</option><option value="0.99">99%</option></select> — click a column to sort</div>
<div class="table-wrap"><table id="table"><thead></thead><tbody></tbody><tfoot></tfoot></table></div>
<p class="note" id="table-note"></p></section>
</div>
</main>
<script type="application/octet-stream" id="profile-data" data-encoding="json+gzip+base64">${packed}</script>
<script type="application/octet-stream" id="profile-rows" data-encoding="bytes+gzip+base64">${packedRows}</script>
<script>
${inlineScript()}</script>
</body>
</html>
`;
}
