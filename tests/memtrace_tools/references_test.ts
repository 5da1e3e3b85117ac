// memtrace's own tools on the real traces: each of our tools must print (or write) exactly what
// memtrace's bin/ tool printed (or wrote) — tests/fixtures/memtrace-tools/ (see its README).
import assert from "node:assert/strict";
import { hotspots, stripNames, subsample, TraceToolError } from "../../lib/memtrace_tools/mod.ts";
import {
  assertSameBytes,
  assertSameText,
  bytes,
  exists,
  REFS,
  runTextTool as run,
  text,
  TEXT_TOOLS,
  TRACES,
  withReader,
  written,
} from "./_fixtures.ts";

/** Every input trace with references. */
const TRACE_NAMES = [
  "edge_writer_api",
  "external_2e-5",
  "lists_and_sets_v1_e8e7dbe",
  "lists_and_sets_v1_e8e7dbe.copy-v3",
  "multi_mdtrace_3e-4.renumbered",
  "ocamlopt",
  "single_1e-4",
];
/** The traces memtrace's subsample (factor 10) and strip_names were run on. */
const WRITTEN = ["edge_writer_api", "single_1e-4", "multi_mdtrace_3e-4.renumbered"];

for (const name of TRACE_NAMES) {
  for (const tool of TEXT_TOOLS) {
    Deno.test(`${tool} prints exactly memtrace's ${tool} output for ${name}.ctf`, () => {
      const want = text(REFS, `${name}.${tool}.txt`);
      const got = withReader(
        bytes(TRACES, `${name}.ctf`),
        `${name}.ctf`,
        (r) => run(tool, r, `${name}.ctf`),
      );
      assertSameText(got, want, `${tool} ${name}`);
    });
  }
}

/** Our subsample (factor 10, fresh default generator) and strip-names outputs, by trace. */
function subsampled(name: string): Uint8Array {
  return withReader(
    bytes(TRACES, `${name}.ctf`),
    name,
    (r) => written((sink) => subsample(r, sink, { factor: 10 })),
  );
}
function stripped(name: string): Uint8Array {
  return withReader(
    bytes(TRACES, `${name}.ctf`),
    name,
    (r) => written((sink) => stripNames(r, sink)),
  );
}

for (const name of WRITTEN) {
  Deno.test(`subsample by 10 writes memtrace's ${name}.subsample.ctf byte for byte`, () => {
    assertSameBytes(subsampled(name), bytes(REFS, `${name}.subsample.ctf`), "subsample");
  });

  Deno.test(`strip-names writes memtrace's ${name}.strip_names.ctf byte for byte`, () => {
    assertSameBytes(stripped(name), bytes(REFS, `${name}.strip_names.ctf`), "strip-names");
  });

  Deno.test(`the text tools print memtrace's outputs for ${name}.subsample.ctf`, () => {
    const ours = subsampled(name);
    const file = `${name}.subsample.ctf`;
    for (const tool of TEXT_TOOLS) {
      const got = withReader(ours, file, (r) => run(tool, r, file));
      assertSameText(got, text(REFS, `${name}.subsample.${tool}.txt`), `${tool} ${file}`);
    }
  });

  Deno.test(`flamegraph and identify print memtrace's outputs for ${name}.strip_names.ctf`, () => {
    const ours = stripped(name);
    const file = `${name}.strip_names.ctf`;
    for (const tool of ["flamegraph", "identify"] as const) {
      const got = withReader(ours, file, (r) => run(tool, r, file));
      assertSameText(got, text(REFS, `${name}.strip_names.${tool}.txt`), `${tool} ${file}`);
    }
  });

  Deno.test(`hotspots refuses ${name}.strip_names.ctf, where memtrace's crashes`, () => {
    // memtrace: no output, Invalid_argument("index out of bounds"), exit 2.
    assert.equal(text(REFS, `${name}.strip_names.hotspots.txt`), "");
    assert.match(
      text(REFS, `${name}.strip_names.hotspots.stderr.txt`),
      /index out of bounds/,
    );
    const file = `${name}.strip_names.ctf`;
    assert.throws(
      () => withReader(stripped(name), file, (r) => hotspots(r)),
      (e: unknown) =>
        e instanceof TraceToolError && e.tool === "hotspots" &&
        /empty backtrace/.test(e.message) && e.message.includes(file),
    );
  });
}

Deno.test("every reference output of the folder is checked by these tests", () => {
  const checked = new Set<string>();
  for (const name of TRACE_NAMES) for (const t of TEXT_TOOLS) checked.add(`${name}.${t}.txt`);
  for (const name of WRITTEN) {
    checked.add(`${name}.subsample.ctf`);
    checked.add(`${name}.strip_names.ctf`);
    for (const t of TEXT_TOOLS) {
      checked.add(`${name}.subsample.${t}.txt`);
      checked.add(`${name}.strip_names.${t}.txt`);
    }
    checked.add(`${name}.strip_names.hotspots.stderr.txt`);
  }
  const present = [...Deno.readDirSync(REFS)]
    .filter((e) => e.isFile && e.name !== "README.md")
    .map((e) => e.name)
    .sort();
  assert.deepEqual(present, [...checked].sort());
  for (const name of TRACE_NAMES) assert.ok(exists(TRACES, `${name}.ctf`), name);
});
