// Every command reading a memtrace trace, on hostile traces (issue 23): one typed error with the
// file offset for malformed input, bounded time, memory and output for valid but huge input.
import assert from "node:assert/strict";
import { MemtraceFormatError, Reader } from "../../lib/memtrace/mod.ts";
import { analyzeTrace } from "../../lib/trace_analysis/mod.ts";
import { measureTrace, samplesTrace, undefinedCodeTrace } from "./_hostile.ts";

function tempDir(): string {
  return Deno.makeTempDirSync({ prefix: "memprof-lab-hostile-" });
}

Deno.test("an undefined location code: analyzeTrace raises the reader's typed error at the event", () => {
  const bytes = undefinedCodeTrace();
  const r = Reader.fromBytes(bytes, { name: "bad.ctf" });
  assert.throws(
    () => analyzeTrace(r),
    (e: unknown) =>
      e instanceof MemtraceFormatError && e.check === "invalid location code 00000003" &&
      e.file === "bad.ctf" && e.offset > 0 && e.offset < bytes.length,
  );
});

Deno.test("an undefined location code: every trace command prints the same located error", async () => {
  const dir = tempDir();
  try {
    const bad = `${dir}/bad.ctf`;
    Deno.writeFileSync(bad, undefinedCodeTrace());
    const r = Reader.fromBytes(Deno.readFileSync(bad), { name: bad });
    let offset = -1;
    try {
      analyzeTrace(r);
    } catch (e) {
      offset = (e as MemtraceFormatError).offset;
    }
    const want =
      `error: malformed trace: invalid location code 00000003 (at byte offset ${offset} of ${bad})\n`;
    for (
      const args of [
        ["top", bad],
        ["top", bad, "--by", "stack"],
        ["diff", bad, bad],
        ["export", bad, "--format", "folded"],
        ["export", bad, "--format", "pprof", "-o", `${dir}/out.pb.gz`],
        ["report", bad, "-o", `${dir}/out.html`],
        ["flamegraph", bad],
        ["hotspots", bad],
        ["subsample", bad, `${dir}/sub.ctf`, "1"],
        ["copy", bad, `${dir}/copy.ctf`],
      ]
    ) {
      const out = await measureTrace(args);
      assert.equal(out.code, 1, `${args.join(" ")}: ${out.stderr}`);
      assert.equal(out.stderr, want, args.join(" "));
    }
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("a negative nsamples stops top with the typed error (it showed -1 samples, -800 B)", async () => {
  const dir = tempDir();
  try {
    const bad = `${dir}/neg.ctf`;
    Deno.writeFileSync(bad, samplesTrace([-1]));
    for (const args of [["top", bad], ["info", bad], ["subsample", bad, `${dir}/o.ctf`, "2"]]) {
      const out = await measureTrace(args);
      assert.equal(out.code, 1, args.join(" "));
      assert.match(
        out.stderr,
        /^error: malformed trace: nsamples at least 1 \(at byte offset \d+ of .*neg\.ctf\)\n$/,
      );
    }
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
