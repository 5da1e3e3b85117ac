/**
 * The trace commands at the size of real traces (issue 29): `trace info`, `top`, `hotspots`,
 * `flamegraph`, `export --format folded` and `report`, each a whole process on
 * `bench/_big_trace.ts`'s deep-stack trace (8 domains, about 70 frames an allocation, names of
 * 30 to 200 characters) at each size of `MEMPROF_LAB_BENCH_SCALE` (events, comma-separated;
 * default `1e6`, so that `deno task bench` stays within minutes; `1e6,1e7,1e8` gives the table
 * of bench/README.md, 10^8 events being a 1 GB trace). Traces are written once into the bench
 * cache (`bigTrace`).
 *
 * One row per command and size: wall time, events per second, peak RSS (GNU time) and whether
 * it is under 500 MB, with the load average before and after (the machine may be shared). A
 * command is stopped after `MEMPROF_LAB_BENCH_SCALE_TIMEOUT` seconds
 * (default 900) and its row says so; `MEMPROF_LAB_BENCH_SCALE_COMMANDS` (comma-separated, e.g.
 * `hotspots,flamegraph`) runs only those commands. For `report`, when Chromium is at
 * /usr/bin/chromium, the page is loaded in headless Chromium and the time until all its views
 * are drawn (the page's `report-rendered` mark, median of 3 loads) is printed against the goal of
 * 3 s, next to that of the report of an empty trace (a fixture) loaded in the same browser: the
 * page's own cost on this machine at this load, its anchor.
 * @module
 */
import { bigTrace } from "./_big_trace.ts";
import { ourTraceCommand, type ProcessCost, runMeasured } from "./_native.ts";

function env(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}

const SIZES = (env("MEMPROF_LAB_BENCH_SCALE") ?? "1e6").split(",").map(Number);
const TIMEOUT = Number(env("MEMPROF_LAB_BENCH_SCALE_TIMEOUT") ?? 900);
/** Commands to run (comma-separated names of COMMANDS; default all). */
const ONLY = env("MEMPROF_LAB_BENCH_SCALE_COMMANDS")?.split(",");
const here = (p: string) => new URL(p, import.meta.url).pathname;

const COMMANDS: [string, (file: string, out: string) => string[]][] = [
  ["info", (f) => ["info", f]],
  ["top", (f) => ["top", f]],
  ["hotspots", (f) => ["hotspots", f]],
  ["flamegraph", (f) => ["flamegraph", f]],
  ["export folded", (f) => ["export", f, "--format", "folded", "-o", "/dev/null"]],
  ["report", (f, out) => ["report", f, "-o", `${out}/report.html`]],
];

/** The report of an empty trace (a fixture of the repository): the page's own cost, the anchor
 * its drawing time is measured against, in the same browser. */
const ANCHOR_TRACE = here("../tests/fixtures/memtrace-tools/extra/edge_empty.ctf");

/** The load average over the last minute (the machine is shared: times scale with it). Deno
 * wants every permission to read /proc/loadavg, or --allow-sys=loadavg for `Deno.loadavg`:
 * without either, `cat` reads it (the bench may run programs). */
function load(): string {
  try {
    return Deno.loadavg()[0].toFixed(2);
  } catch {
    try {
      const out = new Deno.Command("cat", { args: ["/proc/loadavg"], stdout: "piped" })
        .outputSync();
      return new TextDecoder().decode(out.stdout).split(" ")[0];
    } catch {
      return "?";
    }
  }
}

/** Times until the views of each page are all drawn in headless Chromium (the page's
 * `report-rendered` mark), in ms, the median of `runs` loads, or why not. */
async function chromiumDrawn(htmls: string[], runs = 3): Promise<(number | string)[]> {
  const chromium = "/usr/bin/chromium";
  const missing = (["homedir", "osRelease"] as const).filter((kind) =>
    Deno.permissions.querySync({ name: "sys", kind }).state !== "granted"
  );
  if (missing.length > 0) {
    return htmls.map(() =>
      `not measured: playwright-core needs --allow-sys=${
        missing.join(",")
      } (deno task bench gives it)`
    );
  }
  try {
    Deno.statSync(chromium);
  } catch {
    return htmls.map(() =>
      "not measured: no Chromium at /usr/bin/chromium (to measure it: apt-get install -y chromium)"
    );
  }
  const { chromium: pw } = await import("playwright-core");
  const browser = await pw.launch({ executablePath: chromium, args: ["--no-sandbox"] });
  try {
    const out: (number | string)[] = [];
    for (const html of htmls) {
      const times: number[] = [];
      try {
        for (let i = 0; i < runs; i++) {
          const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
          await page.goto(`file://${html}`, { timeout: 120_000 });
          await page.waitForSelector("body[data-ready='1']", { timeout: 120_000 });
          times.push(
            await page.evaluate(
              `performance.getEntriesByName("report-rendered")[0]?.startTime ?? -1`,
            ) as number,
          );
          await page.close();
        }
        out.push(times.sort((a, b) => a - b)[Math.floor(times.length / 2)]);
      } catch (e) {
        out.push(`not drawn (${(e as Error).message.split("\n")[0]})`);
      }
    }
    return out;
  } finally {
    await browser.close();
  }
}

/** Runs `trace` with `args` as a whole process, stopped after TIMEOUT s. */
function runTrace(args: string[]): ProcessCost | string {
  try {
    return runMeasured("timeout", [
      "-s",
      "KILL",
      String(TIMEOUT),
      ...ourTraceCommand(args),
    ]);
  } catch (e) {
    return (e as Error).message.includes("(exit status 137)")
      ? `stopped after ${TIMEOUT} s`
      : `failed: ${(e as Error).message.split("\n").slice(0, 2).join(" ")}`;
  }
}

async function run(): Promise<void> {
  const out = Deno.makeTempDirSync({ prefix: "memprof-lab-scale-bench-" });
  try {
    for (const events of SIZES) {
      const t0 = performance.now();
      const trace = bigTrace(events);
      const made = (performance.now() - t0) / 1000;
      console.log(
        `scale: ${events.toLocaleString("en-US")} events, ${(trace.bytes / 1e6).toFixed(0)} MB (${
          made > 1 ? `written in ${made.toFixed(0)} s` : "from the bench cache"
        })`,
      );
      for (const [name, args] of COMMANDS) {
        if (ONLY !== undefined && !ONLY.includes(name)) continue;
        const before = load();
        const cost = runTrace(args(trace.path, out));
        if (typeof cost === "string") {
          console.log(`scale: ${name}, ${events.toLocaleString("en-US")} events: ${cost}`);
          continue;
        }
        const rss = cost.peakRss === undefined ? "?" : (cost.peakRss / 2 ** 20).toFixed(0);
        console.log(
          `scale: ${name}, ${events.toLocaleString("en-US")} events: ${
            cost.seconds.toFixed(2)
          } s, ${(events / cost.seconds / 1e6).toFixed(2)} M events/s, peak RSS ${rss} MiB (${
            cost.peakRss !== undefined && cost.peakRss < 500e6 ? "under" : "NOT under"
          } 500 MB; load average ${before} before, ${load()} after)`,
        );
        if (name === "report") {
          const anchor = runTrace(["report", ANCHOR_TRACE, "-o", `${out}/anchor.html`]);
          const pages = typeof anchor === "string"
            ? [`${out}/report.html`]
            : [`${out}/report.html`, `${out}/anchor.html`];
          const [drawn, empty] = await chromiumDrawn(pages);
          const size = Deno.statSync(`${out}/report.html`).size;
          const page = Deno.readTextFileSync(`${out}/report.html`);
          // What the page says it summarised: kept stacks, and the time grid if coarsened.
          const said = [
            /<p class="summary-note" id="summary-note">Summary: this page holds the ([\d,]+) stacks with the most samples, of ([\d,]+)/
              .exec(page),
            /<p class="summary-note" id="grid-note">Time grid: ([\d,]+) intervals? of ([\d,]+ µs), merged from the ([\d,]+)/
              .exec(page),
          ];
          console.log(
            `scale: report page, ${events.toLocaleString("en-US")} events: ${
              said[0] ? `${said[0][1]} of ${said[0][2]} stacks kept whole` : "no summary"
            }, ${
              said[1]
                ? `time grid coarsened from ${said[1][3]} to ${said[1][1]} intervals of ${
                  said[1][2]
                }`
                : "time grid as analysed"
            }`,
          );
          console.log(
            `scale: report page, ${events.toLocaleString("en-US")} events (${
              (size / 1e6).toFixed(2)
            } MB): ${
              typeof drawn === "number"
                ? `all views drawn in Chromium after ${(drawn / 1000).toFixed(2)} s (goal < 3 s)`
                : drawn
            }; the page of an empty trace: ${
              typeof empty === "number" ? `${(empty / 1000).toFixed(2)} s` : empty ?? "not built"
            } (medians of 3 loads; load average ${load()})`,
          );
        }
      }
    }
  } finally {
    Deno.removeSync(out, { recursive: true });
  }
}

await run();
