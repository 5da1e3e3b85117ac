// `deno task trace top|diff|export|report`, run as the task runs them (a child deno process).
import assert from "node:assert/strict";
import { trace } from "./_cli.ts";
import { gunzipSync } from "node:zlib";
import { Profile } from "pprof-format";
import { Reader } from "../../lib/memtrace/mod.ts";
import { analyzeTrace, topOf } from "../../lib/trace_analysis/mod.ts";

const FIXTURES = new URL("../fixtures/memtrace/", import.meta.url).pathname;
const SINGLE = FIXTURES + "single_1e-4.ctf";
const MULTI = FIXTURES + "multi_mdtrace_3e-4.renumbered.ctf";

Deno.test("trace top prints the table and, with --json, exactly what topOf returns", async () => {
  const text = await trace("top", SINGLE, "--limit", "5");
  assert.equal(text.code, 0, text.stderr);
  const lines = text.stdout.trimEnd().split("\n");
  assert.equal(lines.length, 4 + 5 + 1);
  assert.match(
    lines[3],
    /^samples +bytes +bytesLow\.\.bytesHigh +liveEndBytes +promotedShare +site$/,
  );
  // 968 samples at 1e-4 of 8-byte words: the exact 95 % interval of the words is
  // [9,079,758, 10,309,496] (as Garwood's Poisson interval, 907.98..1030.95, over 1e-4).
  assert.match(
    lines[4],
    /^ +968 +73\.9 MiB +69\.3 MiB\.\.78\.7 MiB +0 B +2\.0% +Stdlib__Map\.Make\.bal@map\.ml:119:12-67$/,
  );
  for (
    const args of [
      ["--by", "function", "--live-at", "peak", "--limit", "7"],
      ["--by", "stack", "--from", "0.05", "--to", "0.2", "--source", "minor"],
      ["--live-at", "0.1", "--size", "..16", "--exclude", "Map"],
    ]
  ) {
    const json = await trace("top", MULTI, "--json", ...args);
    assert.equal(json.code, 0, json.stderr);
    const got = JSON.parse(json.stdout);
    const live = args[args.indexOf("--live-at") + 1];
    const { data, selector } = analyzeTrace(Reader.open(MULTI), {
      liveAt: live === "peak" ? "peak" : live === "0.1" ? 100_000 : undefined,
      fromUs: args.includes("--from") ? 50_000 : undefined,
      toUs: args.includes("--to") ? 200_000 : undefined,
      sources: args.includes("--source") ? ["minor"] : undefined,
      sizeMax: args.includes("--size") ? 16 : undefined,
      exclude: args.includes("--exclude") ? "Map" : undefined,
    });
    const by = args.includes("--by") ? args[args.indexOf("--by") + 1] as "function" : "site";
    const limit = args.includes("--limit") ? Number(args[args.indexOf("--limit") + 1]) : 20;
    assert.deepEqual(got, JSON.parse(JSON.stringify(topOf(data, selector, { by, limit }))));
    assert.ok(got.rows.length > 0, args.join(" "));
  }
});

Deno.test("trace diff compares two traces; a trace with itself shows no change", async () => {
  const same = await trace("diff", SINGLE, SINGLE, "--json");
  assert.equal(same.code, 0, same.stderr);
  assert.equal(JSON.parse(same.stdout).rowCount, 0);
  const d = await trace(
    "diff",
    SINGLE,
    MULTI,
    "--by",
    "function",
    "--sort",
    "live",
    "--limit",
    "4",
  );
  assert.equal(d.code, 0, d.stderr);
  const lines = d.stdout.trimEnd().split("\n");
  assert.match(lines[0], /^# A: .*single_1e-4\.ctf \(ocaml-examples\/wl_single, 8073 events/);
  assert.match(
    lines[2],
    /by function, B - A: \d+ changed, \d+ significant \(listed\), top 4 shown, sorted by \|change of live@end\|; live bytes are live@end/,
  );
  assert.match(lines[3], /^# low\.\.high: 95% confidence interval/);
  assert.match(
    lines[4],
    /^ *allocBytesA +allocBytesB +allocDelta +allocDeltaLow\.\.allocDeltaHigh +liveBytesA +liveBytesB +liveDelta +liveDeltaLow\.\.liveDeltaHigh +q +function$/,
  );
  assert.equal(lines.length, 5 + 4 + 1);
  assert.match(lines.at(-1)!, /\(total\)$/);
});

Deno.test("trace export writes pprof, speedscope and folded stacks", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "trace_export_" });
  try {
    const p = await trace("export", SINGLE, "--format", "pprof", "-o", `${dir}/heap.pb.gz`);
    assert.equal(p.code, 0, p.stderr);
    assert.match(p.stderr, /^wrote .*heap\.pb\.gz \(pprof, \d+ bytes\)/);
    const profile = Profile.decode(
      new Uint8Array(gunzipSync(Deno.readFileSync(`${dir}/heap.pb.gz`))),
    );
    assert.equal(profile.sampleType.length, 4);
    assert.deepEqual(Deno.readDirSync(dir).toArray().map((e) => e.name), ["heap.pb.gz"]);
    const s = await trace("export", SINGLE, "--format", "speedscope");
    assert.equal(s.code, 0, s.stderr);
    const ss = JSON.parse(s.stdout);
    assert.equal(ss.$schema, "https://www.speedscope.app/file-format-schema.json");
    const f = await trace("export", SINGLE, "--format", "folded", "--live-at", "peak");
    assert.equal(f.code, 0, f.stderr);
    for (const line of f.stdout.trimEnd().split("\n")) assert.match(line, /^\S.* \d+$/);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("trace report writes one HTML file", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "trace_report_" });
  try {
    const r = await trace("report", MULTI, "-o", `${dir}/r.html`, "--title", "multi");
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /^wrote .*r\.html \(\d+ bytes, 21911 events, \d+ ms\)/);
    const html = Deno.readTextFileSync(`${dir}/r.html`);
    assert.match(html, /<title>memtrace report: multi<\/title>/);
    assert.deepEqual(Deno.readDirSync(dir).toArray().map((e) => e.name), ["r.html"]);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("bad input: a malformed or missing trace exits 1, a bad option 2, each with one message", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "trace_bad_" });
  try {
    const bytes = Deno.readFileSync(SINGLE);
    for (let i = 5000; i < 5008; i++) bytes[i] ^= 0xff;
    Deno.writeFileSync(`${dir}/bad.ctf`, bytes);
    Deno.writeFileSync(`${dir}/text.ctf`, new TextEncoder().encode("not a trace"));
    for (
      const cmd of [["top"], ["export", "--format", "folded"], ["report", "-o", `${dir}/x.html`]]
    ) {
      const bad = await trace(cmd[0], `${dir}/bad.ctf`, ...cmd.slice(1));
      assert.equal(bad.code, 1, cmd[0]);
      assert.match(
        bad.stderr,
        /^error: malformed trace: time in packet bounds \(at byte offset 4998 of .*bad\.ctf\)\n$/,
      );
    }
    assert.equal(Deno.readDirSync(dir).toArray().length, 2, "no output left behind");
    const text = await trace("diff", SINGLE, `${dir}/text.ctf`);
    assert.equal(text.code, 1);
    assert.match(text.stderr, /^error: malformed trace: .* of .*text\.ctf\)\n$/);
    const missing = await trace("top", `${dir}/none.ctf`);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /^error: No such file or directory/);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
  for (
    const [args, message] of [
      [["top", SINGLE, "--size", "5..3"], /^error: --size: MIN 5 is above MAX 3\n/],
      [["top", SINGLE, "--by", "line"], /^error: --by must be site, function, stack; got 'line'\n/],
      [["top", SINGLE, "--from", "soon"], /^error: --from: expected seconds since the trace start/],
      [["top", SINGLE, "--live-at=-1"], /^error: --live-at: expected seconds/],
      [["top", SINGLE, "--source", "heap"], /^error: --source: expected minor, major or external/],
      [["top", SINGLE, "--limit", "x"], /^error: --limit must be an integer ≥ 0, got 'x'\n/],
      [
        ["top", SINGLE, "--from", "2", "--to", "1"],
        /^error: --to: the window \[2000000, 1000000\) µs is empty/,
      ],
      [["top"], /^error: 'trace top' takes one file, got 0\n/],
      [["diff", SINGLE], /^error: 'trace diff' takes 2 files, got 1\n/],
      [["export", SINGLE], /^error: --format is required/],
      [["export", SINGLE, "--format", "svg"], /^error: --format must be pprof, speedscope, folded/],
      [
        ["report", SINGLE, "--frob"],
        /^error: unknown option --frob\nRun 'memprof-lab trace report --help' for usage\.\n$/,
      ],
    ] as const
  ) {
    const r = await trace(...args);
    assert.equal(r.code, 2, args.join(" "));
    assert.match(r.stderr, message, args.join(" "));
    assert.equal(r.stdout, "");
  }
});

Deno.test("every analysis command has --help; the main help lists them", async () => {
  for (const cmd of ["top", "diff", "export", "report"]) {
    const h = await trace(cmd, "--help");
    assert.equal(h.code, 0);
    assert.match(h.stdout, new RegExp(`^Usage: memprof-lab trace ${cmd} `));
  }
  const main = await trace("--help");
  for (const cmd of ["top FILE", "diff A B", "export FILE", "report FILE"]) {
    assert.match(main.stdout, new RegExp(`^  ${cmd} `, "m"));
  }
});

Deno.test("a filter that selects nothing says why, with what the trace holds, and exits 0", async () => {
  const holds1 = "the trace holds 3993 samples, of domain 0, from 0 to 0.251825 s";
  const holds6 = "the trace holds 11367 samples, of domains 0, 1, 2, 3, 4, 5, from 0 to 0.632385 s";
  for (
    const [args, note] of [
      [
        ["top", SINGLE, "--live-at", "99"],
        `no sample selected: --live-at 99 s is after the trace's end; ${holds1}`,
      ],
      [
        ["top", MULTI, "--domain", "7"],
        `no sample selected: --domain 7: no such domain in the trace; ${holds6}`,
      ],
      [
        ["top", SINGLE, "--source", "external"],
        "no sample selected: --source external: the trace has no such allocation (only minor, " +
        `major); ${holds1}`,
      ],
      [
        ["top", SINGLE, "--function", "no_such_function"],
        `no sample selected: no sampled allocation matches the filters; ${holds1}`,
      ],
    ] as const
  ) {
    const r = await trace(...args);
    assert.equal(r.code, 0, r.stderr);
    // In the table, after its header, and on stderr.
    assert.equal(r.stdout.split("\n")[2], `# ${note}`, args.join(" "));
    assert.equal(r.stderr, `warning: ${args[1]}: ${note}\n`, args.join(" "));
    // JSON output stays the result alone; the warning still goes to stderr.
    const json = await trace(...args, "--json");
    assert.equal(json.code, 0);
    assert.equal(JSON.parse(json.stdout).totals.samples, 0);
    assert.equal(json.stderr, r.stderr);
  }
  // diff: per trace; export: on stderr.
  const d = await trace("diff", SINGLE, MULTI, "--domain", "3");
  assert.equal(d.code, 0, d.stderr);
  assert.match(d.stdout, /^# A: no sample selected: --domain 3: no such domain in the trace; /m);
  assert.doesNotMatch(d.stdout, /^# B: no sample/m);
  assert.match(d.stderr, /^warning: .*single_1e-4\.ctf: no sample selected: --domain 3: /);
  const e = await trace("export", SINGLE, "--format", "folded", "--from", "5");
  assert.equal(e.code, 0, e.stderr);
  assert.equal(e.stdout, "");
  assert.match(e.stderr, /^warning: .*: no sample selected: --from 5 s is after the trace's end; /);
  // A selection with samples has no note.
  const some = await trace("top", SINGLE, "--domain", "0", "--limit", "1");
  assert.equal(some.stderr, "");
  assert.doesNotMatch(some.stdout, /no sample selected/);
});
