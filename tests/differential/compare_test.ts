// Comparing the simulation's canonical log with the real program's.
import assert from "node:assert/strict";
import {
  compareLogs,
  type Difference,
  differenceContext,
  differenceSummary,
} from "../../lib/differential/mod.ts";
import { callbackLines, canonical } from "./helpers.ts";

Deno.test("compareLogs finds equal logs in agreement, counting the callbacks compared", () => {
  const lines = callbackLines(5);
  const c = compareLogs(canonical(lines), canonical([...lines]));
  assert.deepEqual(c, { compared: 5 });
  assert.equal(differenceSummary(c), "agree (5 callbacks)");
  assert.equal(differenceSummary(compareLogs(canonical([]), canonical([]))), "agree (0 callbacks)");
});

Deno.test("compareLogs names the first differing callback with the lines around it", () => {
  const sim = callbackLines(10);
  const real = [...sim];
  real[5] = "alloc_minor d0 i=6 size=2 n=1 src=normal id=6 stack=[] -> none";
  real[8] = "promote d0 i=- id=1 -> some"; // a later difference is not the first
  const c = compareLogs(canonical(sim), canonical(real));
  assert.equal(c.compared, 6);
  assert.deepEqual(c.difference, {
    kind: "callback",
    index: 6,
    sim: sim.slice(2, 9),
    real: real.slice(2, 9),
    firstLine: 3,
  });
  assert.equal(differenceSummary(c), "differs at callback 6");
  // Less context; the context stops at the start of the log.
  const one = compareLogs(canonical(sim), canonical(real), { context: 1 });
  assert.ok(one.difference?.kind === "callback");
  assert.deepEqual(one.difference.sim, sim.slice(4, 7));
  assert.equal(one.difference.firstLine, 5);
  sim[0] = "caught d0 i=- exn=Exit";
  const first = compareLogs(canonical(sim), canonical(real));
  assert.ok(first.difference?.kind === "callback");
  assert.equal(first.difference.index, 1);
  assert.equal(first.difference.firstLine, 1);
  assert.deepEqual(first.difference.real, real.slice(0, 4));
});

Deno.test("compareLogs reports a log that ends early at the first missing callback", () => {
  const long = callbackLines(5);
  const c = compareLogs(canonical(long.slice(0, 3)), canonical(long));
  assert.equal(c.compared, 4);
  assert.deepEqual(c.difference, {
    kind: "callback",
    index: 4,
    sim: long.slice(0, 3),
    real: long.slice(0, 5),
    firstLine: 1,
  });
  const other = compareLogs(canonical(long), canonical(long.slice(0, 4)));
  assert.ok(other.difference?.kind === "callback");
  assert.equal(other.difference.index, 5);
  assert.deepEqual(other.difference.real, long.slice(1, 4));
  assert.deepEqual(other.difference.sim, long.slice(1, 5));
});

Deno.test("compareLogs compares collections once every callback agrees", () => {
  const lines = callbackLines(3);
  const c = compareLogs(
    canonical(lines, { minorCollections: 1, majorCycles: 0 }),
    canonical(lines, { minorCollections: 2, majorCycles: 0 }),
  );
  assert.equal(c.compared, 3);
  assert.deepEqual(c.difference, {
    kind: "collections",
    sim: { minor: 1, major: 0 },
    real: { minor: 2, major: 0 },
  });
  assert.equal(
    differenceSummary(c),
    "differs in collections: simulation 1 minor / 0 major, real 2 minor / 0 major",
  );
  const major = compareLogs(canonical(lines, { majorCycles: 3 }), canonical(lines));
  assert.equal(major.difference?.kind, "collections");
  assert.equal(
    differenceSummary(major),
    "differs in collections: simulation 1 minor / 3 major, real 1 minor / 0 major",
  );
  // A callback difference comes first.
  const both = compareLogs(
    canonical(lines, { minorCollections: 7 }),
    canonical(lines.slice(0, 2)),
  );
  assert.equal(both.difference?.kind, "callback");
});

Deno.test("compareLogs compares the minor heap size before anything else", () => {
  const c = compareLogs(
    canonical(callbackLines(2)),
    canonical(callbackLines(3), { minorHeapWords: 131_072 }),
  );
  assert.deepEqual(c, {
    compared: 0,
    difference: { kind: "minorHeap", sim: 262_144, real: 131_072 },
  });
  assert.equal(
    differenceSummary(c),
    "differs in minor heap size: simulation 262144 words, real 131072 words",
  );
});

Deno.test("compareLogs reports an overflowed real log whatever else it holds", () => {
  const lines = callbackLines(2);
  const c = compareLogs(
    canonical(lines),
    canonical(lines, { overflow: true, minorHeapWords: 4096 }),
  );
  assert.deepEqual(c, { compared: 0, difference: { kind: "overflow" } });
  assert.equal(differenceSummary(c), "the real program's callback log overflowed");
});

Deno.test("differenceContext marks the differing line on both sides", () => {
  const c = compareLogs(canonical(["a", "b", "c"]), canonical(["a", "x", "c"]), { context: 1 });
  assert.deepEqual(differenceContext(c.difference!), [
    "  simulation:",
    "    1 a",
    "  > 2 b",
    "    3 c",
    "  real OCaml 5.3:",
    "    1 a",
    "  > 2 x",
    "    3 c",
  ]);
});

Deno.test("differenceContext says which side has no more callbacks", () => {
  const c = compareLogs(canonical(["a"]), canonical(["a", "b"]));
  assert.deepEqual(differenceContext(c.difference!), [
    "  simulation:",
    "    1 a",
    "  > 2 (no more callbacks)",
    "  real OCaml 5.3:",
    "    1 a",
    "  > 2 b",
  ]);
  const empty = compareLogs(canonical(["a"]), canonical([]));
  assert.deepEqual(differenceContext(empty.difference!), [
    "  simulation:",
    "  > 1 a",
    "  real OCaml 5.3:",
    "  > 1 (no more callbacks)",
  ]);
});

Deno.test("differenceContext pads line numbers to one width", () => {
  const sim = callbackLines(12);
  const real = [...sim];
  real[9] = "x";
  const out = differenceContext(compareLogs(canonical(sim), canonical(real)).difference!);
  assert.equal(out[1], `     7 ${sim[6]}`);
  assert.equal(out[4], `  > 10 ${sim[9]}`);
  assert.ok(out.includes("  > 10 x"));
});

Deno.test("differenceContext has nothing to show for other differences", () => {
  const others: Difference[] = [
    { kind: "overflow" },
    { kind: "minorHeap", sim: 1, real: 2 },
    { kind: "collections", sim: { minor: 1, major: 0 }, real: { minor: 0, major: 0 } },
  ];
  for (const d of others) assert.deepEqual(differenceContext(d), [], d.kind);
});
