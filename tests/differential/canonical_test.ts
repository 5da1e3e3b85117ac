// The canonical log: simulation events formatted line by line, and the real program's printed
// log read into the same lines.
import assert from "node:assert/strict";
import {
  canonicalLine,
  HARNESS,
  parseRealLog,
  RealLogError,
  simulateCanonical,
} from "../../lib/differential/mod.ts";
import { exportOCaml } from "../../lib/export/mod.ts";
import { act, cb, scenario } from "../../lib/scenario/mod.ts";
import { realLogOf, simulationEvents, small, twoDomains } from "./helpers.ts";

Deno.test("canonicalLine formats an allocation callback with loops, callstack names and result", () => {
  assert.equal(
    canonicalLine({
      kind: "allocMinor",
      domain: 0,
      loops: [3, 17],
      size: 8,
      nSamples: 1,
      source: "normal",
      callstack: ["Service.parse@service.ml:20:10-40", "Service.main@service.ml:80:2-30", HARNESS],
      id: 4,
      outcome: "some",
    }),
    "alloc_minor d0 i=3.17 size=8 n=1 src=normal id=4 stack=[Service.parse Service.main <harness>] -> some",
  );
  assert.equal(
    canonicalLine({
      kind: "allocMajor",
      domain: 2,
      loops: [],
      size: 300,
      nSamples: 5,
      source: "marshal",
      callstack: [],
      id: 12,
      outcome: "none",
    }),
    "alloc_major d2 i=- size=300 n=5 src=marshal id=12 stack=[] -> none",
  );
  assert.equal(
    canonicalLine({
      kind: "allocMinor",
      domain: 1,
      loops: [7],
      size: 1000,
      nSamples: 41,
      source: "custom",
      callstack: ["M.f@m.ml:1:0-1"],
      id: 3,
      outcome: { raise: "MyExc" },
    }),
    "alloc_minor d1 i=7 size=1000 n=41 src=custom id=3 stack=[M.f] -> raise MyExc",
  );
});

Deno.test("canonicalLine formats promotions, deallocations and exceptions", () => {
  const base = { domain: 0, loops: [] as number[], id: 4 };
  assert.equal(
    canonicalLine({ kind: "promote", ...base, outcome: "some" }),
    "promote d0 i=- id=4 -> some",
  );
  assert.equal(
    canonicalLine({ kind: "promote", ...base, loops: [2, 1], outcome: "none" }),
    "promote d0 i=2.1 id=4 -> none",
  );
  assert.equal(
    canonicalLine({ kind: "promote", ...base, outcome: { raise: "Exit" } }),
    "promote d0 i=- id=4 -> raise Exit",
  );
  assert.equal(
    canonicalLine({ kind: "deallocMinor", ...base, outcome: "unit" }),
    "dealloc_minor d0 i=- id=4",
  );
  assert.equal(
    canonicalLine({ kind: "deallocMajor", ...base, domain: 3, loops: [9], outcome: "unit" }),
    "dealloc_major d3 i=9 id=4",
  );
  assert.equal(
    canonicalLine({ kind: "deallocMajor", ...base, outcome: { raise: "Exit" } }),
    "dealloc_major d0 i=- id=4 -> raise Exit",
  );
  assert.equal(
    canonicalLine({ kind: "escaped", domain: 0, loops: [2], exn: "Exit" }),
    "escaped d0 i=2 exn=Exit",
  );
  assert.equal(
    canonicalLine({ kind: "caught", domain: 1, loops: [1, 2, 3], exn: "MyExc" }),
    "caught d1 i=1.2.3 exn=MyExc",
  );
});

/** A program with two frames and two exceptions, to read logs against. */
const program = exportOCaml(scenario({ name: "canon" }, (s) => {
  const m = s.main;
  m.memprof.start({
    samplingRate: 1,
    tracker: {
      allocMinor: cb.track().raiseOn(3, "Boom"),
      deallocMajor: cb.none().on(1, act.raise("Bang")),
    },
  });
  m.call("Canon.outer@canon.ml:1:0-9", () => m.alloc(2, { at: "Canon.leaf@canon.ml:2:0-9" }));
}));
const fn = (def: string) => [...program.frames].find(([, d]) => d === def)![0];

Deno.test("parseRealLog reads every record kind into canonical lines", () => {
  assert.deepEqual(program.exceptions, ["Boom", "Bang"]);
  const leaf = fn("Canon.leaf"), outer = fn("Canon.outer");
  const log = [
    "memprof-lab differential log 1",
    "minor_heap_words 262144",
    `0 0 1 8 1 0 1 2 3 17 | 5 ${leaf} ${outer} Canon.run_main Canon ?`,
    "1 2 2 300 5 1 0 0 | 0",
    "0 1 3 1000 41 2 3 1 7 | 1 Stdlib.Bigarray.create",
    "2 0 1 0 0 0 1 0",
    "2 0 2 0 0 0 0 2 2 1",
    "3 0 1 0 0 0 2 1 2",
    "4 3 2 0 0 0 2 1 9",
    "4 0 2 0 0 0 4 0",
    "5 0 0 0 0 0 0 1 2",
    "6 1 0 1 0 0 0 3 1 2 3",
    "minor_collections 5",
    "major_cycles 2",
    "log_overflow false",
    "",
  ].join("\n");
  const real = parseRealLog(log, program);
  assert.deepEqual(real.lines, [
    "alloc_minor d0 i=3.17 size=8 n=1 src=normal id=1 stack=[Canon.leaf Canon.outer <harness> <harness> <harness>] -> some",
    "alloc_major d2 i=- size=300 n=5 src=marshal id=2 stack=[] -> none",
    "alloc_minor d1 i=7 size=1000 n=41 src=custom id=3 stack=[<harness>] -> raise Boom",
    "promote d0 i=- id=1 -> some",
    "promote d0 i=2.1 id=2 -> none",
    "dealloc_minor d0 i=2 id=1",
    "dealloc_major d3 i=9 id=2",
    "dealloc_major d0 i=- id=2 -> raise Bang",
    "escaped d0 i=2 exn=Boom",
    "caught d1 i=1.2.3 exn=Bang",
  ]);
  assert.equal(real.minorHeapWords, 262_144);
  assert.equal(real.minorCollections, 5);
  assert.equal(real.majorCycles, 2);
  assert.equal(real.overflow, false);
});

Deno.test("parseRealLog reads an empty log and an overflowed one", () => {
  const empty = parseRealLog(
    "memprof-lab differential log 1\nminor_heap_words 8192\nminor_collections 0\nmajor_cycles 0\nlog_overflow true\n",
    program,
  );
  assert.deepEqual(empty, {
    lines: [],
    minorCollections: 0,
    majorCycles: 0,
    minorHeapWords: 8192,
    overflow: true,
  });
});

Deno.test("parseRealLog of what a faithful program prints gives the simulation's canonical log", () => {
  for (const sc of [small, twoDomains]) {
    const sim = simulateCanonical(sc);
    const p = exportOCaml(sc);
    const text = realLogOf(simulationEvents(sc), p, {
      minorHeapWords: sc.settings.minorHeapWords,
      minorCollections: sim.minorCollections,
      majorCycles: sim.majorCycles,
    });
    assert.deepEqual(parseRealLog(text, p), sim, sc.settings.name);
  }
  // The scenarios exercise what they should.
  const lines = simulateCanonical(small).lines;
  assert.ok(lines.some((l) => l.startsWith("escaped d0 i=")), "an escaped exception");
  assert.ok(lines.some((l) => l.startsWith("caught d0 i=-")), "a caught exception");
  assert.ok(lines.some((l) => l.includes("-> raise Boom")), "a raising callback");
  assert.ok(lines.some((l) => l.startsWith("promote ")), "a promotion");
  assert.ok(lines.some((l) => l.startsWith("dealloc_minor ")), "a deallocation");
  assert.ok(
    lines.some((l) => l.includes("stack=[Small.leaf Small.outer <harness> <harness> <harness>]")),
    "frames and harness frames",
  );
});

/** Asserts that parsing `text` throws a RealLogError whose message matches `message`. */
function malformed(text: string, message: RegExp) {
  assert.throws(
    () => parseRealLog(text, program),
    (e: unknown) => {
      assert.ok(e instanceof RealLogError, String(e));
      assert.equal(e.name, "RealLogError");
      assert.match(e.message, message);
      return true;
    },
  );
}

const HEAD = "memprof-lab differential log 1\nminor_heap_words 262144\n";
const TAIL = "minor_collections 0\nmajor_cycles 0\nlog_overflow false\n";

Deno.test("parseRealLog refuses malformed records, naming the line and the problem", () => {
  malformed(`${HEAD}0 0 1 8\n${TAIL}`, /^line 3 of the program's log: malformed record: 0 0 1 8$/);
  malformed(`${HEAD}2 0 1 0 0 0 1 0\n0 0 1 x 1 0 1 0 | 0\n${TAIL}`, /^line 4 .*malformed record/);
  malformed(`${HEAD}9 0 1 0 0 0 1 0\n${TAIL}`, /^line 3 .*unknown record kind 9: 9 0 1/);
  // Depth 3 with two loop indices, and depth 1 with three.
  malformed(`${HEAD}3 0 1 0 0 0 2 3 1 2\n${TAIL}`, /^line 3 .*2 loop indices for depth 3/);
  malformed(`${HEAD}2 0 1 0 0 0 1 1 5 6 7\n${TAIL}`, /^line 3 .*3 loop indices for depth 1/);
  malformed(`${HEAD}2 0 1.5 0 0 0 1 0\n${TAIL}`, /^line 3 .*malformed record/);
  malformed(`${HEAD}0 0 1 8 1 7 1 0 | 0\n${TAIL}`, /^line 3 .*unknown allocation source 7/);
  malformed(`${HEAD}0 0 1 8 1 0 1 0\n${TAIL}`, /^line 3 .*without its callstack/);
  malformed(`${HEAD}0 0 1 8 1 0 1 0 | 2 A.f\n${TAIL}`, /^line 3 .*callstack length mismatch/);
  malformed(`${HEAD}2 0 1 0 0 0 9 0\n${TAIL}`, /^line 3 .*unknown outcome 9/);
  malformed(`${HEAD}5 0 0 4 0 0 0 0\n${TAIL}`, /^line 3 .*unknown exception 4/);
});

Deno.test("parseRealLog refuses output without the header or the trailer", () => {
  malformed("", /does not start with its log header: ""/);
  malformed("Fatal error: exception Not_found\n", /does not start with its log header/);
  malformed("memprof-lab differential log 2\n", /does not start with its log header/);
  malformed(
    "memprof-lab differential log 1\n",
    /^line 2 .*expected "minor_heap_words N".*got ""/,
  );
  malformed(
    "memprof-lab differential log 1\nminor_heap_words abc\n",
    /^line 2 .*expected "minor_heap_words N", got "minor_heap_words abc"/,
  );
  malformed(`${HEAD}minor_collections 0\nmajor_cycles 0\n`, /^line 5 .*expected "log_overflow/);
  malformed(
    `${HEAD}minor_collections 0\nmajor_cycles 0\nlog_overflow maybe\n`,
    /expected "log_overflow true\|false", got "log_overflow maybe"/,
  );
  malformed(`${HEAD}2 0 1 0 0 0 1 0\nmajor_cycles 0\n`, /expected "minor_collections N"/);
  malformed(`${HEAD}garbage\n${TAIL}`, /expected "minor_collections N".*"garbage"/);
});
