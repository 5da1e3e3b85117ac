/// <reference lib="dom" />
// Headless Chromium for the report's browser tests: where it is, and why a test is skipped
// (no Chromium, or not the permissions playwright-core needs: --allow-env
// --allow-sys=homedir,osRelease --allow-run, as `deno task test` gives).

/** The Chromium binary, if installed. */
export function findChromium(): string | undefined {
  for (const p of ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/snap/bin/chromium"]) {
    try {
      if (Deno.statSync(p).isFile) return p;
    } catch { /* not there */ }
  }
  return undefined;
}

/** Why the browser tests cannot run here, or undefined when they can. */
export function whySkipped(): string | undefined {
  const missing = [
    ["env", Deno.permissions.querySync({ name: "env" }).state],
    ["sys=homedir", Deno.permissions.querySync({ name: "sys", kind: "homedir" }).state],
    ["sys=osRelease", Deno.permissions.querySync({ name: "sys", kind: "osRelease" }).state],
    ["run", Deno.permissions.querySync({ name: "run" }).state],
  ].filter(([, s]) => s !== "granted").map(([n]) => n);
  if (missing.length > 0) {
    return `playwright-core needs --allow-${missing.join(", --allow-")} (run 'deno task test')`;
  }
  if (findChromium() === undefined) {
    return "no Chromium at /usr/bin/chromium (install it: apt-get update && apt-get install -y chromium)";
  }
  return undefined;
}

/** A report open in headless Chromium: its page, the errors it logged, and `set`, which sets a
 * control's value as a user would and waits for the views to be redrawn. */
export interface OpenReport {
  browser: import("playwright-core").Browser;
  page: import("playwright-core").Page;
  errors: string[];
  set(id: string, value: string): Promise<void>;
  /** Takes the page's current render count as the one `set` waits to pass (after a click). */
  sync(): Promise<void>;
}

/** Opens report `html` (a file) in headless Chromium and waits until it is drawn. */
export async function openReport(html: string): Promise<OpenReport> {
  const { chromium } = await import("playwright-core");
  const browser = await chromium.launch({ executablePath: findChromium(), args: ["--no-sandbox"] });
  const page = await browser.newPage({ viewport: { width: 1400, height: 1600 } });
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  await page.goto(`file://${html}`);
  await page.waitForSelector("body[data-ready='1']", { timeout: 30_000 });
  let renders = await page.evaluate(() => Number(document.body.dataset.renders));
  const set = async (id: string, value: string) => {
    await page.evaluate(([id, value]) => {
      const el = document.getElementById(id) as HTMLInputElement;
      el.value = value;
      el.dispatchEvent(new Event(el.tagName === "SELECT" ? "change" : "input"));
    }, [id, value]);
    await page.waitForFunction((n) => Number(document.body.dataset.renders) > n, renders);
    renders = await page.evaluate(() => Number(document.body.dataset.renders));
  };
  const sync = async () => {
    renders = await page.evaluate(() => Number(document.body.dataset.renders));
  };
  return { browser, page, errors, set, sync };
}
