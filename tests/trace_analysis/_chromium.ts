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
