// The `ocaml` command, run in-process with its output, environment and build runner replaced.
import assert from "node:assert/strict";
import { join } from "node:path";
import { run, USAGE } from "../../cli/ocaml.ts";
import {
  fakeOcamlopt,
  fakeRunner,
  fakeToolsDir,
  ocamlCliIO,
  script,
  testEnv,
  withTemp,
} from "./helpers.ts";

Deno.test("ocaml --help prints the usage and exits 0", async () => {
  for (const args of [["--help"], ["-h"], ["setup", "--help"], ["status", "-h"]]) {
    const io = ocamlCliIO({});
    assert.equal(await run(args, io), 0, args.join(" "));
    assert.equal(io.out, USAGE);
    assert.equal(io.err, "");
  }
  assert.match(USAGE, /^Usage: memprof-lab ocaml <command>/);
  assert.match(USAGE, /MEMPROF_LAB_OCAML_PREFIX/);
});

Deno.test("ocaml exits 2 on usage errors", async () => {
  const cases: [string[], RegExp][] = [
    [["build"], /unknown command 'build'/],
    [["status", "--frobnicate"], /frobnicate/],
    [["status", "extra"], /unexpected argument 'extra'/],
    [["setup", "--ocamlopt", "a", "--ocamlfind", "b"], /either --ocamlopt or --ocamlfind/],
    [["setup", "--jobs", "0"], /--jobs must be an integer ≥ 1, got '0'/],
    [["setup", "--json"], /--json does not apply to setup/],
    [["status", "--build"], /--build does not apply to status/],
    [["setup", "--prefix"], /--prefix/],
  ];
  for (const [args, message] of cases) {
    const io = ocamlCliIO({});
    assert.equal(await run(args, io), 2, args.join(" "));
    assert.match(io.err, message);
    assert.match(io.err, /^error: .*\nRun 'memprof-lab ocaml --help' for usage\.\n$/);
    assert.equal(io.out, "");
  } // No command at all: the usage itself, on stderr.
  const none = ocamlCliIO({});
  assert.equal(await run([], none), 2);
  assert.equal(none.err, `error: missing command (setup, status or exec)\n${USAGE}`);
  assert.equal(none.out, "");
});

Deno.test("ocaml setup builds through the runner and prints stages and the compiler", async () => {
  await withTemp(async (dir) => {
    const tools = await fakeToolsDir(join(dir, "tools"));
    const { runner, calls } = fakeRunner();
    const prefix = join(dir, "p");
    const io = ocamlCliIO(testEnv(dir, [tools]), runner);
    assert.equal(await run(["setup", "--prefix", prefix, "--jobs", "4"], io), 0, io.err);
    assert.deepEqual(calls[3].slice(1), ["-j4"]);
    assert.match(io.out, /\] configure: \.\/configure --prefix=/);
    assert.ok(io.out.endsWith(`ocamlopt: ${join(prefix, "bin", "ocamlopt")} (OCaml 5.3.0)\n`));
    // Again: instant.
    const again = ocamlCliIO(testEnv(dir, [tools]), runner);
    assert.equal(await run(["setup", "--prefix", prefix], again), 0);
    assert.match(again.out, /^OCaml 5\.3\.0 already built at /);
    assert.equal(calls.length, 5);
  });
});

Deno.test("ocaml setup exits 1 with 'error:' and the log when the build fails", async () => {
  await withTemp(async (dir) => {
    const tools = await fakeToolsDir(join(dir, "tools"));
    const prefix = join(dir, "p");
    const io = ocamlCliIO(testEnv(dir, [tools]), fakeRunner({ failAt: "install" }).runner);
    assert.equal(await run(["setup", "--prefix", prefix], io), 1);
    assert.match(io.err, /^error: OCaml 5\.3\.0 build failed at install/);
    assert.ok(io.err.includes(`${prefix}.build.log`));
  });
});

Deno.test("ocaml setup exits 1 naming apt-get install when gcc and make are missing", async () => {
  await withTemp(async (dir) => {
    const tools = await fakeToolsDir(join(dir, "tools"), ["npm", "tar"]);
    const io = ocamlCliIO(testEnv(dir, [tools]), fakeRunner().runner);
    assert.equal(await run(["setup"], io), 1);
    assert.match(io.err, /^error: .*apt-get install gcc make/);
  });
});

Deno.test("ocaml setup --ocamlopt refuses OCaml 5.2.1 with exit 1", async () => {
  await withTemp(async (dir) => {
    const old = await fakeOcamlopt(join(dir, "old", "ocamlopt"), "5.2.1");
    const io = ocamlCliIO(testEnv(dir, []));
    assert.equal(await run(["setup", "--ocamlopt", old], io), 1);
    assert.match(
      io.err,
      /^error: cannot use .* is OCaml 5\.2\.1, but memprof-lab needs OCaml 5\.3\.x/,
    );
  });
});

Deno.test("ocaml status says what is there and which toolchain would be used", async () => {
  await withTemp(async (dir) => {
    const path = join(dir, "path");
    const mine = await fakeOcamlopt(join(path, "ocamlopt"), "5.3.1");
    const io = ocamlCliIO(testEnv(dir, [path]));
    assert.equal(await run(["status"], io), 0);
    const prefix = join(dir, "cache", "memprof-lab", "ocaml-5.3.0");
    assert.equal(
      io.out,
      [
        "required:     OCaml 5.3.x (memprof-lab compiles real programs with it)",
        "pinned:       OCaml 5.3.0, what 'memprof-lab ocaml setup' builds from npm:ocaml@5.3.0",
        `cache:        ${prefix} (default)`,
        "              built: no (run 'memprof-lab ocaml setup')",
        `user:         ${mine} (on PATH): OCaml 5.3.1, accepted`,
        `selected:     ${mine} (OCaml 5.3.1, your own)`,
        "",
      ].join("\n"),
    );
  });
});

Deno.test("ocaml status --json describes a built cache prefix", async () => {
  await withTemp(async (dir) => {
    const prefix = join(dir, "built");
    await fakeOcamlopt(join(prefix, "bin", "ocamlopt"), "5.3.0");
    const io = ocamlCliIO(testEnv(dir, []));
    assert.equal(await run(["status", "--json", "--prefix", prefix], io), 0);
    const status = JSON.parse(io.out);
    assert.deepEqual(status.cache, { prefix, source: "option", built: true, version: "5.3.0" });
    assert.equal(status.defaultCache.built, false);
    assert.equal(status.user, undefined);
    assert.deepEqual(status.selected, {
      ocamlopt: [join(prefix, "bin", "ocamlopt")],
      version: "5.3.0",
      origin: "cache",
      prefix,
    });
  });
});

Deno.test("ocaml status with a refused --ocamlopt prints the status and exits 1", async () => {
  await withTemp(async (dir) => {
    const old = await fakeOcamlopt(join(dir, "old", "ocamlopt"), "5.2.1");
    const io = ocamlCliIO(testEnv(dir, []));
    assert.equal(await run(["status", "--ocamlopt", old], io), 1);
    assert.match(io.out, /^selected: +nothing/m);
    assert.match(io.err, /^error: .*OCaml 5\.2\.1/);
  });
});

Deno.test("ocaml exec runs a tool of the selected toolchain with its arguments, and its status", async () => {
  await withTemp(async (dir) => {
    const prefix = join(dir, "built");
    await fakeOcamlopt(join(prefix, "bin", "ocamlopt"), "5.3.0");
    await script(join(prefix, "bin", "ocamlc"), "exit 0");
    const calls: [string, readonly string[]][] = [];
    const exec = (command: string, args: readonly string[]) => {
      calls.push([command, args]);
      return Promise.resolve(7);
    };
    const io = Object.assign(ocamlCliIO(testEnv(dir, [])), { exec });
    // The tool's own options pass through, with or without `--`.
    assert.equal(
      await run(["exec", "--prefix", prefix, "ocamlopt", "-g", "x.ml", "-o", "x"], io),
      7,
    );
    assert.equal(await run(["--prefix", prefix, "exec", "--", "ocamlc", "-version"], io), 7);
    assert.deepEqual(calls, [
      [join(prefix, "bin", "ocamlopt"), ["-g", "x.ml", "-o", "x"]],
      [join(prefix, "bin", "ocamlc"), ["-version"]],
    ]);
    assert.equal(io.err, "");
    // A tool the toolchain does not have, a path, no tool: refused.
    const missing = Object.assign(ocamlCliIO(testEnv(dir, [])), { exec });
    assert.equal(await run(["exec", "--prefix", prefix, "ocamlfoo"], missing), 1);
    assert.match(missing.err, /^error: no ocamlfoo beside .*\/bin\/ocamlopt \(OCaml 5\.3\.0\)\n$/);
    for (
      const [args, message] of [
        [["exec"], /exec needs a tool to run/],
        [["exec", "--prefix", prefix, "/bin/sh"], /by name .*got '\/bin\/sh'/],
        [["exec", "--json", "ocamlopt"], /--json does not apply to exec/],
      ] as const
    ) {
      const u = Object.assign(ocamlCliIO(testEnv(dir, [])), { exec });
      assert.equal(await run([...args], u), 2, args.join(" "));
      assert.match(u.err, message);
    }
    assert.equal(calls.length, 2, "nothing else ran");
    // Run for real: the fake ocamlopt exits 3 for anything but -version.
    const real = ocamlCliIO(testEnv(dir, []));
    assert.equal(await run(["exec", "--prefix", prefix, "ocamlopt", "x.ml"], real), 3);
  });
});

Deno.test("ocaml exec without a toolchain says how to get one and exits 1", async () => {
  await withTemp(async (dir) => {
    const io = ocamlCliIO(testEnv(dir, []));
    assert.equal(await run(["exec", "ocamlopt", "-version"], io), 1);
    assert.match(io.err, /^error: no OCaml 5\.3\.0 toolchain found: run 'memprof-lab ocaml setup'/);
  });
});
