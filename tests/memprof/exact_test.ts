import assert from "node:assert/strict";
import refText from "../fixtures/memprof_exact/ref_0.01.txt" with { type: "text" };
import tripleText from "../fixtures/memprof_exact/triple_cons_0.01.txt" with {
  type: "text",
};
import { Runtime } from "../../lib/runtime/mod.ts";
import type { AllocationInfo } from "../../lib/memprof/mod.ts";

function parse(text: string): { header: string; lines: string[] } {
  const all = text.split("\n").filter((l) => l.length > 0);
  return { header: all[0], lines: all.slice(1) };
}

/** Runs `body(i)` for i = 1..n under a profile logging (iteration, size, n_samples). */
function runExact(rate: number, n: number, body: (rt: Runtime, i: number) => void) {
  const rt = new Runtime();
  const d = rt.mainDomain;
  d.minorGc();
  let iter = 0;
  const log: string[] = [];
  const cb = (kind: string) => (info: AllocationInfo) => {
    log.push(`${iter} ${kind} size=${info.size} n=${info.nSamples}`);
    return undefined;
  };
  const minorBefore = rt.minorCollections;
  const p = d.memprofStart({
    samplingRate: rate,
    callstackSize: 0,
    tracker: { allocMinor: cb("minor"), allocMajor: cb("major") },
  });
  for (iter = 1; iter <= n; iter++) body(rt, iter);
  d.memprofStop();
  d.memprofDiscard(p);
  return { log, minorDuring: rt.minorCollections - minorBefore };
}

Deno.test("exact samples: ref loop at 0.01 equals the real OCaml 5.3 runtime", () => {
  const { header, lines } = parse(refText);
  assert.ok(header.includes("program=ref"));
  const { log, minorDuring } = runExact(0.01, 20_000, (rt) => {
    rt.mainDomain.alloc(1);
  });
  assert.deepEqual(minorDuring, 0);
  assert.deepEqual(log, lines);
});

Deno.test("exact samples: (i, i, i) :: acc at 0.01 equals the real OCaml 5.3 runtime", () => {
  const { header, lines } = parse(tripleText);
  assert.ok(header.includes("program=triple_cons"));
  const lens = [2, 3]; // ocamlopt's order: the cons cell, then the tuple
  const { log, minorDuring } = runExact(0.01, 20_000, (rt) => {
    rt.mainDomain.allocCombined(lens);
  });
  assert.deepEqual(minorDuring, 0);
  assert.deepEqual(log, lines);
});
