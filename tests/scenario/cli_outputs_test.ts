// A scenario's outputs are written as a folder: into a temporary folder beside the final one,
// then swapped in, so that they are all old or all new; temporaries of interrupted runs are
// removed, and errors name the file.
import assert from "node:assert/strict";
import { run } from "../../cli/scenario.ts";
import { stub } from "./cli_stub.ts";

const encoder = new TextEncoder();
const OUTPUTS = [
  "/o/alloc_counts/",
  "/o/alloc_counts/callbacks.txt",
  "/o/alloc_counts/events.txt",
  "/o/alloc_counts/report.html",
  "/o/alloc_counts/summary.json",
  "/o/alloc_counts/trace.ctf",
  "/o/alloc_counts/trace.txt",
];

/** A stub whose /o/alloc_counts holds outputs of an earlier run, marked as old. */
function withOldOutputs(opts: Parameters<typeof stub>[0] = {}) {
  const io = stub(opts);
  io.mkdirAll("/o/alloc_counts");
  for (const p of OUTPUTS.slice(1)) io.files.set(p, encoder.encode("old\n"));
  io.files.set("/o/alloc_counts/77.events", encoder.encode("old\n"));
  return io;
}

function isOld(io: ReturnType<typeof stub>): boolean {
  return io.tree("/o/alloc_counts").every((p) => p.endsWith("/") || io.text(p) === "old\n");
}

function temporaries(io: ReturnType<typeof stub>): string[] {
  return io.tree("/o").filter((p) => p.slice(3).startsWith("."));
}

Deno.test("a run replaces the scenario's output folder as a whole", async () => {
  const io = withOldOutputs();
  assert.equal(await run(["alloc_counts", "--out", "/o"], io), 0);
  // The old ring file of another pid is gone with the rest: nothing of the old run remains.
  assert.deepEqual(io.tree("/o"), OUTPUTS);
  assert.ok(io.tree("/o/alloc_counts").every((p) => p.endsWith("/") || io.text(p) !== "old\n"));
  assert.deepEqual(temporaries(io), []);
});

Deno.test("a folder holding other files than outputs is not replaced", async () => {
  const io = withOldOutputs();
  io.files.set("/o/alloc_counts/notes.md", encoder.encode("mine\n"));
  assert.equal(await run(["alloc_counts", "--out", "/o"], io), 1);
  assert.match(
    io.err,
    /error: not replacing \/o\/alloc_counts: it holds notes\.md, which this command does not write/,
  );
  assert.equal(io.text("/o/alloc_counts/notes.md"), "mine\n");
  io.files.delete("/o/alloc_counts/notes.md");
  assert.ok(isOld(io));
  assert.deepEqual(temporaries(io), []);
  const file = stub();
  file.mkdirAll("/o");
  file.files.set("/o/alloc_counts", encoder.encode("a file\n"));
  assert.equal(await run(["alloc_counts", "--out", "/o"], file), 1);
  assert.match(file.err, /cannot write \/o\/alloc_counts: it exists and is not a folder/);
});

Deno.test("a write error names the file and leaves the old outputs whole", async () => {
  const io = withOldOutputs({
    failWrite: { path: "/summary.json", message: "No space left on device (os error 28)" },
  });
  assert.equal(await run(["alloc_counts", "ref_loop", "--out", "/o"], io), 1);
  assert.match(
    io.err,
    /^error: cannot write \/o\/alloc_counts\/summary\.json: No space left on device \(os error 28\)$/m,
  );
  assert.ok(isOld(io), "all old");
  assert.equal(io.tree("/o/alloc_counts").length, OUTPUTS.length, "nothing added");
  assert.deepEqual(temporaries(io), []);
});

Deno.test("an interrupt while writing removes the temporary folder and keeps the old outputs", async () => {
  for (let turn = 1; turn <= 6; turn++) {
    const io = withOldOutputs();
    io.pendingSignal = "SIGINT";
    io.signalAtTurn = turn;
    const status = await run(["alloc_counts", "--out", "/o"], io);
    assert.equal(status, 1, `turn ${turn}`);
    assert.match(io.err, /error: exit 130/); // the stub's Deno.exit(130)
    assert.ok(isOld(io), `turn ${turn}: all old`);
    assert.deepEqual(temporaries(io), [], `turn ${turn}`);
  }
  // The listener is removed once the folder is in place: a later signal finds no handler.
  const io = withOldOutputs();
  assert.equal(await run(["alloc_counts", "--out", "/o"], io), 0);
  io.pendingSignal = "SIGTERM";
  io.signalAtTurn = io.turns + 1;
  await io.nextTurn(); // would throw StubExit(143) if a handler were still listening
  assert.equal(io.pendingSignal, undefined);
});

Deno.test("temporaries of runs whose process is gone are removed; an interrupted swap is undone", async () => {
  const io = withOldOutputs();
  // A dead run's temporary folder, a live run's, and a dead run's swap cut between renames.
  io.mkdirAll("/o/.alloc_counts.12345.tmp");
  io.files.set("/o/.alloc_counts.12345.tmp/trace.ctf", encoder.encode("half\n"));
  io.mkdirAll("/o/.alloc_counts.777.tmp");
  io.alive.add(777);
  io.mkdirAll("/o/.ref_loop.12346.old");
  io.files.set("/o/.ref_loop.12346.old/trace.txt", encoder.encode("previous\n"));
  io.mkdirAll("/o/.notes.txt"); // not a temporary name: left alone
  assert.equal(await run(["alloc_counts", "--out", "/o"], io), 0);
  assert.equal(io.kind("/o/.alloc_counts.12345.tmp"), undefined);
  assert.equal(io.kind("/o/.alloc_counts.777.tmp"), "directory");
  assert.equal(io.text("/o/ref_loop/trace.txt"), "previous\n", "restored");
  assert.equal(io.kind("/o/.notes.txt"), "directory");
});
