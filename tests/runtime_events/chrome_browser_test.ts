// The exported Chrome JSON opened by a maintained importer: speedscope (the
// npm package's release build, pinned) in headless Chromium. The page loads
// each export through speedscope's own local-file hook; the test reads the
// console (the importer warns about every B/E it cannot match and every frame
// left open) and the rendered page (one profile per domain track).
//
// Runs only where `chromium` (or chromium-browser / google-chrome) is on PATH
// and the speedscope package can be fetched from npm; otherwise it says so on
// the console and is reported as ignored.
import { assert, assertEquals } from "./assert.ts";
import d8Image from "../fixtures/runtime_events/d8/18440.events" with { type: "bytes" };
import e10Image from "../fixtures/runtime_events/e10/18448.events" with { type: "bytes" };
import { chromeTraceJson, exportChromeTrace } from "../../lib/runtime_events/mod.ts";
import { Reader } from "../../lib/memtrace/mod.ts";
import { runScenario } from "../../lib/scenario/mod.ts";
import { traceInstants } from "../../lib/runtime_events/mod.ts";
import service from "../../scenarios/service.ts";
import { validateChromeTrace } from "./chrome_validate.ts";

const SPEEDSCOPE = "npm:speedscope@1.25.0";
const decoder = new TextDecoder();

function findChromium(): string | null {
  for (const name of ["chromium", "chromium-browser", "google-chrome"]) {
    try {
      const r = new Deno.Command("which", { args: [name], stdout: "piped", stderr: "null" })
        .outputSync();
      if (r.success) return decoder.decode(r.stdout).trim();
    } catch {
      return null;
    }
  }
  return null;
}

/** The release folder of the speedscope package, fetched by Deno's npm client into its cache. */
function speedscopeRelease(): string | Error {
  const code = `import p from "${SPEEDSCOPE}/package.json" with { type: "json" };
    if (p.version !== "1.25.0") throw new Error(p.version);
    console.log(new URL("./dist/release/index.html", import.meta.resolve("${SPEEDSCOPE}/package.json")).pathname);`;
  const r = new Deno.Command(Deno.execPath(), {
    args: ["eval", "--no-config", "--no-lock", code],
    stdout: "piped",
    stderr: "piped",
  }).outputSync();
  if (!r.success) return new Error(decoder.decode(r.stderr).trim().split("\n").slice(-3).join(" "));
  return decoder.decode(r.stdout).trim();
}

const chromium = findChromium();
const release = chromium === null ? null : speedscopeRelease();
const skip = chromium === null
  ? "no chromium, chromium-browser or google-chrome on PATH"
  : release instanceof Error
  ? `${SPEEDSCOPE} could not be fetched: ${release.message}`
  : null;
if (skip !== null) {
  console.log(
    `SKIPPED: loading the Chrome exports in speedscope (headless Chromium) — ${skip}; ` +
      "the structural checks of chrome_export_test.ts still run",
  );
}

interface Loaded {
  console: string[];
  text: string;
}

async function loadInSpeedscope(dir: string, name: string, json: string): Promise<Loaded> {
  const b64 = btoa(
    Array.from(new TextEncoder().encode(json), (b) => String.fromCharCode(b)).join(""),
  );
  const loader = `${dir}/${name}.js`;
  await Deno.writeTextFile(
    loader,
    `speedscope.loadFileFromBase64(${JSON.stringify(name)}, "${b64}");\n`,
  );
  const url = `file://${release}#localProfilePath=${loader.replace(/^\/+/, "")}`;
  const r = await new Deno.Command(chromium!, {
    args: [
      "--headless",
      "--no-sandbox",
      "--no-first-run",
      `--user-data-dir=${dir}/profile-${name}`,
      "--enable-unsafe-swiftshader",
      "--use-angle=swiftshader",
      "--allow-file-access-from-files",
      "--enable-logging=stderr",
      "--v=0",
      "--virtual-time-budget=15000",
      "--dump-dom",
      url,
    ],
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(120_000),
  }).output();
  const stderr = decoder.decode(r.stderr);
  assertEquals(r.code, 0, stderr.slice(-2000));
  const consoleLines = stderr.split("\n").filter((l) => l.includes(":CONSOLE")).map((l) =>
    l.replace(/^.*?:CONSOLE[^\]]*\] /, "")
  );
  const text = decoder.decode(r.stdout).replace(/<[^>]+>/g, " ").replace(/\s+/g, " ");
  return { console: consoleLines, text };
}

Deno.test({
  name: "speedscope imports the exports of d8, e10 and a scenario run without a nesting warning",
  ignore: skip !== null,
  fn: async () => {
    const res = runScenario(service);
    const reader = Reader.fromBytes(res.ctf);
    const inputs = [
      { name: "d8.json", trace: exportChromeTrace(d8Image) },
      { name: "e10.json", trace: exportChromeTrace(e10Image, { defaultPid: 18448 }) },
      {
        name: "service.json",
        trace: exportChromeTrace(res.eventsImage, {
          extraInstants: () => traceInstants(reader, 0n),
        }),
      },
    ];
    const dir = await Deno.makeTempDir({ prefix: "speedscope_" });
    try {
      for (const { name, trace } of inputs) {
        const json = chromeTraceJson(trace);
        assertEquals(validateChromeTrace(json).errors, [], name);
        const page = await loadInSpeedscope(dir, name, json);
        assert.ok(
          page.console.some((l) => l.includes("Importing as Trace Event Format profile")),
          `${name}: not imported as trace events: ${page.console.join(" / ")}`,
        );
        assert.ok(
          page.console.some((l) => /"import: [\d.]+ ms"/.test(l)),
          `${name}: import did not finish`,
        );
        // speedscope's importer warns about each E it cannot match and each frame left open.
        const warnings = page.console.filter((l) =>
          /Tried to end|still open|Skipping|rror|Unrecognized|Could not/.test(l)
        );
        assertEquals(warnings, [], name);
        assert.match(page.text, new RegExp(`${name.replace(".", "\\.")} - speedscope`));
        // One profile per domain track that has spans, named from our metadata.
        const pid = trace.summary.pid;
        for (const d of trace.summary.domains) {
          assert.ok(
            page.text.includes(
              `OCaml ${pid} (runtime_events) (pid ${pid}), domain ${d} (tid ${d})`,
            ),
            `${name}: domain ${d} missing`,
          );
        }
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
