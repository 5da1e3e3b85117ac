// The ring comparison of `deno task diff --rings` on produced rings: canonical lines, the run's
// window in a real program's ring (between the harness's Gc.minor and the pause/resume mark) and
// in the simulation's, the first difference with its context, lost words, nesting, durations,
// the known ring list's places and the calibration table. (On the real runtime:
// rings_real_test.ts.)
import assert from "node:assert/strict";
import {
  Calibration,
  canonicalLines,
  compareRings,
  formatCalibration,
  judgeKey,
  parseKnownDifferences,
  phaseDurations,
  readRings,
  realRunWindow,
  RING_KEYS,
  ringDifferenceContext,
  ringDifferenceSummary,
  type RingJudgement,
  ringKey,
  RingWindowError,
  simulatedRunWindow,
} from "../../lib/differential/mod.ts";
import {
  Lifecycle,
  RuntimeCounter,
  RuntimeEventsProducer,
  RuntimePhase,
  Type,
} from "../../lib/runtime_events/mod.ts";
import { KnownDifferencesError } from "../../lib/differential/mod.ts";

function producer(): RuntimeEventsProducer {
  let t = 0;
  const p = new RuntimeEventsProducer({
    maxDomains: 2,
    logWsize: 12,
    pid: 99,
    clock: () => (t += 10),
  });
  p.start();
  return p;
}

/** A minor collection with its counters, as both sides write it. */
function minor(p: RuntimeEventsProducer, promoted: number, d = 0): void {
  p.begin(d, RuntimePhase.EV_MINOR);
  p.counter(d, RuntimeCounter.EV_C_MINOR_PROMOTED, promoted);
  p.counter(d, RuntimeCounter.EV_C_MINOR_ALLOCATED, 800);
  p.end(d, RuntimePhase.EV_MINOR);
}

/** A slice's counters; `work` is a history counter. */
function slice(p: RuntimeEventsProducer, work: number): void {
  p.begin(0, RuntimePhase.EV_MAJOR);
  p.counter(0, RuntimeCounter.EV_C_MAJOR_ALLOCATED_WORDS, 12);
  p.counter(0, RuntimeCounter.EV_C_MAJOR_WORK_COUNTER, work);
  // A heap statistic, left out on both sides.
  p.counter(0, RuntimeCounter.EV_C_MAJOR_HEAP_POOL_LIVE_WORDS, work);
  p.end(0, RuntimePhase.EV_MAJOR);
}

/** A real program's ring: its initialisation, the harness's Gc.full_major and Gc.minor, the
 * run (`run`), the mark, then the printing of its log. */
function realImage(run: (p: RuntimeEventsProducer) => void, opts = { endsPaused: false }) {
  const p = producer();
  minor(p, 64); // initialisation
  slice(p, 100_000);
  p.begin(0, RuntimePhase.EV_EXPLICIT_GC_FULL_MAJOR);
  minor(p, 8);
  p.end(0, RuntimePhase.EV_EXPLICIT_GC_FULL_MAJOR);
  p.begin(0, RuntimePhase.EV_EXPLICIT_GC_MINOR);
  minor(p, 192);
  p.end(0, RuntimePhase.EV_EXPLICIT_GC_MINOR);
  run(p);
  if (opts.endsPaused) p.lifecycle(0, Lifecycle.EV_RING_RESUME, 0);
  else {
    p.lifecycle(0, Lifecycle.EV_RING_PAUSE, 0);
    p.lifecycle(0, Lifecycle.EV_RING_RESUME, 0);
  }
  minor(p, 4000); // printing the log
  return p.bytes;
}

/** The simulation's ring of the same run: it starts with the run. */
function simImage(run: (p: RuntimeEventsProducer) => void) {
  const p = producer();
  run(p);
  return p.bytes;
}

const RUN = (p: RuntimeEventsProducer) => {
  minor(p, 16);
  slice(p, 150_000);
  const ev = p.registerUserEvent("req", Type.int);
  p.writeUser(0, ev, 42);
  slice(p, 150_500);
  minor(p, 0, 1); // another domain's part of a collection
};

Deno.test("the run's window of a real ring lies between the harness's Gc.minor and the mark", () => {
  const real = realRunWindow(readRings(realImage(RUN)));
  const sim = simulatedRunWindow(readRings(simImage(RUN)));
  assert.deepEqual(canonicalLines(real.get(0)!), canonicalLines(sim.get(0)!));
  assert.deepEqual(canonicalLines(real.get(0)!), [
    "begin minor",
    "counter minor_promoted 16",
    "counter minor_allocated 800",
    "end minor",
    "begin major",
    "counter major_allocated_words 12",
    "counter major_work_counter +0",
    "end major",
    'user "req" int 42',
    "begin major",
    "counter major_allocated_words 12",
    "counter major_work_counter +500",
    "end major",
  ]);
  assert.deepEqual(canonicalLines(real.get(1)!), [
    "begin minor",
    "counter minor_promoted 0",
    "counter minor_allocated 800",
    "end minor",
  ]);
  const c = compareRings({ window: sim, lostWords: 0 }, { window: real, lostWords: 0 });
  assert.equal(c.difference, undefined);
  assert.equal(c.compared, 17);
  assert.equal(c.rings, 2);
  assert.equal(ringDifferenceSummary(c), "rings agree (17 events on 2 ring(s))");
  // A run that ended paused has only the resume as its mark.
  const paused = realRunWindow(readRings(realImage(RUN, { endsPaused: true })));
  assert.deepEqual(canonicalLines(paused.get(0)!), canonicalLines(real.get(0)!));
});

Deno.test("a real ring without the harness's marks is refused, naming what is missing", () => {
  assert.throws(() => realRunWindow(readRings(simImage(RUN))), RingWindowError);
  const p = producer();
  p.begin(0, RuntimePhase.EV_EXPLICIT_GC_FULL_MAJOR);
  p.end(0, RuntimePhase.EV_EXPLICIT_GC_FULL_MAJOR);
  p.begin(0, RuntimePhase.EV_EXPLICIT_GC_MINOR);
  p.end(0, RuntimePhase.EV_EXPLICIT_GC_MINOR);
  assert.throws(
    () => realRunWindow(readRings(p.bytes)),
    (e) => e instanceof RingWindowError && /ring_resume mark/.test(e.message),
  );
});

Deno.test("the first differing event is reported with its context, on its ring", () => {
  const other = (p: RuntimeEventsProducer) => {
    minor(p, 16);
    slice(p, 150_000);
    const ev = p.registerUserEvent("req", Type.int);
    p.writeUser(0, ev, 43);
    slice(p, 150_500);
  };
  const c = compareRings(
    { window: simulatedRunWindow(readRings(simImage(other))), lostWords: 0 },
    { window: realRunWindow(readRings(realImage(RUN))), lostWords: 0 },
    { context: 2 },
  );
  const d = c.difference!;
  assert.equal(d.kind, "event");
  if (d.kind !== "event") return;
  assert.equal(d.ring, 0);
  assert.equal(d.index, 9);
  assert.equal(d.firstLine, 7);
  assert.deepEqual(d.sim, [
    "counter major_work_counter +0",
    "end major",
    'user "req" int 43',
    "begin major",
    "counter major_allocated_words 12",
  ]);
  assert.deepEqual(d.real[2], 'user "req" int 42');
  assert.equal(ringDifferenceSummary(c), "rings differ at ring 0 event 9");
  const text = ringDifferenceContext(d);
  assert.ok(text.includes('  >  9 user "req" int 43'), text.join("\n"));
  assert.ok(text.includes('  >  9 user "req" int 42'), text.join("\n"));
  // History counters are compared by their change: a different start is no difference, a
  // different change is.
  const shifted = (p: RuntimeEventsProducer) => {
    minor(p, 16);
    slice(p, 150_100);
    const ev = p.registerUserEvent("req", Type.int);
    p.writeUser(0, ev, 42);
    slice(p, 150_600);
    minor(p, 0, 1);
  };
  const same = compareRings(
    { window: simulatedRunWindow(readRings(simImage(shifted))), lostWords: 0 },
    { window: realRunWindow(readRings(realImage(RUN))), lostWords: 0 },
  );
  assert.equal(same.difference, undefined);
});

Deno.test("a ring that lost words is no comparison; phases must nest alike", () => {
  const w = simulatedRunWindow(readRings(simImage(RUN)));
  const lost = compareRings({ window: w, lostWords: 0 }, { window: w, lostWords: 12 });
  assert.deepEqual(lost.difference, { kind: "lost", side: "real", words: 12 });
  assert.match(ringDifferenceSummary(lost), /real ring lost 12 words/);
  // A Gc.full_major whose callback raised never ends its phase, in OCaml: both sides alike agree.
  const open = (p: RuntimeEventsProducer) => {
    p.begin(0, RuntimePhase.EV_EXPLICIT_GC_FULL_MAJOR);
    minor(p, 0);
  };
  const ow = simulatedRunWindow(readRings(simImage(open)));
  assert.equal(
    compareRings({ window: ow, lostWords: 0 }, { window: ow, lostWords: 0 }).difference,
    undefined,
  );
});

Deno.test("phase durations are matched begin to end on each ring", () => {
  const p = producer(); // each event 10 ns after the last
  p.begin(0, RuntimePhase.EV_MINOR);
  p.begin(0, RuntimePhase.EV_MINOR_LOCAL_ROOTS);
  p.end(0, RuntimePhase.EV_MINOR_LOCAL_ROOTS);
  p.end(0, RuntimePhase.EV_MINOR);
  p.begin(1, RuntimePhase.EV_MINOR);
  p.end(1, RuntimePhase.EV_MINOR);
  const d = phaseDurations(simulatedRunWindow(readRings(p.bytes)));
  assert.deepEqual(Object.fromEntries(d), { minor: [30, 10], minor_local_roots: [10] });
});

Deno.test("known ring differences: the places they may name", () => {
  const ok = parseKnownDifferences(
    JSON.stringify([
      { scenario: "a", at: "ring 0 event 17", reason: "x" },
      { scenario: "b", at: "nondeterministic", reason: "y" },
      { scenario: "c", at: "nesting real ring 1", reason: "z" },
      { scenario: "d", at: "lost simulation", reason: "w" },
    ]),
    "k.json",
    RING_KEYS,
  );
  assert.equal(ok.length, 4);
  for (const at of ["callback 3", "ring 0 event 0", "ring x event 1", "collections"]) {
    assert.throws(
      () =>
        parseKnownDifferences(
          JSON.stringify([{ scenario: "a", at, reason: "x" }]),
          "k.json",
          RING_KEYS,
        ),
      (e) => e instanceof KnownDifferencesError && /"at" must be "ring R event N"/.test(e.message),
    );
  }
  const nondet: RingJudgement = { status: "nondeterministic", message: "m" };
  assert.equal(ringKey(nondet), "nondeterministic");
  assert.equal(judgeKey("b", ringKey(nondet), ok).kind, "known");
  assert.equal(judgeKey("a", ringKey(nondet), ok).kind, "moved");
  assert.equal(judgeKey("a", undefined, ok).kind, "now agrees");
  assert.equal(judgeKey("e", undefined, ok).kind, "ok");
});

Deno.test("the calibration table pools durations and gives medians, their ratio and spreads", () => {
  const cal = new Calibration();
  cal.add({ sim: { minor: [10, 20, 30] }, real: { minor: [40, 50, 60, 70] } });
  cal.add({ sim: { minor: [40], major: [5] }, real: { minor: [80], other: [1] } });
  const rows = cal.table();
  assert.equal(cal.scenarios, 2);
  assert.equal(rows.length, 1); // phases measured on one side only are left out
  const r = rows[0];
  assert.equal(r.phase, "minor");
  assert.deepEqual(r.count, { sim: 4, real: 5 });
  // Nearest rank: rank ceil(0.5 × 4) = 2 of 10..40 is 20; rank 3 of 40..80 is 60.
  assert.deepEqual(r.median, { sim: 20, real: 60 });
  assert.equal(r.ratio, 20 / 60);
  assert.deepEqual(r.p10, { sim: 10, real: 40 });
  assert.deepEqual(r.p90, { sim: 40, real: 80 });
  const text = formatCalibration(rows);
  assert.equal(text.length, 3);
  assert.match(text[2], /^minor\s+4\/5\s+20\s+60\s+0\.33\s+10–40\s+40–80$/);
});
