// The fixture formats' header lines, rebuilt from the run: memprof_exact names the domain that
// ran the loop and prints the rate as OCaml's %g.
import assert from "node:assert/strict";
import { cb, runScenario, scenario } from "../../lib/scenario/mod.ts";

function exactHeader(rate: number, onWorker: boolean): string {
  const sc = scenario({
    name: "header",
    log: { format: "memprof_exact", program: "ref" },
  }, (s) => {
    const d = onWorker ? s.main.spawn("worker") : s.main;
    d.memprof.start({
      samplingRate: rate,
      callstackSize: 0,
      tracker: { allocMinor: cb.none(), allocMajor: cb.none() },
    });
    d.repeat(1_000, () => d.alloc(1));
    d.memprof.stop();
  });
  return runScenario(sc).callbackLog.split("\n")[0];
}

Deno.test("the memprof_exact header names the domain that ran the loop", () => {
  assert.match(exactHeader(0.01, true), / iterations=1000 domain=1 /);
  assert.match(exactHeader(0.01, false), / iterations=1000 domain=0 /);
});

Deno.test("the memprof_exact header prints the rate as OCaml's %g", () => {
  assert.match(exactHeader(1e-5, false), /^# program=ref sampling_rate=1e-05 /);
  assert.match(exactHeader(0.01, false), /^# program=ref sampling_rate=0\.01 /);
  assert.match(exactHeader(0.25, false), /^# program=ref sampling_rate=0\.25 /);
});
