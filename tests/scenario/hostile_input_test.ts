// Hostile scenario input is refused before anything runs, with a ScenarioError: names that are
// not plain folder names, numbers that are NaN, infinite, negative or fractional, settings the
// writers cannot honour, and nesting deep enough to overflow the stack.
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  act,
  cb,
  countLeafSteps,
  isFrame,
  isLabelName,
  keep,
  MAX_NESTING,
  runScenario,
  type Scenario,
  scenario,
  ScenarioError,
  sizes,
  type Step,
  validateScenario,
} from "../../lib/scenario/mod.ts";
import { Reader } from "../../lib/memtrace/mod.ts";
import { findStep, someAction } from "../../lib/scenario/walk.ts";
import { scenarios } from "../../scenarios/index.ts";
import { sized } from "../tier.ts";

// deno-lint-ignore no-explicit-any
type Loose = any;

function refused(settings: Loose, build: (s: Loose) => void, want: RegExp, what = ""): void {
  assert.throws(
    () => scenario({ name: "hostile", ...settings }, build),
    (e: unknown) => {
      assert.ok(e instanceof ScenarioError, `${what}: not a ScenarioError: ${e}`);
      assert.match(e.message, want, what);
      return true;
    },
    `${what}: accepted`,
  );
}

Deno.test("names that are not plain folder names are refused", () => {
  const bad = ["..", ".", "a/b", "a\\b", "a\0b", "-rf", ".hidden", "", "x".repeat(101), 7];
  for (const name of bad) {
    assert.throws(
      () => scenario({ name } as Loose, () => {}),
      (e: unknown) =>
        e instanceof ScenarioError &&
        /settings: name must be letters, digits, '_', '-' and '\.', not starting with '\.' or '-'/
          .test(e.message),
      JSON.stringify(name),
    );
  }
  for (const name of ["a", "a.b", "a-b_c", "_x", "9", "x".repeat(100)]) {
    assert.equal(scenario({ name }, () => {}).settings.name, name);
  }
  // A scenario object made by hand (or altered after scenario()) is checked again.
  const sc = scenario({ name: "fine" }, (s) => void s.main.alloc(1));
  const altered = { ...sc, settings: { ...sc.settings, name: ".." } } as Scenario;
  assert.throws(() => validateScenario(altered), /settings: name must be letters/);
});

Deno.test("names and frames follow one rule, in the builder and in the validator for objects made without it", () => {
  const base = (
    x: { thread?: string; domain?: string; profile?: string; group?: string; frame?: string },
  ) =>
    scenario({ name: "named" }, (s) => {
      const m = s.main;
      m.memprof.start({ name: x.profile ?? "p" });
      m.alloc(1, { at: x.frame ?? "A.f@a.ml:1:0-1", lifetime: keep.until(x.group ?? "g") });
      m.memprof.stop();
      s.release(x.group ?? "g");
      m.join(m.thread(x.thread ?? "t", (t) => t.alloc(1)));
      m.spawn(x.domain ?? "w").terminate();
    });
  const sc = base({});
  const swap = (x: string): [string, () => unknown, () => unknown, boolean][] => {
    const steps = (f: (st: Step) => Step) => ({ ...sc, steps: sc.steps.map(f) }) as Scenario;
    return [
      ["thread", () => base({ thread: x }), () =>
        validateScenario({
          ...steps((st) =>
            st.kind === "threadSpawn" || st.kind === "threadJoin" ? { ...st, thread: x } : st
          ),
          threads: new Map([["main", "main"], [x, "main"], ["w", "w"]]),
        }), isLabelName(x)],
      ["domain", () => base({ domain: x }), () =>
        validateScenario({
          ...steps((st) =>
            st.kind === "spawn"
              ? { ...st, child: x }
              : "domain" in st && st.domain === "w"
              ? { ...st, domain: x }
              : st
          ),
          domains: ["main", x],
          threads: new Map([["main", "main"], ["t", "main"], [x, x]]),
        }), isLabelName(x)],
      ["profile", () => base({ profile: x }), () =>
        validateScenario({
          ...steps((st) =>
            st.kind === "memprofStart" ? { ...st, profile: { ...st.profile, name: x } } : st
          ),
          profiles: [x],
        }), isLabelName(x)],
      [
        "kept-block group",
        () => base({ group: x }),
        () =>
          validateScenario(
            steps((st) =>
              st.kind === "release"
                ? { ...st, name: x }
                : st.kind === "alloc"
                ? { ...st, lifetime: { kind: "until", name: x } }
                : st
            ),
          ),
        isLabelName(x),
      ],
      [
        "frame",
        () => base({ frame: x }),
        () => validateScenario(steps((st) => st.kind === "alloc" ? { ...st, frames: [x] } : st)),
        isFrame(x),
      ],
    ];
  };
  const text = fc.oneof(
    fc.string({ unit: "binary", maxLength: 10 }),
    fc.stringMatching(/^[A-Za-z0-9_.-]{1,8}$/),
    fc.stringMatching(/^[^@\s]{1,6}@[^\s]{1,6}:[0-9]:[0-9]-[0-9]$/),
  ).filter((x) => !["main", "t", "w", "p", "g"].includes(x)); // (names taken: another rule)
  fc.assert(
    fc.property(text, (x) => {
      for (const [what, built, validated, valid] of swap(x)) {
        for (const [how, f] of [["builder", built], ["validator", validated]] as const) {
          let error: unknown;
          try {
            f();
          } catch (e) {
            error = e;
          }
          if (valid) assert.equal(error, undefined, `${what} ${JSON.stringify(x)}, ${how}`);
          else assert.ok(error instanceof ScenarioError, `${what} ${JSON.stringify(x)}, ${how}`);
        }
      }
    }),
    { seed: 2323, numRuns: sized(300, 60) },
  );
});

Deno.test("every numeric setting refuses NaN, infinities, negatives and fractions", () => {
  const cases: [string, unknown[]][] = [
    ["seed", [NaN, Infinity, -1, 1.5, 2 ** 32]],
    ["samplingRate", [NaN, Infinity, -Infinity, -0.1, 1.01]],
    ["externalSamplingRate", [NaN, Infinity, -0.1]],
    ["callstackSize", [NaN, Infinity, -1, 1.5]],
    ["minorHeapWords", [NaN, Infinity, -8192, 8192.5, 5001]],
    ["ringLog2", [NaN, Infinity, -1, 10.5, 5, 6, 7, 8, 25]],
    ["clockTickNs", [NaN, Infinity, -1, 0, 1.5]],
    ["maxDomains", [NaN, Infinity, 0, 1.5, 5000]],
    ["pid", [NaN, Infinity, 0, -3, 1.5]],
  ];
  for (const [key, values] of cases) {
    for (const v of values) {
      refused({ [key]: v }, () => {}, /^scenario hostile, settings: /, `${key}: ${v}`);
    }
  }
  refused(
    { log: { format: "memprof_lifecycle", program: "p", keep: NaN } },
    () => {},
    /log memprof_lifecycle: keep must be a whole number ≥ 0, got NaN/,
  );
});

/** The DSL's numeric arguments, each as a scenario body taking the value to try (the mean of
 * sizes.geometric only in the type test: a fractional mean is valid). */
const NUMERIC_ARGUMENTS: [string, (v: Loose) => (s: Loose) => void][] = [
  ["alloc size", (v) => (s) => s.main.alloc(v)],
  ["sizes.uniform", (v) => (s) => s.main.alloc(sizes.uniform(v, 3))],
  ["sizes.choice", (v) => (s) => s.main.alloc(sizes.choice(2, v))],
  ["sizes.geometric max", (v) => (s) => s.main.alloc(sizes.geometric(2, v))],
  ["customMem", (v) => (s) => s.main.alloc(2, { source: "custom", customMem: v })],
  ["allocCombined", (v) => (s) => s.main.allocCombined([2, v])],
  ["unmarshal", (v) => (s) => s.main.unmarshal([2, v])],
  ["extAlloc", (v) => (s) => s.main.extAlloc(v)],
  ["repeat", (v) => (s) => s.main.repeat(v, () => s.main.alloc(1))],
  ["every", (v) => (s) => s.main.repeat(2, (i: Loose) => i.every(v, () => s.main.alloc(1)))],
  ["keep.steps", (v) => (s) => s.main.alloc(1, { lifetime: keep.steps(v) })],
  ["keep.ring", (v) => (s) => s.main.alloc(1, { lifetime: keep.ring(v) })],
  ["memprof.start rate", (v) => (s) => s.main.memprof.start({ samplingRate: v })],
  ["memprof.start callstack", (v) => (s) => s.main.memprof.start({ callstackSize: v })],
  [
    "cb.on",
    (v) => (s) => s.main.memprof.start({ tracker: { promote: cb.track().on(v, act.stop()) } }),
  ],
  [
    "cb.every",
    (v) => (s) => s.main.memprof.start({ tracker: { promote: cb.track().every(v, act.stop()) } }),
  ],
  [
    "act.alloc",
    (v) => (s) => s.main.memprof.start({ tracker: { promote: cb.track().always(act.alloc(v)) } }),
  ],
  ["int user event", (v) => (s) => s.main.userEvent("e", { type: "int", value: v })],
  ["custom user event", (v) => (s) => s.main.userEvent("e", { type: "custom", bytes: [1, v] })],
];

Deno.test("every numeric argument of the DSL refuses NaN, infinities, negatives and fractions", () => {
  const bad = [NaN, Infinity, -Infinity, -1, 1.5];
  const builds = NUMERIC_ARGUMENTS;
  for (const [what, build] of builds) {
    for (const v of bad) {
      // -1 and 1.5 are valid user event ints; the others are not.
      if (what === "int user event" && (v === -1)) continue;
      refused({}, build(v), /^scenario hostile, step 1/, `${what}: ${v}`);
    }
  }
  refused({}, (s) => s.main.alloc(sizes.geometric(NaN)), /geometric mean must be a number/);
  refused({}, (s) => s.main.alloc(sizes.geometric(Infinity)), /geometric mean must be a number/);
});

Deno.test("a number written as a string is said to be a string, in every numeric field", () => {
  // What a plain-JavaScript module (or one run with --no-check) can pass: the type comes first
  // in the message, not "must be within [0, 1], got 0.01".
  const settings: [string, string][] = [
    ["seed", "3"],
    ["samplingRate", "0.01"],
    ["externalSamplingRate", "0.01"],
    ["callstackSize", "4"],
    ["minorHeapWords", "8192"],
    ["ringLog2", "12"],
    ["clockTickNs", "1"],
    ["maxDomains", "4"],
    ["pid", "7"],
  ];
  for (const [key, v] of settings) {
    refused(
      { [key]: v },
      () => {},
      new RegExp(`^scenario hostile, settings: .*must be a number, got string "${v}"$`),
      key,
    );
  }
  assert.throws(
    () => scenario({ name: "hostile", samplingRate: "0.01" as Loose }, () => {}),
    (e: unknown) =>
      e instanceof ScenarioError &&
      e.message === 'scenario hostile, settings: sampling rate must be a number, got string "0.01"',
  );
  refused(
    { gcTime: { minorFixedNs: "5" } },
    () => {},
    /gcTime\.minorFixedNs must be a number, got string "5"/,
  );
  refused(
    { log: { format: "memprof_lifecycle", program: "p", keep: "3" } },
    () => {},
    /keep must be a number, got string "3"/,
  );
  const builds = [
    ...NUMERIC_ARGUMENTS,
    ["sizes.geometric mean", (v: Loose) => (s: Loose) => s.main.alloc(sizes.geometric(v))],
  ] as const;
  for (const [what, build] of builds) {
    refused({}, build("1"), /^scenario hostile, step 1.*, got string "1"$/, what);
  }
});

Deno.test("ringLog2 below what the ring writer accepts is refused; its minimum runs", () => {
  for (const ringLog2 of [5, 6, 7, 8]) {
    refused(
      { ringLog2 },
      () => {},
      /^scenario hostile, settings: ringLog2 must be an integer in \[9, 24\], got \d$/,
    );
  }
  const sc = scenario({ name: "ring9", ringLog2: 9 }, (s) => {
    s.events.start();
    s.main.repeat(2_000, () => s.main.alloc(1));
    s.main.minorGc();
  });
  const r = runScenario(sc);
  assert.ok(r.eventsImage.length > 0);
  assert.match(r.eventsDump, /begin/);
});

Deno.test("the last timestamp of a run is estimated from its steps and must fit the writers", () => {
  // The case: 1e12 ns per step over 1.2e7 steps gave a trace its reader refuses.
  refused(
    { clockTickNs: 1e12 },
    (s) => s.main.repeat(12_000_000, () => s.main.alloc(1)),
    /^scenario hostile, settings: the virtual clock would reach about 12,000,000,000,000,000,000 ns \(12,000,000 steps × clockTickNs 1000000000000\), beyond 2\^53 ns/,
  );
  // The bound is exact: 2^53 - 1 ns is 9,007,199,254,740,991.
  const loop = (n: number) => (s: Loose) => s.main.repeat(n, () => s.main.poll());
  scenario({ name: "edge", clockTickNs: 1e9 }, loop(9_007_199));
  refused({ clockTickNs: 1e9 }, loop(9_007_200), /the virtual clock would reach/);
  // A large tick with few steps runs, and its trace reads back.
  const r = runScenario(scenario({ name: "slow", clockTickNs: 1e12 }, (s) => {
    s.main.memprof.start({ samplingRate: 1 });
    s.main.repeat(50, () => s.main.alloc(1));
    s.main.memprof.stop();
  }));
  const events = Reader.fromBytes(r.ctf).readAll();
  assert.ok(events.length > 0);
});

Deno.test("a ring image too large to hold is refused only when runtime_events start", () => {
  const big = { maxDomains: 4096, ringLog2: 24 };
  refused(
    big,
    (s) => s.events.start(),
    /the runtime_events ring image would take 549,757,190,208 bytes/,
  );
  scenario({ name: "no-ring", ...big }, (s) => void s.main.alloc(1));
});

/** `d` bodies nested in each other around one allocation, with the builder. */
function nestedBuild(depth: number, kind: "call" | "repeat" | "attempt" | "when") {
  return (s: Loose) => {
    const nest = (k: number): void => {
      if (k <= 0) return void s.main.alloc(1);
      if (kind === "call") s.main.call("A.f@a.ml:1:2-3", () => nest(k - 1));
      else if (kind === "repeat") s.main.repeat(1, () => nest(k - 1));
      else if (kind === "attempt") s.main.attempt(() => nest(k - 1));
      // repeat + every: two levels per round
      else s.main.repeat(1, (i: Loose) => i.every(1, () => nest(k - 2)));
    };
    nest(depth);
  };
}

Deno.test("nesting beyond the limit is refused before it overflows the stack; the limit runs", () => {
  assert.equal(MAX_NESTING, 1000);
  for (const kind of ["call", "repeat", "attempt", "when"] as const) {
    const sc = scenario({ name: "deep" }, nestedBuild(MAX_NESTING, kind));
    assert.equal(runScenario(sc).summary.allocations, 1, kind);
    for (const depth of [MAX_NESTING + 1, MAX_NESTING + 2, 5_000, 50_000]) {
      refused(
        {},
        nestedBuild(depth, kind),
        /^scenario hostile, step 1(\.1)+: steps nest more than 1000 deep \(repeat, call, blocking, attempt and every inside each other\)$/,
        `${kind} ${depth}`,
      );
    }
  }
  // Steps made by hand, nested 100,000 deep, are refused by the validator alike.
  let body: Step[] = [{ at: "x", kind: "poll", domain: "main" }];
  for (let k = 0; k < 100_000; k++) {
    body = [{ at: "1", kind: "call", domain: "main", frame: "A.f@a.ml:1:2-3", body }];
  }
  const base = scenario({ name: "by-hand" }, () => {});
  assert.throws(() => validateScenario({ ...base, steps: body }), /steps nest more than 1000 deep/);
});

Deno.test("state checks of deeply nested loops stay linear or give way to run time", () => {
  // 40 nested loops of 2 iterations, memprof started and stopped innermost: following every
  // iteration twice would take 2^40 passes.
  const sc = scenario({ name: "wide" }, (s) => {
    const nest = (k: number): void => {
      if (k === 0) {
        s.main.memprof.start();
        s.main.memprof.stop();
        return;
      }
      s.main.repeat(2, () => nest(k - 1));
    };
    nest(40);
  });
  assert.equal(sc.steps.length, 1);
  // The same without memprof steps is followed once per loop.
  scenario({ name: "plain" }, nestedBuild(MAX_NESTING, "repeat"));
});

Deno.test("the leaf step count is the number of steps every library scenario executes, or a bound where bodies may run short", () => {
  // `every` bodies run on some iterations only; an exception may cut an attempt's body or a loop.
  const mayRunShort = (sc: Scenario): boolean =>
    findStep(sc.steps, (st) => st.kind === "when" || st.kind === "attempt") !== undefined ||
    sc.steps.some((st) =>
      st.kind === "memprofStart" && someAction(st.profile.tracker, (a) => a.kind === "raise")
    );
  let exact = 0;
  for (const sc of scenarios) {
    const counted = countLeafSteps(sc.steps), ran = runScenario(sc).summary.steps;
    if (mayRunShort(sc)) assert.ok(ran <= counted, sc.settings.name);
    else {
      assert.equal(ran, counted, sc.settings.name);
      exact++;
    }
  }
  assert.ok(exact >= 30, `${exact}`);
});
