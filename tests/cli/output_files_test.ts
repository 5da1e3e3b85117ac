// Where the writing commands put their output (`trace copy|subsample|strip-names|export|report`,
// `events export -o`): a device or FIFO named as OUT, or a symbolic link to one, is written in
// place and stays what it was (a temporary renamed over it would turn /dev/null into a regular
// file); SIGINT or SIGTERM while OUT is being written removes the temporary, leaves OUT as it
// was, and ends the command with status 130 or 143 instead of dying by the signal.
//
// /dev/null itself is never named as OUT (were the fix missing, the test would replace it): a
// symbolic link to it is, in a temporary folder, and so are FIFOs made there.
import assert from "node:assert/strict";
import { join } from "node:path";
import { run as traceRun } from "../../cli/trace.ts";
import { run as eventsRun } from "../../cli/events.ts";
import { root } from "./helpers.ts";

const SINGLE = join(root, "tests/fixtures/memtrace/single_1e-4.ctf");
const MULTI = join(root, "tests/fixtures/memtrace/multi_mdtrace_3e-4.renumbered.ctf");
const RING = join(root, "tests/fixtures/runtime_events/e10/18448.events");

/** A writing command: its tool, and its arguments reading `input` and writing `out`. */
interface Writer {
  name: string;
  tool: "trace" | "events";
  args(input: string, out: string): string[];
  /** A ring file rather than a trace. */
  ring?: boolean;
}

const WRITERS: Writer[] = [
  { name: "trace copy", tool: "trace", args: (i, o) => ["copy", i, o] },
  { name: "trace subsample", tool: "trace", args: (i, o) => ["subsample", i, o, "10"] },
  { name: "trace strip-names", tool: "trace", args: (i, o) => ["strip-names", i, o] },
  {
    name: "trace export",
    tool: "trace",
    args: (i, o) => ["export", i, "--format", "folded", "-o", o],
  },
  { name: "trace report", tool: "trace", args: (i, o) => ["report", i, "-o", o] },
  {
    name: "events export",
    tool: "events",
    ring: true,
    args: (i, o) => ["export", i, "--format", "chrome", "-o", o],
  },
];

const hasDevNull = (() => {
  try {
    return Deno.statSync("/dev/null").isCharDevice === true;
  } catch {
    return false;
  }
})();

async function mkfifo(path: string): Promise<void> {
  const { code } = await new Deno.Command("mkfifo", { args: [path] }).output();
  assert.equal(code, 0, "mkfifo");
}

/** Runs a writer in this process; its stderr summary goes to the test's stderr. */
function runHere(w: Writer, args: string[]): Promise<number> {
  return w.tool === "trace" ? traceRun(args) : eventsRun(args);
}

function names(dir: string): string[] {
  return [...Deno.readDirSync(dir)].map((e) => e.name).sort();
}

/** Runs `w` writing to `out` (a FIFO, or a link to one) while `cat` drains it; returns what
 * `cat` read. If `out` is no longer a FIFO afterwards, `cat` (blocked on the old one) is
 * killed and the test fails. */
async function throughFifo(w: Writer, input: string, out: string, fifo: string) {
  const cat = new Deno.Command("cat", { args: [fifo], stdout: "piped", stderr: "null" }).spawn();
  const code = await runHere(w, w.args(input, out));
  const stillFifo = Deno.statSync(fifo).isFifo === true;
  if (!stillFifo) {
    try {
      cat.kill("SIGKILL");
    } catch { /* gone */ }
  }
  const read = await cat.output();
  assert.equal(code, 0, `${w.name}: exit status`);
  assert.ok(stillFifo, `${w.name}: the FIFO was replaced`);
  return read.stdout;
}

Deno.test({
  name: "writing commands write into a device (a link to /dev/null) in place, never replace it",
  ignore: !hasDevNull,
  async fn() {
    for (const w of WRITERS) {
      const dir = Deno.makeTempDirSync({ prefix: "output_special_" });
      try {
        const link = join(dir, "null");
        Deno.symlinkSync("/dev/null", link);
        assert.equal(await runHere(w, w.args(w.ring ? RING : SINGLE, link)), 0, w.name);
        const st = Deno.lstatSync(link);
        assert.ok(st.isSymlink, `${w.name}: the link to /dev/null was replaced`);
        assert.equal(Deno.readLinkSync(link), "/dev/null");
        assert.ok(Deno.statSync("/dev/null").isCharDevice, "/dev/null is still a device");
        assert.deepEqual(names(dir), ["null"], `${w.name}: something left beside OUT`);
      } finally {
        Deno.removeSync(dir, { recursive: true });
      }
    }
  },
});

Deno.test("writing commands write into a FIFO, or a link to one, in place: the bytes of a file", async () => {
  for (const w of WRITERS) {
    const dir = Deno.makeTempDirSync({ prefix: "output_fifo_" });
    try {
      const input = w.ring ? RING : SINGLE;
      const regular = join(dir, "regular.out");
      assert.equal(await runHere(w, w.args(input, regular)), 0, w.name);
      const want = Deno.readFileSync(regular);
      assert.ok(want.length > 0);
      const fifo = join(dir, "out.fifo"), link = join(dir, "link");
      await mkfifo(fifo);
      Deno.symlinkSync(fifo, link);
      const direct = await throughFifo(w, input, fifo, fifo);
      const viaLink = await throughFifo(w, input, link, fifo);
      const what = `${w.name}: what the FIFO carried differs from the regular file`;
      // A report names no time of its own: both bytes equal the regular file's.
      assert.ok(direct.length === want.length && direct.every((b, i) => b === want[i]), what);
      assert.ok(viaLink.length === want.length && viaLink.every((b, i) => b === want[i]), what);
      assert.ok(Deno.lstatSync(fifo).isFifo, `${w.name}: the FIFO is still one`);
      assert.ok(Deno.lstatSync(link).isSymlink, `${w.name}: the link is still one`);
      assert.deepEqual(names(dir), ["link", "out.fifo", "regular.out"]);
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  }
});

Deno.test("a regular OUT is still replaced whole through a temporary (a new inode)", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "output_regular_" });
  try {
    const out = join(dir, "copy.ctf");
    Deno.writeTextFileSync(out, "old");
    const before = Deno.statSync(out).ino;
    assert.equal(await traceRun(["copy", SINGLE, out]), 0);
    assert.deepEqual(Deno.readFileSync(out), Deno.readFileSync(SINGLE));
    assert.notEqual(Deno.statSync(out).ino, before, "renamed into place, not rewritten");
    assert.deepEqual(names(dir), ["copy.ctf"]);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

// ---- signals ----------------------------------------------------------------------------------

const PERMISSIONS: Record<Writer["tool"], string[]> = {
  trace: ["--allow-read", "--allow-write"],
  events: ["--allow-read", "--allow-write", "--allow-run=kill"],
};

async function waitFor(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function writeAllAsync(f: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  for (let off = 0; off < bytes.length;) off += await f.write(bytes.subarray(off));
}

const SIGNALLED: [Writer, Deno.Signal, number, boolean][] = WRITERS.map((w, i) => [
  w,
  i % 2 === 0 ? "SIGINT" : "SIGTERM",
  i % 2 === 0 ? 130 : 143,
  i % 3 === 0, // whether OUT exists before (it must be left as it was)
]);

for (const [w, signal, status, existing] of SIGNALLED) {
  Deno.test(`${w.name} on ${signal}: removes its temporary, leaves OUT, exits ${status}`, async () => {
    const dir = Deno.makeTempDirSync({ prefix: "output_signal_" });
    try {
      // The input is a FIFO fed all but its last bytes: the command stays busy with OUT open
      // (its temporary there) until the FIFO is closed, after the signal.
      const fifo = join(dir, "in.fifo"), out = join(dir, "out");
      await mkfifo(fifo);
      if (existing) Deno.writeTextFileSync(out, "the old OUT\n");
      const child = new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          ...PERMISSIONS[w.tool],
          join(root, "cli", `${w.tool}.ts`),
          ...w.args(fifo, out),
        ],
        cwd: dir,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
        signal: AbortSignal.timeout(120_000),
      }).spawn();
      const output = child.output();
      const f = await Deno.open(fifo, { write: true });
      const bytes = Deno.readFileSync(w.ring ? RING : MULTI);
      const tmp = `${out}.${child.pid}.tmp`;
      try {
        await writeAllAsync(f, bytes.subarray(0, bytes.length - 100));
        await waitFor(() => {
          try {
            Deno.lstatSync(tmp);
            return true;
          } catch {
            return false;
          }
        }, `the temporary ${tmp}`);
        child.kill(signal);
      } finally {
        f.close();
      }
      const r = await output;
      const stderr = new TextDecoder().decode(r.stderr);
      assert.equal(r.signal, null, `${w.name} died by ${r.signal}; stderr: ${stderr}`);
      assert.equal(r.code, status, `${w.name}: exit status; stderr: ${stderr}`);
      assert.deepEqual(names(dir), existing ? ["in.fifo", "out"] : ["in.fifo"]);
      if (existing) assert.equal(Deno.readTextFileSync(out), "the old OUT\n");
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  });
}
