// The DSL refuses invalid scenarios before they run, naming the scenario, the step and the
// problem; runs are deterministic for a seed.
import assert from "node:assert/strict";
import {
  act,
  cb,
  keep,
  runScenario,
  scenario,
  ScenarioError,
  sizes,
} from "../../lib/scenario/mod.ts";

function refused(build: Parameters<typeof scenario>[1], match: RegExp, settings = {}) {
  assert.throws(
    () => scenario({ name: "bad", ...settings }, build),
    (e: unknown) => {
      assert.ok(e instanceof ScenarioError, String(e));
      assert.equal(e.scenario, "bad");
      assert.match(e.message, match);
      return true;
    },
  );
}

Deno.test("invalid scenarios fail before running, naming scenario, step and problem", async (t) => {
  await t.step("sampling rate outside [0, 1]", () => {
    refused(
      (s) => void s.main.memprof.start({ samplingRate: 1.5 }),
      /^scenario bad, step 1: sampling rate must be within \[0, 1\], got 1.5$/,
    );
    refused((s) => void s.main.memprof.start({ samplingRate: -0.1 }), /step 1: sampling rate/);
    refused(() => {}, /settings: sampling rate must be within/, { samplingRate: 2 });
  });
  await t.step("stop without start", () => {
    refused((s) => {
      s.main.alloc(1);
      s.main.memprof.stop();
    }, /^scenario bad, step 2: Gc\.Memprof\.stop: no profile running\.$/);
  });
  await t.step("start twice, discard while sampling, discard twice", () => {
    refused((s) => {
      s.main.memprof.start();
      s.main.memprof.start();
    }, /step 2: Gc\.Memprof\.start: already started\./);
    refused((s) => {
      const p = s.main.memprof.start();
      s.main.memprof.discard(p);
    }, /step 2: Gc\.Memprof\.discard: profile not stopped\./);
    refused((s) => {
      const p = s.main.memprof.start();
      s.main.memprof.stop();
      s.main.memprof.discard(p);
      s.main.memprof.discard(p);
    }, /step 4: Gc\.Memprof\.discard: profile already discarded\./);
  });
  await t.step("a stop repeated inside a loop is found on the second iteration", () => {
    refused((s) => {
      s.main.memprof.start();
      s.main.repeat(3, () => s.main.memprof.stop());
    }, /step 2\.1: Gc\.Memprof\.stop: no profile running\./);
  });
  await t.step("sizes, counts, lifetimes and frames", () => {
    refused((s) => void s.main.alloc(0), /step 1: alloc: size must be an integer/);
    refused((s) => void s.main.alloc(sizes.uniform(9, 3)), /uniform\(9, 3\)/);
    refused((s) => void s.main.allocCombined([200, 100]), /combined allocation fits in 257/);
    refused((s) => void s.main.repeat(-1, () => {}), /repeat count must be a whole number/);
    refused(
      (s) => void s.main.alloc(1, { lifetime: keep.until("x") }),
      /kept until "x" but nothing releases "x"/,
    );
    refused((s) => void s.main.alloc(1, { at: "no frame" }), /step 1: frame "no frame" is not/);
    refused((s) => void s.main.alloc(1, { source: "custom" }), /a custom block needs customMem/);
    refused(
      (s) => void s.main.memprof.start({ callstackSize: -1 }),
      /callstack size must be a whole number/,
    );
  });
  await t.step("domains and threads", () => {
    refused((s) => {
      const d = s.main.spawn("w");
      d.terminate();
      d.alloc(1);
    }, /step 3: domain "w" is not running here/);
    refused((s) => s.main.terminate(), /the main domain cannot terminate/);
    refused((s) => {
      const t = s.main.thread("t");
      t.exit();
      t.switchTo();
    }, /step 3: thread "t" is not running here/);
    refused((s) => {
      s.main.spawn("w");
      s.main.spawn("w");
    }, /domain name "w" is used twice/);
    refused(
      (s) => {
        s.main.spawn();
        s.main.spawn();
      },
      /more than maxDomains \(2\)/,
      { maxDomains: 2 },
    );
  });
  await t.step("callbacks", () => {
    refused(
      (s) => void s.main.memprof.start({ tracker: { allocMinor: cb.track().on(0, act.stop()) } }),
      /call number must be a whole number ≥ 1/,
    );
    refused(
      (s) =>
        void s.main.memprof.start({ tracker: { promote: cb.track().on(1, act.raise("bad")) } }),
      /"bad" is not an OCaml exception name/,
    );
    refused(
      (s) =>
        void s.main.memprof.start({
          tracker: { allocMinor: cb.track().on(1, act.switchThread("nobody")) },
        }),
      /no thread named "nobody"/,
    );
  });
  await t.step("settings", () => {
    refused(() => {}, /minorHeapWords must be even/, { minorHeapWords: 5001 });
    refused(() => {}, /ringLog2 must be an integer in \[9, 24\]/, { ringLog2: 40 });
    assert.throws(() => scenario({ name: "a b" }, () => {}), /name must be letters/);
  });
});

const sized = scenario({ name: "sized", seed: 5, minorHeapWords: 8192, ringLog2: 10 }, (s) => {
  s.events.start();
  s.main.memprof.start({ samplingRate: 0.05, callstackSize: 2 });
  s.main.repeat(2_000, () =>
    s.main.alloc(sizes.geometric(8, 100), {
      lifetime: keep.cycle(keep.drop, keep.steps(10)),
      at: "A.f@a.ml:1:2-3",
    }));
  s.main.memprof.stop();
});

Deno.test("same scenario and seed give byte-identical outputs; another seed differs", () => {
  const a = runScenario(sized), b = runScenario(sized);
  assert.deepEqual(a.ctf, b.ctf);
  assert.ok(a.eventsImage.length > 0 && a.summary.minorCollections > 0);
  assert.deepEqual(a.eventsImage, b.eventsImage);
  assert.equal(a.eventsDump, b.eventsDump);
  assert.equal(a.callbackLog, b.callbackLog);
  assert.equal(a.traceDump, b.traceDump);
  assert.deepEqual(a.summary, b.summary);
  const c = runScenario(sized, { seed: 6 });
  assert.notEqual(c.callbackLog, a.callbackLog);
  assert.equal(c.summary.seed, 6);
});

Deno.test("--rate overrides every profile's rate", () => {
  const r = runScenario(sized, { samplingRate: 0 });
  assert.equal(r.summary.samples, 0);
  assert.ok(runScenario(sized, { samplingRate: 1 }).summary.samples > r.summary.samples);
});

Deno.test("progress is reported and reaches the total", () => {
  const seen: [number, number][] = [];
  runScenario(sized, { onProgress: (d, t) => seen.push([d, t]) });
  assert.ok(seen.length >= 10);
  const [d, t] = seen[seen.length - 1];
  assert.equal(d, t);
});

Deno.test("a step failing at run time is reported with scenario and step", () => {
  // Callbacks that stop the profile make the static memprof checks give way to run time.
  const sc = scenario({ name: "late" }, (s) => {
    s.main.memprof.start({
      samplingRate: 1,
      tracker: { allocMinor: cb.track().on(1, act.stop()) },
    });
    s.main.alloc(1);
    s.main.memprof.stop(); // the callback already stopped it
  });
  assert.throws(
    () => runScenario(sc),
    (e: unknown) =>
      e instanceof ScenarioError && e.step === "3" &&
      e.message === "scenario late, step 3: Gc.Memprof.stop: no profile running.",
  );
});
