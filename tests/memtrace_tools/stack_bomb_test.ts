// memtrace's tools on a stack bomb (60-frame stacks over 4 KB names, a stack of its own for
// nearly every allocation; see _stack_bomb.ts), run as `deno task trace` runs them but with
// V8's heap capped at 64 MiB: flamegraph's output (about 100 MB here, each row spelling out its
// stack, as memtrace's does) must stream through that heap, and hotspots and identify must not
// build a stack's text per allocation. The rows are checked against a model of the output.
import assert from "node:assert/strict";
import { stackBombNames, stackBombTrace } from "./_stack_bomb.ts";

const ALLOCATIONS = 1000;
const HEAP_MIB = 64;

const { bytes, stacks } = stackBombTrace({ allocations: ALLOCATIONS });
const names = stackBombNames();

/** Runs `trace TOOL FILE` under the heap cap; returns its output's byte and line counts and
 * its first 200 bytes, read as they come. */
async function runCapped(tool: string, file: string) {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      `--v8-flags=--max-old-space-size=${HEAP_MIB}`,
      "--allow-read",
      new URL("../../cli/trace.ts", import.meta.url).pathname,
      tool,
      file,
    ],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let size = 0, lines = 0, head = "";
  const errText = new Response(child.stderr).text();
  for await (const chunk of child.stdout) {
    if (head.length < 200) head += new TextDecoder().decode(chunk.subarray(0, 200));
    size += chunk.length;
    for (const b of chunk) if (b === 10) lines++;
  }
  const status = await child.status;
  return { status, size, lines, head, err: await errText };
}

Deno.test("the tools run a stack bomb within a 64 MiB heap, flamegraph streaming its rows", async () => {
  const file = await Deno.makeTempFile({ suffix: ".ctf" });
  try {
    await Deno.writeFile(file, bytes);
    // The model: each allocation's names, caller first, first occurrences only; one row per
    // distinct path of two names or more, with its samples (one per allocation).
    const rows = new Map<string, number>();
    for (const s of stacks) {
      const seen = new Set<number>(), path: string[] = [];
      for (const i of s) if (!seen.has(i)) seen.add(i), path.push(names[i]);
      if (path.length < 2) continue;
      const key = path.join(";");
      rows.set(key, (rows.get(key) ?? 0) + 1);
    }
    let expected = 0;
    for (const [key, n] of rows) expected += key.length + 1 + String(n).length + 1;
    assert.ok(expected > 4 * HEAP_MIB * 2 ** 20 / 4, `output of ${expected} bytes`);

    const flame = await runCapped("flamegraph", file);
    assert.equal(flame.status.code, 0, flame.err);
    assert.equal(flame.lines, rows.size);
    assert.equal(flame.size, expected);
    assert.ok(flame.head.startsWith("Bomb.nnnn"), flame.head.slice(0, 40));

    const hot = await runCapped("hotspots", file);
    assert.equal(hot.status.code, 0, hot.err);
    assert.ok(hot.head.startsWith(`Trace for stack_bomb [7]:\n   ${ALLOCATIONS} samples`));

    const id = await runCapped("identify", file);
    assert.equal(id.status.code, 0, id.err);
    assert.ok(id.head.includes("   of stack_bomb\n"), id.head);
  } finally {
    await Deno.remove(file);
  }
});
