// Finding a toolchain: version checks on fake ocamlopt/ocamlfind scripts, and the order in which
// explicit options, cache prefixes and PATH are tried.
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  findToolchain,
  isSupportedVersion,
  OCamlToolchainError,
  toolchainStatus,
} from "../../lib/ocaml/mod.ts";
import { fakeOcamlfind, fakeOcamlopt, script, testEnv, withTemp } from "./helpers.ts";

Deno.test("isSupportedVersion accepts 5.3.x releases and refuses everything else", () => {
  for (const v of ["5.3.0", "5.3.1", "5.3.12", "5.3.0~rc1", "5.3.0+flambda"]) {
    assert.equal(isSupportedVersion(v), true, v);
  }
  for (const v of ["5.2.1", "5.4.0", "4.14.2", "5.30.0", "15.3.0", "5.3", ""]) {
    assert.equal(isSupportedVersion(v), false, v);
  }
});

Deno.test("findToolchain accepts an explicit ocamlopt that is OCaml 5.3.0", async () => {
  await withTemp(async (dir) => {
    const opt = await fakeOcamlopt(join(dir, "bin", "ocamlopt"), "5.3.0");
    const tc = await findToolchain({ ocamlopt: opt, env: testEnv(dir, []) });
    assert.deepEqual(tc, { ocamlopt: [opt], version: "5.3.0", origin: "user" });
  });
});

Deno.test("findToolchain accepts an explicit ocamlopt that is OCaml 5.3.1", async () => {
  await withTemp(async (dir) => {
    const opt = await fakeOcamlopt(join(dir, "bin", "ocamlopt"), "5.3.1");
    const tc = await findToolchain({ ocamlopt: opt, env: testEnv(dir, []) });
    assert.equal(tc?.version, "5.3.1");
    assert.equal(tc?.origin, "user");
  });
});

Deno.test("findToolchain refuses an explicit OCaml 5.2.1 with a message naming both versions", async () => {
  await withTemp(async (dir) => {
    const opt = await fakeOcamlopt(join(dir, "bin", "ocamlopt"), "5.2.1");
    await assert.rejects(
      findToolchain({ ocamlopt: opt, env: testEnv(dir, []) }),
      (e) =>
        e instanceof OCamlToolchainError && e.message.includes(opt) &&
        e.message.includes("OCaml 5.2.1") && e.message.includes("needs OCaml 5.3.x") &&
        e.message.includes("deno task ocaml setup"),
    );
  });
});

Deno.test("findToolchain refuses a missing explicit ocamlopt", async () => {
  await withTemp(async (dir) => {
    const missing = join(dir, "nope", "ocamlopt");
    await assert.rejects(
      findToolchain({ ocamlopt: missing, env: testEnv(dir, []) }),
      (e) => e instanceof OCamlToolchainError && e.message.includes(`${missing} does not exist`),
    );
  });
});

Deno.test("findToolchain refuses an explicit ocamlopt that is not executable", async () => {
  await withTemp(async (dir) => {
    const opt = join(dir, "bin", "ocamlopt");
    await script(opt, "echo 5.3.0", 0o644);
    await assert.rejects(
      findToolchain({ ocamlopt: opt, env: testEnv(dir, []) }),
      (e) => e instanceof OCamlToolchainError && e.message.includes("is not executable"),
    );
  });
});

Deno.test("findToolchain refuses an ocamlopt whose -version fails or prints garbage", async () => {
  await withTemp(async (dir) => {
    const failing = await script(join(dir, "a", "ocamlopt"), "echo boom >&2; exit 5");
    await assert.rejects(
      findToolchain({ ocamlopt: failing, env: testEnv(dir, []) }),
      (e) => e instanceof OCamlToolchainError && /exit status 5\): boom/.test(e.message),
    );
    const garbage = await script(join(dir, "b", "ocamlopt"), "echo hello world");
    await assert.rejects(
      findToolchain({ ocamlopt: garbage, env: testEnv(dir, []) }),
      (e) => e instanceof OCamlToolchainError && e.message.includes("not an OCaml version"),
    );
  });
});

Deno.test("findToolchain looks an explicit ocamlopt name up on PATH", async () => {
  await withTemp(async (dir) => {
    const bin = join(dir, "bin");
    const opt = await fakeOcamlopt(join(bin, "ocamlopt-5.3"), "5.3.0");
    const tc = await findToolchain({ ocamlopt: "ocamlopt-5.3", env: testEnv(dir, [bin]) });
    assert.deepEqual(tc?.ocamlopt, [opt]);
    await assert.rejects(
      findToolchain({ ocamlopt: "ocamlopt-9", env: testEnv(dir, [bin]) }),
      (e) =>
        e instanceof OCamlToolchainError && /'ocamlopt-9' was not found on PATH/.test(e.message),
    );
  });
});

Deno.test("findToolchain with ocamlfind runs 'ocamlfind ocamlopt' and checks its version", async () => {
  await withTemp(async (dir) => {
    const good = await fakeOcamlfind(join(dir, "good", "ocamlfind"), "5.3.0");
    const tc = await findToolchain({ ocamlfind: good, env: testEnv(dir, []) });
    assert.deepEqual(tc, { ocamlopt: [good, "ocamlopt"], version: "5.3.0", origin: "user" });
    const old = await fakeOcamlfind(join(dir, "old", "ocamlfind"), "4.14.2");
    await assert.rejects(
      findToolchain({ ocamlfind: old, env: testEnv(dir, []) }),
      (e) =>
        e instanceof OCamlToolchainError && e.message.includes(`${old} ocamlopt is OCaml 4.14.2`),
    );
  });
});

Deno.test("findToolchain refuses ocamlopt and ocamlfind given together", async () => {
  await assert.rejects(
    findToolchain({ ocamlopt: "/a", ocamlfind: "/b", env: {} }),
    (e) => e instanceof OCamlToolchainError && /either ocamlopt or ocamlfind/.test(e.message),
  );
});

Deno.test("findToolchain uses ocamlopt on PATH only when it is OCaml 5.3.x", async () => {
  await withTemp(async (dir) => {
    const good = join(dir, "good");
    const old = join(dir, "old");
    const opt = await fakeOcamlopt(join(good, "ocamlopt"), "5.3.1");
    await fakeOcamlopt(join(old, "ocamlopt"), "5.2.1");
    assert.deepEqual(await findToolchain({ env: testEnv(dir, [good]) }), {
      ocamlopt: [opt],
      version: "5.3.1",
      origin: "user",
    });
    // The first ocamlopt on PATH is the one a shell would run: 5.2.1, so nothing.
    assert.equal(await findToolchain({ env: testEnv(dir, [old, good]) }), undefined);
    assert.equal(await findToolchain({ env: testEnv(dir, []) }), undefined);
  });
});

Deno.test("findToolchain prefers explicit > override cache > default cache > PATH", async () => {
  await withTemp(async (dir) => {
    const env = (extra: Record<string, string> = {}) => testEnv(dir, [join(dir, "path")], extra);
    const dflt = join(dir, "cache", "memprof-lab", "ocaml-5.3.0");
    const override = join(dir, "override");
    const explicit = await fakeOcamlopt(join(dir, "explicit", "ocamlopt"), "5.3.0");
    const onPath = await fakeOcamlopt(join(dir, "path", "ocamlopt"), "5.3.0");

    // Only PATH.
    assert.deepEqual((await findToolchain({ env: env() }))?.ocamlopt, [onPath]);
    // Default cache built: it wins over PATH.
    await fakeOcamlopt(join(dflt, "bin", "ocamlopt"), "5.3.0");
    assert.deepEqual(await findToolchain({ env: env() }), {
      ocamlopt: [join(dflt, "bin", "ocamlopt")],
      version: "5.3.0",
      origin: "cache",
      prefix: dflt,
    });
    // Override not built: the default cache is still used.
    const withOverride = env({ MEMPROF_LAB_OCAML_PREFIX: override });
    assert.equal((await findToolchain({ env: withOverride }))?.prefix, dflt);
    // Override built: it wins, from the environment or the option.
    await fakeOcamlopt(join(override, "bin", "ocamlopt"), "5.3.0");
    assert.equal((await findToolchain({ env: withOverride }))?.prefix, override);
    assert.equal((await findToolchain({ env: env(), prefix: override }))?.prefix, override);
    // Explicit ocamlopt wins over everything.
    assert.deepEqual((await findToolchain({ env: withOverride, ocamlopt: explicit }))?.ocamlopt, [
      explicit,
    ]);
  });
});

Deno.test("findToolchain skips a cache prefix whose ocamlopt is not OCaml 5.3.x", async () => {
  await withTemp(async (dir) => {
    const dflt = join(dir, "cache", "memprof-lab", "ocaml-5.3.0");
    await fakeOcamlopt(join(dflt, "bin", "ocamlopt"), "5.2.1");
    assert.equal(await findToolchain({ env: testEnv(dir, []) }), undefined);
    const status = await toolchainStatus({ env: testEnv(dir, []) });
    assert.equal(status.cache.built, false);
    assert.match(status.cache.problem ?? "", /is OCaml 5\.2\.1/);
  });
});

Deno.test("toolchainStatus reports the caches, the PATH ocamlopt and the choice", async () => {
  await withTemp(async (dir) => {
    const path = join(dir, "path");
    const onPath = await fakeOcamlopt(join(path, "ocamlopt"), "5.2.1");
    const override = join(dir, "override");
    const env = testEnv(dir, [path], { MEMPROF_LAB_OCAML_PREFIX: override });
    const status = await toolchainStatus({ env });
    assert.deepEqual(status, {
      required: "5.3.x",
      pinned: "5.3.0",
      cache: { prefix: override, source: "env", built: false },
      defaultCache: {
        prefix: join(dir, "cache", "memprof-lab", "ocaml-5.3.0"),
        source: "default",
        built: false,
      },
      user: {
        ocamlopt: [onPath],
        source: "PATH",
        version: "5.2.1",
        accepted: false,
        problem: `${onPath} is OCaml 5.2.1, but memprof-lab needs OCaml 5.3.x`,
      },
    });
  });
});

Deno.test("toolchainStatus does not throw for a refused explicit ocamlopt", async () => {
  await withTemp(async (dir) => {
    const status = await toolchainStatus({ env: testEnv(dir, []), ocamlopt: join(dir, "none") });
    assert.equal(status.user?.accepted, false);
    assert.equal(status.user?.source, "option");
    assert.match(status.user?.problem ?? "", /does not exist/);
    assert.equal(status.selected, undefined);
  });
});

Deno.test("findToolchain without HOME or XDG_CACHE_HOME still finds ocamlopt on PATH", async () => {
  await withTemp(async (dir) => {
    const opt = await fakeOcamlopt(join(dir, "bin", "ocamlopt"), "5.3.0");
    const tc = await findToolchain({ env: { PATH: join(dir, "bin") } });
    assert.deepEqual(tc?.ocamlopt, [opt]);
  });
});
