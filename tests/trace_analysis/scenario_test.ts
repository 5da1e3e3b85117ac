// The analyses on a scenario whose allocations are known exactly: at sampling rate 1 memprof
// samples every word of every block, header included, so the estimates are exact. (The runtime
// may allocate blocks of its own, e.g. for Domain.spawn: the checks are per site.)
import assert from "node:assert/strict";
import { Reader } from "../../lib/memtrace/mod.ts";
import { keep, runScenario, scenario } from "../../lib/scenario/mod.ts";
import { analyzeTrace, diffOf, topOf } from "../../lib/trace_analysis/mod.ts";

const KEPT = 10, KEPT_WORDS = 3, DROPPED = 20, DROPPED_WORDS = 5, BIG = 4, BIG_WORDS = 300;
const WORKER = 6, WORKER_WORDS = 2;

function known(extraDropped = 0) {
  return scenario({ name: "known", description: "known allocations", seed: 1 }, (s) => {
    const m = s.main;
    m.memprof.start({ samplingRate: 1 });
    m.call("Known.main@known.ml:1:0-10", () => {
      m.repeat(
        KEPT,
        () => m.alloc(KEPT_WORDS, { lifetime: keep.forever, at: "Known.keep@known.ml:2:4-20" }),
      );
      m.repeat(
        DROPPED + extraDropped,
        () => m.alloc(DROPPED_WORDS, { at: "Known.drop@known.ml:3:4-20" }),
      );
      m.repeat(BIG, () =>
        m.alloc(BIG_WORDS, {
          source: "major",
          lifetime: keep.forever,
          at: "Known.big@known.ml:4:4-20",
        }));
    });
    const w = m.spawn("worker");
    w.call(
      "Known.work@known.ml:8:0-10",
      () =>
        w.repeat(
          WORKER,
          () => w.alloc(WORKER_WORDS, { lifetime: keep.forever, at: "Known.cell@known.ml:9:4-20" }),
        ),
    );
    m.join(w);
    m.fullMajor();
    m.memprof.stop();
  });
}

const bytesOf = (samples: number) => samples * 8; // rate 1, 8-byte words

Deno.test("on a scenario at rate 1, estimated allocated and live bytes are what it allocates and keeps", () => {
  const r = runScenario(known());
  const reader = Reader.fromBytes(r.ctf);
  const { data, selector } = analyzeTrace(reader);
  assert.equal(data.info.sampleRate, 1);
  const top = topOf(data, selector, { limit: 0 });
  const row = (key: string) => top.rows.find((x) => x.key === key);
  const keepW = KEPT * (KEPT_WORDS + 1), dropW = DROPPED * (DROPPED_WORDS + 1);
  const bigW = BIG * (BIG_WORDS + 1), workerW = WORKER * (WORKER_WORDS + 1);
  assert.equal(row("Known.keep@known.ml:2:4-20")?.bytes, bytesOf(keepW));
  assert.equal(row("Known.drop@known.ml:3:4-20")?.bytes, bytesOf(dropW));
  assert.equal(row("Known.big@known.ml:4:4-20")?.bytes, bytesOf(bigW));
  assert.equal(row("Known.cell@known.ml:9:4-20")?.bytes, bytesOf(workerW));
  assert.equal(top.totals.bytes, top.rows.reduce((a, x) => a + x.bytes, 0));
  // Kept blocks are live at the end; dropped ones are not.
  assert.equal(row("Known.keep@known.ml:2:4-20")?.liveEndBytes, bytesOf(keepW));
  assert.equal(row("Known.big@known.ml:4:4-20")?.liveEndBytes, bytesOf(bigW));
  assert.equal(row("Known.cell@known.ml:9:4-20")?.liveEndBytes, bytesOf(workerW));
  assert.equal(row("Known.drop@known.ml:3:4-20")?.liveEndBytes, 0);
  // Small kept blocks were promoted by the final full major; major blocks never are.
  assert.equal(row("Known.keep@known.ml:2:4-20")?.promotedShare, 1);
  assert.equal(row("Known.drop@known.ml:3:4-20")?.promotedShare, 0);
  assert.equal(row("Known.big@known.ml:4:4-20")?.promotedShare, 0);

  const live = analyzeTrace(Reader.fromBytes(r.ctf), { liveAt: "end" });
  const liveTop = topOf(live.data, live.selector, { limit: 0 });
  assert.equal(liveTop.measure, "live");
  assert.equal(liveTop.totals.bytes, top.totals.liveEndBytes);
  assert.deepEqual(
    liveTop.rows.filter((x) => x.key.startsWith("Known.")).map((x) => [x.key, x.bytes]),
    [
      ["Known.big@known.ml:4:4-20", bytesOf(bigW)],
      ["Known.keep@known.ml:2:4-20", bytesOf(keepW)],
      ["Known.cell@known.ml:9:4-20", bytesOf(workerW)],
    ],
  );
  // Filters: the worker's domain alone; major blocks alone; by function.
  const worker = analyzeTrace(Reader.fromBytes(r.ctf), { domains: [1], function: "Known." });
  assert.equal(topOf(worker.data, worker.selector).totals.bytes, bytesOf(workerW));
  const major = analyzeTrace(Reader.fromBytes(r.ctf), {
    sources: ["major"],
    liveAt: "peak",
    function: "Known.",
  });
  assert.equal(topOf(major.data, major.selector).totals.bytes, bytesOf(bigW));
  const fns = topOf(data, selector, { by: "function", limit: 0 });
  const main = fns.rows.find((x) => x.key === "Known.main")!;
  assert.equal(main.selfSamples, 0);
  assert.equal(main.samples, keepW + dropW + bigW);
});

Deno.test("diff of two runs names the site whose allocations grew, by exactly how much", () => {
  const a = runScenario(known());
  const b = runScenario(known(7));
  const A = analyzeTrace(Reader.fromBytes(a.ctf));
  const B = analyzeTrace(Reader.fromBytes(b.ctf));
  const d = diffOf(A.data, B.data, A.selector, B.selector);
  assert.equal(d.rowCount, 1);
  assert.equal(d.rows[0].key, "Known.drop@known.ml:3:4-20");
  assert.equal(d.rows[0].allocDelta, bytesOf(7 * (DROPPED_WORDS + 1)));
  assert.equal(d.rows[0].liveDelta, 0);
  assert.equal(d.totals.allocDelta, bytesOf(7 * (DROPPED_WORDS + 1)));
  const same = diffOf(A.data, A.data, A.selector);
  assert.equal(same.rowCount, 0);
  assert.equal(same.totals.allocDelta, 0);
});
