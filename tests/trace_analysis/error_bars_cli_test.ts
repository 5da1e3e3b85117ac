// Error bars on the command line (issue 28): `trace top` prints exact intervals on a real trace,
// `trace diff` of two traces of one program lists no significant change while it finds a real
// one, the exports carry the totals' intervals, `trace info` the estimate's, and `trace
// subsample` says how the top sites' intervals and ranks change.
import assert from "node:assert/strict";
import { trace } from "./_cli.ts";
import { gunzipSync } from "node:zlib";
import { Profile } from "pprof-format";
import { Reader } from "../../lib/memtrace/mod.ts";
import { analyzeTrace, topOf } from "../../lib/trace_analysis/mod.ts";
import { formatBytes } from "../../lib/trace_analysis/top.ts";
import { whatIfInterval, wordsInterval } from "../../lib/trace_analysis/intervals.ts";
import { BLOCKS, runTrace } from "./_ground_truth.ts";

const FIXTURES = new URL("../fixtures/", import.meta.url).pathname;
const SINGLE = FIXTURES + "memtrace/single_1e-4.ctf";
const SINGLE_SUB = FIXTURES + "memtrace-tools/single_1e-4.subsample.ctf";

Deno.test("trace top on the real single-domain trace at 1e-4 prints exact intervals", async () => {
  const text = await trace("top", SINGLE, "--limit", "3");
  assert.equal(text.code, 0, text.stderr);
  const lines = text.stdout.trimEnd().split("\n");
  assert.match(lines[2], /^# low\.\.high: 95% confidence interval, exact binomial/);
  assert.match(lines[3], /bytesLow\.\.bytesHigh/);
  assert.match(lines.at(-1)!, /^ +3993 +304\.6 MiB +295\.3 MiB\.\.314\.2 MiB .*\(total\)$/);
  const json = JSON.parse((await trace("top", SINGLE, "--json", "--limit", "0")).stdout);
  assert.equal(json.confidence, 0.95);
  assert.match(json.intervalMethod, /exact binomial/);
  for (const r of [...json.rows, json.totals]) {
    const [lo, hi] = wordsInterval(r.samples, 1e-4, 0.95);
    assert.equal(r.bytesLow, lo * 8);
    assert.equal(r.bytesHigh, hi * 8);
    assert.ok(r.bytesLow <= r.bytes && r.bytes <= r.bytesHigh);
  }
  // A higher confidence widens every interval; a what-if rate gives the interval at that rate.
  const wide = JSON.parse(
    (await trace("top", SINGLE, "--json", "--confidence", "0.99", "--what-if-rate", "1e-5"))
      .stdout,
  );
  assert.equal(wide.whatIfRate, 1e-5);
  for (const [i, r] of wide.rows.entries()) {
    assert.ok(r.bytesLow < json.rows[i].bytesLow && r.bytesHigh > json.rows[i].bytesHigh);
    const [lo, hi] = whatIfInterval(r.samples, 1e-4, 1e-5, 0.99);
    assert.deepEqual([r.whatIfBytesLow, r.whatIfBytesHigh], [lo * 8, hi * 8]);
  }
  const what = await trace("top", SINGLE, "--what-if-rate", "1e-5", "--limit", "1");
  assert.match(what.stdout, /whatIfBytesLow\.\.whatIfBytesHigh/);
  for (
    const [args, message] of [
      [["--confidence", "1"], /^error: --confidence: must be a number in \(0, 1\); got 1\n/],
      [["--confidence", "x"], /^error: --confidence: expected a number, got 'x'\n/],
      [["--what-if-rate", "2"], /^error: --what-if-rate: must be a sample rate in \(0, 1\]/],
    ] as const
  ) {
    const r = await trace("top", SINGLE, ...args);
    assert.equal(r.code, 2, args.join(" "));
    assert.match(r.stderr, message);
  }
});

Deno.test("trace diff of two traces of one program lists no significant change, and finds a real one", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "error_bars_" });
  try {
    const cell = { rate: 1e-3, words: BLOCKS.small };
    Deno.writeFileSync(`${dir}/a.ctf`, runTrace(cell, 0, 10));
    Deno.writeFileSync(`${dir}/b.ctf`, runTrace(cell, 1, 10));
    Deno.writeFileSync(`${dir}/grown.ctf`, runTrace(cell, 1, 10, 6));
    const filters = ["--exclude", "Cov.prefix"]; // the runs' prefixes differ by design
    const same = await trace("diff", `${dir}/a.ctf`, `${dir}/b.ctf`, ...filters);
    assert.equal(same.code, 0, same.stderr);
    const lines = same.stdout.trimEnd().split("\n");
    assert.match(lines[2], /B - A: \d+ changed, 0 significant \(listed\)/);
    assert.match(lines.at(-1)!, /\(total\)$/);
    assert.equal(lines.length, 5 + 1, "no row but the total"); // header, columns, total
    const all = JSON.parse(
      (await trace("diff", `${dir}/a.ctf`, `${dir}/b.ctf`, "--all", "--json", ...filters)).stdout,
    );
    assert.equal(all.significantCount, 0);
    assert.equal(all.show, "all");
    assert.ok(all.rows.length >= 20, `${all.rows.length} rows with --all`);
    for (const r of all.rows) {
      assert.ok(r.allocDeltaLow <= r.allocDelta && r.allocDelta <= r.allocDeltaHigh, r.key);
      assert.equal(r.significant, false);
    }
    // Six times the blocks at one site (8 expected samples, then 48): that site, and only it,
    // is significant — among some 60 tests, Benjamini-Hochberg needs q <= 0.05.
    const grown = JSON.parse(
      (await trace("diff", `${dir}/a.ctf`, `${dir}/grown.ctf`, "--json", ...filters)).stdout,
    );
    assert.deepEqual(grown.rows.map((r: { key: string }) => r.key), ["Cov.kept_0@cov.ml:1:0-10"]);
    assert.ok(grown.rows[0].allocDeltaLow > 0 && grown.rows[0].allocQValue <= 0.05);
    assert.ok(grown.rows[0].liveDeltaLow > 0);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("trace diff of the real trace and memtrace's subsample of it: nothing significant", async () => {
  // The subsample keeps each sample with probability 1/10: the same allocations, estimated
  // again with fewer samples. (Its samples are not independent of the trace's; the test, which
  // assumes they are, only overstates the noise.)
  const d = await trace("diff", SINGLE, SINGLE_SUB);
  assert.equal(d.code, 0, d.stderr);
  assert.match(d.stdout.split("\n")[2], /B - A: 32 changed, 0 significant \(listed\)/);
  const all = JSON.parse((await trace("diff", SINGLE, SINGLE_SUB, "--json", "--all")).stdout);
  assert.equal(all.rows.length, 20);
  assert.ok(all.rows.every((r: { significant: boolean }) => !r.significant));
  // Per second: the durations differ not at all (same run); the same conclusion.
  const ps = JSON.parse((await trace("diff", SINGLE, SINGLE_SUB, "--json", "--per-second")).stdout);
  assert.equal(ps.per, "second");
  assert.equal(ps.significantCount, 0);
});

Deno.test("exports and trace info carry the totals' intervals", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "error_bars_export_" });
  try {
    const p = await trace("export", SINGLE, "--format", "pprof", "-o", `${dir}/p.pb.gz`);
    assert.equal(p.code, 0, p.stderr);
    const profile = Profile.decode(new Uint8Array(gunzipSync(Deno.readFileSync(`${dir}/p.pb.gz`))));
    const comments = profile.comment.map((i) => profile.stringTable.strings[Number(i)]);
    assert.ok(
      comments.includes("alloc_space total: 95% interval 295.3 MiB..314.2 MiB"),
      comments.join("|"),
    );
    assert.ok(comments.some((c) => /^inuse_space total: 95% interval 0 B\.\./.test(c)));
    assert.ok(comments.some((c) => /^intervals: exact binomial/.test(c)));
    const s = JSON.parse(
      (await trace("export", SINGLE, "--format", "speedscope", "--confidence", "0.99")).stdout,
    );
    assert.equal(
      s.profiles[0].name,
      "ocaml-examples/wl_single: allocated bytes (99% interval 292.4 MiB..317.3 MiB)",
    );
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
  const info = JSON.parse((await trace("info", "--json", SINGLE)).stdout);
  const [lo, hi] = wordsInterval(info.samples, 1e-4, 0.95);
  assert.deepEqual(
    [info.allocated_bytes, info.allocated_bytes_low, info.allocated_bytes_high, info.confidence],
    [info.samples * 80_000, lo * 8, hi * 8, 0.95],
  );
});

Deno.test("trace subsample says how the top sites' intervals and ranks change", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "error_bars_sub_" });
  try {
    const out = `${dir}/sub.ctf`;
    const r = await trace("subsample", SINGLE, out, "10");
    assert.equal(r.code, 0, r.stderr);
    // The output is still memtrace's, byte for byte.
    assert.deepEqual(Deno.readFileSync(out), Deno.readFileSync(SINGLE_SUB));
    const lines = r.stderr.trimEnd().split("\n");
    assert.match(lines[0], /^kept 393 of 3939 allocations/);
    assert.match(lines[1], /^top 10 sites before \(rate 0\.0001\) and after \(rate 0\.00001\)/);
    assert.match(
      lines[2],
      /^rank +after +bytes +interval +bytes after +interval after +width x +site$/,
    );
    assert.equal(lines.length, 3 + 10);
    // Every figure "after" is what trace top says of the output.
    const before = analyzeTrace(Reader.open(SINGLE));
    const after = analyzeTrace(Reader.open(out));
    const topB = topOf(before.data, before.selector, { limit: 10 });
    const topA = topOf(after.data, after.selector, { limit: 0 });
    let swapped = 0;
    for (const [i, line] of lines.slice(3).entries()) {
      const row = topB.rows[i];
      const j = topA.rows.findIndex((x) => x.key === row.key);
      const a = topA.rows[j];
      const cells = line.trim().split(/ {2,}/);
      assert.equal(cells[0], String(i + 1));
      assert.equal(cells[1], String(j + 1), row.key);
      assert.equal(cells[4], formatBytes(a.bytes), row.key);
      assert.equal(cells[5], `${formatBytes(a.bytesLow!)}..${formatBytes(a.bytesHigh!)}`);
      assert.ok(Number(cells[6]) > 1, `${row.key}: wider after`);
      assert.equal(cells[7], row.key);
      if (j !== i) swapped++;
    }
    assert.ok(swapped > 0, "close ranks swap at a tenth of the samples");
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
