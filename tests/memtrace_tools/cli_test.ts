// `deno task trace flamegraph|hotspots|identify|subsample|strip-names`, run as a user runs them:
// outputs equal memtrace's, exit status 0; usage mistakes exit 2; bad input exits 1 with one
// error line, leaving no partial output file.
import assert from "node:assert/strict";
import { bytes, EXTRA, REFS, text, TRACES } from "./_fixtures.ts";

const ROOT = new URL("../../", import.meta.url);
const CLI = new URL("cli/trace.ts", ROOT).pathname;
const CONFIG = new URL("deno.json", ROOT).pathname;
const decoder = new TextDecoder();

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

/** `deno run cli/trace.ts ARGS` in folder `cwd`. */
function trace(args: string[], cwd: URL = TRACES): Result {
  const out = new Deno.Command(Deno.execPath(), {
    args: ["run", "--config", CONFIG, "--allow-read", "--allow-write", CLI, ...args],
    cwd: cwd.pathname,
    stdout: "piped",
    stderr: "piped",
  }).outputSync();
  return {
    code: out.code,
    stdout: decoder.decode(out.stdout),
    stderr: decoder.decode(out.stderr),
  };
}

function withTempDir(f: (dir: string) => void): void {
  const dir = Deno.makeTempDirSync({ prefix: "memtrace_tools_cli_" });
  try {
    f(dir);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

for (const tool of ["flamegraph", "hotspots", "identify"]) {
  Deno.test(`trace ${tool} prints memtrace's output and exits 0`, () => {
    // Run from the traces' folder with the bare name, as the references were made.
    const r = trace([tool, "ocamlopt.ctf"]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, "");
    assert.ok(r.stdout === text(REFS, `ocamlopt.${tool}.txt`), `${tool} output differs`);
  });
}

Deno.test("trace subsample and strip-names write memtrace's traces and exit 0", () => {
  withTempDir((dir) => {
    const sub = `${dir}/s.ctf`, strip = `${dir}/n.ctf`, win = `${dir}/w.ctf`;
    let r = trace(["subsample", "multi_mdtrace_3e-4.renumbered.ctf", sub, "10"]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "");
    assert.match(r.stderr, /^kept \d+ of \d+ allocations/);
    assert.ok(
      sameBytes(Deno.readFileSync(sub), bytes(REFS, "multi_mdtrace_3e-4.renumbered.subsample.ctf")),
    );
    r = trace(["strip-names", "multi_mdtrace_3e-4.renumbered.ctf", strip]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(
      sameBytes(
        Deno.readFileSync(strip),
        bytes(REFS, "multi_mdtrace_3e-4.renumbered.strip_names.ctf"),
      ),
    );
    r = trace(["subsample", "gen_multi.ctf", win, "3", "10", "40"], EXTRA);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(sameBytes(Deno.readFileSync(win), bytes(EXTRA, "gen_multi.subsample_3_10_40.ctf")));
    // No temporary file is left beside the outputs.
    assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name).sort(), [
      "n.ctf",
      "s.ctf",
      "w.ctf",
    ]);
  });
});

Deno.test("trace subsample takes a negative window start", () => {
  withTempDir((dir) => {
    const r = trace(["subsample", "edge_writer_api.ctf", `${dir}/o.ctf`, "1", "-5", "2"]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /^kept 2 of 5 allocations/);
  });
});

Deno.test("trace subsample exits 2 on a bad FACTOR or window, writing nothing", () => {
  withTempDir((dir) => {
    const out = `${dir}/o.ctf`;
    for (
      const [args, message] of [
        [["10x"], /FACTOR must be an integer from 1 to 1073741823, got '10x'/],
        [["0"], /FACTOR must be an integer/],
        [["1073741824"], /FACTOR must be an integer/],
        [["2", "5", "3"], /the window starts after it ends \(START_S 5 > END_S 3\)/],
        [["2", "1.5", "3"], /START_S must be an integer/],
        [["2", "5"], /takes 3 or 5 arguments, got 4/],
      ] as const
    ) {
      const r = trace(["subsample", "single_1e-4.ctf", out, ...args]);
      assert.equal(r.code, 2, `${args}: ${r.stderr}`);
      assert.match(r.stderr, message);
      assert.match(r.stderr, /\nRun 'memprof-lab trace subsample --help' for usage\.\n$/);
    }
    assert.deepEqual([...Deno.readDirSync(dir)], []);
  });
});

Deno.test("the tools exit 1 with one error line on a missing file", () => {
  for (const args of [["flamegraph", "nope.ctf"], ["strip-names", "nope.ctf", "/tmp/x.ctf"]]) {
    const r = trace(args);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /^error: .*nope\.ctf/);
    assert.equal(r.stderr.trim().split("\n").length, 1);
    assert.equal(r.stdout, "");
  }
});

Deno.test("the tools exit 1 with a malformed-trace error on a truncated trace", () => {
  withTempDir((dir) => {
    const cut = `${dir}/cut.ctf`;
    Deno.writeFileSync(cut, bytes(TRACES, "single_1e-4.ctf").slice(0, 250));
    const r = trace(["identify", cut]);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, "");
    assert.equal(
      r.stderr,
      `error: malformed trace: Buffer underflow (at byte offset 246 of ${cut})\n`,
    );
    const s = trace(["subsample", cut, `${dir}/o.ctf`, "2"]);
    assert.equal(s.code, 1);
    assert.match(s.stderr, /^error: malformed trace: /);
    assert.ok(!Deno.readDirSync(dir).some((e) => e.name.startsWith("o.ctf")), "output left");
  });
});

Deno.test("the tools exit 1 with a typed error where memtrace's crash", () => {
  const h = trace(["hotspots", "single_1e-4.strip_names.ctf"], REFS);
  assert.equal(h.code, 1);
  assert.equal(h.stdout, "");
  assert.match(
    h.stderr,
    /^error: hotspots: allocation 0 has an empty backtrace .*single_1e-4\.strip_names\.ctf\)\n$/,
  );
  const i = trace(["identify", "edge_promote_major.ctf"], EXTRA);
  assert.equal(i.code, 1);
  assert.match(i.stderr, /^error: identify: object 0 is promoted at 20 µs/);
  const f = trace(["flamegraph", "edge_collect_twice.ctf"], EXTRA);
  assert.equal(f.code, 0, f.stderr);
  assert.equal(f.stdout, text(EXTRA, "edge_collect_once.flamegraph.txt"));
  withTempDir((dir) => {
    const s = trace(["strip-names", "edge_domain1.ctf", `${dir}/o.ctf`], EXTRA);
    assert.equal(s.code, 1);
    assert.match(s.stderr, /^error: strip-names: allocation 0 of domain 1 /);
    assert.deepEqual([...Deno.readDirSync(dir)], [], "partial output left");
  });
});

Deno.test("the tools print their help with exit 0 and refuse unknown options with exit 2", () => {
  for (const tool of ["flamegraph", "hotspots", "identify", "subsample", "strip-names"]) {
    const h = trace([tool, "--help"]);
    assert.equal(h.code, 0);
    assert.match(h.stdout, new RegExp(`^Usage: memprof-lab trace ${tool} `));
  }
  const u = trace(["hotspots", "--json", "ocamlopt.ctf"]);
  assert.equal(u.code, 2);
  assert.equal(
    u.stderr,
    "error: unknown option --json\nRun 'memprof-lab trace hotspots --help' for usage.\n",
  );
  const n = trace(["identify"]);
  assert.equal(n.code, 2);
  assert.match(n.stderr, /takes 1 argument, got 0/);
  const m = trace(["--help"]);
  assert.match(m.stdout, /strip-names IN OUT/);
});
