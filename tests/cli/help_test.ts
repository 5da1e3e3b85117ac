// Every help text names its command as the user types it through the one CLI
// (`memprof-lab trace dump …`), and says once that `deno task …` of the same name is the same.
import assert from "node:assert/strict";
import { memprofLab } from "./helpers.ts";

/** Every command and sub-command with a help of its own, as typed after `memprof-lab`. */
const COMMANDS = [
  "scenario",
  "diff",
  "sampler",
  "ocaml",
  "trace",
  ...[
    "dump",
    "copy",
    "info",
    "flamegraph",
    "hotspots",
    "identify",
    "subsample",
    "strip-names",
    "top",
    "diff",
    "export",
    "report",
  ].map((c) => `trace ${c}`),
  "events",
  ...["dump", "stats", "export", "gc-stats", "watch"].map((c) => `events ${c}`),
];

Deno.test("every command's --help opens with its memprof-lab usage and names deno task once", async () => {
  const ran = await Promise.all(
    COMMANDS.map((command) => memprofLab([...command.split(" "), "--help"])),
  );
  for (const [k, command] of COMMANDS.entries()) {
    const r = ran[k];
    assert.equal(r.code, 0, `${command}: ${r.stderr}`);
    assert.equal(r.stderr, "", command);
    const lines = r.stdout.split("\n");
    assert.ok(lines[0].startsWith(`Usage: memprof-lab ${command} `), `${command}: ${lines[0]}`);
    // Further forms of the command (events watch --path …), then the deno task line.
    let n = 1;
    while (lines[n].startsWith(`       memprof-lab ${command} `)) n++;
    assert.equal(lines[n], `       (from a checkout, 'deno task ${command} …' is the same)`);
    const mentions = lines.filter((l) => l.includes("deno task"));
    assert.deepEqual(mentions, [lines[n]], `${command}: deno task named elsewhere`);
    assert.ok(!/^Usage: deno task/m.test(r.stdout), command);
  }
});

Deno.test("memprof-lab --help names the commands as memprof-lab <command>, deno task once", async () => {
  const r = await memprofLab(["--help"]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^Usage: memprof-lab <command> \[arguments\]\n/);
  assert.match(r.stdout, /Run 'memprof-lab <command> --help'/);
  assert.equal(r.stdout.match(/deno task/g)?.length, 1);
});

Deno.test("usage errors point to the memprof-lab help", async () => {
  const cases = [["events", "frob"], ["ocaml", "frob"], ["diff", "--frob"], ["sampler", "--frob"]];
  const ran = await Promise.all(cases.map((args) => memprofLab(args)));
  for (const [k, args] of cases.entries()) {
    const r = ran[k];
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, new RegExp(`'memprof-lab ${args[0]} --help'`), args.join(" "));
    assert.ok(!r.stderr.includes("deno task"), r.stderr);
  }
});
