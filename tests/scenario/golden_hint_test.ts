// The hints `scenario --check` prints for a module whose goldens are outside the repository
// (--golden-dir) repeat what decides where goldens go: followed literally, as printed, from the
// folder the command ran in, they write the goldens that --check then finds.
import assert from "node:assert/strict";
import { dirname } from "node:path";

const ROOT = new URL("../..", import.meta.url).pathname;
const LIB = new URL("../../lib/scenario/mod.ts", import.meta.url).href;
const decoder = new TextDecoder();
/** `deno` on PATH for the hints (`deno task scenario …`), the one running this test. */
const PATH = `${dirname(Deno.execPath())}:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}`;

/** Runs `cli/scenario.ts args…` from the repository, as `deno task scenario` does. */
async function scenario(args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-read", "--allow-write", "--allow-run", "cli/scenario.ts", ...args],
    cwd: ROOT,
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr) };
}

/** Runs a printed command line as a user pastes it into a shell, from the repository. */
async function follow(line: string) {
  // As from a user's shell: without the INIT_CWD of the `deno task` running the tests, which a
  // `deno task` started inside it would take for the caller's folder.
  const env = Deno.env.toObject();
  delete env.INIT_CWD;
  const out = await new Deno.Command("sh", {
    args: ["-c", line],
    cwd: ROOT,
    clearEnv: true,
    env: { ...env, NO_COLOR: "1", PATH },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: out.code, stderr: decoder.decode(out.stderr) };
}

function source(count: number): string {
  return [
    `import { scenario } from "${LIB}";`,
    "",
    'export default scenario({ name: "mine" }, (s) => {',
    "  s.main.memprof.start({ samplingRate: 0.5 });",
    `  s.main.repeat(${count}, () => s.main.alloc(3, { at: "Mine.f@mine.ml:1:0-9" }));`,
    "  s.main.memprof.stop();",
    "});",
    "",
  ].join("\n");
}

Deno.test("the --update hints of --check, followed as printed, write the goldens --check reads", async () => {
  const dir = await Deno.makeTempDir({ prefix: "golden-hint-" });
  try {
    const module = `${dir}/my scenarios/mine.ts`; // a blank: the hint must quote it
    await Deno.mkdir(dirname(module));
    await Deno.writeTextFile(module, source(20));
    const gold = `${dir}/gold`;
    const check = [module, "--golden-dir", gold, "--out", `${dir}/out`, "--check"];

    // No goldens yet: the error says how to write them.
    const none = await scenario(check);
    assert.equal(none.code, 1, none.stderr);
    const write = /\(write them with (.*)\)\n/.exec(none.stderr)?.[1];
    assert.ok(write !== undefined, none.stderr);
    assert.match(write, /^deno task scenario '.*\/my scenarios\/mine\.ts' --golden-dir /);
    const wrote = await follow(write);
    assert.equal(wrote.code, 0, wrote.stderr);
    assert.ok(Deno.statSync(`${gold}/mine/callbacks.txt`).isFile);
    assert.equal((await scenario(check)).code, 0);

    // The module changes: --check differs, and says how to accept the change.
    await Deno.writeTextFile(module, source(30));
    const differs = await scenario(check);
    assert.equal(differs.code, 1, differs.stderr);
    const update = /\(if the change is intended: (.*), then review the diff\)/.exec(
      differs.stderr,
    )?.[1];
    assert.ok(update !== undefined, differs.stderr);
    const updated = await follow(update);
    assert.equal(updated.code, 0, updated.stderr);
    assert.equal((await scenario(check)).code, 0, "the goldens --check reads were updated");

    // Nothing went to the default places: golden/ beside the module, out/ in the repository.
    assert.deepEqual([...Deno.readDirSync(dirname(module))].map((e) => e.name), ["mine.ts"]);
    assert.throws(() => Deno.statSync(`${ROOT}/out/mine`), Deno.errors.NotFound);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
