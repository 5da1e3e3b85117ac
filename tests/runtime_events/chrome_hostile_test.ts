// The Chrome export on hostile rings (issue 23): timestamps read as unsigned 64-bit, times that
// go back on a ring clamped, and valid nesting on every track for any mutated ring; and gc-stats
// and export of a 2 GiB sparse ring read window by window, as stats and dump read it.
import { assert, assertEquals } from "./assert.ts";
import {
  type ChromeRecord,
  chromeTraceJson,
  DecoderRegistry,
  exportChromeTrace,
  RuntimeEventsFormatError,
  RuntimeEventsProducer,
  RuntimePhase,
  Type,
} from "../../lib/runtime_events/mod.ts";
import { writeSparseRingFile } from "./helpers.ts";
import { refCustomDecoder } from "./fixture_decoders.ts";
import { ringCase } from "./fuzz_harness.ts";
import { validateChromeTrace } from "./chrome_validate.ts";
import { measureCli } from "../trace_analysis/_hostile.ts";
import { statistics } from "../verbose.ts";

const decoders = new DecoderRegistry().register("ref.custom", refCustomDecoder);

/**
 * The nesting property, checked on the exact (bigint) records: on each track, timestamps never
 * decrease in output order, every X has dur >= 0, each E closes the innermost open B of its
 * name, every B is closed, and the spans (X intervals, B–E pairs) nest. Returns the problems.
 */
function nestingProblems(records: ChromeRecord[]): string[] {
  const problems: string[] = [];
  const last = new Map<number, bigint>();
  const open = new Map<number, { name: string; at: bigint }[]>();
  const spans = new Map<number, [bigint, bigint][]>();
  const span = (tid: number, a: bigint, b: bigint) => {
    let l = spans.get(tid);
    if (l === undefined) spans.set(tid, l = []);
    l.push([a, b]);
  };
  for (const r of records) {
    if (r.ph === "M") continue;
    if (r.tsNs < 0n) problems.push(`${r.ph} ${r.name} at ${r.tsNs} ns, before 0`);
    const prev = last.get(r.tid);
    if (prev !== undefined && r.tsNs < prev) {
      problems.push(`track ${r.tid}: ${r.ph} ${r.name} at ${r.tsNs} after ${prev}`);
    }
    last.set(r.tid, r.tsNs);
    if (r.ph === "X") {
      if (r.durNs === undefined || r.durNs < 0n) problems.push(`X ${r.name} dur ${r.durNs}`);
      else span(r.tid, r.tsNs, r.tsNs + r.durNs);
    } else if (r.ph === "B") {
      let st = open.get(r.tid);
      if (st === undefined) open.set(r.tid, st = []);
      st.push({ name: r.name, at: r.tsNs });
    } else if (r.ph === "E") {
      const top = open.get(r.tid)?.pop();
      if (top === undefined) problems.push(`track ${r.tid}: E ${r.name} before any B`);
      else if (top.name !== r.name) problems.push(`track ${r.tid}: E ${r.name} closes ${top.name}`);
      else span(r.tid, top.at, r.tsNs);
    }
  }
  for (const [tid, st] of open) if (st.length > 0) problems.push(`track ${tid}: B left open`);
  for (const [tid, list] of spans) {
    list.sort((
      a,
      b,
    ) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] > b[1] ? -1 : a[1] < b[1] ? 1 : 0));
    const stack: [bigint, bigint][] = [];
    for (const s of list) {
      while (stack.length > 0 && stack[stack.length - 1][1] <= s[0]) stack.pop();
      const top = stack[stack.length - 1];
      if (top !== undefined && s[1] > top[1]) {
        problems.push(`track ${tid}: [${s[0]}, ${s[1]}] crosses [${top[0]}, ${top[1]}]`);
      }
      stack.push(s);
    }
  }
  return problems;
}

Deno.test("export: times at 2^63 ns and beyond are unsigned, times going back are clamped, nesting stays valid", () => {
  // Ring start at 10 ns, a minor phase from 2^63 ns holding a span whose end (40 ns) goes back,
  // the phase's end at 2^64 - 1 ns, then a major phase at 50 and 60 ns (both back).
  const times = [10n, 2n ** 63n, 2n ** 63n + 5n, 40n, 2n ** 64n - 1n, 50n, 60n];
  const p = new RuntimeEventsProducer({
    maxDomains: 1,
    logWsize: 10,
    pid: 7,
    clock: () => times.shift() ?? 70n,
  });
  p.start();
  const span = p.registerUserEvent("span", Type.span);
  p.begin(0, RuntimePhase.EV_MINOR);
  p.writeUser(0, span, "begin");
  p.writeUser(0, span, "end");
  p.end(0, RuntimePhase.EV_MINOR);
  p.begin(0, RuntimePhase.EV_MAJOR);
  p.end(0, RuntimePhase.EV_MAJOR);
  assertEquals(times.length, 0);
  const image = p.bytes.slice();
  const trace = exportChromeTrace(image, { decoders });
  assertEquals(nestingProblems(trace.records), []);
  const json = chromeTraceJson(trace);
  assert.ok(!/"(ts|dur)":-/.test(json), "a negative ts or dur");
  assert.ok(json.includes('"ts":9223372036854775.808'), "2^63 ns as unsigned µs");
  assertEquals(trace.summary.clampedTimes, 3);
  assertEquals(validateChromeTrace(json).errors, []);
});

Deno.test("export: for any mutated ring, B/E nest on every track and dur >= 0", () => {
  const SEED = 0x63687232;
  let exported = 0, clamped = 0, refused = 0;
  for (let i = 0; i < 3_000; i++) {
    const c = ringCase(SEED, i);
    try {
      let trace;
      try {
        trace = exportChromeTrace(c.bytes, { decoders });
      } catch (e) {
        if (!(e instanceof RuntimeEventsFormatError)) throw e;
        refused++;
        continue;
      }
      exported++;
      if (trace.summary.clampedTimes > 0) clamped++;
      const problems = nestingProblems(trace.records);
      assertEquals(problems.slice(0, 5), [], `case ${i} (${c.desc})`);
      const json = chromeTraceJson(trace);
      assert.ok(!/"(ts|dur)":-/.test(json), `case ${i} (${c.desc}): a negative ts or dur`);
    } finally {
      c.restore();
    }
  }
  assert.ok(exported > 1000 && refused > 100, `${exported} exported, ${refused} refused`);
  assert.ok(clamped > 20, `only ${clamped} cases had times going back`);
  statistics(`${exported} exported (${clamped} with times clamped), ${refused} refused`);
});

Deno.test("gc-stats and export of an empty 2 GiB sparse ring read it window by window", async () => {
  const dir = Deno.makeTempDirSync();
  try {
    const path = `${dir}/1234.events`;
    const layout = writeSparseRingFile(path, 4096, 16);
    assert.ok(layout.totalSize > 2 ** 31);
    for (
      const args of [["stats", path], ["gc-stats", path], ["export", path, "--format", "chrome"]]
    ) {
      // Before: gc-stats and export read the whole file, 4.2 GB resident and 43 s each.
      const out = await measureCli("events.ts", args, 120_000);
      assertEquals(out.code, 0, out.stderr);
      statistics(
        `events ${args[0]} on a 2 GiB sparse ring: peak RSS ${
          (out.peakKiB / 1024).toFixed(0)
        } MiB, ${(out.ms / 1000).toFixed(1)} s`,
      );
      assert.ok(!(out.peakKiB > 256 * 1024), `${args[0]}: peak RSS ${out.peakKiB} KiB`);
    }
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
