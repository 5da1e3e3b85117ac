// The scenario command's text outputs are streamed into their files in bounded chunks instead of
// being built as one string each, and the ring image is written as the producer made it; the
// bytes are those of the goldens and of the decoders' own whole-string dumps.
import assert from "node:assert/strict";
import { join } from "node:path";
import { type RunResult, runScenario, scenario, type TextOutput } from "../../lib/scenario/mod.ts";
import { dumpTraceToString, Reader } from "../../lib/memtrace/mod.ts";
import { dumpImage } from "../../lib/runtime_events/mod.ts";
import { scenarios } from "../../scenarios/index.ts";
import { goldens } from "../golden/index.ts";
import { run } from "../../cli/scenario.ts";
import { stub } from "./cli_stub.ts";

const byName = (name: string) => scenarios.find((s) => s.settings.name === name)!;
/** Scenarios with a ring (service), a fixture log format (ref_loop) and the default log. */
const NAMES = ["service", "ref_loop", "threads"];
const CHUNK = 1 << 16;

function chunks(r: RunResult, output: TextOutput): string[] {
  const out: string[] = [];
  r.writeText(output, (c) => out.push(c));
  return out;
}

/** The longest line of `text` (newline included). */
function longestLine(text: string): number {
  let max = 0, from = 0;
  for (let k = text.indexOf("\n"); k >= 0; from = k + 1, k = text.indexOf("\n", from)) {
    max = Math.max(max, k + 1 - from);
  }
  return max;
}

Deno.test("writeText hands each text output in bounded chunks that join to the whole output", () => {
  for (const name of NAMES) {
    const r = runScenario(byName(name));
    const want: Record<TextOutput, string> = {
      traceDump: dumpTraceToString(Reader.fromBytes(r.ctf)),
      eventsDump: r.eventsImage.length === 0 ? "" : dumpImage(r.eventsImage),
      callbackLog: goldens[name].callbackLog,
    };
    assert.equal(want.traceDump, goldens[name].traceDump, `${name}: trace dump`);
    assert.equal(want.eventsDump, goldens[name].eventsDump, `${name}: events dump`);
    for (const output of ["traceDump", "eventsDump", "callbackLog"] as const) {
      const parts = chunks(r, output);
      const whole = parts.join("");
      assert.equal(whole, want[output], `${name}: ${output}`);
      // The property reads the same text (made when first read).
      assert.equal(r[output], whole, `${name}: ${output} property`);
      const bound = CHUNK + longestLine(whole);
      for (const p of parts) {
        assert.ok(p.length > 0, `${name}: ${output}: an empty chunk`);
        assert.ok(p.length <= bound, `${name}: ${output}: a chunk of ${p.length} > ${bound}`);
      }
      if (whole.length > 2 * bound) assert.ok(parts.length > 1, `${name}: ${output}: one chunk`);
    }
  }
});

Deno.test("a long run's dumps and log come in many chunks, each under the bound", () => {
  const sc = scenario({ name: "many", description: "many sampled blocks", seed: 7 }, (s) => {
    s.main.memprof.start({ samplingRate: 1, callstackSize: 4 });
    s.main.call(
      "M.main@m.ml:1:0-10",
      () => s.main.repeat(5_000, () => s.main.alloc(2, { at: "M.f@m.ml:2:0-10" })),
    );
    s.main.memprof.stop();
  });
  const r = runScenario(sc);
  const trace = chunks(r, "traceDump"), log = chunks(r, "callbackLog");
  assert.ok(trace.length > 4 && log.length > 4, `${trace.length} and ${log.length} chunks`);
  assert.equal(trace.join(""), dumpTraceToString(Reader.fromBytes(r.ctf)));
  for (const p of [...trace, ...log]) assert.ok(p.length <= 2 * CHUNK, `a chunk of ${p.length}`);
  // The log's chunks end at line ends, and it has a line per callback.
  for (const p of log) assert.ok(p.endsWith("\n"));
  const callbacks = Object.values(r.summary.callbacks).reduce((a, b) => a + b, 0);
  // (plus the profile's start and stop lines)
  assert.equal(log.join("").split("\n").length - 1, callbacks + 2);
});

Deno.test("the scenario command streams its text outputs and writes the ring image as it is", async () => {
  const io = stub();
  const streamed = new Map<string, number>();
  const wholes: string[] = [];
  const writeFile = io.writeFile;
  const streaming = Object.assign(io, {
    writeFile(path: string, data: Uint8Array | string) {
      wholes.push(path.slice(path.lastIndexOf("/") + 1));
      writeFile(path, data);
    },
    writeFileStream(path: string, fill: (write: (chunk: string) => void) => void) {
      const parts: string[] = [];
      fill((c) => parts.push(c));
      streamed.set(path.slice(path.lastIndexOf("/") + 1), parts.length);
      writeFile(path, parts.join(""));
    },
  });
  assert.equal(await run(["service", "--out", "/out"], streaming), 0, io.err);
  assert.deepEqual([...streamed.keys()].sort(), [
    "callbacks.txt",
    "events.txt",
    "report.html",
    "trace.txt",
  ]);
  assert.deepEqual(wholes.sort(), ["4242.events", "summary.json", "trace.ctf"]);
  const g = goldens.service;
  assert.equal(io.text("/out/service/trace.txt"), g.traceDump);
  assert.equal(io.text("/out/service/events.txt"), g.eventsDump);
  assert.equal(io.text("/out/service/callbacks.txt"), g.callbackLog);
  assert.deepEqual(io.files.get("/out/service/trace.ctf"), g.ctf);
  const r = runScenario(byName("service"));
  assert.deepEqual(io.files.get("/out/service/4242.events"), r.eventsImage);
});

Deno.test("the scenario command's files on disk are byte for byte the run's outputs", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "output_memory_" });
  try {
    const root = new URL("../../", import.meta.url).pathname;
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", join(root, "cli/scenario.ts"), "service", "--out", dir],
      cwd: root,
      env: { NO_COLOR: "1" },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    const r = runScenario(byName("service"));
    const file = (n: string) => Deno.readFileSync(join(dir, "service", n));
    const enc = new TextEncoder();
    assert.deepEqual(file("trace.ctf"), r.ctf);
    assert.deepEqual(file(`${r.scenario.settings.pid}.events`), r.eventsImage);
    assert.deepEqual(file("trace.txt"), enc.encode(r.traceDump));
    assert.deepEqual(file("events.txt"), enc.encode(r.eventsDump));
    assert.deepEqual(file("callbacks.txt"), enc.encode(r.callbackLog));
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
