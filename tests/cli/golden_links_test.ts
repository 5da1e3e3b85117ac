// Output goes only where named: a folder given as `scenario --golden-dir` or `diff --out` that
// is tests/golden (the library's goldens) by its real path — through a symbolic link — is refused
// before anything runs. The commands run as subprocesses in ways that never write goldens even
// were the check missing (no --update; a compiler that does not exist).
import assert from "node:assert/strict";
import { join } from "node:path";
import { isWithin, realPathOfExisting } from "../../cli/_io.ts";
import { root, runCli } from "./helpers.ts";

const GOLDEN = join(root, "tests/golden");
const LIB = new URL("../../lib/scenario/mod.ts", import.meta.url).href;

Deno.test("realPathOfExisting resolves links in the part that exists and keeps the rest", () => {
  const dir = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "realpath_" }));
  try {
    Deno.mkdirSync(join(dir, "target/sub"), { recursive: true });
    Deno.symlinkSync(join(dir, "target"), join(dir, "link"));
    assert.equal(realPathOfExisting(join(dir, "link")), join(dir, "target"));
    assert.equal(
      realPathOfExisting(join(dir, "link/sub/new/deeper")),
      join(dir, "target/sub/new/deeper"),
    );
    assert.equal(realPathOfExisting(join(dir, "none/at/all")), join(dir, "none/at/all"));
    // A file on the way (not a folder) ends the existing part there.
    Deno.writeTextFileSync(join(dir, "target/file"), "");
    assert.equal(realPathOfExisting(join(dir, "link/file/x")), join(dir, "target/file/x"));
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("isWithin: the folder itself and what is under it, by path", () => {
  assert.ok(isWithin("/a/b", "/a/b"));
  assert.ok(isWithin("/a/b", "/a/b/c/d"));
  assert.ok(!isWithin("/a/b", "/a/bc"));
  assert.ok(!isWithin("/a/b", "/a"));
  assert.ok(isWithin("/a/b", "/a/b/..c"));
});

Deno.test("scenario --golden-dir through a link into tests/golden is refused", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "golden_link_" });
  try {
    Deno.writeTextFileSync(
      join(dir, "mine.ts"),
      `import { scenario } from "${LIB}";\n` +
        'export default scenario({ name: "mine" }, (s) => {\n' +
        "  s.main.memprof.start({ samplingRate: 0.1 });\n" +
        "  s.main.alloc(8);\n" +
        "  s.main.memprof.stop();\n" +
        "});\n",
    );
    Deno.symlinkSync(GOLDEN, join(dir, "g"));
    const before = [...Deno.readDirSync(GOLDEN)].map((e) => e.name).sort();
    const r = await runCli("scenario.ts", [
      join(dir, "mine.ts"),
      "--no-check",
      "--golden-dir",
      join(dir, "g"),
      "--out",
      join(dir, "out"),
    ]);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(
      r.stderr.split("\n")[0],
      `error: goldens of ${join(dir, "mine.ts")} cannot go to ${join(dir, "g")} (really ` +
        `${Deno.realPathSync(GOLDEN)}): tests/golden holds the library's only (give another ` +
        "--golden-dir)",
    );
    assert.deepEqual([...Deno.readDirSync(GOLDEN)].map((e) => e.name).sort(), before);
    assert.throws(() => Deno.statSync(join(dir, "out")), Deno.errors.NotFound);
    // The module's own golden/ folder as a link into tests/golden: refused the same way.
    Deno.symlinkSync(join(GOLDEN, "service"), join(dir, "golden"));
    const own = await runCli("scenario.ts", [
      join(dir, "mine.ts"),
      "--no-check",
      "--out",
      join(dir, "out"),
    ]);
    assert.equal(own.code, 2, own.stderr);
    assert.match(own.stderr, /tests\/golden holds the library's only/);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("diff --random --out through a link into tests/golden is refused", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "golden_link_" });
  try {
    Deno.symlinkSync(join(GOLDEN, "service"), join(dir, "g"));
    const out = join(dir, "g", "failures");
    // A compiler that does not exist: without the check, the command stops there (exit 1).
    const r = await runCli("diff.ts", [
      "--random",
      "1",
      "--out",
      out,
      "--ocamlopt",
      join(dir, "no-ocamlopt"),
    ]);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(
      r.stderr.split("\n")[0],
      `error: --out ${out} (really ${join(Deno.realPathSync(GOLDEN), "service", "failures")}) ` +
        "is in tests/golden, which holds the library's goldens only: give another folder",
    );
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
