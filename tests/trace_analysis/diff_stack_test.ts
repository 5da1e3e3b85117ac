// `trace diff --by stack` against the naive computation: stacks of the two traces matched by
// their whole texts (which diff never builds), rows in the order of the whole texts on ties, keys
// bounded to STACK_TEXT_CHARS (issue 23).
import assert from "node:assert/strict";
import { Reader } from "../../lib/memtrace/mod.ts";
import { analyzeTrace, diffOf } from "../../lib/trace_analysis/mod.ts";
import { STACK_TEXT_CHARS, stackLabel } from "../../lib/trace_analysis/select.ts";
import { boundedStackKey, naiveGroups, naiveObjects } from "./_naive.ts";

const FIXTURES = new URL("../fixtures/memtrace/", import.meta.url);
const EXTRA = new URL("../fixtures/memtrace-tools/extra/", import.meta.url);
const read = (dir: URL, f: string) => Deno.readFileSync(new URL(f, dir));

function naiveDiff(a: Uint8Array, b: Uint8Array, fromUsB?: number) {
  const side = (bytes: Uint8Array, fromUs?: number) => {
    const objects = naiveObjects(bytes);
    const alloc = naiveGroups(objects, "stack", { fromUs }).groups;
    const live = naiveGroups(objects, "stack", { fromUs, liveAt: "end" }).groups;
    const r = Reader.fromBytes(bytes);
    const bps = r.info.wordSize / 8 / r.info.sampleRate;
    return { alloc, live, bps };
  };
  const sa = side(a), sb = side(b, fromUsB);
  const keys = new Set([...sa.alloc.keys(), ...sb.alloc.keys(), ...sa.live.keys()]);
  for (const k of sb.live.keys()) keys.add(k);
  const rows = [];
  for (const k of keys) {
    const allocDelta = (sb.alloc.get(k)?.samples ?? 0) * sb.bps -
      (sa.alloc.get(k)?.samples ?? 0) * sa.bps;
    const liveDelta = (sb.live.get(k)?.samples ?? 0) * sb.bps -
      (sa.live.get(k)?.samples ?? 0) * sa.bps;
    if (allocDelta !== 0 || liveDelta !== 0) rows.push({ k, allocDelta, liveDelta });
  }
  rows.sort((x, y) =>
    Math.abs(y.allocDelta) - Math.abs(x.allocDelta) ||
    Math.abs(y.liveDelta) - Math.abs(x.liveDelta) || (x.k < y.k ? -1 : x.k > y.k ? 1 : 0)
  );
  return rows.map((r) => [boundedStackKey(r.k, STACK_TEXT_CHARS), r.allocDelta, r.liveDelta]);
}

Deno.test("diff by stack matches stacks by their whole text, as the naive diff does", () => {
  const lists = read(FIXTURES, "lists_and_sets_v1_e8e7dbe.ctf");
  const single = read(FIXTURES, "single_1e-4.ctf");
  const cases: [string, Uint8Array, Uint8Array, number?][] = [
    ["single vs its subsample", single, read(EXTRA, "single_1e-4.head40000.subsample_3.ctf")],
    // Stacks of up to 9,983 frames (379,408 characters): keys bounded, matched whole.
    ["lists_and_sets vs its second half", lists, lists, 40_000],
    [
      "lists_and_sets v1 vs its v3 copy",
      lists,
      read(FIXTURES, "lists_and_sets_v1_e8e7dbe.copy-v3.ctf"),
    ],
  ];
  for (const [what, a, b, fromUs] of cases) {
    const pa = analyzeTrace(Reader.fromBytes(a));
    const pb = analyzeTrace(Reader.fromBytes(b), fromUs === undefined ? {} : { fromUs });
    const d = diffOf(pa.data, pb.data, pa.selector, pb.selector, { by: "stack", limit: 0 });
    const want = naiveDiff(a, b, fromUs);
    assert.deepEqual(d.rows.map((r) => [r.key, r.allocDelta, r.liveDelta]), want, what);
    assert.equal(d.rowCount, want.length);
    if (what.startsWith("lists_and_sets vs")) {
      assert.ok(d.rows.length > 10, `${what}: ${d.rows.length} rows`);
      assert.ok(d.rows.some((r) => r.key.startsWith("(")), `${what}: no truncated key`);
      assert.ok(d.rows.every((r) => r.key.length <= STACK_TEXT_CHARS + 30));
    }
  }
});

Deno.test("stackLabel keeps the innermost frames within the bound and counts the others", () => {
  const lists = read(FIXTURES, "lists_and_sets_v1_e8e7dbe.ctf");
  const { data } = analyzeTrace(Reader.fromBytes(lists));
  let deepest = 0;
  for (let n = 0; n < data.nodes.parent.length; n++) {
    const { frames, omitted, key } = stackLabel(data, n, 1000);
    const depth = frames.length + omitted;
    deepest = Math.max(deepest, depth);
    assert.ok(frames.length >= 1);
    assert.ok(frames.join(";").length <= 1000 || frames.length === 1);
    assert.equal(key, (omitted > 0 ? `(${omitted} outer frames);` : "") + frames.join(";"));
  }
  assert.ok(deepest > 9000, `deepest ${deepest}`);
});
