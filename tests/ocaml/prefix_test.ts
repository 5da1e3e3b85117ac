// Where the cache prefix is: XDG_CACHE_HOME, HOME, MEMPROF_LAB_OCAML_PREFIX and the option.
import assert from "node:assert/strict";
import { resolve } from "node:path";
import {
  defaultPrefix,
  OCAML_VERSION,
  OCamlToolchainError,
  prefixFiles,
  resolvePrefix,
} from "../../lib/ocaml/mod.ts";

Deno.test("defaultPrefix uses XDG_CACHE_HOME when it is set", () => {
  assert.equal(
    defaultPrefix({ XDG_CACHE_HOME: "/x/cache", HOME: "/home/u" }),
    `/x/cache/memprof-lab/ocaml-${OCAML_VERSION}`,
  );
});

Deno.test("defaultPrefix falls back to HOME/.cache without XDG_CACHE_HOME", () => {
  assert.equal(defaultPrefix({ HOME: "/home/u" }), "/home/u/.cache/memprof-lab/ocaml-5.3.0");
});

Deno.test("defaultPrefix ignores an empty or relative XDG_CACHE_HOME, as the XDG spec says", () => {
  assert.equal(
    defaultPrefix({ XDG_CACHE_HOME: "", HOME: "/home/u" }),
    "/home/u/.cache/memprof-lab/ocaml-5.3.0",
  );
  assert.equal(
    defaultPrefix({ XDG_CACHE_HOME: "rel/cache", HOME: "/home/u" }),
    "/home/u/.cache/memprof-lab/ocaml-5.3.0",
  );
});

Deno.test("defaultPrefix without HOME or XDG_CACHE_HOME throws an error naming the way out", () => {
  assert.throws(
    () => defaultPrefix({}),
    (e) =>
      e instanceof OCamlToolchainError && /--prefix/.test(e.message) &&
      /MEMPROF_LAB_OCAML_PREFIX/.test(e.message),
  );
});

Deno.test("resolvePrefix takes the option over MEMPROF_LAB_OCAML_PREFIX over the default", () => {
  const env = { HOME: "/home/u", MEMPROF_LAB_OCAML_PREFIX: "/opt/ocaml" };
  assert.deepEqual(resolvePrefix({ env, prefix: "/p/ocaml" }), {
    prefix: "/p/ocaml",
    source: "option",
  });
  assert.deepEqual(resolvePrefix({ env }), { prefix: "/opt/ocaml", source: "env" });
  assert.deepEqual(resolvePrefix({ env: { HOME: "/home/u", MEMPROF_LAB_OCAML_PREFIX: "" } }), {
    prefix: "/home/u/.cache/memprof-lab/ocaml-5.3.0",
    source: "default",
  });
});

Deno.test("resolvePrefix makes a relative prefix absolute", () => {
  const { prefix } = resolvePrefix({ env: {}, prefix: "build/ocaml" });
  assert.equal(prefix, resolve("build/ocaml"));
});

Deno.test("prefixFiles puts the lock, log and temporary directories beside the prefix", () => {
  assert.deepEqual(prefixFiles("/c/ocaml-5.3.0"), {
    lock: "/c/ocaml-5.3.0.lock",
    log: "/c/ocaml-5.3.0.build.log",
    tmpPrefix: "/c/ocaml-5.3.0.tmp-",
  });
});
