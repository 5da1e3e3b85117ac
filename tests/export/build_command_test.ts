// The build command an exported program's header (and `scenario --export-ocaml`) prints works as
// printed: pasted into a shell from the program's folder, it compiles the program with the
// OCaml 5.3 toolchain memprof-lab uses, and the run command then prints its callback log. Needs
// the real toolchain (tests/real_toolchain.ts); skipped with its hint otherwise.
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { exportOCaml } from "../../lib/export/mod.ts";
import { PREFIX_ENV_VAR } from "../../lib/ocaml/mod.ts";
import { scenarios } from "../../scenarios/index.ts";
import { REAL_OCAML, skipNotice } from "../real_toolchain.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const decoder = new TextDecoder();

const skip = REAL_OCAML.toolchain === undefined ? REAL_OCAML.why : undefined;
if (skip !== undefined) skipNotice("the exported programs' build commands", skip);

/** The environment in which memprof-lab finds the toolchain the tests found, with `deno` on
 * PATH. */
function toolchainEnv(): Record<string, string> {
  const tc = REAL_OCAML.toolchain!;
  const path = [dirname(Deno.execPath()), Deno.env.get("PATH") ?? "/usr/bin:/bin"];
  // A toolchain of one's own is found on PATH (ocamlfind's, through --ocamlfind only).
  if (tc.origin === "user") path.unshift(dirname(tc.ocamlopt.at(-1)!));
  return {
    NO_COLOR: "1",
    PATH: path.join(":"),
    ...(tc.prefix !== undefined ? { [PREFIX_ENV_VAR]: tc.prefix } : {}),
  };
}

/** This process's environment, without what `deno task` set for the task running the tests (a
 * `deno task` started inside it would take its INIT_CWD for the caller's folder). */
function userEnv(): Record<string, string> {
  const env = Deno.env.toObject();
  delete env.INIT_CWD;
  return env;
}

/** Runs `line` in a shell in `cwd`, as a user pasting it. */
async function sh(line: string, cwd: string) {
  const out = await new Deno.Command("sh", {
    args: ["-c", line],
    cwd,
    clearEnv: true,
    env: { ...userEnv(), ...toolchainEnv() },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr) };
}

/** Runs the printed build command, then the printed run command, as a shell would in `dir`:
 * both succeed and the program prints its log. */
async function buildAndRun(build: string, run: string, dir: string): Promise<void> {
  const built = await sh(build, dir);
  assert.equal(built.code, 0, built.stderr);
  const ran = await sh(run, dir);
  assert.equal(ran.code, 0, ran.stderr);
  assert.match(ran.stdout, /^memprof-lab differential log 1\n/);
}

/** The build and run lines of a program's header. */
function headerCommands(source: string): { build: string; run: string } {
  const m = /Build and run, from this file's folder:\n {5}(.*)\n {5}(.*)\n/.exec(source);
  assert.ok(m !== null, source.slice(0, 600));
  return { build: m[1], run: m[2] };
}

const refLoop = scenarios.find((s) => s.settings.name === "ref_loop")!;

Deno.test({
  name: "scenario --export-ocaml prints build commands that compile the program as printed",
  ignore: skip !== undefined,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "memprof-lab-build-" });
    try {
      // Outside the checkout, through the scenario command: the toolchain's full path.
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", join(ROOT, "cli/scenario.ts"), "--export-ocaml", "ml", "ref_loop"],
        cwd: dir,
        env: toolchainEnv(),
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.equal(out.code, 0, decoder.decode(out.stderr));
      const printed = decoder.decode(out.stdout);
      const build = /^ {2}build: \((.*)\)$/m.exec(printed)?.[1];
      const run = /^ {2}run: {3}\((.*)\)$/m.exec(printed)?.[1];
      assert.ok(build !== undefined && run !== undefined, printed);
      const header = headerCommands(Deno.readTextFileSync(join(dir, "ml", "ref_loop.ml")));
      assert.equal(build, `cd ml && ${header.build}`);
      assert.ok(header.build.startsWith(REAL_OCAML.toolchain!.ocamlopt.join(" ") + " "), build);
      await buildAndRun(build!, run!, dir);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "the default header's command (deno task ocaml exec) compiles the program inside a checkout",
  ignore: skip !== undefined || REAL_OCAML.toolchain?.ocamlopt.length !== 1,
  async fn() {
    // out/ is the checkout's (ignored by git) output folder.
    Deno.mkdirSync(join(ROOT, "out"), { recursive: true });
    const dir = await Deno.makeTempDir({ dir: join(ROOT, "out"), prefix: ".build-test-" });
    try {
      const program = exportOCaml(refLoop);
      Deno.writeTextFileSync(join(dir, program.fileName), program.source);
      const { build, run } = headerCommands(program.source);
      assert.match(build, /^deno task ocaml exec ocamlopt /);
      await buildAndRun(build!, run!, dir);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
