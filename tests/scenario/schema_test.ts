// lib/scenario/_schema.ts: one definition of the scenario's tagged objects and options objects.
// The type checker proves the tables and spec.ts agree (the proofs in _schema.ts compile only
// when they do; the @ts-expect-error lines below show the proof failing on a table that does
// not); at run time, what the DSL builds is what the validator's tables accept, and the memprof
// failures the validator reports are the simulated runtime's own.
import assert from "node:assert/strict";
import {
  ACTION_KEYS,
  type ALLOC_SOURCES,
  EVENT_KEYS,
  type GC_KINDS,
  LIFETIME_KEYS,
  type SameKeys,
  type TableAgrees,
  TRIGGER_KEYS,
} from "../../lib/scenario/_schema.ts";
import type { AllocSource, GcKind, Lifetime } from "../../lib/scenario/spec.ts";
import { act, keep, scenario, ScenarioError, validateScenario } from "../../lib/scenario/mod.ts";
import { Runtime } from "../../lib/runtime/mod.ts";
import { discard, OCamlFailure } from "../../lib/memprof/mod.ts";
import { MEMPROF_FAILURES } from "../../lib/memprof/profile.ts";

Deno.test("the proof fails on a table that disagrees with spec.ts (type level)", () => {
  const missingKey = { ...LIFETIME_KEYS, ring: ["kind", "slots"] } as const;
  const extraKind = { ...LIFETIME_KEYS, later: ["kind"] } as const;
  const { cycle: _, ...missingKind } = LIFETIME_KEYS;
  // @ts-expect-error ring's `name` is missing from the table
  true satisfies TableAgrees<typeof missingKey, Lifetime, "kind">;
  // @ts-expect-error the table has a kind spec.ts does not
  true satisfies TableAgrees<typeof extraKind, Lifetime, "kind">;
  // @ts-expect-error the table lacks a kind spec.ts has
  true satisfies TableAgrees<typeof missingKind, Lifetime, "kind">;
  true satisfies TableAgrees<typeof LIFETIME_KEYS, Lifetime, "kind">;
  // The name unions of spec.ts are the tables' own.
  true satisfies SameKeys<GcKind, typeof GC_KINDS[number]>;
  true satisfies SameKeys<AllocSource, typeof ALLOC_SOURCES[number]>;
  // @ts-expect-error a name the table does not hold
  const notAKind: GcKind = "incremental";
  assert.equal(notAKind, "incremental");
});

/** Every key of `obj` is in `keys`, and the tag's value names the table's entry. */
function agrees(obj: object, table: Readonly<Record<string, readonly string[]>>, tag: string) {
  const kind = (obj as Record<string, string>)[tag];
  assert.ok(Object.hasOwn(table, kind), `${tag} ${kind} is not in the table`);
  for (const k of Object.keys(obj)) assert.ok(table[kind].includes(k), `${kind}.${k}`);
}

Deno.test("what the DSL builds is what the validator's tables accept", () => {
  const lifetimes = [
    keep.drop,
    keep.forever,
    keep.steps(2, "x"),
    keep.until("x"),
    keep.list("x"),
    keep.ring(3, "x"),
    keep.cycle(keep.drop),
  ];
  assert.deepEqual(lifetimes.map((l) => l.kind).sort(), Object.keys(LIFETIME_KEYS).sort());
  for (const l of lifetimes) agrees(l, LIFETIME_KEYS, "kind");
  const actions = [
    act.raise(),
    act.stop(),
    act.start({ samplingRate: 1, callstackSize: 1, tracker: {} }),
    act.discard(),
    act.alloc(2),
    act.gc(),
    act.switchThread("t"),
    act.exitThread(),
    act.yieldTo("t"),
    act.yieldToNext(["t"]),
  ];
  assert.deepEqual(actions.map((a) => a.kind).sort(), Object.keys(ACTION_KEYS).sort());
  for (const a of actions) agrees(a, ACTION_KEYS, "kind");
  assert.deepEqual(Object.keys(TRIGGER_KEYS).sort(), ["always", "every", "nth"]);
  assert.deepEqual(Object.keys(EVENT_KEYS).sort(), ["custom", "int", "span", "unit"]);
});

Deno.test("a tag that is an Object.prototype name is refused as a ScenarioError", () => {
  const sc = scenario({ name: "p" }, (s) => {
    s.main.alloc(2);
  });
  for (const kind of ["toString", "constructor", "__proto__"]) {
    const bad = { ...sc, steps: sc.steps.map((st) => ({ ...st, lifetime: { kind } })) };
    assert.throws(
      () => validateScenario(bad as unknown as typeof sc),
      (e) => e instanceof ScenarioError && /a lifetime is keep\.drop/.test(e.message),
      kind,
    );
  }
});

/** The message `f` fails with, as an OCaml Failure. */
function failure(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    assert.ok(e instanceof OCamlFailure, String(e));
    return e.message;
  }
  assert.fail("no failure");
}

Deno.test("the validator's memprof failures are those the simulated runtime raises", () => {
  const d = new Runtime().mainDomain;
  assert.equal(failure(() => d.memprofStop()), MEMPROF_FAILURES.noProfileRunning);
  const p = d.memprofStart({ samplingRate: 0, callstackSize: 0, tracker: {} });
  assert.equal(
    failure(() => d.memprofStart({ samplingRate: 0, callstackSize: 0, tracker: {} })),
    MEMPROF_FAILURES.alreadyStarted,
  );
  assert.equal(failure(() => discard(p)), MEMPROF_FAILURES.notStopped);
  d.memprofStop();
  discard(p);
  assert.equal(failure(() => discard(p)), MEMPROF_FAILURES.alreadyDiscarded);
  // And the validator reports them at the step, before anything runs.
  const cases: [(s: Parameters<Parameters<typeof scenario>[1]>[0]) => void, string][] = [
    [(s) => s.main.memprof.stop(), MEMPROF_FAILURES.noProfileRunning],
    [(s) => {
      s.main.memprof.start();
      s.main.memprof.start();
    }, MEMPROF_FAILURES.alreadyStarted],
    [(s) => {
      s.main.memprof.start({ name: "a" });
      s.main.memprof.discard("a");
    }, MEMPROF_FAILURES.notStopped],
    [(s) => {
      s.main.memprof.start({ name: "a" });
      s.main.memprof.stop();
      s.main.memprof.discard("a");
      s.main.memprof.discard("a");
    }, MEMPROF_FAILURES.alreadyDiscarded],
  ];
  for (const [build, message] of cases) {
    assert.throws(
      () => scenario({ name: "m" }, build),
      (e) => e instanceof ScenarioError && e.message.endsWith(`: ${message}`),
      message,
    );
  }
});
