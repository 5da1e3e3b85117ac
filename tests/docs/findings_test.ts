// The standalone programs of docs/findings.md build with the OCaml 5.3 toolchain and print what
// the page says they print; the one whose behaviour needs no second domain (major_at_barrier.ml
// with ONE_DOMAIN) is deterministic, as the page reports.
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { REAL_OCAML, skipNotice } from "../real_toolchain.ts";

const dir = fileURLToPath(new URL("../../docs/findings/", import.meta.url));
const programs: Record<string, RegExp> = {
  "promote_race.ml": /^promoted \d+ dead \d+\n$/,
  "orphan_adopt.ml": /^dealloc callbacks on main \d+, on B \d+\n$/,
  "major_at_barrier.ml": /^first major cycle ended at iteration \d+; \d+ deallocation callbacks\n$/,
  "join_order.ml": /^the (join's closure|worker's collection) first\n$/,
};

const skip = REAL_OCAML.why;
if (skip !== undefined) skipNotice("building and running docs/findings/*.ml", skip);

async function build(file: string, out: string): Promise<string> {
  const tmp = await Deno.makeTempDir({ prefix: "memprof-lab-findings-" });
  await Deno.copyFile(`${dir}${file}`, `${tmp}/${file}`);
  const [cmd, ...pre] = REAL_OCAML.toolchain!.ocamlopt;
  const r = await new Deno.Command(cmd, {
    args: [...pre, file, "-o", out],
    cwd: tmp,
  }).output();
  assert.equal(r.code, 0, new TextDecoder().decode(r.stderr));
  return `${tmp}/${out}`;
}

async function run(exe: string, env: Record<string, string> = {}): Promise<string> {
  const r = await new Deno.Command(exe, { env }).output();
  assert.equal(r.code, 0, new TextDecoder().decode(r.stderr));
  return new TextDecoder().decode(r.stdout);
}

Deno.test("docs/findings holds exactly the programs this test knows", () => {
  const files = [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) => n.endsWith(".ml"));
  assert.deepEqual(files.sort(), Object.keys(programs).sort());
});

for (const [file, shape] of Object.entries(programs)) {
  Deno.test({
    name: `docs/findings/${file} builds with OCaml 5.3 and prints its result`,
    ignore: skip !== undefined,
    async fn() {
      const exe = await build(file, file.replace(/\.ml$/, ""));
      try {
        assert.match(await run(exe), shape);
        if (file === "major_at_barrier.ml") {
          // One domain: the same line every run (the page's control).
          const a = await run(exe, { ONE_DOMAIN: "1" });
          assert.match(a, shape);
          assert.equal(await run(exe, { ONE_DOMAIN: "1" }), a);
        }
      } finally {
        await Deno.remove(exe.slice(0, exe.lastIndexOf("/")), { recursive: true });
      }
    },
  });
}
