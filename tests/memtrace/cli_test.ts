// `deno task trace dump|copy` run as processes: standard input and FIFOs, a reader that goes
// away, signals during a copy, a directory as output, stale temporaries, the output budget.
// Needs --allow-run (and mkfifo for the FIFO cases).
import assert from "node:assert/strict";
import { dumpTraceToString, Reader } from "../../lib/memtrace/mod.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const FIXTURES = `${ROOT}tests/fixtures/memtrace/`;
const SINGLE = `${FIXTURES}single_1e-4.ctf`;
const MULTI = `${FIXTURES}multi_mdtrace_3e-4.renumbered.ctf`;
const decoder = new TextDecoder();

function trace(args: string[], opts: Partial<Deno.CommandOptions> = {}): Deno.Command {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-read", "--allow-write", `${ROOT}cli/trace.ts`, ...args],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
    ...opts,
  });
}

async function mkfifo(path: string): Promise<void> {
  const { code } = await new Deno.Command("mkfifo", { args: [path] }).output();
  assert.equal(code, 0, "mkfifo");
}

/** The dump of a file as memtrace prints it for a pipe: size_bytes 0. */
function pipeDump(path: string): string {
  return dumpTraceToString(Reader.fromBytes(Deno.readFileSync(path)))
    .replace(/^size_bytes: \d+$/m, "size_bytes: 0");
}

async function waitFor(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

Deno.test("trace dump - reads standard input as it comes", async () => {
  const child = trace(["dump", "-"], { stdin: "piped" }).spawn();
  const output = child.output(); // read while writing: the dump comes out as the input goes in
  const w = child.stdin.getWriter();
  await w.write(Deno.readFileSync(SINGLE));
  await w.close();
  const out = await output;
  assert.equal(decoder.decode(out.stderr), "");
  assert.equal(out.code, 0);
  assert.ok(decoder.decode(out.stdout) === pipeDump(SINGLE), "dump of standard input differs");
});

Deno.test("trace dump reads a FIFO", async () => {
  const dir = Deno.makeTempDirSync();
  try {
    const fifo = `${dir}/trace.fifo`;
    await mkfifo(fifo);
    const child = trace(["dump", fifo]).spawn();
    const output = child.output();
    const f = await Deno.open(fifo, { write: true });
    const bytes = Deno.readFileSync(MULTI);
    for (let off = 0; off < bytes.length; off += 10_000) {
      await f.write(bytes.subarray(off, Math.min(bytes.length, off + 10_000)));
    }
    f.close();
    const out = await output;
    assert.equal(decoder.decode(out.stderr), "");
    assert.equal(out.code, 0);
    assert.ok(decoder.decode(out.stdout) === pipeDump(MULTI), "dump of the FIFO differs");
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("trace dump into a pipe closed early exits quietly", async () => {
  const child = trace(["dump", `${FIXTURES}ocamlopt.ctf`]).spawn();
  const reader = child.stdout.getReader();
  const first = await reader.read();
  assert.ok(!first.done && first.value.length > 0);
  await reader.cancel();
  const status = await child.status;
  const err = decoder.decode(await new Response(child.stderr).arrayBuffer());
  assert.equal(err, "");
  assert.equal(status.code, 0);
});

Deno.test("trace dump stops at --max-output with a located error", async () => {
  const out = await trace(["dump", "--max-output", "5000", SINGLE]).output();
  assert.equal(out.code, 1);
  assert.match(
    decoder.decode(out.stderr),
    new RegExp(
      `^error: trace exceeds a limit: dump output of more than 5000 characters \\(at byte offset \\d+ of ${SINGLE}\\)\\n$`,
    ),
  );
  const text = decoder.decode(out.stdout);
  assert.ok(text.length <= 5000 && text.length > 4000, `${text.length} characters`);
  assert.ok(pipeDump(SINGLE).replace("size_bytes: 0", "size_bytes: 65207").startsWith(text));
});

Deno.test("trace copy refuses a directory as output and leaves no temporary", async () => {
  const dir = Deno.makeTempDirSync();
  try {
    Deno.mkdirSync(`${dir}/out`);
    const out = await trace(["copy", SINGLE, `${dir}/out`]).output();
    assert.equal(out.code, 1);
    assert.equal(decoder.decode(out.stderr), `error: cannot write ${dir}/out: it is a directory\n`);
    assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), ["out"]);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("trace copy removes stale temporaries of its output, keeps those that may be live", async () => {
  const dir = Deno.makeTempDirSync();
  try {
    const out = `${dir}/copy.ctf`;
    const stale = `${out}.3999999999.tmp`, fresh = `${out}.3999999998.tmp`;
    Deno.writeFileSync(stale, new Uint8Array(10));
    Deno.writeFileSync(fresh, new Uint8Array(10));
    const hourAgo = new Date(Date.now() - 3600_000);
    Deno.utimeSync(stale, hourAgo, hourAgo);
    const r = await trace(["copy", SINGLE, out]).output();
    assert.equal(r.code, 0, decoder.decode(r.stderr));
    assert.deepEqual(
      [...Deno.readDirSync(dir)].map((e) => e.name).sort(),
      ["copy.ctf", "copy.ctf.3999999998.tmp"],
    );
    assert.deepEqual(Deno.readFileSync(out), Deno.readFileSync(SINGLE));
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

for (const [signal, status] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
  Deno.test(`trace copy removes its temporary on ${signal}`, async () => {
    const dir = Deno.makeTempDirSync();
    try {
      const fifo = `${dir}/in.fifo`, out = `${dir}/out.ctf`;
      await mkfifo(fifo);
      const child = trace(["copy", fifo, out]).spawn();
      const output = child.output();
      // Most of a trace, then nothing: the copy waits for more with its temporary open.
      const f = await Deno.open(fifo, { write: true });
      const bytes = Deno.readFileSync(MULTI);
      await f.write(bytes.subarray(0, bytes.length - 100));
      const tmp = `${out}.${child.pid}.tmp`;
      await waitFor(() => {
        try {
          return Deno.statSync(tmp).size > 0;
        } catch {
          return false;
        }
      }, "the temporary");
      child.kill(signal);
      const r = await output;
      f.close();
      assert.equal(r.code, status, decoder.decode(r.stderr));
      assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), ["in.fifo"]);
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  });
}
