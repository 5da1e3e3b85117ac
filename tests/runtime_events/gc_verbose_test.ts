// The v=0x400 figures: read from OCaml's text, and computed from a ring the way the runtime
// counts them (the real runtime's own check is tests/differential/rings_real_test.ts).
import assert from "node:assert/strict";
import { assertEquals } from "./assert.ts";
import {
  gcVerboseDifferences,
  GcVerboseFormatError,
  gcVerboseOfRing,
  parseGcVerbose,
  RuntimeCounter,
  RuntimeEventsProducer,
  RuntimePhase,
} from "../../lib/runtime_events/mod.ts";

// What OCaml 5.3.0 printed for the exported ref_loop program run for `diff --rings`.
const REF_LOOP_STDERR = `allocated_words: 144655
minor_words: 135045
promoted_words: 662
major_words: 10272
minor_collections: 10
major_collections: 4
forced_major_collections: 1
heap_words: 63034
top_heap_words: 63034
`;

Deno.test("parseGcVerbose reads every figure OCaml prints, other lines ignored", () => {
  const s = parseGcVerbose("some program output\n" + REF_LOOP_STDERR + "Fatal: none\n");
  assertEquals(s.allocated_words, 144655);
  assertEquals(s.minor_words, 135045);
  assertEquals(s.promoted_words, 662);
  assertEquals(s.major_words, 10272);
  assertEquals(s.minor_collections, 10);
  assertEquals(s.major_collections, 4);
  assertEquals(s.forced_major_collections, 1);
  assertEquals(s.heap, { heap_words: 63034, top_heap_words: 63034 });
  // OCaml's own identity holds in its text.
  assertEquals(s.allocated_words, s.minor_words + s.major_words - s.promoted_words);
});

Deno.test("parseGcVerbose names a missing or repeated figure", () => {
  assert.throws(
    () => parseGcVerbose(REF_LOOP_STDERR.replace(/promoted_words: 662\n/, "")),
    (e) => e instanceof GcVerboseFormatError && e.message.includes('"promoted_words: N"'),
  );
  assert.throws(
    () => parseGcVerbose(REF_LOOP_STDERR + "minor_words: 1\n"),
    (e) => e instanceof GcVerboseFormatError && e.message === "line 10: minor_words given twice",
  );
});

function ringOf(write: (p: RuntimeEventsProducer) => void): Uint8Array {
  const p = new RuntimeEventsProducer({ maxDomains: 2, logWsize: 12, pid: 7, clock: tick() });
  p.start();
  write(p);
  return p.bytes;
}

function tick(): () => number {
  let t = 0;
  return () => (t += 10);
}

Deno.test("gcVerboseOfRing counts as the runtime does", () => {
  const image = ringOf((p) => {
    for (const [allocated, promoted] of [[800, 80], [1600, 0]]) {
      p.begin(0, RuntimePhase.EV_MINOR);
      p.counter(0, RuntimeCounter.EV_C_MINOR_PROMOTED, promoted);
      p.counter(0, RuntimeCounter.EV_C_MINOR_ALLOCATED, allocated);
      p.end(0, RuntimePhase.EV_MINOR);
      // Every domain logs its part of a minor collection: counted on ring 0 only.
      p.begin(1, RuntimePhase.EV_MINOR);
      p.counter(1, RuntimeCounter.EV_C_MINOR_ALLOCATED, 8);
      p.end(1, RuntimePhase.EV_MINOR);
    }
    p.counter(0, RuntimeCounter.EV_C_MAJOR_ALLOCATED_WORDS, 300);
    p.counter(1, RuntimeCounter.EV_C_MAJOR_ALLOCATED_WORDS, 5);
    p.begin(0, RuntimePhase.EV_MAJOR_GC_STW);
    p.end(0, RuntimePhase.EV_MAJOR_GC_STW);
    // A full major whose callback raised: begun, never ended, not counted (gc_ctrl.c).
    p.begin(0, RuntimePhase.EV_EXPLICIT_GC_FULL_MAJOR);
    p.begin(0, RuntimePhase.EV_EXPLICIT_GC_FULL_MAJOR);
    p.end(0, RuntimePhase.EV_EXPLICIT_GC_FULL_MAJOR);
    p.begin(0, RuntimePhase.EV_EXPLICIT_GC_COMPACT);
    p.end(0, RuntimePhase.EV_EXPLICIT_GC_COMPACT);
    // Gc.major is not a forced major collection.
    p.begin(0, RuntimePhase.EV_EXPLICIT_GC_MAJOR);
    p.end(0, RuntimePhase.EV_EXPLICIT_GC_MAJOR);
  });
  const g = gcVerboseOfRing(image);
  assertEquals(g.lostWords, 0);
  assertEquals(g.startsAtRingStart, true);
  assertEquals(g.stats, {
    minor_words: (800 + 1600 + 16) / 8,
    promoted_words: 10,
    major_words: 305,
    allocated_words: 302 + 305 - 10,
    minor_collections: 2,
    major_collections: 1,
    forced_major_collections: 2,
  });
  const other = { ...g.stats, major_words: 306 };
  assertEquals(gcVerboseDifferences(g.stats, other), ["major_words: 305 ≠ 306"]);
  assertEquals(gcVerboseDifferences(g.stats, g.stats), []);
});

Deno.test("gcVerboseOfRing reports a ring that does not begin with ring_start, and lost words", () => {
  const p = new RuntimeEventsProducer({ maxDomains: 1, logWsize: 9, pid: 7, clock: tick() });
  p.start();
  for (let i = 0; i < 400; i++) {
    p.begin(0, RuntimePhase.EV_MINOR);
    p.end(0, RuntimePhase.EV_MINOR);
  }
  const g = gcVerboseOfRing(p.bytes);
  assertEquals(g.startsAtRingStart, false);
  assertEquals(g.lostWords > 0, true);
  assertEquals(g.stats.minor_collections < 400, true);
});
