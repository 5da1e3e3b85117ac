// tests/run_tests.ts, the runner of `deno task test`: deno's report condensed to one line per
// file, failures and skip notices kept whole, deno's summary unchanged.
import assert from "node:assert/strict";
import {
  Condenser,
  denoDuration,
  mergedSummary,
  parseSummary,
  plan,
  quickTierLine,
  splitArgs,
} from "./run_tests.ts";
import { REAL_RUNTIME_FILES } from "./tier.ts";

/** What the condenser prints for deno's `report`, with a clock that advances 1.5 s a call. */
function condense(report: string): string[] {
  let t = 0;
  const c = new Condenser(() => (t += 1500));
  return [...report.split("\n").flatMap((l) => c.push(l)), ...c.end()];
}

Deno.test("passing files are one line each; the summary passes unchanged", () => {
  const report = [
    "------- pre-test output -------",
    "SKIPPED: the real OCaml — no toolchain",
    "----- pre-test output end -----",
    "running 3 tests from ./tests/a_test.ts",
    "one ... ok (1ms)",
    "two ...",
    "------- output -------",
    "a statistic",
    "----- output end -----",
    "two ... ok (2ms)",
    "steps ...",
    "  s1 ... ok (0ms)",
    "steps ... ok (1ms)",
    "running 2 tests from ./tests/b_test.ts",
    "b1 ... ok (1ms)",
    "real ... ignored (0ms)",
    "",
    "ok | 4 passed (1 step) | 0 failed | 1 ignored (9s)",
    "",
  ].join("\n");
  assert.deepEqual(condense(report), [
    "SKIPPED: the real OCaml — no toolchain",
    "./tests/a_test.ts ... ok | 3 passed (1.5 s)",
    "./tests/b_test.ts ... ok | 1 passed | 1 ignored (1.5 s)",
    "ok | 4 passed (1 step) | 0 failed | 1 ignored (9s)",
    "",
  ]);
});

Deno.test("a file with a failure is reported whole, then deno's errors and failures", () => {
  const failing = [
    "running 2 tests from ./tests/a_test.ts",
    "passes ...",
    "------- output -------",
    "what the test printed",
    "----- output end -----",
    "passes ... ok (1ms)",
    "fails ... FAILED (2ms)",
  ];
  const tail = [
    "",
    " ERRORS ",
    "",
    "fails => ./tests/a_test.ts:3:6",
    "error: Error: boom",
    "",
    " FAILURES ",
    "",
    "fails => ./tests/a_test.ts:3:6",
    "",
    "FAILED | 2 passed | 1 failed (1s)",
  ];
  const report = [
    ...failing,
    "running 1 test from ./tests/b_test.ts",
    "b1 ... ok (1ms)",
    ...tail,
  ].join("\n");
  assert.deepEqual(condense(report), [
    ...failing,
    "./tests/b_test.ts ... ok | 1 passed (1.5 s)",
    ...tail.slice(1), // the blank line ending b_test.ts's report went with it
  ]);
  // The summary's form is what .ci/run looks for.
  assert.match(condense(report).at(-1)!, /^(ok|FAILED) \| [0-9]+ passed/);
});

Deno.test("a failed step fails its file; colors do not change what is read", () => {
  const report = [
    "running 1 test from ./tests/s_test.ts",
    "steps ...",
    "  s1 ... \x1b[0m\x1b[31mFAILED\x1b[0m (1ms)",
    "steps ... \x1b[0m\x1b[31mFAILED\x1b[0m (due to 1 failed step) (1ms)",
    "\x1b[0m\x1b[32mok\x1b[0m | 0 passed | 1 failed (1s)",
  ].join("\n");
  const out = condense(report);
  assert.equal(out.length, 5);
  assert.equal(out[0], "running 1 test from ./tests/s_test.ts");
});

Deno.test("a test running for over a minute: its result on a line of its own is counted", () => {
  const name = "speedscope imports the exports";
  const report = (result: string) =>
    [
      "running 2 tests from ./tests/slow_test.ts",
      `${name} ...'${name}' has been running for over (1m0s)`,
      `'${name}' has been running for over (2m0s)`,
      ` ${result} (2m34s)`,
      "quick ... ok (1ms)",
      "",
      "ok | 2 passed | 0 failed (2m35s)",
    ].join("\n");
  assert.deepEqual(condense(report("ok")).slice(0, 1), [
    "./tests/slow_test.ts ... ok | 2 passed (1.5 s)",
  ]);
  // Failed, the file is reported whole.
  const failed = condense(report("FAILED"));
  assert.ok(failed.includes(" FAILED (2m34s)"), failed.join("\n"));
  assert.ok(!failed.some((l) => /slow_test\.ts \.\.\. ok/.test(l)));
});

Deno.test("deno's summary line is read label by label, and several are summed in its form", () => {
  const a = parseSummary("ok | 4 passed (1 step) | 0 failed | 1 ignored (9s)")!;
  assert.deepEqual([...a], [
    ["passed", { count: 4, steps: 1 }],
    ["failed", { count: 0, steps: 0 }],
    ["ignored", { count: 1, steps: 0 }],
  ]);
  const b = parseSummary("\x1b[0m\x1b[31mFAILED\x1b[0m | 2 passed (3 steps) | 1 failed (1m2s)")!;
  assert.equal(parseSummary("running 2 tests from ./tests/a_test.ts"), undefined);
  assert.equal(parseSummary("ok (2ms)"), undefined);
  assert.equal(
    mergedSummary([a, a], 0, 864_000),
    "ok | 8 passed (2 steps) | 0 failed | 2 ignored (14m24s)",
  );
  assert.equal(
    mergedSummary([a, b], 0, 9_500),
    "FAILED | 6 passed (4 steps) | 1 failed | 1 ignored (9s)",
  );
  // A run that failed without a summary (a module that does not load) is one failure.
  assert.equal(
    mergedSummary([a], 1, 178),
    "FAILED | 4 passed (1 step) | 1 failed | 1 ignored (178ms)",
  );
  assert.equal(mergedSummary([], 0, 0), "ok | 0 passed | 0 failed (0ms)");
  // The form .ci/run looks for.
  assert.match(mergedSummary([a, b], 0, 1), /^(ok|FAILED) \| [0-9]+ passed/);
  assert.equal(denoDuration(59_999), "59s");
  assert.equal(denoDuration(60_000), "1m0s");
});

Deno.test("MEMPROF_LAB_TEST_JOBS=2 runs each file of tests/ on its own, reports it whole, sums the totals", async () => {
  const dir = await Deno.makeTempDir({ prefix: "memprof-lab-run-tests-" });
  try {
    await Deno.mkdir(`${dir}/tests/sub`, { recursive: true });
    await Deno.writeTextFile(
      `${dir}/tests/a_test.ts`,
      'console.log(`SKIPPED: a notice (tier ${Deno.env.get("MEMPROF_LAB_TEST_TIER")})`);\n' +
        'Deno.test("a1", () => {});\n' +
        'Deno.test("a2", async (t) => { await t.step("s", () => {}); });\n',
    );
    await Deno.writeTextFile(
      `${dir}/tests/sub/b_test.ts`,
      'Deno.test("b1", () => {});\nDeno.test("b2", () => { throw new Error("boom"); });\n' +
        'Deno.test({ name: "b3", ignore: true, fn() {} });\n',
    );
    await Deno.writeTextFile(`${dir}/tests/helper.ts`, "export const x = 1;\n");
    await Deno.writeTextFile(
      `${dir}/tests/c_test.ts`,
      'Deno.test("c1", () => Deno.kill(Deno.pid, "SIGKILL"));\n',
    );
    const run = async (files: Record<string, string> = {}, tier = "full") => {
      for (const [name, text] of Object.entries(files)) {
        await Deno.writeTextFile(`${dir}/tests/${name}`, text);
      }
      const out = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "-A",
          new URL("./run_tests.ts", import.meta.url).pathname,
          "--allow-read",
          "--allow-run",
          "--allow-env",
        ],
        cwd: dir,
        env: { MEMPROF_LAB_TEST_JOBS: "2", NO_COLOR: "1", MEMPROF_LAB_TEST_TIER: tier },
        stdout: "piped",
        stderr: "piped",
      }).output();
      return { code: out.code, text: new TextDecoder().decode(out.stdout) };
    };
    const failing = await run();
    assert.equal(failing.code, 1);
    const lines = failing.text.split("\n");
    assert.ok(lines.includes("SKIPPED: a notice (tier full)"), failing.text);
    assert.ok(lines.some((l) => /^\.\/tests\/a_test\.ts \.\.\. ok \| 2 passed \(/.test(l)));
    // The failing file whole, with its errors.
    assert.ok(lines.includes("running 3 tests from ./tests/sub/b_test.ts"), failing.text);
    assert.ok(lines.includes("error: Error: boom"), failing.text);
    // A file whose run ends without deno's summary is one failure, named.
    assert.ok(
      lines.includes(
        "./tests/c_test.ts ... FAILED: deno test exited with status 137 (SIGKILL) without its summary",
      ),
      failing.text,
    );
    assert.match(lines.at(-2)!, /^FAILED \| 3 passed \(1 step\) \| 2 failed \| 1 ignored \(\S+\)$/);
    assert.equal(lines.filter((l) => /^(ok|FAILED) \|/.test(l)).length, 1, failing.text);
    // Fixed, the run passes.
    const passing = await run({
      "sub/b_test.ts": 'Deno.test("b1", () => {});\n',
      "c_test.ts": "",
    });
    assert.equal(passing.code, 0, passing.text);
    assert.match(passing.text, /\nok \| 3 passed \(1 step\) \| 0 failed \(\S+\)\n$/);
    // The quick tier: its files are told so, and its closing line follows deno's summary.
    const quick = await run({}, "quick");
    assert.equal(quick.code, 0, quick.text);
    assert.ok(quick.text.split("\n").includes("SKIPPED: a notice (tier quick)"), quick.text);
    assert.match(
      quick.text,
      /\nok \| 3 passed \(1 step\) \| 0 failed \(\S+\)\nquick tier: not run: .*deno task test:full\n$/,
    );
    // A type error fails the run before any file is trusted.
    const typeError = await run({
      "sub/b_test.ts": 'const n: number = "x";\nDeno.test("b1", () => {});\n',
    });
    assert.equal(typeError.code, 1);
    assert.match(typeError.text, /TS2322/);
    assert.match(typeError.text, /\nFAILED \| \d+ passed .*\| 1 failed/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the arguments' files and folders are told from deno test's flags and their values", () => {
  const exists = new Set(["tests/cli/", "tests/a_test.ts", "NAME"]);
  assert.deepEqual(
    splitArgs(
      ["--filter", "NAME", "tests/cli/", "--allow-read", "--seed=3", "tests/a_test.ts", "x"],
      (a) => exists.has(a),
    ),
    {
      flags: ["--filter", "NAME", "--allow-read", "--seed=3", "x"],
      paths: ["tests/cli/", "tests/a_test.ts"],
    },
  );
});

Deno.test("the quick tier leaves out the real-runtime files of a folder; one named runs in the full tier", () => {
  const real = REAL_RUNTIME_FILES[0];
  const dir = real.slice(0, real.lastIndexOf("/"));
  const files: Record<string, string[]> = {
    tests: ["tests/a_test.ts", real, "tests/mixed_test.ts"],
    [dir]: [real, `${dir}/b_test.ts`],
  };
  const io = {
    isDirectory: (p: string) => p.replace(/\/+$/, "") in files,
    testFiles: (d: string) => files[d],
    usesRealRuntime: (p: string) => p === real || p === "tests/mixed_test.ts",
    checkoutPath: (p: string) => p.replace(/^\.\//, ""),
  };
  // The whole suite: every file but the real-runtime one, which the closing line names.
  assert.deepEqual(plan("quick", [], io), {
    groups: [{ tier: "quick", paths: ["tests/a_test.ts", "tests/mixed_test.ts"] }],
    leftOut: [real],
  });
  assert.deepEqual(plan("quick", [`${dir}/`], io), {
    groups: [{ tier: "quick", paths: [`${dir}/b_test.ts`] }],
    leftOut: [real],
  });
  // Named on their own, files using the real runtime run in the full tier.
  assert.deepEqual(plan("quick", [`./${real}`, "tests/a_test.ts", "tests/mixed_test.ts"], io), {
    groups: [
      { tier: "quick", paths: ["tests/a_test.ts"] },
      { tier: "full", paths: [`./${real}`, "tests/mixed_test.ts"] },
    ],
    leftOut: [],
  });
  assert.deepEqual(plan("quick", [real], io), {
    groups: [{ tier: "full", paths: [real] }],
    leftOut: [],
  });
  // The full tier runs what it is given, as deno test would.
  assert.deepEqual(plan("full", [], io), { groups: [{ tier: "full", paths: [] }], leftOut: [] });
  assert.deepEqual(plan("full", [dir], io), {
    groups: [{ tier: "full", paths: [dir] }],
    leftOut: [],
  });
  const line = quickTierLine([real], [dir]);
  assert.match(line, /^quick tier: not run: 1 real-runtime file \(/);
  assert.ok(line.includes(real.replace(/^tests\//, "")), line);
  assert.ok(line.endsWith(`all of it: deno task test:full ${dir}`), line);
  assert.ok(quickTierLine([], []).endsWith("all of it: deno task test:full"));
});
