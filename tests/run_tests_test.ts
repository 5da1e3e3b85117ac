// tests/run_tests.ts, the runner of `deno task test`: deno's report condensed to one line per
// file, failures and skip notices kept whole, deno's summary unchanged.
import assert from "node:assert/strict";
import { Condenser } from "./run_tests.ts";

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
