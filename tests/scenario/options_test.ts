// Options objects are checked at run time too (for plain-JavaScript or unchecked scenarios): an
// unknown key is refused with the step, a suggestion, and the keys accepted; problems inside a
// callback's actions name the callback and the action.
import assert from "node:assert/strict";
import {
  act,
  cb,
  keep,
  type Lifetime,
  runScenario,
  scenario,
  ScenarioError,
  sizes,
} from "../../lib/scenario/mod.ts";
import { editDistance, suggest } from "../../lib/scenario/_options.ts";

// deno-lint-ignore no-explicit-any
type Loose = any;

/** The message of the ScenarioError `scenario(settings, build)` throws. */
function refusal(settings: Loose, build: (s: Loose) => void): string {
  try {
    scenario({ name: "opts", ...settings }, build);
  } catch (e) {
    assert.ok(e instanceof ScenarioError, `not a ScenarioError: ${e}`);
    return e.message;
  }
  assert.fail("the scenario was accepted");
}

Deno.test("edit distance counts insertions, deletions, substitutions and swaps", () => {
  assert.equal(editDistance("lifetime", "lifetime"), 0);
  assert.equal(editDistance("lifetme", "lifetime"), 1);
  assert.equal(editDistance("lifeitme", "lifetime"), 1); // a swap
  assert.equal(editDistance("sorce", "source"), 1);
  assert.equal(editDistance("", "at"), 2);
  assert.equal(editDistance("kitten", "sitting"), 3);
  assert.equal(suggest("samplingrate", ["samplingRate", "seed"]), "samplingRate");
  assert.equal(suggest("maks", ["mean", "max"]), "max");
  assert.equal(suggest("colour", ["lifetime", "source"]), undefined);
});

Deno.test("every options object refuses an unknown key, naming the step and suggesting the key", () => {
  const cases: [string, Loose, (s: Loose) => void, RegExp][] = [
    [
      "settings",
      { samplingrate: 0.1 },
      () => {},
      /^scenario opts, settings: unknown option `samplingrate`; did you mean `samplingRate`\? \(settings accepts `name`, /,
    ],
    [
      "log",
      { log: { format: "memprof_exact", programme: "p" } },
      () => {},
      /^scenario opts, settings: log memprof_exact: unknown option `programme`; did you mean `program`\?/,
    ],
    [
      "alloc",
      {},
      (s) => s.main.alloc(1, { lifetme: keep.forever }),
      /^scenario opts, step 1: alloc: unknown option `lifetme`; did you mean `lifetime`\? \(alloc accepts `lifetime`, `source`, `at`, `customMem`\)$/,
    ],
    [
      "allocCombined",
      {},
      (s) => {
        s.main.alloc(1);
        s.main.allocCombined([1, 2], { lifetimes: keep.drop });
      },
      /^scenario opts, step 2: allocCombined: unknown option `lifetimes`; did you mean `lifetime`\?/,
    ],
    [
      "unmarshal",
      {},
      (s) => s.main.unmarshal([1, 2], { At: "A.f@a.ml:1:2-3" }),
      /step 1: unmarshal: unknown option `At`; did you mean `at`\?/,
    ],
    [
      "memprof.start",
      {},
      (s) => s.main.memprof.start({ callstacksize: 3 }),
      /step 1: memprof\.start: unknown option `callstacksize`; did you mean `callstackSize`\?/,
    ],
    [
      "tracker",
      {},
      (s) => s.main.memprof.start({ tracker: { dealocMinor: cb.none() } }),
      /step 1: tracker: unknown option `dealocMinor`; did you mean `deallocMinor`\?/,
    ],
    [
      "callback",
      {},
      (s) => s.main.memprof.start({ tracker: { promote: { result: "none", action: [] } } }),
      /step 1, callback promote: unknown option `action`; did you mean `actions`\?/,
    ],
    [
      "act.start's profile",
      {},
      (s) =>
        s.main.memprof.start({
          tracker: {
            allocMinor: cb.track().on(
              1,
              act.stop(),
              act.start({ samplingRate: 0.1, callstackSize: 1, tracker: {}, nmae: "q" } as Loose),
            ),
          },
        }),
      /step 1, callback allocMinor, act\.start: profile: unknown option `nmae`; did you mean `name`\?/,
    ],
    [
      "a lifetime (keep.*)",
      {},
      (s) => s.main.alloc(1, { lifetime: { kind: "steps", step: 3 } }),
      /step 1: keep\.steps: unknown option `step`; did you mean `steps`\?/,
    ],
    [
      "a lifetime inside an action",
      {},
      (s) =>
        s.main.memprof.start({
          tracker: {
            allocMinor: cb.track().on(1, act.alloc(2, { kind: "ring", slot: 3 } as Loose)),
          },
        }),
      /step 1, callback allocMinor, act\.alloc: keep\.ring: unknown option `slot`; did you mean `slots`\?/,
    ],
    [
      "a size (sizes.*)",
      {},
      (s) => s.main.alloc({ geometric: { mean: 2, maks: 4 } }),
      /step 1: alloc: sizes\.geometric: unknown option `maks`; did you mean `max`\?/,
    ],
    [
      "a user event",
      {},
      (s) => s.main.userEvent("e", { type: "int", vlaue: 3 }),
      /step 1: userEvent int: unknown option `vlaue`; did you mean `value`\?/,
    ],
    [
      "an action",
      {},
      (s) =>
        s.main.memprof.start({
          tracker: { allocMinor: cb.track().on(1, { kind: "raise", exm: "Exit" } as Loose) },
        }),
      /step 1, callback allocMinor, act\.raise: unknown option `exm`; did you mean `exn`\?/,
    ],
    [
      "a trigger",
      {},
      (s) =>
        s.main.memprof.start({
          tracker: {
            allocMinor: {
              result: "track",
              actions: [{ when: { kind: "nth", N: 1 }, action: act.stop() }],
            },
          },
        }),
      /step 1, callback allocMinor: trigger nth: unknown option `N`; did you mean `n`\?/,
    ],
  ];
  for (const [what, settings, build, want] of cases) {
    assert.match(refusal(settings, build), want, what);
  }
});

Deno.test("misused DSL values get a message saying what was expected", () => {
  assert.match(
    refusal({}, (s) => s.main.alloc(1, keep.forever)),
    /step 1: alloc: options must be an object \{ lifetime, source, at, customMem \}, got what looks like a lifetime: write \{ lifetime: … \}/,
  );
  assert.match(
    refusal({}, (s) => s.main.alloc(1, { lifetime: keep.steps })),
    /step 1: a lifetime is keep\.drop, keep\.forever or keep\.steps\/until\/list\/ring\/cycle\(…\), got a function \(steps\)/,
  );
  assert.match(
    refusal(
      {},
      (s) => s.main.memprof.start({ tracker: { allocMinor: cb.track().on(1, act.stop as Loose) } }),
    ),
    /step 1, callback allocMinor: an action is act\.…\(…\), got a function: call it \(act\.stop\(\)\)/,
  );
  assert.match(
    refusal({}, (s) => s.main.alloc("8")),
    /step 1: alloc: a size is a number or sizes\.uniform\/choice\/geometric\(…\), got string "8"/,
  );
  assert.match(refusal({}, (s) => s.main.repeat(2, "body")), /step 1: repeat needs a function/);
  assert.match(
    refusal(
      {},
      (s) =>
        s.main.memprof.start({
          tracker: { allocMinor: cb.track().on(1, act.gc("mnor" as Loose)) },
        }),
    ),
    /step 1, callback allocMinor, act\.gc: unknown collection "mnor"/,
  );
});

Deno.test("errors from nested actions name every callback and action on the way", () => {
  const inner = (lifetime: Lifetime) => ({
    samplingRate: 0.5,
    callstackSize: 4,
    tracker: { promote: cb.track().on(2, act.alloc(3, lifetime)) },
  });
  const build = (lifetime: Lifetime) => (s: Loose) => {
    s.main.alloc(1);
    s.main.alloc(1);
    s.main.memprof.start({
      tracker: { allocMinor: cb.track().on(1, act.stop(), act.start(inner(lifetime))) },
    });
  };
  assert.equal(
    refusal({}, build(keep.steps(0))),
    "scenario opts, step 3, callback allocMinor, act.start, callback promote, act.alloc: " +
      "keep.steps needs a whole number ≥ 1, got 0",
  );
  assert.match(
    refusal(
      {},
      (s) => s.main.memprof.start({ tracker: { allocMinor: cb.track().on(1, act.raise("bad")) } }),
    ),
    /^scenario opts, step 1, callback allocMinor, act\.raise: "bad" is not an OCaml exception name$/,
  );
  // The same scenario with a valid lifetime is accepted.
  scenario({ name: "opts" }, build(keep.steps(2)));
});

Deno.test("omitted memprof.start values take the settings' even inside every()", () => {
  // Omitted values used to be NaN until filled in, and starts inside every() never were.
  const sc = scenario({ name: "dflt", samplingRate: 0.25, callstackSize: 3 }, (s) => {
    s.main.repeat(4, (i) =>
      i.every(2, () => {
        s.main.memprof.start();
        s.main.alloc(2);
        s.main.memprof.stop();
      }));
  });
  const loop = sc.steps[0] as Loose;
  assert.deepEqual(loop.body[0].body[0].profile, {
    name: "p1",
    samplingRate: 0.25,
    callstackSize: 3,
    tracker: {},
  });
  assert.equal(runScenario(sc).summary.steps, 6);
  // Given values are checked as given: NaN is no longer read as "not given".
  assert.match(
    refusal({}, (s) => s.main.memprof.start({ samplingRate: NaN })),
    /^scenario opts, step 1: sampling rate must be within \[0, 1\], got NaN$/,
  );
  assert.match(
    refusal({}, (s) => s.main.memprof.start({ callstackSize: NaN })),
    /^scenario opts, step 1: callstack size must be a whole number ≥ 0 .*got NaN$/,
  );
  // And a well-typed scenario keeps working with the key the suggestion names.
  const fixed = scenario({ name: "ok" }, (s) => {
    s.main.memprof.start({ samplingRate: 1 });
    s.main.alloc(sizes.choice(2, 4), { lifetime: keep.forever });
    s.main.memprof.stop();
  });
  assert.equal(runScenario(fixed).summary.samples > 0, true);
});
