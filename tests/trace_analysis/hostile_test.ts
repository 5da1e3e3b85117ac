// Every command reading a memtrace trace, on hostile traces (issue 23): one typed error with the
// file offset for malformed input, bounded time, memory and output for valid but huge input.
import assert from "node:assert/strict";
import { MemtraceFormatError, Reader } from "../../lib/memtrace/mod.ts";
import { analyzeTrace } from "../../lib/trace_analysis/mod.ts";
import { FOLDED_LINE_CHARS } from "../../lib/trace_analysis/folded.ts";
import { STACK_TEXT_CHARS } from "../../lib/trace_analysis/select.ts";
import {
  bombTrace,
  controlNamesTrace,
  measureTrace,
  samplesTrace,
  undefinedCodeTrace,
} from "./_hostile.ts";
import { statistics } from "../verbose.ts";

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

Deno.test("stack and name bombs: top, export folded and diff by stack in bounded memory, time and output", async () => {
  // A valid trace of 3,000 allocations, each with its own stack of 60 frames named by 4,000-
  // character function names (the whole texts of its stacks: 720 M characters). Before: top
  // --by stack took 1.6 GB (for 6,000 allocations), export --format folded failed with "Invalid
  // string length", diff A A --by stack ran for minutes.
  const allocations = 3_000;
  const dir = tempDir();
  try {
    const bomb = `${dir}/bomb.ctf`;
    Deno.writeFileSync(
      bomb,
      bombTrace({ allocations, depth: 60, nameLength: 4_000, functions: 50 }),
    );
    const size = Deno.statSync(bomb).size;
    const runs: [string, string[], (out: Uint8Array) => void][] = [
      ["top --by stack", ["top", bomb, "--by", "stack"], (out) => {
        assert.ok(out.length < 20_000, `${out.length} bytes`);
      }],
      ["top --by stack --json", ["top", bomb, "--by", "stack", "--json"], (out) => {
        const rows = JSON.parse(new TextDecoder().decode(out)).rows;
        assert.equal(rows.length, 20);
        for (const r of rows) {
          assert.ok(r.key.length <= STACK_TEXT_CHARS + 30, `key of ${r.key.length} characters`);
          assert.ok(r.framesOmitted > 0 && r.frames.length + r.framesOmitted === 60);
        }
      }],
      ["export --format folded", ["export", bomb, "--format", "folded"], (out) => {
        const lines = new TextDecoder().decode(out).trimEnd().split("\n");
        assert.ok(
          lines.length >= allocations / 2 && lines.length <= allocations,
          `${lines.length}`,
        );
        for (const l of lines) {
          assert.match(l, /^\(\d+ outer frames\);F\d+_x+(;F\d+_x+)* \d+$/);
          assert.ok(l.length <= FOLDED_LINE_CHARS + 64, `line of ${l.length} characters`);
        }
      }],
      ["diff A A --by stack", ["diff", bomb, bomb, "--by", "stack"], (out) => {
        assert.match(new TextDecoder().decode(out), /: 0 changed/);
      }],
    ];
    for (const [what, args, check] of runs) {
      const out = await measureTrace(args, 120_000);
      assert.equal(out.code, 0, `${what}: ${out.stderr}`);
      check(out.stdout);
      statistics(
        `${what} on a ${size}-byte bomb: peak RSS ${(out.peakKiB / 1024).toFixed(0)} MiB, ` +
          `${(out.ms / 1000).toFixed(1)} s, ${out.stdout.length} bytes out`,
      );
      // Well below the gigabytes of whole stack texts; the aggregate itself takes ~100 MB.
      assert.ok(!(out.peakKiB > 600 * 1024), `${what}: peak RSS ${out.peakKiB} KiB`);
    }
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("control characters in names never reach the output raw; folded lines keep their format", async () => {
  const dir = tempDir();
  try {
    const t = `${dir}/ctl.ctf`;
    Deno.writeFileSync(t, controlNamesTrace());
    // Any C0 character but the newline, DEL, or C1 (U+0080 to U+009F, as UTF-8 C2 80 to C2 9F).
    // deno-lint-ignore no-control-regex
    const raw = /[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]/;
    for (
      const args of [
        ["top", t, "--by", "function"],
        ["top", t],
        ["top", t, "--by", "stack"],
        ["diff", t, t, "--from", "0.0002"],
        ["diff", t, t, "--by", "stack", "--from", "0.0002"],
        ["export", t, "--format", "folded"],
        ["flamegraph", t],
        ["hotspots", t],
        ["identify", t],
        ["dump", t],
      ]
    ) {
      const out = await measureTrace(args);
      assert.equal(out.code, 0, `${args.join(" ")}: ${out.stderr}`);
      const bytes = new TextDecoder("latin1").decode(out.stdout);
      assert.ok(out.stdout.length > 0, args.join(" "));
      const m = raw.exec(bytes);
      assert.equal(m, null, `${args.join(" ")}: raw ${JSON.stringify(m?.[0])} in its output`);
      if (args[0] === "top" || args[0] === "export") {
        assert.ok(bytes.includes("\\x1b[31m"), `${args.join(" ")}: escaped ESC`);
      }
      if (args[0] === "export") {
        // One line per path: frames separated by ";" (a ";" in a name is \x3b), then the bytes.
        const lines = new TextDecoder().decode(out.stdout).trimEnd().split("\n");
        assert.ok(lines.length >= 4, `${lines.length} lines`);
        for (const l of lines) {
          assert.match(l, /^Evil\.[^; ]+(;Evil\.[^; ]+)* \d+$/, l);
        }
        assert.ok(lines.some((l) => l.includes("Evil.semi\\x3bcolon")));
      }
    }
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
