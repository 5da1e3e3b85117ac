// Edge cases, against outputs of memtrace's tools made the same way as the main references
// (tests/fixtures/memtrace-tools/extra/, see the README): empty and zero-duration traces (inf and
// -nan rates), multi-byte names, frames without locations, time windows, several domains — and
// the traces on which memtrace's tools crash, where ours give a result or a typed error.
import assert from "node:assert/strict";
import { MemorySink, MemtraceFormatError } from "../../lib/memtrace/mod.ts";
import {
  flamegraph,
  hotspots,
  stripNames,
  subsample,
  type SubsampleOptions,
  type TraceInput,
  TraceToolError,
} from "../../lib/memtrace_tools/mod.ts";
import {
  assertSameBytes,
  assertSameText,
  bytes,
  EXTRA,
  readerOf,
  runTextTool as run,
  text,
  TEXT_TOOLS,
  type TextTool,
  TRACES,
  withReader,
  written,
} from "./_fixtures.ts";

function runOn(tool: TextTool, data: Uint8Array, file: string): string {
  return withReader(data, file, (r) => run(tool, r, file));
}

for (
  const name of [
    "edge_empty",
    "edge_time0",
    "edge_major_only",
    "edge_names",
    "edge_collect_once",
    "gen_multi",
  ]
) {
  Deno.test(`the text tools print memtrace's outputs for extra/${name}.ctf`, () => {
    for (const tool of TEXT_TOOLS) {
      const got = runOn(tool, bytes(EXTRA, `${name}.ctf`), `${name}.ctf`);
      assertSameText(got, text(EXTRA, `${name}.${tool}.txt`), `${tool} ${name}`);
    }
  });
}

Deno.test("identify prints -nan and inf rates as memtrace does when the duration is zero", () => {
  // Checked against the references above; here, that those cases are really exercised.
  assert.match(text(EXTRA, "edge_empty.identify.txt"), /Minor: -nan TB\/s allocations, -nan%/);
  assert.match(text(EXTRA, "edge_time0.identify.txt"), /Minor: inf TB\/s allocations, 100\.0%/);
  const got = runOn("identify", bytes(EXTRA, "edge_time0.ctf"), "edge_time0.ctf");
  assert.match(got, /-nan TB\/s collections/);
});

Deno.test("flamegraph prints the flame graph of a trace that collects an object twice", () => {
  // memtrace's flamegraph stops on an assertion there, printing nothing.
  assert.equal(text(EXTRA, "edge_collect_twice.flamegraph.txt"), "");
  assert.match(text(EXTRA, "edge_collect_twice.flamegraph.stderr.txt"), /Assertion failed/);
  // Collections play no part in a flame graph: ours is memtrace's for the same trace with the
  // second collection left out.
  const got = runOn("flamegraph", bytes(EXTRA, "edge_collect_twice.ctf"), "x");
  const want = text(EXTRA, "edge_collect_once.flamegraph.txt");
  assert.notEqual(want, "");
  assertSameText(got, want, "flamegraph edge_collect_twice");
  for (const tool of ["hotspots", "identify"] as const) {
    const file = "edge_collect_twice.ctf";
    const out = runOn(tool, bytes(EXTRA, file), file);
    assertSameText(out, text(EXTRA, `edge_collect_twice.${tool}.txt`), tool);
  }
});

Deno.test("identify stops with a TraceToolError where memtrace's asserts on a promotion", () => {
  assert.match(text(EXTRA, "edge_promote_major.identify.stderr.txt"), /Assertion failed/);
  assert.ok(text(EXTRA, "edge_promote_major.identify.txt").endsWith("Trace statistics:\n"));
  const file = "edge_promote_major.ctf";
  assert.throws(
    () => runOn("identify", bytes(EXTRA, file), file),
    (e: unknown) =>
      e instanceof TraceToolError && e.tool === "identify" && e.file === file &&
      /object 0 is promoted/.test(e.message),
  );
  for (const tool of ["flamegraph", "hotspots"] as const) {
    const out = runOn(tool, bytes(EXTRA, file), file);
    assertSameText(out, text(EXTRA, `edge_promote_major.${tool}.txt`), tool);
  }
});

Deno.test("strip-names stops with a TraceToolError where memtrace's finds an incorrect id", () => {
  assert.match(
    text(EXTRA, "edge_domain1.strip_names.stderr.txt"),
    /Incorrect allocation ID/,
  );
  assert.throws(
    () =>
      withReader(
        bytes(EXTRA, "edge_domain1.ctf"),
        "edge_domain1.ctf",
        (r) => written((sink) => stripNames(r, sink)),
      ),
    (e: unknown) =>
      e instanceof TraceToolError && e.tool === "strip-names" &&
      /allocation 0 of domain 1/.test(e.message),
  );
});

/** The written-trace references: output name, input, options. */
const WRITES: { out: string; input: Uint8Array; options?: SubsampleOptions; text: boolean }[] = [
  {
    out: "gen_multi.subsample",
    input: bytes(EXTRA, "gen_multi.ctf"),
    options: { factor: 2 },
    text: true,
  },
  {
    out: "gen_multi.subsample_3_10_40",
    input: bytes(EXTRA, "gen_multi.ctf"),
    options: { factor: 3, window: { start: 10, end: 40 } },
    text: true,
  },
  {
    out: "edge_writer_api.subsample_1_1_101",
    input: bytes(TRACES, "edge_writer_api.ctf"),
    options: { factor: 1, window: { start: 1, end: 101 } },
    text: true,
  },
  {
    out: "edge_names.subsample_2_0_1",
    input: bytes(EXTRA, "edge_names.ctf"),
    options: { factor: 2, window: { start: 0, end: 1 } },
    text: true,
  },
  {
    out: "edge_empty.subsample",
    input: bytes(EXTRA, "edge_empty.ctf"),
    options: { factor: 5 },
    text: false,
  },
  { out: "gen_multi.strip_names", input: bytes(EXTRA, "gen_multi.ctf"), text: false },
  { out: "edge_names.strip_names", input: bytes(EXTRA, "edge_names.ctf"), text: false },
];

for (const w of WRITES) {
  const tool = w.options === undefined ? "strip-names" : "subsample";
  Deno.test(`${tool} writes memtrace's extra/${w.out}.ctf byte for byte`, () => {
    const got = withReader(w.input, w.out, (r) =>
      written((sink) => {
        if (w.options === undefined) stripNames(r, sink);
        else subsample(r, sink, w.options);
      }));
    const want = bytes(EXTRA, `${w.out}.ctf`);
    assertSameBytes(got, want, tool);
    if (!w.text) return;
    for (const t of TEXT_TOOLS) {
      const out = runOn(t, got, `${w.out}.ctf`);
      assertSameText(out, text(EXTRA, `${w.out}.${t}.txt`), `${t} ${w.out}`);
    }
  });
}

Deno.test("a location code the trace never defined stops the tools with a located error", () => {
  // memtrace's tools stop with Invalid_argument("invalid location code …"). A well-formed trace
  // defines every code, so the reader is wrapped to forget one.
  const data = bytes(EXTRA, "edge_names.ctf");
  const tools = [
    flamegraph,
    hotspots,
    (r: TraceInput) => subsample(r, new MemorySink(), { factor: 1 }),
  ];
  for (const tool of tools) {
    const r = readerOf(data, "edge_names.ctf");
    const forgetful: TraceInput = {
      info: r.info,
      fileName: r.fileName,
      sizeBytes: () => r.sizeBytes(),
      eventOffset: () => r.eventOffset(),
      locationsOf: (c) => (c === 7 ? undefined : r.locationsOf(c)),
      iter: (f, o) => r.iter(f, o),
    };
    assert.throws(
      () => tool(forgetful),
      (e: unknown) =>
        e instanceof MemtraceFormatError &&
        e.message.startsWith("malformed trace: invalid location code 00000007 (at byte offset ") &&
        e.file === "edge_names.ctf" && e.offset > 0 && e.offset < data.length,
    );
  }
});
