// The build lock: a second setup waits for (or gives up on) a running one, and a lock left by a
// dead process is taken over.
import assert from "node:assert/strict";
import { OCamlToolchainError, setupToolchain } from "../../lib/ocaml/mod.ts";
import { lockKey } from "../../lib/ocaml/_lock.ts";
import { deadPid, entries, exists, fakeRunner, toolchainWorld, withTemp } from "./helpers.ts";

const world = toolchainWorld;

/** A first setup stopped inside `make` until `finish` is called. */
function blockedSetup(env: Record<string, string>) {
  let finish!: () => void;
  const gate = new Promise<void>((r) => finish = r);
  let inMake!: () => void;
  const started = new Promise<void>((r) => inMake = r);
  const first = fakeRunner({ makeGate: gate, onMake: () => inMake() });
  const done = setupToolchain({ env, runner: first.runner });
  return { done, started, finish, calls: first.calls };
}

Deno.test("a second setup gives up after its wait, naming the lock and the builder's pid", async () => {
  await withTemp(async (dir) => {
    const { env, prefix } = await world(dir);
    const a = blockedSetup(env);
    await a.started;
    assert.equal((await Deno.readTextFile(`${prefix}.lock`)).split("\n")[0], String(Deno.pid));
    const second = fakeRunner();
    const lines: string[] = [];
    await assert.rejects(
      setupToolchain({
        env,
        runner: second.runner,
        lockTimeoutMs: 60,
        lockPollMs: 10,
        onProgress: (l) => lines.push(l),
      }),
      (e) =>
        e instanceof OCamlToolchainError && e.message.includes(`pid ${Deno.pid}`) &&
        e.message.includes(`${prefix}.lock`) && e.message.includes("gave up"),
    );
    assert.equal(second.calls.length, 0);
    assert.match(lines[0], /another setup \(pid \d+\) is building into .*; waiting for it/);
    a.finish();
    assert.equal((await a.done).prefix, prefix);
    assert.equal(await exists(`${prefix}.lock`), false);
  });
});

Deno.test("a second setup waits for the first and then finds OCaml built", async () => {
  await withTemp(async (dir) => {
    const { env, prefix } = await world(dir);
    const a = blockedSetup(env);
    await a.started;
    const second = fakeRunner();
    const lines: string[] = [];
    const b = setupToolchain({
      env,
      runner: second.runner,
      lockPollMs: 5,
      onProgress: (l) => lines.push(l),
    });
    for (let i = 0; i < 500 && lines.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    assert.match(lines[0] ?? "", /waiting for it/, "the second setup is waiting");
    a.finish();
    const [ta, tb] = await Promise.all([a.done, b]);
    assert.deepEqual(tb, ta);
    assert.equal(second.calls.length, 0, "the second setup ran no build step");
    assert.equal(a.calls.length, 5);
    assert.equal(lines.at(-1), `OCaml 5.3.0 already built at ${prefix} (by the other setup)`);
  });
});

Deno.test("a lock whose pid is dead is taken over", async () => {
  await withTemp(async (dir) => {
    const { env, cacheDir, prefix } = await world(dir);
    const pid = await deadPid();
    await Deno.mkdir(cacheDir, { recursive: true });
    await Deno.writeTextFile(`${prefix}.lock`, `${pid}\nsome-token\n`);
    const { runner, calls } = fakeRunner();
    const lines: string[] = [];
    const tc = await setupToolchain({
      env,
      runner,
      lockTimeoutMs: 0,
      onProgress: (l) => lines.push(l),
    });
    assert.equal(tc.prefix, prefix);
    assert.equal(calls.length, 5);
    assert.ok(
      lines.includes(`taking over the stale lock ${prefix}.lock (pid ${pid} is not running)`),
      lines.join("\n"),
    );
    assert.deepEqual(await entries(cacheDir), ["ocaml-5.3.0", "ocaml-5.3.0.build.log"]);
  });
});

Deno.test("a lock held by a live process is not taken over", async () => {
  await withTemp(async (dir) => {
    const { env, cacheDir, prefix } = await world(dir);
    await Deno.mkdir(cacheDir, { recursive: true });
    await Deno.writeTextFile(`${prefix}.lock`, "4242\nother\n");
    const { runner, calls } = fakeRunner();
    await assert.rejects(
      setupToolchain({ env, runner, lockTimeoutMs: 0, isAlive: (pid) => pid === 4242 }),
      (e) => e instanceof OCamlToolchainError && e.message.includes("pid 4242"),
    );
    assert.equal(calls.length, 0);
    assert.equal(await Deno.readTextFile(`${prefix}.lock`), "4242\nother\n");
  });
});

Deno.test("the lock is released after a failed build", async () => {
  await withTemp(async (dir) => {
    const { env, prefix } = await world(dir);
    await assert.rejects(
      setupToolchain({ env, runner: fakeRunner({ failAt: "configure" }).runner }),
      OCamlToolchainError,
    );
    assert.equal(await exists(`${prefix}.lock`), false);
    // And a retry can build.
    assert.equal((await setupToolchain({ env, runner: fakeRunner().runner })).prefix, prefix);
  });
});

Deno.test("waiting for the lock stops when the setup is interrupted", async () => {
  await withTemp(async (dir) => {
    const { env, cacheDir, prefix } = await world(dir);
    await Deno.mkdir(cacheDir, { recursive: true });
    await Deno.writeTextFile(`${prefix}.lock`, `${Deno.pid}\nother\n`);
    const ac = new AbortController();
    const waiting = setupToolchain({
      env,
      runner: fakeRunner().runner,
      signal: ac.signal,
      onProgress: () => ac.abort(),
    });
    await assert.rejects(
      waiting,
      (e) => e instanceof OCamlToolchainError && /interrupted while waiting/.test(e.message),
    );
  });
});

Deno.test("a lock held by a running process (checked with kill -0) is respected", async () => {
  await withTemp(async (dir) => {
    const { env, cacheDir, prefix } = await world(dir);
    const child = new Deno.Command("/bin/sh", { args: ["-c", "sleep 30"] }).spawn();
    try {
      await Deno.mkdir(cacheDir, { recursive: true });
      await Deno.writeTextFile(`${prefix}.lock`, `${child.pid}\nother\n`);
      const { runner, calls } = fakeRunner();
      await assert.rejects(
        setupToolchain({ env, runner, lockTimeoutMs: 0 }),
        (e) => e instanceof OCamlToolchainError && e.message.includes(`pid ${child.pid}`),
      );
      assert.equal(calls.length, 0);
    } finally {
      child.kill();
      await child.status;
    }
  });
});

Deno.test("an empty lock file is waited for while fresh and taken over when old", async () => {
  await withTemp(async (dir) => {
    const { env, cacheDir, prefix } = await world(dir);
    await Deno.mkdir(cacheDir, { recursive: true });
    await Deno.writeTextFile(`${prefix}.lock`, "");
    const { runner, calls } = fakeRunner();
    await assert.rejects(
      setupToolchain({ env, runner, lockTimeoutMs: 0 }),
      (e) => e instanceof OCamlToolchainError && e.message.includes("unknown pid"),
    );
    assert.equal(calls.length, 0);
    const old = new Date(Date.now() - 60_000);
    await Deno.utime(`${prefix}.lock`, old, old);
    const lines: string[] = [];
    await setupToolchain({ env, runner, lockTimeoutMs: 0, onProgress: (l) => lines.push(l) });
    assert.equal(calls.length, 5);
    assert.ok(lines.some((l) => l.includes("(never completed)")), lines.join("\n"));
  });
});

Deno.test("the lock excludes: 8 processes, 30 rounds, a dead process's lock there at the start", async () => {
  const PROCS = 8, ROUNDS = 30;
  await withTemp(async (dir) => {
    const dead = await deadPid();
    for (let r = 0; r < ROUNDS; r++) {
      await Deno.mkdir(`${dir}/round-${r}`);
      // Two rounds in three start with a stale lock, which the waiters race to take over.
      if (r % 3 !== 2) await Deno.writeTextFile(`${dir}/round-${r}/lock`, `${dead}\nstale\n`);
    }
    const child = new URL("./lock_child.ts", import.meta.url).pathname;
    const children = Array.from({ length: PROCS }, (_, i) =>
      new Deno.Command(Deno.execPath(), {
        args: ["run", "--allow-all", child, dir, String(i), String(ROUNDS), String(PROCS)],
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
        signal: AbortSignal.timeout(300_000),
      }).output());
    const outs = await Promise.all(children);
    for (const [i, o] of outs.entries()) {
      assert.equal(o.code, 0, `process ${i}: ${new TextDecoder().decode(o.stderr)}`);
    }
    const problems: string[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const spans: { id: number; enter: number; leave: number; overlap: boolean }[] = [];
      for (let i = 0; i < PROCS; i++) {
        const [enter, leave, overlap] = (await Deno.readTextFile(`${dir}/round-${r}/log-${i}`))
          .trim().split(" ");
        spans.push({ id: i, enter: Number(enter), leave: Number(leave), overlap: !!overlap });
      }
      spans.sort((a, b) => a.enter - b.enter);
      for (const s of spans) {
        if (s.overlap) problems.push(`round ${r}: process ${s.id} found another holder inside`);
      }
      for (let k = 1; k < spans.length; k++) {
        if (spans[k].enter < spans[k - 1].leave) {
          problems.push(
            `round ${r}: process ${spans[k].id} entered ${
              (spans[k - 1].leave - spans[k].enter).toFixed(3)
            } ms before process ${spans[k - 1].id} left`,
          );
        }
      }
      // Nothing of the lock is left: no lock, no temporary, no break marker.
      const left = (await entries(`${dir}/round-${r}`))
        .filter((n) => !n.startsWith("ready-") && !n.startsWith("log-"));
      assert.deepEqual(left, [], `round ${r}: left behind`);
    }
    assert.deepEqual(problems, [], "two processes held the lock at once");
  });
});

Deno.test("a stale lock whose breaker died too is taken over, its marker broken", async () => {
  await withTemp(async (dir) => {
    const { env, cacheDir, prefix } = await world(dir);
    const dead = await deadPid();
    await Deno.mkdir(cacheDir, { recursive: true });
    const lock = `${prefix}.lock`;
    await Deno.writeTextFile(lock, `${dead}\nstale\n`);
    // A process that was taking the stale lock over, killed while it held the lock's marker.
    await Deno.writeTextFile(`${lock}.break-${await lockKey(lock)}`, `${dead}\nbreaker\n`);
    const { runner, calls } = fakeRunner();
    const lines: string[] = [];
    await setupToolchain({
      env,
      runner,
      lockTimeoutMs: 10_000,
      lockPollMs: 5,
      onProgress: (l) => lines.push(l),
    });
    assert.equal(calls.length, 5);
    assert.ok(lines.some((l) => l.startsWith("taking over the stale lock")), lines.join("\n"));
    assert.deepEqual(await entries(cacheDir), ["ocaml-5.3.0", "ocaml-5.3.0.build.log"]);
  });
});

Deno.test("leftovers of killed lockers beside the lock are removed, those of live ones kept", async () => {
  await withTemp(async (dir) => {
    const { env, cacheDir } = await world(dir);
    const dead = await deadPid();
    await Deno.mkdir(cacheDir, { recursive: true });
    const live = "ocaml-5.3.0.lock.4242-89abcdef.new";
    for (
      const [name, text] of [
        [`ocaml-5.3.0.lock.${dead}-01234567.new`, `${dead}\nx\n`], // a lock being written
        [live, "4242\ny\n"],
        ["ocaml-5.3.0.lock.break-0123456789abcdef", `${dead}\nz\n`], // a breaker's marker
        [`ocaml-5.3.0.lock.break-0123456789abcdef.${dead}-01234567.new`, `${dead}\nw\n`],
      ]
    ) await Deno.writeTextFile(`${cacheDir}/${name}`, text);
    const { runner } = fakeRunner();
    await setupToolchain({ env, runner, isAlive: (pid) => pid === 4242 });
    assert.deepEqual(await entries(cacheDir), ["ocaml-5.3.0", "ocaml-5.3.0.build.log", live]);
  });
});
