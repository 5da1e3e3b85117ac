// Paths typed on the command line reach the terminal in the commands' messages (errors, warnings,
// "wrote …" lines): a control character in one (an escape sequence in a file's name) is printed
// escaped (`\x1b`), never raw. Each case runs the command as a process, in a folder holding files
// whose names carry an OSC title sequence, a carriage return and a C1 control.
import assert from "node:assert/strict";
import { join } from "node:path";
import { memprofLab, root } from "./helpers.ts";

/** A name with ESC ] … BEL (sets the terminal's title), CR and U+009B (CSI). */
const HOSTILE = "t\x1b]0;owned\x07\r\u009bx";

/** Control characters but newline: none may reach the terminal from these commands. */
// deno-lint-ignore no-control-regex
const RAW_CONTROL = /[\x00-\x09\x0b-\x1f\x7f-\x9f]/;

Deno.test("paths with control characters are printed escaped in the commands' messages", async () => {
  const dir = await Deno.makeTempDir({ prefix: "memprof-lab-paths-" });
  try {
    const ctf = `${HOSTILE}.ctf`;
    const ring = `${HOSTILE}.events`;
    await Deno.copyFile(join(root, "tests/fixtures/memtrace/single_1e-4.ctf"), join(dir, ctf));
    await Deno.copyFile(
      join(root, "tests/fixtures/runtime_events/d8/18440.events"),
      join(dir, ring),
    );
    const cases: { args: string[]; code: number; says: RegExp }[] = [
      // Errors: a missing file, and one that is not a trace.
      {
        args: ["trace", "info", `missing-${ctf}`],
        code: 1,
        says: /^error: .*missing-t\\x1b\]0;owned\\x07\\x0d\\x9bx/,
      },
      { args: ["trace", "info", ring], code: 1, says: /^error: .*t\\x1b\]0;owned/ },
      // "copied … from … to …" and "wrote …" lines.
      {
        args: ["trace", "copy", ctf, `out-${ctf}`],
        code: 0,
        says: /^copied \d+ events from t\\x1b/,
      },
      { args: ["trace", "strip-names", ctf, `n-${ctf}`], code: 0, says: /to n-t\\x1b\]0;owned/ },
      {
        args: ["trace", "export", ctf, "--format", "folded", "-o", `f-${HOSTILE}.txt`],
        code: 0,
        says: /^wrote f-t\\x1b\]0;owned\\x07\\x0d\\x9bx\.txt/,
      },
      // The ring's export, with the trace of another process beside it: a warning naming both.
      {
        args: [
          "events",
          "export",
          ring,
          "--format",
          "chrome",
          "--with-trace",
          ctf,
          "-o",
          `e-${HOSTILE}.json`,
        ],
        code: 0,
        says: /^warning: t\\x1b\]0;owned.*\nwrote e-t\\x1b\]0;owned/s,
      },
    ];
    for (const c of cases) {
      const ran = await memprofLab(c.args, dir);
      const what = `memprof-lab ${c.args.map((a) => JSON.stringify(a)).join(" ")}`;
      assert.equal(ran.code, c.code, `${what}: ${JSON.stringify(ran.stderr)}`);
      assert.doesNotMatch(ran.stderr, RAW_CONTROL, `${what}: ${JSON.stringify(ran.stderr)}`);
      assert.match(ran.stderr, c.says, `${what}: ${JSON.stringify(ran.stderr)}`);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
