// Commands given an input that never ends (/dev/zero: a device, not a regular file) stop at
// once with one typed error on stderr and exit status 1, instead of reading forever or filling
// memory. Each runs as a subprocess, killed if it has not ended within a generous guard (which
// only turns a hang into a failure; nothing here measures time).
import assert from "node:assert/strict";
import { join } from "node:path";
import { runScenario } from "../../lib/scenario/mod.ts";
import service from "../../scenarios/service.ts";
import { type Ran, root, runCli } from "./helpers.ts";

const hasDevZero = (() => {
  try {
    return Deno.statSync("/dev/zero").isCharDevice === true;
  } catch {
    return false;
  }
})();

/** Runs `deno run cli/<tool>.ts args…` with read and write permissions only. */
function run(tool: string, args: string[]) {
  return runCli(`${tool}.ts`, args, { permissions: ["--allow-read", "--allow-write"] });
}

function assertOneError(
  what: string,
  r: Ran,
  want: RegExp,
) {
  assert.equal(r.code, 1, `${what}: exit status ${r.code}, stderr: ${r.stderr}`);
  assert.equal(r.stdout, "", `${what}: printed on stdout`);
  const lines = r.stderr.trimEnd().split("\n");
  assert.equal(lines.length, 1, `${what}: more than one line on stderr: ${r.stderr}`);
  assert.match(lines[0], want, what);
}

Deno.test({
  name: "events export, gc-stats and watch refuse /dev/zero with one error and status 1",
  ignore: !hasDevZero,
  async fn() {
    const dir = Deno.makeTempDirSync({ prefix: "dev_zero_events_" });
    try {
      const tooLong =
        /^error: \/dev\/zero is not a regular file and holds more than the 268435456 bytes read from a pipe or device; copy it to a regular file$/;
      // Rings are read as stats and dump read them: the headers first, then only the used part
      // of each ring, so a device of zeros is refused at its first header.
      const zeroHeader =
        /^error: corrupt runtime_events stream at byte 32: ring_size_elements 0 does not match ring_size_bytes 0$/;
      const cases: [string, string[], RegExp][] = [
        ["export", ["export", "/dev/zero", "--format", "chrome"], zeroHeader],
        [
          "export -o",
          ["export", "/dev/zero", "--format", "chrome", "-o", join(dir, "x.json")],
          zeroHeader,
        ],
        ["gc-stats", ["gc-stats", "/dev/zero"], zeroHeader],
        ["gc-stats --json", ["gc-stats", "/dev/zero", "--json"], zeroHeader],
        ["stats", ["stats", "/dev/zero"], zeroHeader],
        [
          "watch",
          ["watch", "--path", "/dev/zero"],
          /^error: watch: \/dev\/zero is not a regular file$/,
        ],
      ];
      for (const [what, args, want] of cases) {
        assertOneError(what, await run("events", args), want);
      }
      // A good ring with a trace that never ends: the trace is refused the same way.
      const ring = join(dir, "1.events");
      Deno.writeFileSync(ring, runScenario(service).eventsImage);
      const withTrace = ["export", ring, "--format", "chrome", "--with-trace", "/dev/zero"];
      assertOneError("export --with-trace", await run("events", withTrace), tooLong);
      // Nothing was written, not even a temporary.
      assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), ["1.events"]);
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "trace top, diff, export, report, flamegraph, hotspots, identify, subsample and strip-names refuse /dev/zero with one error and status 1",
  ignore: !hasDevZero,
  async fn() {
    const dir = Deno.makeTempDirSync({ prefix: "dev_zero_trace_" });
    try {
      const good = join(root, "tests/golden/service/trace.ctf");
      const cases: [string, string[]][] = [
        ["top", ["top", "/dev/zero"]],
        ["top --json", ["top", "/dev/zero", "--json"]],
        ["diff A", ["diff", "/dev/zero", good]],
        ["diff B", ["diff", good, "/dev/zero"]],
        ["export", ["export", "/dev/zero", "--format", "folded"]],
        ["export -o", ["export", "/dev/zero", "--format", "pprof", "-o", join(dir, "p.pb")]],
        ["report", ["report", "/dev/zero", "-o", join(dir, "r.html")]],
        ["flamegraph", ["flamegraph", "/dev/zero"]],
        ["hotspots", ["hotspots", "/dev/zero"]],
        ["identify", ["identify", "/dev/zero"]],
        ["subsample", ["subsample", "/dev/zero", join(dir, "s.ctf"), "2"]],
        ["strip-names", ["strip-names", "/dev/zero", join(dir, "n.ctf")]],
      ];
      for (const [what, args] of cases) {
        assertOneError(
          what,
          await run("trace", args),
          /^error: malformed trace: Not a CTF packet \(at byte offset 0 of \/dev\/zero\)$/,
        );
      }
      // Nothing was written, not even a temporary.
      assert.deepEqual([...Deno.readDirSync(dir)], []);
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  },
});
