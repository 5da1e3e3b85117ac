// README's "Using the library from another project", followed word for word: a folder holding a
// `memprof-lab` checkout (a link to this one) and a project `my-app` beside it, made of the
// README's `my-app/deno.json` and `my-app/main.ts` blocks; the README's shell block run there
// prints the README's output block.
import assert from "node:assert/strict";
import { dirname, join } from "node:path";

const ROOT = new URL("../../", import.meta.url).pathname;
const HEADING = "## Using the library from another project";

/** The fenced blocks of README's section, in order, with their language. */
function sectionBlocks(readme: string): { lang: string; text: string }[] {
  const start = readme.indexOf(HEADING + "\n");
  assert.ok(start >= 0, `README has no section ${HEADING}`);
  const end = readme.indexOf("\n## ", start + HEADING.length);
  const section = readme.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((m) => ({
    lang: m[1],
    text: m[2],
  }));
}

Deno.test("README's example of using the library from another project runs as written", async () => {
  const readme = Deno.readTextFileSync(join(ROOT, "README.md"));
  const blocks = sectionBlocks(readme);
  assert.deepEqual(blocks.map((b) => b.lang), ["json", "ts", "sh", "text"]);
  const [config, main, commands, output] = blocks.map((b) => b.text);
  // The files are named in the text just before their blocks.
  assert.ok(readme.includes("write `my-app/deno.json`:\n\n```json\n"));
  assert.ok(readme.includes("and `my-app/main.ts`:\n\n```ts\n"));

  const dir = Deno.makeTempDirSync({ prefix: "memprof-lab-use-" });
  try {
    Deno.symlinkSync(ROOT.replace(/\/$/, ""), join(dir, "memprof-lab"));
    Deno.mkdirSync(join(dir, "my-app"));
    Deno.writeTextFileSync(join(dir, "my-app", "deno.json"), config);
    Deno.writeTextFileSync(join(dir, "my-app", "main.ts"), main);
    const out = await new Deno.Command("bash", {
      args: ["-euo", "pipefail", "-c", commands],
      cwd: dir,
      env: {
        PATH: `${dirname(Deno.execPath())}:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}`,
        NO_COLOR: "1",
        DENO_NO_UPDATE_CHECK: "1",
      },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, stderr);
    assert.equal(new TextDecoder().decode(out.stdout), output);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
