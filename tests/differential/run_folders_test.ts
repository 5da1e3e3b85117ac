// The folders real programs run in (`/tmp/memprof-lab-<16 hex digits>/program`, one path length
// whatever the cache): each holds `.owner` with the pid of the process that made it; a `diff`
// stopped by SIGINT or SIGTERM removes its folders (and kills its program) and exits 130 or 143;
// folders left by processes that are gone are swept — only folders named exactly so, holding an
// owner file naming a process that is not running.
import assert from "node:assert/strict";
import { join } from "node:path";
import { removeOwnRunFolders, sweepRunFolders } from "../../lib/differential/mod.ts";
import { script, sh, withTemp } from "./helpers.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const LIB = new URL("../../lib/scenario/mod.ts", import.meta.url).href;

function hex(n: number): string {
  return [...crypto.getRandomValues(new Uint8Array(n))]
    .map((b) => b.toString(16).padStart(2, "0")).join("");
}

async function deadPid(): Promise<number> {
  const child = new Deno.Command("/bin/sh", { args: ["-c", "exit 0"] }).spawn();
  await child.status;
  return child.pid;
}

/** A folder `root/name` holding `.owner` with `owner` (or no owner file). */
function runFolder(root: string, name: string, owner?: string): string {
  const dir = join(root, name);
  Deno.mkdirSync(dir);
  Deno.writeTextFileSync(join(dir, "program"), "");
  if (owner !== undefined) Deno.writeTextFileSync(join(dir, ".owner"), owner);
  return dir;
}

function names(dir: string): string[] {
  return [...Deno.readDirSync(dir)].map((e) => e.name).sort();
}

Deno.test("sweepRunFolders removes only run folders whose owner is gone", async () => {
  await withTemp(async (root) => {
    const dead = await deadPid();
    const gone = [
      runFolder(root, `memprof-lab-${hex(8)}`, `${dead}\n`),
      runFolder(root, `memprof-lab-${hex(8)}`, `${dead}`),
    ];
    const kept = [
      runFolder(root, `memprof-lab-${hex(8)}`, "4242\n"), // a live process (isAlive says so)
      runFolder(root, `memprof-lab-${hex(8)}`, `${Deno.pid}\n`), // this process
      runFolder(root, `memprof-lab-${hex(8)}`), // no owner file
      runFolder(root, `memprof-lab-${hex(8)}`, "someone\n"), // no pid in it
      runFolder(root, `memprof-lab-${hex(8).toUpperCase()}`, `${dead}\n`), // not the pattern
      runFolder(root, `memprof-lab-${hex(8).slice(1)}`, `${dead}\n`),
      runFolder(root, `memprof-lab-${hex(8)}0`, `${dead}\n`),
      runFolder(root, `memprof-lab-random-${hex(3)}`, `${dead}\n`),
      runFolder(root, `mine-${hex(8)}`, `${dead}\n`),
    ].map((d) => d.slice(root.length + 1));
    // A link named like a run folder, to a folder with a dead owner: not followed.
    const outside = runFolder(root, "outside", `${dead}\n`);
    const link = `memprof-lab-${hex(8)}`;
    Deno.symlinkSync(outside, join(root, link));
    // A regular file named like one, and an owner file that is a link.
    const file = `memprof-lab-${hex(8)}`;
    Deno.writeTextFileSync(join(root, file), `${dead}\n`);
    const linkedOwner = runFolder(root, `memprof-lab-${hex(8)}`);
    Deno.symlinkSync(join(outside, ".owner"), join(linkedOwner, ".owner"));
    const removed = sweepRunFolders({ root, isAlive: (pid) => pid === 4242 });
    assert.deepEqual(removed.sort(), gone.sort());
    assert.deepEqual(
      names(root),
      [...kept, "outside", link, file, linkedOwner.slice(root.length + 1)].sort(),
    );
    assert.deepEqual(names(outside), [".owner", "program"]);
  });
});

Deno.test("removeOwnRunFolders removes this process's run folders only", async () => {
  await withTemp((root) => {
    const mine = runFolder(root, `memprof-lab-${hex(8)}`, `${Deno.pid}\n`);
    const other = runFolder(root, `memprof-lab-${hex(8)}`, "4242\n");
    const unnamed = runFolder(root, `memprof-lab-x${hex(8)}`, `${Deno.pid}\n`);
    removeOwnRunFolders(root);
    assert.deepEqual(names(root), [other, unnamed].map((d) => d.slice(root.length + 1)).sort());
    assert.throws(() => Deno.statSync(mine), Deno.errors.NotFound);
    return Promise.resolve();
  });
});

/** A world for `deno task diff` with a fake compiler (OCaml 5.3.0 for `-version`) whose program
 * runs `body`; a scenario module to judge. */
async function diffWorld(dir: string, body: string) {
  const program = await script(join(dir, "program.sh"), body);
  const ocamlopt = await script(
    join(dir, "ocamlopt"),
    [
      '[ "$1" = "-version" ] && { echo 5.3.0; exit 0; }',
      'out=""; prev=""',
      'for a in "$@"; do [ "$prev" = "-o" ] && out="$a"; prev="$a"; done',
      `cp ${sh(program)} "$out" && chmod +x "$out"`,
    ].join("\n"),
  );
  const module = join(dir, "tiny.ts");
  Deno.writeTextFileSync(
    module,
    `import { scenario } from "${LIB}";\n` +
      'export default scenario({ name: "tiny" }, (s) => {\n' +
      "  s.main.memprof.start({ samplingRate: 0.1 });\n" +
      "  s.main.alloc(8);\n" +
      "  s.main.memprof.stop();\n" +
      "});\n",
  );
  return ["run", "-A", join(ROOT, "cli/diff.ts"), module, "--ocamlopt", ocamlopt, "--no-known"]
    .concat(["--cache", join(dir, "cache")]);
}

async function running(pid: number): Promise<boolean> {
  const out = await new Deno.Command("/bin/sh", {
    args: ["-c", 'kill -0 "$1" 2>/dev/null', "sh", String(pid)],
  }).output();
  return out.success;
}

async function waitFor(cond: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

for (const [signal, status] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
  Deno.test(`diff stopped by ${signal} removes its run folder, kills its program, exits ${status}`, async () => {
    await withTemp(async (dir) => {
      const where = join(dir, "where");
      const args = await diffWorld(
        dir,
        `echo "$$ $(pwd)" > ${sh(where)}.new && mv ${sh(where)}.new ${sh(where)}\nexec sleep 60`,
      );
      const child = new Deno.Command(Deno.execPath(), {
        args,
        cwd: dir,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
        signal: AbortSignal.timeout(120_000),
      }).spawn();
      const output = child.output();
      let programPid = 0, runDir = "";
      try {
        await waitFor(() => {
          try {
            const [pid, path] = Deno.readTextFileSync(where).trim().split(" ");
            programPid = Number(pid);
            runDir = path;
            return true;
          } catch {
            return false;
          }
        }, "the program");
        assert.match(runDir, /^\/tmp\/memprof-lab-[0-9a-f]{16}$/);
        assert.equal(Deno.readTextFileSync(join(runDir, ".owner")), `${child.pid}\n`);
        child.kill(signal);
        const r = await output;
        const stderr = new TextDecoder().decode(r.stderr);
        assert.equal(r.signal, null, `diff died by ${r.signal}: ${stderr}`);
        assert.equal(r.code, status, stderr);
        assert.throws(() => Deno.statSync(runDir), Deno.errors.NotFound, "the run folder is left");
        await waitFor(async () => !(await running(programPid)), "the program to end");
      } finally {
        if (programPid > 0 && await running(programPid)) Deno.kill(programPid, "SIGKILL");
        if (runDir !== "") {
          try {
            Deno.removeSync(runDir, { recursive: true });
          } catch { /* removed by the command */ }
        }
      }
    });
  });
}

Deno.test("diff sweeps the run folders of processes that are gone, and only those", async () => {
  await withTemp(async (dir) => {
    const args = await diffWorld(dir, "exit 3");
    const dead = await deadPid();
    const sleeper = new Deno.Command("/bin/sh", { args: ["-c", "exec sleep 60"] }).spawn();
    const left = runFolder("/tmp", `memprof-lab-${hex(8)}`, `${dead}\n`);
    const live = runFolder("/tmp", `memprof-lab-${hex(8)}`, `${sleeper.pid}\n`);
    const unowned = runFolder("/tmp", `memprof-lab-${hex(8)}`);
    try {
      const r = await new Deno.Command(Deno.execPath(), {
        args,
        cwd: dir,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
        signal: AbortSignal.timeout(120_000),
      }).output();
      // The program exits 3: an error result, exit status 1.
      assert.equal(r.code, 1, new TextDecoder().decode(r.stderr));
      assert.match(new TextDecoder().decode(r.stdout), /tiny: error: the real program exited/);
      assert.throws(() => Deno.statSync(left), Deno.errors.NotFound, "the dead run's folder");
      assert.ok(Deno.statSync(live).isDirectory, "a live process's folder is kept");
      assert.ok(Deno.statSync(unowned).isDirectory, "a folder without owner is kept");
    } finally {
      sleeper.kill("SIGKILL");
      await sleeper.status;
      for (const d of [left, live, unowned]) {
        try {
          Deno.removeSync(d, { recursive: true });
        } catch { /* gone */ }
      }
    }
  });
});
