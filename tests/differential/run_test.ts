// Building and running exported programs, with a fake ocamlopt (a shell script that "compiles"
// by copying a shell script that prints a log). buildProgram and diffScenario run in a child
// Deno (see helpers.ts, inChild).
import assert from "node:assert/strict";
import { join } from "node:path";
import { exportOCaml } from "../../lib/export/mod.ts";
import { buildProgram, type DiffResult, simulateCanonical } from "../../lib/differential/mod.ts";
import {
  type ChildAnswer,
  fakeCompiler,
  fakeProgram,
  inChild,
  lineCount,
  realLogOf,
  sh,
  simulationEvents,
  small,
  withTemp,
} from "./helpers.ts";

/** The log a faithful real run of `small` prints. */
function smallLog(): string {
  const sim = simulateCanonical(small);
  return realLogOf(simulationEvents(small), exportOCaml(small), {
    minorHeapWords: small.settings.minorHeapWords,
    minorCollections: sim.minorCollections,
    majorCycles: sim.majorCycles,
  });
}

function values(a: ChildAnswer): unknown[] {
  return a.outcomes.map((o) => {
    assert.ok("value" in o, `threw: ${JSON.stringify(o)}`);
    return o.value;
  });
}

function diffResults(a: ChildAnswer): DiffResult[] {
  return values(a) as DiffResult[];
}

/** One `diffScenario` of diff_small, in a child, with the fake compiler of `dir` (the program
 * written already, with {@linkcode fakeProgram}); `cacheDir` defaults to `dir/cache`. */
async function diffSmall(
  dir: string,
  opts: {
    readonly compiler?: { readonly fail?: boolean };
    readonly cacheDir?: string;
    readonly timeoutMs?: number;
    readonly firstRuns?: number;
  } = {},
): Promise<DiffResult> {
  const { compiler, cacheDir = join(dir, "cache"), ...rest } = opts;
  const ocamlopt = await fakeCompiler(dir, compiler);
  const [r] = diffResults(
    await inChild({ op: "diff", scenario: "diff_small", ocamlopt: [ocamlopt], cacheDir, ...rest }),
  );
  return r;
}

function errorOf(r: DiffResult): string {
  assert.equal(r.status, "error", JSON.stringify(r));
  assert.ok(r.status === "error");
  return r.message;
}

Deno.test("buildProgram compiles once, then reuses the cached binary", async () => {
  await withTemp(async (dir) => {
    const ocamlopt = await fakeCompiler(dir);
    await fakeProgram(dir, "exit 0");
    const cacheDir = join(dir, "cache");
    const req = { op: "build", scenario: "diff_small", ocamlopt: [ocamlopt], cacheDir } as const;
    const first = await inChild({ ...req, times: 2 });
    const [a, b] = values(first) as string[];
    assert.equal(a, b);
    assert.match(a, new RegExp(`^${cacheDir}/diff_small-[0-9a-f]{16}/program$`));
    assert.equal((await Deno.stat(a)).mode! & 0o111, 0o111, "executable");
    assert.deepEqual(first.progress, ["compiling diff_small"]);
    const calls = (await Deno.readTextFile(join(dir, "compiler.calls"))).split("\n");
    assert.deepEqual(calls, ["-g diff_small.ml -o program", ""]);
    // Another process finds the cache too; nothing is left over from the build.
    const again = await inChild(req);
    assert.deepEqual(values(again), [a]);
    assert.deepEqual(again.progress, []);
    assert.equal(await lineCount(join(dir, "compiler.calls")), 1);
    const entries = [...Deno.readDirSync(cacheDir)].map((e) => e.name);
    assert.deepEqual(entries, [a.split("/").at(-2)]);
    // The source compiled is the exported program.
    assert.equal(
      await Deno.readTextFile(join(cacheDir, entries[0], "diff_small.ml")),
      exportOCaml(small).source,
    );
  });
});

Deno.test("buildProgram compiles again for another compiler", async () => {
  await withTemp(async (dir) => {
    const one = await fakeCompiler(join(dir, "one"));
    const two = await fakeCompiler(join(dir, "two"));
    await fakeProgram(join(dir, "one"), "exit 0");
    await fakeProgram(join(dir, "two"), "exit 0");
    const cacheDir = join(dir, "cache");
    const a = values(
      await inChild({ op: "build", scenario: "diff_small", ocamlopt: [one], cacheDir }),
    );
    const b = values(
      await inChild({ op: "build", scenario: "diff_small", ocamlopt: [two], cacheDir }),
    );
    assert.notEqual(a[0], b[0]);
    assert.equal(await lineCount(join(dir, "one", "compiler.calls")), 1);
    assert.equal(await lineCount(join(dir, "two", "compiler.calls")), 1);
  });
});

Deno.test("buildProgram hides OCAMLLIB, CAMLLIB and OCAMLPARAM from the compiler", async () => {
  await withTemp(async (dir) => {
    const compiler = await fakeCompiler(dir);
    // A wrapper that refuses to compile when any of them is set, and passes arguments on.
    const guard = join(dir, "guarded-ocamlopt");
    await Deno.writeTextFile(
      guard,
      '#!/bin/sh\n[ -n "$OCAMLLIB$CAMLLIB$OCAMLPARAM" ] && { echo "leaked: $OCAMLLIB$CAMLLIB$OCAMLPARAM" >&2; exit 7; }\n' +
        `[ "$KEPT" = yes ] || { echo "environment not passed on" >&2; exit 8; }\n` +
        `exec ${sh(compiler)} "$@"\n`,
    );
    await Deno.chmod(guard, 0o755);
    await fakeProgram(dir, "exit 0");
    const answer = await inChild(
      { op: "build", scenario: "diff_small", ocamlopt: [guard], cacheDir: join(dir, "cache") },
      { OCAMLLIB: "/bad/lib", CAMLLIB: "/bad/camllib", OCAMLPARAM: "_,O3", KEPT: "yes" },
    );
    assert.equal(values(answer).length, 1);
    assert.equal(await lineCount(join(dir, "compiler.calls")), 1);
  });
});

Deno.test("buildProgram reports a program that does not compile and keeps it with its log", async () => {
  await withTemp(async (dir) => {
    const ocamlopt = await fakeCompiler(dir, { fail: true });
    const cacheDir = join(dir, "cache");
    const req = { op: "build", scenario: "diff_small", ocamlopt: [ocamlopt], cacheDir } as const;
    const answer = await inChild({ ...req, times: 2 });
    for (const o of answer.outcomes) {
      assert.ok("error" in o, JSON.stringify(o));
      assert.equal(o.error.name, "DiffRunError");
      assert.match(
        o.error.message,
        /^the exported program did not compile \(a bug of the export\)/,
      );
      assert.match(o.error.message, /Error: Syntax error/);
      assert.ok(
        o.error.message.endsWith(`(program and log kept in ${cacheDir}/failed-diff_small)`),
      );
    }
    // A failed build is not cached: the second call compiled again.
    assert.equal(await lineCount(join(dir, "compiler.calls")), 2);
    const kept = join(cacheDir, "failed-diff_small");
    assert.match(await Deno.readTextFile(join(kept, "compile.log")), /Error: Syntax error/);
    assert.equal(
      await Deno.readTextFile(join(kept, "diff_small.ml")),
      exportOCaml(small).source,
    );
    // Only the kept failure is in the cache.
    assert.deepEqual([...Deno.readDirSync(cacheDir)].map((e) => e.name), ["failed-diff_small"]);
  });
});

Deno.test("diffScenario agrees with a program printing the simulation's log, and verifies a new binary", async () => {
  await withTemp(async (dir) => {
    const ocamlopt = await fakeCompiler(dir);
    const log = join(dir, "log.txt");
    await Deno.writeTextFile(log, smallLog());
    // The program runs with the scenario's OCAMLRUNPARAM.
    await fakeProgram(
      dir,
      '[ "$OCAMLRUNPARAM" = "s=8192,e=16" ] || { echo "OCAMLRUNPARAM=$OCAMLRUNPARAM" >&2; exit 9; }\n' +
        `cat ${sh(log)}`,
    );
    const req = {
      op: "diff",
      scenario: "diff_small",
      ocamlopt: [ocamlopt],
      cacheDir: join(dir, "cache"),
    } as const;
    const answer = await inChild({ ...req, times: 2 });
    const [first, second] = diffResults(answer);
    const sim = simulateCanonical(small);
    assert.deepEqual(first, {
      scenario: "diff_small",
      status: "agree",
      comparison: { compared: sim.lines.length },
      callbacks: { sim: sim.lines.length, real: sim.lines.length },
      collections: {
        sim: { minor: sim.minorCollections, major: sim.majorCycles },
        real: { minor: sim.minorCollections, major: sim.majorCycles },
      },
      verifiedNow: true,
    });
    assert.deepEqual(second, { ...first, verifiedNow: false });
    // Three runs of the new binary, then one; one compilation.
    assert.equal(await lineCount(join(dir, "runs")), 4);
    assert.equal(await lineCount(join(dir, "compiler.calls")), 1);
    assert.deepEqual(answer.progress, [
      "compiling diff_small",
      "running diff_small (1/3, first use)",
      "running diff_small (2/3, first use)",
      "running diff_small (3/3, first use)",
      "running diff_small",
    ]);
  });
});

Deno.test("diffScenario reports where a program's log differs from the simulation's", async () => {
  await withTemp(async (dir) => {
    const rows = smallLog().split("\n");
    // The third record (line 5 of the output): another size.
    const fields = rows[4].split(" ");
    fields[3] = String(Number(fields[3]) + 1);
    rows[4] = fields.join(" ");
    const log = join(dir, "log.txt");
    await Deno.writeTextFile(log, rows.join("\n"));
    await fakeProgram(dir, `cat ${sh(log)}`);
    const r = await diffSmall(dir, { firstRuns: 1 });
    assert.equal(r.status, "differs");
    assert.ok(r.status === "differs");
    assert.equal(r.comparison.compared, 3);
    assert.ok(r.comparison.difference?.kind === "callback");
    assert.equal(r.comparison.difference.index, 3);
    assert.deepEqual(r.comparison.difference.sim, simulateCanonical(small).lines.slice(0, 6));
    assert.equal(await lineCount(join(dir, "runs")), 1, "firstRuns 1: one run");
  });
});

Deno.test("diffScenario reports a program whose output changes between runs as an error", async () => {
  await withTemp(async (dir) => {
    const ocamlopt = await fakeCompiler(dir);
    const head = join(dir, "head.txt");
    await Deno.writeTextFile(head, "memprof-lab differential log 1\nminor_heap_words 8192\n");
    const counter = join(dir, "counter");
    await fakeProgram(
      dir,
      `n=$(cat ${sh(counter)} 2>/dev/null || echo 0); n=$((n + 1)); echo $n > ${sh(counter)}\n` +
        `cat ${
          sh(head)
        }\necho "minor_collections $n"\necho "major_cycles 0"\necho "log_overflow false"`,
    );
    const cacheDir = join(dir, "cache");
    const req = { op: "diff", scenario: "diff_small", ocamlopt: [ocamlopt], cacheDir } as const;
    const [r] = diffResults(await inChild(req));
    assert.equal(
      errorOf(r),
      "the real program is not deterministic (a bug of the export): runs 1 and 2 part at line 3: " +
        '"minor_collections 1" vs "minor_collections 2"',
    );
    assert.equal(await lineCount(join(dir, "runs")), 2, "it stops at the first change");
    // Not verified: the next diff runs it three times again.
    const [again] = diffResults(await inChild(req));
    assert.match(errorOf(again), /not deterministic/);
    assert.equal(await lineCount(join(dir, "runs")), 4);
    assert.equal(await lineCount(join(dir, "compiler.calls")), 1);
  });
});

Deno.test("diffScenario reports a program that exits with an error status", async () => {
  await withTemp(async (dir) => {
    await fakeProgram(
      dir,
      'echo "some output"\necho "Fatal error: exception Not_found" >&2\nexit 2',
    );
    const r = await diffSmall(dir);
    assert.equal(
      errorOf(r),
      "the real program exited with status 2: Fatal error: exception Not_found",
    );
  });
});

Deno.test("diffScenario stops a program that runs past the timeout", async () => {
  await withTemp(async (dir) => {
    await fakeProgram(dir, "exec sleep 30");
    const started = Date.now();
    const r = await diffSmall(dir, { timeoutMs: 500 });
    assert.equal(errorOf(r), "the real program did not finish within 0.5 s");
    assert.ok(Date.now() - started < 20_000, "the program was killed");
    assert.equal(await lineCount(join(dir, "runs")), 1);
  });
});

Deno.test("diffScenario reports output that is not a log as an error", async () => {
  await withTemp(async (dir) => {
    await fakeProgram(dir, "echo hello");
    const r = await diffSmall(dir);
    assert.equal(errorOf(r), 'the program\'s output does not start with its log header: "hello"');
  });
});

Deno.test("diffScenario reports a program that does not compile as an error", async () => {
  await withTemp(async (dir) => {
    const r = await diffSmall(dir, { compiler: { fail: true } });
    assert.match(errorOf(r), /did not compile/);
  });
});

Deno.test("buildProgram runs without env permission (the compiler inherits the environment)", async () => {
  await withTemp(async (dir) => {
    const ocamlopt = await fakeCompiler(dir);
    await fakeProgram(dir, "exit 0");
    const exe = await buildProgram(exportOCaml(small), {
      ocamlopt: [ocamlopt],
      cacheDir: join(dir, "cache"),
    });
    assert.match(exe, /\/program$/);
  });
});

Deno.test("the real program always runs from a path of one length, whatever the cache", async () => {
  // The runtime keeps the executable's path in the heap, whose size paces the major collector:
  // the path must not depend on where the cache is.
  await withTemp(async (dir) => {
    await fakeProgram(dir, 'echo "$(pwd) $0" >&2\nexit 2');
    const r = await diffSmall(dir, {
      cacheDir: join(dir, "a-much-longer-cache-folder-name", "cache"),
    });
    assert.match(
      errorOf(r),
      /^the real program exited with status 2: (\/tmp\/memprof-lab-[0-9a-f]{16}) \1\/program$/,
    );
  });
});
