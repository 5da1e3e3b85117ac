// setupToolchain with a fake build runner: the steps it runs, what a failed or interrupted build
// leaves behind (no prefix, a log), missing tools, and the cases where nothing is built.
import assert from "node:assert/strict";
import { basename, join } from "node:path";
import { BUILD_INFO_FILE, OCamlToolchainError, setupToolchain } from "../../lib/ocaml/mod.ts";
import {
  deadPid,
  entries,
  exists,
  fakeOcamlopt,
  fakeRunner,
  fakeToolsDir,
  testEnv,
  toolchainWorld,
  withTemp,
} from "./helpers.ts";

const world = toolchainWorld;

Deno.test("setupToolchain builds with npm pack, configure, make and make install DESTDIR", async () => {
  await withTemp(async (dir) => {
    const { env, cacheDir, prefix, tools } = await world(dir);
    const { runner, calls } = fakeRunner();
    const lines: string[] = [];
    const tc = await setupToolchain({ env, runner, jobs: 3, onProgress: (l) => lines.push(l) });
    assert.deepEqual(tc, {
      ocamlopt: [join(prefix, "bin", "ocamlopt")],
      version: "5.3.0",
      origin: "cache",
      prefix,
    });
    // The build's temporary directory: beside the prefix, named with this pid and a random part.
    const tmp = calls[0][5];
    assert.match(basename(tmp), new RegExp(`^ocaml-5\\.3\\.0\\.tmp-${Deno.pid}-[0-9a-f]{16}$`));
    assert.equal(join(tmp, ".."), cacheDir);
    assert.deepEqual(calls, [
      [join(tools, "npm"), "pack", "ocaml@5.3.0", "--json", "--pack-destination", tmp],
      [join(tools, "tar"), "xzf", join(tmp, "ocaml-5.3.0.tgz")],
      [join(tmp, "package", "configure"), `--prefix=${prefix}`],
      [join(tools, "make"), "-j3"],
      [join(tools, "make"), "install", `DESTDIR=${join(tmp, "stage")}`],
    ]);
    // The prefix is complete, the temporary directory and the lock are gone, the log stays.
    assert.deepEqual(await entries(cacheDir), ["ocaml-5.3.0", "ocaml-5.3.0.build.log"]);
    assert.deepEqual(await entries(prefix), ["bin", "lib", BUILD_INFO_FILE]);
    const info = JSON.parse(await Deno.readTextFile(join(prefix, BUILD_INFO_FILE)));
    assert.equal(info.version, "5.3.0");
    assert.equal(info.source, "npm:ocaml@5.3.0");
    const log = await Deno.readTextFile(`${prefix}.build.log`);
    assert.match(log, /\$ .*\/make -j3/);
    assert.match(log, /OCAMLOPT compilerlibs\/ocamloptcomp\.cmxa/);
    assert.ok(log.includes('[memprof-lab] npm pack: {"name":"ocaml","version":"5.3.0"'));
    assert.ok(!log.includes('"files"'), "npm's file list is not logged");
    // Progress: the stages in order, with elapsed seconds.
    const stages = lines.map((l) => /^\[\s*\d+s\] (\w+):/.exec(l)?.[1]).filter((s) => s);
    assert.deepEqual(stages, ["fetch", "configure", "make", "install", "verify", "done"]);
    assert.match(lines[0], /build log: .*ocaml-5\.3\.0\.build\.log/);
  });
});

Deno.test("setupToolchain on a built prefix returns at once without running any step", async () => {
  await withTemp(async (dir) => {
    const { env, prefix } = await world(dir);
    await fakeOcamlopt(join(prefix, "bin", "ocamlopt"), "5.3.0");
    const { runner, calls } = fakeRunner();
    const lines: string[] = [];
    const tc = await setupToolchain({ env, runner, onProgress: (l) => lines.push(l) });
    assert.equal(tc.prefix, prefix);
    assert.equal(calls.length, 0);
    assert.deepEqual(lines, [`OCaml 5.3.0 already built at ${prefix}`]);
    assert.equal(await exists(`${prefix}.lock`), false);
  });
});

Deno.test("a failed make leaves no prefix, and the error names the stage and the log", async () => {
  await withTemp(async (dir) => {
    const { env, cacheDir, prefix } = await world(dir);
    const { runner } = fakeRunner({ failAt: "make" });
    const err = await setupToolchain({ env, runner }).then(
      () => assert.fail("setup should fail"),
      (e) => e,
    );
    assert.ok(err instanceof OCamlToolchainError);
    assert.equal(err.logPath, `${prefix}.build.log`);
    assert.match(err.message, /build failed at make \(make exited with status 2\)/);
    assert.ok(err.message.includes(`build log: ${prefix}.build.log`));
    assert.match(err.message, /last lines:\n(.|\n)*fatal error in make/);
    assert.deepEqual(await entries(cacheDir), ["ocaml-5.3.0.build.log"]);
    assert.match(await Deno.readTextFile(`${prefix}.build.log`), /exit status 2/);
  });
});

Deno.test("a failed npm pack is reported as a fetch problem with the log", async () => {
  await withTemp(async (dir) => {
    const { env, prefix } = await world(dir);
    const { runner, calls } = fakeRunner({ failAt: "npm" });
    await assert.rejects(
      setupToolchain({ env, runner }),
      (e) =>
        e instanceof OCamlToolchainError &&
        e.message.includes("could not fetch ocaml@5.3.0 from the npm registry") &&
        e.message.includes("network") && e.message.includes(`${prefix}.build.log`),
    );
    assert.equal(calls.length, 1);
    assert.equal(await exists(prefix), false);
  });
});

Deno.test("a package whose integrity is not the pinned one is refused before unpacking", async () => {
  await withTemp(async (dir) => {
    const { env, prefix } = await world(dir);
    const { runner, calls } = fakeRunner({ packIntegrity: "sha512-AAAA" });
    await assert.rejects(
      setupToolchain({ env, runner }),
      (e) =>
        e instanceof OCamlToolchainError &&
        e.message.includes("with integrity sha512-AAAA, but sha512-D0uG") &&
        e.logPath === `${prefix}.build.log`,
    );
    assert.equal(calls.length, 1);
    assert.equal(await exists(prefix), false);
  });
});

Deno.test("a build whose ocamlopt is not 5.3.0 fails at verify and installs nothing", async () => {
  await withTemp(async (dir) => {
    const { env, cacheDir } = await world(dir);
    const { runner } = fakeRunner({ installedVersion: "5.3.1" });
    await assert.rejects(
      setupToolchain({ env, runner }),
      (e) =>
        e instanceof OCamlToolchainError && /failed at verify: it is OCaml 5\.3\.1, not 5\.3\.0/
          .test(e.message),
    );
    assert.deepEqual(await entries(cacheDir), ["ocaml-5.3.0.build.log"]);
  });
});

Deno.test("an interrupted setup kills the step and leaves no prefix", async () => {
  await withTemp(async (dir) => {
    const { env, cacheDir, prefix } = await world(dir);
    const ac = new AbortController();
    const { runner } = fakeRunner({ hangInMakeUntilAborted: true, onMake: () => ac.abort() });
    await assert.rejects(
      setupToolchain({ env, runner, signal: ac.signal }),
      (e) =>
        e instanceof OCamlToolchainError &&
        e.message.startsWith("setup interrupted during make; nothing was installed at " + prefix),
    );
    assert.deepEqual(await entries(cacheDir), ["ocaml-5.3.0.build.log"]);
  });
});

Deno.test("setupToolchain removes temporary directories left by an interrupted build", async () => {
  await withTemp(async (dir) => {
    const { env, cacheDir, prefix } = await world(dir);
    // What a killed setup leaves: its half-built tree (and no prefix).
    const left = `${prefix}.tmp-${await deadPid()}-0123456789abcdef`;
    await Deno.mkdir(join(left, "package"), { recursive: true });
    await Deno.writeTextFile(join(left, "package", "Makefile"), "");
    const { runner } = fakeRunner();
    await setupToolchain({ env, runner });
    assert.deepEqual(await entries(cacheDir), ["ocaml-5.3.0", "ocaml-5.3.0.build.log"]);
  });
});

Deno.test("setupToolchain removes only the temporary directories of its own dead builds", async () => {
  await withTemp(async (dir) => {
    const { env, cacheDir, prefix } = await world(dir);
    const dead = await deadPid();
    const outside = join(dir, "outside");
    await Deno.mkdir(join(outside, "keep"), { recursive: true });
    const kept = [
      "ocaml-5.3.0.tmp-notes", // the user's: not a name a build gives
      "ocaml-5.3.0.tmp-12345", // no random part
      `ocaml-5.3.0.tmp-${dead}-0123456789ABCDEF`, // not lowercase hex
      `ocaml-5.3.0.tmp-${dead}-0123456789abcdef-old`,
      "ocaml-5.3.0.tmp-4242-0123456789abcdef", // a build that is running (isAlive says so)
      `ocaml-5.3.0.tmp-${Deno.pid}-0123456789abcdef`, // this process's
    ];
    for (const name of kept) {
      await Deno.mkdir(join(cacheDir, name, "inside"), { recursive: true });
    }
    // A file and a link named as a dead build's directory are not directories of a build.
    await Deno.writeTextFile(join(cacheDir, `ocaml-5.3.0.tmp-${dead}-00000000000000ff`), "file");
    await Deno.symlink(outside, join(cacheDir, `ocaml-5.3.0.tmp-${dead}-00000000000000ee`));
    await Deno.mkdir(join(cacheDir, `ocaml-5.3.0.tmp-${dead}-00000000000000aa`, "package"), {
      recursive: true,
    });
    const { runner } = fakeRunner();
    await setupToolchain({ env, runner, isAlive: (pid) => pid === 4242 });
    assert.deepEqual(
      await entries(cacheDir),
      [
        "ocaml-5.3.0",
        "ocaml-5.3.0.build.log",
        ...kept,
        `ocaml-5.3.0.tmp-${dead}-00000000000000ee`,
        `ocaml-5.3.0.tmp-${dead}-00000000000000ff`,
      ].sort(),
    );
    for (const name of kept) assert.ok(await exists(join(cacheDir, name, "inside")), name);
    assert.ok(await exists(join(outside, "keep")), "the link's target is untouched");
    assert.equal(
      await Deno.readTextFile(join(prefix + ".tmp-" + dead + "-00000000000000ff")),
      "file",
    );
  });
});

Deno.test("setupToolchain names the packages to install when gcc and make are missing", async () => {
  await withTemp(async (dir) => {
    const tools = await fakeToolsDir(join(dir, "tools"), ["npm", "tar"]);
    const { runner, calls } = fakeRunner();
    await assert.rejects(
      setupToolchain({ env: testEnv(dir, [tools]), runner }),
      (e) =>
        e instanceof OCamlToolchainError &&
        e.message.includes("a C compiler (gcc or cc), make not found on PATH") &&
        e.message.includes("apt-get install gcc make") && e.message.includes("--ocamlopt"),
    );
    assert.equal(calls.length, 0);
    assert.equal(await exists(join(dir, "cache")), false);
  });
});

Deno.test("setupToolchain says npm is needed when it is missing", async () => {
  await withTemp(async (dir) => {
    const tools = await fakeToolsDir(join(dir, "tools"), ["cc", "make", "tar"]);
    await assert.rejects(
      setupToolchain({ env: testEnv(dir, [tools]), runner: fakeRunner().runner }),
      (e) =>
        e instanceof OCamlToolchainError && /npm \(it fetches the OCaml sources/.test(e.message) &&
        e.message.includes("apt-get install npm"),
    );
  });
});

Deno.test("setupToolchain uses a 5.3.x ocamlopt on PATH instead of building", async () => {
  await withTemp(async (dir) => {
    const { env, tools } = await world(dir);
    const opt = await fakeOcamlopt(join(tools, "ocamlopt"), "5.3.1");
    const { runner, calls } = fakeRunner();
    const tc = await setupToolchain({ env, runner });
    assert.deepEqual(tc, { ocamlopt: [opt], version: "5.3.1", origin: "user" });
    assert.equal(calls.length, 0);
    // --build (or an explicit prefix) builds anyway.
    const built = await setupToolchain({ env, runner, build: true });
    assert.equal(built.origin, "cache");
    assert.equal(calls.length, 5);
  });
});

Deno.test("setupToolchain with an explicit ocamlopt checks it and builds nothing", async () => {
  await withTemp(async (dir) => {
    const { env } = await world(dir);
    const old = await fakeOcamlopt(join(dir, "old", "ocamlopt"), "5.2.1");
    const { runner, calls } = fakeRunner();
    await assert.rejects(
      setupToolchain({ env, runner, ocamlopt: old }),
      (e) => e instanceof OCamlToolchainError && e.message.includes("OCaml 5.2.1"),
    );
    assert.equal(calls.length, 0);
  });
});

Deno.test("setupToolchain leaves alone a prefix that holds something else", async () => {
  await withTemp(async (dir) => {
    const { env } = await world(dir);
    const prefix = join(dir, "mine");
    await Deno.mkdir(prefix);
    await Deno.writeTextFile(join(prefix, "precious.txt"), "keep");
    const { runner, calls } = fakeRunner();
    await assert.rejects(
      setupToolchain({ env, runner, prefix }),
      (e) =>
        e instanceof OCamlToolchainError && e.message.includes("holds no bin/ocamlopt") &&
        e.message.includes("left alone"),
    );
    assert.equal(calls.length, 0);
    assert.equal(await Deno.readTextFile(join(prefix, "precious.txt")), "keep");
  });
});

Deno.test("setupToolchain builds into an empty prefix directory and an env prefix", async () => {
  await withTemp(async (dir) => {
    const { env } = await world(dir);
    const prefix = join(dir, "empty");
    await Deno.mkdir(prefix);
    const tc = await setupToolchain({
      env: { ...env, MEMPROF_LAB_OCAML_PREFIX: prefix },
      runner: fakeRunner().runner,
    });
    assert.equal(tc.prefix, prefix);
    assert.ok(await exists(join(prefix, "bin", "ocamlopt")));
    assert.equal(basename(tc.ocamlopt[0]), "ocamlopt");
  });
});

Deno.test("setupToolchain prints a progress line while a step is quiet", async () => {
  await withTemp(async (dir) => {
    const { env } = await world(dir);
    let open!: () => void;
    const gate = new Promise<void>((r) => open = r);
    const lines: string[] = [];
    const { runner } = fakeRunner({ makeGate: gate });
    // make finishes once a heartbeat line has appeared (or after 5 s, and the test fails).
    const fallback = setTimeout(() => open(), 5000);
    await setupToolchain({
      env,
      runner,
      heartbeatMs: 30,
      onProgress: (l) => {
        lines.push(l);
        if (/still running/.test(l)) open();
      },
    });
    clearTimeout(fallback);
    const beats = lines.filter((l) => / make: still running/.test(l));
    assert.ok(beats.length >= 1, lines.join("\n"));
    assert.match(beats[0], /last output: OCAMLC stdlib\/stdlib\.cmo$/);
  });
});
