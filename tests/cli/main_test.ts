// The one `memprof-lab` command (cli/main.ts), run as a subprocess with the permissions its
// `deno install --global` line gives: the help on every level, the exit statuses (0 ok,
// 1 failure, 2 usage) and paths resolved from the caller's directory.
import assert from "node:assert/strict";
import { join } from "node:path";
import { COMMANDS } from "../../cli/main.ts";
import { memprofLab, root } from "./helpers.ts";

const NAMES = ["scenario", "diff", "trace", "events", "sampler", "ocaml"];

Deno.test("memprof-lab --help lists every command and exits 0", async () => {
  assert.deepEqual(Object.keys(COMMANDS), NAMES);
  for (const flag of ["--help", "-h", "help"]) {
    const r = await memprofLab([flag]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, "");
    assert.match(r.stdout, /^Usage: memprof-lab <command>/);
    for (const name of NAMES) assert.match(r.stdout, new RegExp(`^  ${name} +\\S`, "m"), name);
    assert.match(r.stdout, /0 ok, 1 failure .*, 2 wrong command line/s);
  }
});

Deno.test("memprof-lab <command> --help prints that command's usage and exits 0", async () => {
  for (const name of NAMES) {
    const r = await memprofLab([name, "--help"]);
    assert.equal(r.code, 0, `${name}: ${r.stderr}`);
    assert.equal(r.stderr, "", name);
    assert.match(r.stdout, new RegExp(`^Usage: memprof-lab ${name}\\b`), name);
  }
});

Deno.test("memprof-lab exits 2 for an unknown or missing command, with usage on stderr", async () => {
  const unknown = await memprofLab(["frob"]);
  assert.equal(unknown.code, 2);
  assert.equal(unknown.stdout, "");
  assert.match(unknown.stderr, /^error: unknown command 'frob'\ncommands: scenario, diff, /);
  const none = await memprofLab([]);
  assert.equal(none.code, 2);
  assert.equal(none.stdout, "");
  assert.match(none.stderr, /^error: missing command\nUsage: memprof-lab <command>/);
});

Deno.test("memprof-lab trace, events, sampler and ocaml without arguments exit 2 with their usage on stderr", async () => {
  for (const name of ["trace", "events", "sampler", "ocaml"]) {
    const r = await memprofLab([name]);
    assert.equal(r.code, 2, `${name}: ${r.stderr}`);
    assert.equal(r.stdout, "", name);
    assert.match(r.stderr, new RegExp(`^Usage: memprof-lab ${name}\\b`, "m"), name);
  }
});

Deno.test("every memprof-lab command refuses a mistyped option in one line, with a suggestion", async () => {
  // [arguments, the option typed, the option suggested, the help pointed to]
  const cases: [string[], string, string, string][] = [
    [["scenario", "--chek"], "--chek", "--check", "scenario"],
    [["diff", "--jsn"], "--jsn", "--json", "diff"],
    [["trace", "top", "in.ctf", "--limt", "3"], "--limt", "--limit", "trace top"],
    [
      ["trace", "dump", "in.ctf", "--no-backtrace"],
      "--no-backtrace",
      "--no-backtraces",
      "trace dump",
    ],
    [["trace", "hotspots", "in.ctf", "--hlep"], "--hlep", "--help", "trace hotspots"],
    [["events", "stats", "r.events", "--jsno"], "--jsno", "--json", "events stats"],
    [["sampler", "--rat", "0.1"], "--rat", "--rate", "sampler"],
    [["ocaml", "status", "--prefx", "p"], "--prefx", "--prefix", "ocaml"],
  ];
  const ran = await Promise.all(cases.map(([args]) => memprofLab(args)));
  for (const [k, [args, typed, meant, command]] of cases.entries()) {
    const r = ran[k];
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.equal(r.stdout, "", args.join(" "));
    assert.equal(
      r.stderr,
      `error: unknown option ${typed} (did you mean ${meant}?)\n` +
        `Run 'memprof-lab ${command} --help' for usage.\n`,
    );
  }
  // Nothing close: no suggestion, the same two lines.
  for (const name of NAMES) {
    const args = name === "trace" || name === "events"
      ? [name, "dump", "--frob"]
      : [name, "--frob"];
    const r = await memprofLab(args);
    assert.equal(r.code, 2, `${name}: ${r.stderr}`);
    assert.equal(r.stdout, "", name);
    assert.match(
      r.stderr,
      /^error: unknown option --frob\nRun 'memprof-lab [a-z ]+ --help' for usage\.\n$/,
    );
  }
});

Deno.test("memprof-lab commands exit 1 for input they cannot use", async () => {
  const dir = await Deno.makeTempDir({ prefix: "memprof-lab-cli-" });
  try {
    await Deno.writeTextFile(join(dir, "bad.ts"), "export default 42;\n");
    await Deno.writeTextFile(join(dir, "bad.ctf"), "not a trace");
    const cases: [string, string[], RegExp][] = [
      ["trace", ["trace", "info", "bad.ctf"], /^error: .*bad\.ctf/],
      ["trace", ["trace", "info", "missing.ctf"], /^error: .*missing\.ctf/],
      ["events", ["events", "dump", "missing.events"], /^error: no such file: missing\.events/],
      // A scenario module that cannot be used is a failure for scenario and diff alike.
      ["scenario", ["scenario", "./bad.ts"], /^error: \.\/bad\.ts has no default export/],
      ["diff", ["diff", "--no-known", "./bad.ts"], /^error: \.\/bad\.ts has no default export/],
      ["ocaml", ["ocaml", "status", "--ocamlopt", "./no-such-ocamlopt"], /no-such-ocamlopt/],
    ];
    for (const [name, args, want] of cases) {
      const r = await memprofLab(args, dir);
      assert.equal(r.code, 1, `${args.join(" ")}: ${r.stderr}`);
      assert.match(r.stderr, want, name);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("memprof-lab resolves relative paths from the caller's directory", async () => {
  const dir = await Deno.makeTempDir({ prefix: "memprof-lab-cli-" });
  try {
    await Deno.copyFile(
      join(root, "tests/fixtures/memtrace/single_1e-4.ctf"),
      join(dir, "in.ctf"),
    );
    await Deno.copyFile(
      join(root, "tests/fixtures/runtime_events/d8/18440.events"),
      join(dir, "ring.events"),
    );
    // Reading: the trace in the temporary folder, not in the repository.
    const info = await memprofLab(["trace", "info", "--json", "in.ctf"], dir);
    assert.equal(info.code, 0, info.stderr);
    assert.equal(JSON.parse(info.stdout).size_bytes, (await Deno.stat(join(dir, "in.ctf"))).size);
    // Writing: the output lands beside the input.
    const strip = await memprofLab(["trace", "strip-names", "in.ctf", "out.ctf"], dir);
    assert.equal(strip.code, 0, strip.stderr);
    assert.ok((await Deno.stat(join(dir, "out.ctf"))).size > 0);
    const stripped = await memprofLab(["trace", "info", "--json", "out.ctf"], dir);
    assert.equal(JSON.parse(stripped.stdout).executable_name, "<anonymous>");
    // A runtime_events ring, by a relative path.
    const ring = await memprofLab(["events", "stats", "--json", "ring.events"], dir);
    assert.equal(ring.code, 0, ring.stderr);
    assert.doesNotThrow(() => JSON.parse(ring.stdout));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("deno task trace resolves relative paths from the caller's directory", async () => {
  const dir = await Deno.makeTempDir({ prefix: "memprof-lab-cli-" });
  try {
    await Deno.copyFile(
      join(root, "tests/fixtures/memtrace/single_1e-4.ctf"),
      join(dir, "in.ctf"),
    );
    // Without the INIT_CWD of a `deno task` this test may run under (deno task keeps one it
    // inherits), so that the task sees the caller's directory as its own.
    const env: Record<string, string> = { NO_COLOR: "1" };
    for (const name of ["PATH", "HOME", "DENO_DIR", "XDG_CACHE_HOME"]) {
      const v = Deno.env.get(name);
      if (v !== undefined) env[name] = v;
    }
    const config = join(root, "deno.json");
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["task", "-q", "--config", config, "trace", "info", "--json", "in.ctf"],
      cwd: dir,
      clearEnv: true,
      env,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(120_000),
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, stderr);
    const json = JSON.parse(new TextDecoder().decode(out.stdout));
    assert.equal(json.size_bytes, (await Deno.stat(join(dir, "in.ctf"))).size);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
