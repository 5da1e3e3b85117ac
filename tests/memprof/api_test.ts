import assert from "node:assert/strict";
import { Runtime } from "../../lib/runtime/mod.ts";
import { MemprofRng, oneLog1mLambda } from "../../lib/memprof/rng.ts";
import {
  discard,
  OCamlFailure,
  OCamlInvalidArgument,
  ProfileStatus,
} from "../../lib/memprof/mod.ts";

Deno.test("Gc.Memprof API: OCaml's exact failure messages", async (t) => {
  const rt = new Runtime();
  const d = rt.mainDomain;
  await t.step("invalid arguments", () => {
    for (const samplingRate of [-0.1, 1.0000001, NaN, Infinity]) {
      assert.throws(
        () => d.memprofStart({ samplingRate, tracker: {} }),
        new OCamlInvalidArgument("Gc.Memprof.start"),
      );
    }
    assert.throws(
      () => d.memprofStart({ samplingRate: 0.5, callstackSize: -1, tracker: {} }),
      new OCamlInvalidArgument("Gc.Memprof.start"),
    );
  });
  await t.step("stop without a profile", () => {
    assert.throws(() => d.memprofStop(), new OCamlFailure("Gc.Memprof.stop: no profile running."));
  });
  await t.step("start twice, discard while sampling, discard twice", () => {
    const p = d.memprofStart({ samplingRate: 0.5, tracker: {} });
    assert.equal(p.status, ProfileStatus.SAMPLING);
    assert.throws(
      () => d.memprofStart({ samplingRate: 0.5, tracker: {} }),
      new OCamlFailure("Gc.Memprof.start: already started."),
    );
    assert.throws(() => discard(p), new OCamlFailure("Gc.Memprof.discard: profile not stopped."));
    d.memprofStop();
    assert.equal(p.status, ProfileStatus.STOPPED);
    assert.throws(() => d.memprofStop(), new OCamlFailure("Gc.Memprof.stop: no profile running."));
    discard(p);
    assert.equal(p.status, ProfileStatus.DISCARDED);
    assert.throws(
      () => discard(p),
      new OCamlFailure("Gc.Memprof.discard: profile already discarded."),
    );
  });
  await t.step("a stopped profile may be followed by a new one", () => {
    const p = d.memprofStart({ samplingRate: 1, tracker: {} });
    d.memprofStop();
    const q = d.memprofStart({ samplingRate: 1, tracker: {} });
    assert.notEqual(p, q);
    d.memprofStop();
  });
});

Deno.test("rates 0 and 1, and the callstack depth limit", () => {
  const rt = new Runtime();
  const d = rt.mainDomain;
  let n = 0;
  d.memprofStart({ samplingRate: 0, tracker: { allocMinor: () => void n++ } });
  for (let i = 0; i < 10_000; i++) d.alloc(3);
  d.alloc(5000);
  d.processPendingActions();
  d.memprofStop();
  assert.equal(n, 0);

  const stacks: (readonly string[])[] = [];
  d.setCallstack(["f", "g", "h", "main"]);
  d.memprofStart({
    samplingRate: 1,
    callstackSize: 2,
    tracker: { allocMinor: (i) => void stacks.push(i.callstack) },
  });
  d.alloc(1);
  d.memprofStop();
  assert.deepEqual(stacks, [["f", "g"]]);
});

Deno.test("successive profiles on one domain continue the same random stream", () => {
  const samplesOf = (rt: Runtime) => {
    const d = rt.mainDomain;
    const at: number[] = [];
    let i = 0;
    d.memprofStart({
      samplingRate: 0.01,
      callstackSize: 0,
      tracker: { allocMinor: () => void at.push(i) },
    });
    for (i = 0; i < 5000; i++) d.alloc(1);
    d.memprofStop();
    return at;
  };
  const rt = new Runtime();
  const first = samplesOf(rt);
  const second = samplesOf(rt);
  assert.notDeepEqual(first, second, "the generator is not reseeded by start");
  // Deterministic: a fresh runtime (fresh domain 0) reproduces the first profile.
  assert.deepEqual(samplesOf(new Runtime()), first);
  // A domain's generator is seeded by its id: domain 1 samples differently from domain 0.
  const rt2 = new Runtime();
  const d1 = rt2.spawnDomain();
  const at: number[] = [];
  let i = 0;
  d1.memprofStart({
    samplingRate: 0.01,
    callstackSize: 0,
    tracker: { allocMinor: () => void at.push(i) },
  });
  for (i = 0; i < 5000; i++) d1.alloc(1);
  d1.memprofStop();
  assert.notDeepEqual(at, first);
});

Deno.test("a second profile starts on a fresh batch of the same stream (rand_init)", () => {
  // memprof.c draws: start = rand_init (1) + set_trigger (1); each sample_young = 1 per sample
  // + 1 when unsuspending; stop = 1 (its unsuspend, while still sampling). A new start discards
  // the rest of the batch of 64 and draws from the next one.
  const lambda = 0.01;
  const o = oneLog1mLambda(lambda);
  const rt = new Runtime();
  const d = rt.mainDomain;
  const runProfile = () => {
    const firsts: number[] = [];
    let draws = 2;
    let i = 0;
    d.memprofStart({
      samplingRate: lambda,
      callstackSize: 0,
      tracker: {
        allocMinor: (info) => {
          firsts.push(i);
          draws += info.nSamples + 1;
          return undefined;
        },
      },
    });
    for (i = 1; i <= 3000; i++) d.alloc(1);
    d.memprofStop();
    return { first: firsts[0], draws: draws + 1 };
  };
  const p1 = runProfile();
  const p2 = runProfile();
  const r = new MemprofRng(0);
  r.init(o);
  // 2 words per iteration: the trigger g words away fires at iteration ceil(g / 2).
  assert.equal(p1.first, Math.ceil(r.geom(o) / 2));
  for (let k = 2; k < p1.draws; k++) r.geom(o);
  r.init(o);
  assert.equal(p2.first, Math.ceil(r.geom(o) / 2));
});
