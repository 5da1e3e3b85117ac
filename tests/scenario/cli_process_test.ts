// The real command in a subprocess: modules are type-checked with `deno check` (errors shown
// with file:line) before they run, and a run killed by SIGINT leaves its outputs all old or
// all new, with no temporary folder behind.
import assert from "node:assert/strict";
import { sized } from "../tier.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const LIB = new URL("../../lib/scenario/mod.ts", import.meta.url).href;
const decoder = new TextDecoder();

function command(args: string[], permissions = ["--allow-read", "--allow-write", "--allow-run"]) {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-prompt", ...permissions, "cli/scenario.ts", ...args],
    cwd: ROOT,
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  });
}

async function runCli(args: string[], permissions?: string[]) {
  const out = await command(args, permissions).output();
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr) };
}

/** Every file of a folder with its bytes, by name. */
function snapshot(dir: string): Map<string, string> {
  const m = new Map<string, string>();
  for (const e of Deno.readDirSync(dir)) {
    m.set(e.name, Array.from(Deno.readFileSync(`${dir}/${e.name}`)).join(","));
  }
  return m;
}

function hidden(dir: string): string[] {
  return [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) => n.startsWith("."));
}

Deno.test("a scenario module is type-checked before it runs; --no-check leaves it to the builder", async () => {
  const dir = await Deno.makeTempDir({ prefix: "scenario-check-" });
  try {
    const source = (key: string) =>
      [
        `import { keep, scenario } from "${LIB}";`,
        "",
        'export default scenario({ name: "typo" }, (s) => {',
        "  s.main.memprof.start({ samplingRate: 0.1 });",
        `  s.main.alloc(8, { ${key}: keep.forever });`,
        "  s.main.memprof.stop();",
        "});",
        "",
      ].join("\n");
    await Deno.writeTextFile(`${dir}/typo.ts`, source("lifetme"));
    await Deno.writeTextFile(`${dir}/fine.ts`, source("lifetime"));
    const bad = await runCli([`${dir}/typo.ts`, "--out", `${dir}/out`]);
    assert.equal(bad.code, 1, bad.stderr);
    assert.match(bad.stderr, /typo\.ts: type errors \(deno check; --no-check skips this check\):/);
    assert.match(bad.stderr, /'lifetme' does not exist in type 'AllocOptions'/);
    assert.match(bad.stderr, new RegExp(`at ${dir}/typo\\.ts:5:21`));
    assert.doesNotMatch(bad.stderr, /file:\/\/|Stack backtrace/);
    const unchecked = await runCli([`${dir}/typo.ts`, "--no-check", "--out", `${dir}/out`]);
    assert.equal(unchecked.code, 1);
    assert.equal(
      unchecked.stderr,
      `error: ${dir}/typo.ts: scenario typo, step 2: alloc: unknown option \`lifetme\`; did you ` +
        "mean `lifetime`? (alloc accepts `lifetime`, `source`, `at`, `customMem`)\n",
    );
    assert.deepEqual(hidden(dir), []);
    assert.throws(() => Deno.statSync(`${dir}/out`), Deno.errors.NotFound);
    // A number written as a string: said to be a string, not a rate out of range.
    await Deno.writeTextFile(
      `${dir}/rate.ts`,
      `import { scenario } from "${LIB}";\n\n` +
        'export default scenario({ name: "rate", samplingRate: "0.01" }, () => {});\n',
    );
    const rate = await runCli([`${dir}/rate.ts`, "--no-check", "--out", `${dir}/out`]);
    assert.equal(rate.code, 1);
    assert.equal(
      rate.stderr,
      `error: ${dir}/rate.ts: scenario rate, settings: sampling rate must be a number, got ` +
        'string "0.01"\n',
    );
    const fine = await runCli([`${dir}/fine.ts`, "--out", `${dir}/out`]);
    assert.equal(fine.code, 0, fine.stderr);
    assert.match(fine.stdout, /^typo +\d+ .* ok +none +\d+$/m);
    // Without permission to run deno check, the command says how to get it.
    const denied = await runCli([`${dir}/fine.ts`, "--out", `${dir}/out`], [
      "--allow-read",
      "--allow-write",
    ]);
    assert.equal(denied.code, 2);
    assert.match(denied.stderr, /allow it with --allow-run .* or pass --no-check/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a run interrupted by SIGINT leaves all-old or all-new outputs and no temporaries", async () => {
  const dir = await Deno.makeTempDir({ prefix: "scenario-sigint-" });
  try {
    // About 3 seconds of running on a quiet machine (a fifth in the quick tier, tests/tier.ts:
    // still long enough to be stopped at 10 % and 50 %); progress lines tell where it is.
    await Deno.writeTextFile(
      `${dir}/big.ts`,
      [
        `import { scenario } from "${LIB}";`,
        'export default scenario({ name: "big", seed: 3 }, (s) => {',
        "  s.main.memprof.start({ samplingRate: 1e-5 });",
        `  s.main.repeat(${sized(150_000_000, 30_000_000)}, () => s.main.alloc(2));`,
        "  s.main.memprof.stop();",
        "});",
        "",
      ].join("\n"),
    );
    const out = `${dir}/out`;
    const base = [`${dir}/big.ts`, "--no-check", "--out", out];
    const first = await runCli([...base, "--rate", "0.00001"]);
    assert.equal(first.code, 0, first.stderr);
    const old = snapshot(`${out}/big`);
    const complete = await runCli([
      `${dir}/big.ts`,
      "--no-check",
      "--out",
      `${dir}/new`,
      "--rate",
      "0.00002",
    ]);
    assert.equal(complete.code, 0, complete.stderr);
    const fresh = snapshot(`${dir}/new/big`);
    assert.notDeepEqual(fresh, old);

    /** Starts a run with the other rate, kills it with `signal` once `line` is on stderr. */
    const interrupt = async (line: RegExp, signal: Deno.Signal) => {
      const child = command([...base, "--rate", "0.00002", "--progress"]).spawn();
      const reader = child.stderr.getReader();
      let err = "";
      while (!line.test(err)) {
        const { value, done } = await reader.read();
        if (done) break;
        err += decoder.decode(value);
      }
      try {
        child.kill(signal);
      } catch { /* it has finished already */ }
      reader.releaseLock();
      await child.stderr.cancel();
      await child.stdout.cancel();
      return { status: await child.status, err };
    };
    const same = (a: Map<string, string>, b: Map<string, string>) =>
      JSON.stringify([...a]) === JSON.stringify([...b]);
    // Mid-run: nothing is written yet, so the old outputs stay (unless, on a busy machine, the
    // run ended before the signal came: then they are all new).
    for (const at of [/ 10% /, / 50% /]) {
      const { status, err } = await interrupt(at, "SIGINT");
      const now = snapshot(`${out}/big`);
      if (status.signal === "SIGINT" && !err.includes("100%")) {
        assert.ok(same(now, old), `${at}: all old`);
      } else assert.ok(same(now, old) || same(now, fresh), `${at}: a mix`);
      assert.deepEqual(hidden(out), [], `${at}: no temporaries`);
    }
    // At the end of the run, while the outputs are being written: old or new, never a mix.
    const { err } = await interrupt(/ 100% /, "SIGINT");
    const now = snapshot(`${out}/big`);
    assert.ok(same(now, old) || same(now, fresh), `a mix of old and new outputs: ${err}`);
    assert.deepEqual(hidden(out), []);
    // A run killed outright may leave a temporary folder; the next run removes it.
    await interrupt(/ 100% /, "SIGKILL");
    const done = await runCli([...base, "--rate", "0.00002"]);
    assert.equal(done.code, 0, done.stderr);
    assert.deepEqual(snapshot(`${out}/big`), fresh);
    assert.deepEqual(hidden(out), []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
