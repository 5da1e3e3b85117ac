// `deno task trace …` as the task runs it (a child deno process), for the analysis tests.
import assert from "node:assert/strict";

const CLI = new URL("../../cli/trace.ts", import.meta.url).pathname;

/** Runs `trace` with `args`: its exit status, stdout (as text and bytes) and stderr. */
export async function trace(...args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-read", "--allow-write", CLI, ...args],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    bytes: out.stdout,
    stderr: new TextDecoder().decode(out.stderr),
  };
}

/** Runs `trace` with `args`, which must succeed; its stdout. */
export async function traceOk(...args: string[]): Promise<string> {
  const r = await trace(...args);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout;
}
