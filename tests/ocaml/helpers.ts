// Helpers for the toolchain tests: temporary directories, fake programs (shell scripts), and a
// fake build runner that imitates npm pack, tar, configure and make without building anything.
import { basename, join } from "node:path";
import type { CommandRunner, RunOptions } from "../../lib/ocaml/mod.ts";
import { OCAML_NPM_INTEGRITY, OCAML_VERSION } from "../../lib/ocaml/mod.ts";
import type { OCamlCliIO } from "../../cli/ocaml.ts";

/** The `ocaml` command's outside world for a run in-process: environment `env`, the build runner
 * `runner` when given, standard output and error kept in `out` and `err`. */
export function ocamlCliIO(env: Record<string, string | undefined>, runner?: CommandRunner) {
  const io = {
    out: "",
    err: "",
    env,
    ...(runner ? { runner } : {}),
    stdout(text: string) {
      io.out += text;
    },
    stderr(text: string) {
      io.err += text;
    },
  };
  return io satisfies OCamlCliIO;
}

/** Runs `fn` with a fresh temporary directory, removed afterwards. */
export async function withTemp<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await Deno.makeTempDir({ prefix: "memprof-ocaml-test-" });
  try {
    return await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/** Writes an executable shell script at `path`. */
export async function script(path: string, body: string, mode = 0o755): Promise<string> {
  await Deno.mkdir(join(path, ".."), { recursive: true });
  await Deno.writeTextFile(path, `#!/bin/sh\n${body}\n`);
  await Deno.chmod(path, mode);
  return path;
}

/** An `ocamlopt` that prints `version` for `-version`. */
export function fakeOcamlopt(path: string, version: string): Promise<string> {
  return script(path, `[ "$1" = "-version" ] && { echo ${version}; exit 0; }\nexit 3`);
}

/** An `ocamlfind` whose `ocamlfind ocamlopt -version` prints `version`. */
export function fakeOcamlfind(path: string, version: string): Promise<string> {
  return script(
    path,
    `[ "$1" = "ocamlopt" ] && [ "$2" = "-version" ] && { echo ${version}; exit 0; }\n` +
      `echo "ocamlfind: unexpected $*" >&2; exit 2`,
  );
}

/** A directory of do-nothing stand-ins for the build tools, to satisfy the PATH check. */
export async function fakeToolsDir(dir: string, tools = ["gcc", "make", "npm", "tar"]) {
  await Deno.mkdir(dir, { recursive: true });
  for (const t of tools) await script(join(dir, t), "exit 0");
  return dir;
}

/** Environment for a test: HOME and XDG_CACHE_HOME under `root`, PATH = the given dirs. */
export function testEnv(root: string, path: string[], extra: Record<string, string> = {}) {
  return {
    HOME: join(root, "home"),
    XDG_CACHE_HOME: join(root, "cache"),
    PATH: path.join(":"),
    ...extra,
  };
}

/** How the fake build behaves. */
export interface FakeBuild {
  /** The integrity npm pack reports (default the pinned one). */
  packIntegrity?: string;
  /** The step whose command exits with status 2 (after printing an error line). */
  failAt?: "npm" | "tar" | "configure" | "make" | "install";
  /** The version the installed fake ocamlopt prints (default 5.3.0). */
  installedVersion?: string;
  /** `make` (the build, not install) waits for this before finishing. */
  makeGate?: Promise<void>;
  /** Called when `make` (the build) starts. */
  onMake?: () => void;
  /** `make` waits until the signal aborts, then exits as if killed. */
  hangInMakeUntilAborted?: boolean;
}

/** A fake {@link CommandRunner} and the commands it was asked to run. */
export function fakeRunner(b: FakeBuild = {}): { runner: CommandRunner; calls: string[][] } {
  const calls: string[][] = [];
  let prefix = "";
  const enc = new TextEncoder();
  const runner: CommandRunner = async (command: readonly string[], o: RunOptions) => {
    calls.push([...command]);
    const say = (s: string, stream: "stdout" | "stderr" = "stdout") =>
      o.onOutput(enc.encode(s), stream);
    const tool = basename(command[0]);
    const step = tool === "make" ? (command[1] === "install" ? "install" : "make") : tool;
    if (b.failAt === step || (b.failAt === "configure" && tool === "configure")) {
      say(`${tool}: something went wrong\n`, "stderr");
      say(`fatal error in ${step}\n`, "stderr");
      return 2;
    }
    switch (step) {
      case "npm": {
        const dest = command[command.indexOf("--pack-destination") + 1];
        await Deno.writeTextFile(join(dest, "ocaml-5.3.0.tgz"), "fake tarball");
        say("npm notice ocaml@5.3.0\n", "stderr");
        say(JSON.stringify([{
          name: "ocaml",
          version: "5.3.0",
          filename: "ocaml-5.3.0.tgz",
          integrity: b.packIntegrity ?? OCAML_NPM_INTEGRITY,
          files: [{ path: "configure" }],
        }]));
        return 0;
      }
      case "tar":
        await Deno.mkdir(join(o.cwd, "package"), { recursive: true });
        await Deno.writeTextFile(join(o.cwd, "package", "configure"), "#!/bin/sh\n");
        return 0;
      case "configure":
        prefix = command.find((a) => a.startsWith("--prefix="))!.slice("--prefix=".length);
        say("checking for gcc... gcc\nconfig.status: creating Makefile.config\n");
        return 0;
      case "make":
        b.onMake?.();
        say("OCAMLC stdlib/stdlib.cmo\n");
        if (b.hangInMakeUntilAborted) {
          await new Promise<void>((done) => {
            if (o.signal?.aborted) done();
            o.signal?.addEventListener("abort", () => done(), { once: true });
          });
          return 143;
        }
        if (b.makeGate) await b.makeGate;
        say("OCAMLOPT compilerlibs/ocamloptcomp.cmxa\n");
        return 0;
      case "install": {
        const destdir = command.find((a) => a.startsWith("DESTDIR="))!.slice("DESTDIR=".length);
        const root = join(destdir, prefix);
        await fakeOcamlopt(join(root, "bin", "ocamlopt"), b.installedVersion ?? "5.3.0");
        await Deno.mkdir(join(root, "lib", "ocaml"), { recursive: true });
        await Deno.writeTextFile(join(root, "lib", "ocaml", "stdlib.cmxa"), "");
        return 0;
      }
    }
    say(`fake runner: unexpected command ${command.join(" ")}\n`, "stderr");
    return 127;
  };
  return { runner, calls };
}

/** The names of the entries of `dir`, sorted. */
export async function entries(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) out.push(e.name);
  return out.sort();
}

/** Whether `path` exists. */
export async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}

/** The pid of a process that has exited (and been reaped). */
export async function deadPid(): Promise<number> {
  const child = new Deno.Command("/bin/sh", { args: ["-c", "exit 0"] }).spawn();
  await child.status;
  return child.pid;
}

/** A test world: fake build tools on PATH, the default cache under `dir/cache`. */
export async function toolchainWorld(dir: string) {
  const tools = await fakeToolsDir(join(dir, "tools"));
  const env = testEnv(dir, [tools]);
  const cacheDir = join(dir, "cache", "memprof-lab");
  const prefix = join(cacheDir, `ocaml-${OCAML_VERSION}`);
  return { env, cacheDir, prefix, tools };
}
