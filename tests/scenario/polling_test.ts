// Which loops of the exported program ocamlopt 5.3 gives a back-edge poll (lib/scenario/polling.ts,
// a model of asmcomp/polling.ml over the shapes lib/export writes). Every verdict below is the
// compiler's: the exported programs were compiled with `ocamlopt -dlinear` (OCaml 5.3.0) and the
// loops with an inserted `poll call returning to` their head listed (issue 22; the same check ran
// over 150 random scenarios, 1,004 loops, and 720 size distributions and 120 keep.cycle sites,
// all agreeing).
import assert from "node:assert/strict";
import { backEdgePolls } from "../../lib/scenario/polling.ts";
import { matchHasJumpTable } from "../../lib/scenario/_ocaml_switch.ts";
import {
  act,
  cb,
  type DomainBuilder,
  keep,
  type LoopIndex,
  type Scenario,
  scenario,
  sizes,
  type Step,
} from "../../lib/scenario/mod.ts";

/** Loop bodies, each with whether OCaml polls at its back-edge without and with a raising
 * tracker (which gives the program's steps and loops exception handlers). */
const SHAPES: readonly [
  string,
  (m: DomainBuilder, i: LoopIndex) => void,
  { quiet: boolean; raising: boolean },
][] = [
  ["an inline allocation", (m) => m.alloc(2), { quiet: false, raising: false }],
  ["a collection", (m) => m.minorGc(), { quiet: true, raising: true }],
  ["Sys.poll_actions (an Ipoll)", (m) => m.poll(), { quiet: false, raising: false }],
  ["a loop allocating", (m) => m.repeat(3, () => m.alloc(2)), { quiet: true, raising: true }],
  ["an allocation, then a loop", (m) => {
    m.alloc(2);
    m.repeat(3, () => m.alloc(2));
  }, { quiet: false, raising: false }],
  ["a loop, then an allocation", (m) => {
    m.repeat(3, () => m.alloc(2));
    m.alloc(2);
  }, { quiet: false, raising: false }],
  // The nested loop may not poll, and runs before the allocation: the path through it and its
  // back-edge comes back to this loop's head without an allocation or a poll.
  ["a loop of collections, then an allocation", (m) => {
    m.repeat(3, () => m.minorGc());
    m.alloc(2);
  }, { quiet: true, raising: true }],
  ["a poll, then a loop of collections", (m) => {
    m.poll();
    m.repeat(3, () => m.minorGc());
  }, { quiet: false, raising: false }],
  ["a loop of collections, then a poll", (m) => {
    m.repeat(3, () => m.minorGc());
    m.poll();
  }, { quiet: true, raising: true }],
  // An exception from the tick (a call) before the allocation goes to the attempt's handler,
  // then to this loop's back-edge.
  ["an attempt allocating", (m) => m.attempt(() => m.alloc(2)), {
    quiet: false,
    raising: true,
  }],
  // The handler goes on to the allocation after the attempt.
  ["an attempt, then an allocation", (m) => {
    m.attempt(() => m.alloc(2));
    m.alloc(3);
  }, { quiet: false, raising: false }],
  ["an every", (m, i) => i.every(2, () => m.alloc(2)), { quiet: true, raising: true }],
  ["an every, then an allocation", (m, i) => {
    i.every(2, () => m.alloc(2));
    m.alloc(3);
  }, { quiet: false, raising: false }],
  ["a call", (m) => m.call("A.f@a.ml:1:1-2", () => m.alloc(2)), { quiet: true, raising: true }],
  ["a combined allocation", (m) => m.allocCombined([3, 4]), { quiet: false, raising: false }],
  // Four sizes or more in a row: a jump table, whose arms the analysis never counts; what
  // follows the switch does not count either.
  ["four sizes, then an allocation", (m) => {
    m.alloc(sizes.choice(1, 2, 3, 4));
    m.alloc(2);
  }, { quiet: true, raising: true }],
  ["an allocation, then four sizes", (m) => {
    m.alloc(2);
    m.alloc(sizes.choice(1, 2, 3, 4));
  }, { quiet: false, raising: false }],
  ["four sparse sizes (tests, no table)", (m) => m.alloc(sizes.choice(1, 50, 100, 200)), {
    quiet: false,
    raising: false,
  }],
  ["a C allocation", (m) => m.alloc(2, { source: "runtime" }), { quiet: true, raising: true }],
  ["Array.make over 256 words", (m) => m.alloc(300), { quiet: true, raising: true }],
  ["an allocation in a frame", (m) => m.alloc(2, { at: "A.k@a.ml:1:1-2" }), {
    quiet: true,
    raising: true,
  }],
  ["a user event", (m) => m.userEvent("ev", { type: "unit" }), { quiet: true, raising: true }],
  ["an unmarshalled value", (m) => m.unmarshal([2, 3]), { quiet: true, raising: true }],
  ["an allocation kept", (m) => m.alloc(2, { lifetime: keep.until("a") }), {
    quiet: false,
    raising: false,
  }],
  // keep.cycle is a match on the cycle's position: a jump table for 0, 1, 2 with distinct
  // arms (the dropping arm is `ignore blk`, not the default's `()`).
  ["Array.make kept by a cycle of three, then an allocation", (m) => {
    m.alloc(5, { source: "array", lifetime: keep.cycle(keep.drop, keep.until("a"), keep.ring(4)) });
    m.alloc(3);
  }, { quiet: true, raising: true }],
  ["Array.make kept by a cycle of two, then an allocation", (m) => {
    m.alloc(5, { source: "array", lifetime: keep.cycle(keep.until("a"), keep.ring(4)) });
    m.alloc(3);
  }, { quiet: false, raising: false }],
];

function shapesScenario(raising: boolean): { sc: Scenario; loops: Step[] } {
  const sc = scenario({ name: `shapes_${raising}` }, (s) => {
    const m = s.main;
    m.memprof.start({
      samplingRate: 0.001,
      callstackSize: 4,
      tracker: raising ? { allocMinor: cb.track().on(1_000_000, act.raise("E")) } : {},
    });
    // Each loop in a function of its own: after it, the function returns (with a raising
    // callback, a loop's handler goes on to what follows it, the next loop otherwise).
    for (const [k, [, body]] of SHAPES.entries()) {
      m.call(`S.f${k}@s.ml:1:1-2`, () => m.repeat(3, (i) => body(m, i)));
    }
    s.release("a");
    m.memprof.stop();
  });
  const loops = sc.steps.flatMap((st) => st.kind === "call" ? [st.body[0]] : []);
  return { sc, loops };
}

for (const raising of [false, true]) {
  Deno.test(`back-edge polls as ocamlopt 5.3 places them, ${raising ? "with" : "without"} a raising callback`, () => {
    const { sc, loops } = shapesScenario(raising);
    const polls = backEdgePolls(sc);
    assert.equal(loops.length, SHAPES.length);
    SHAPES.forEach(([what, , expected], k) => {
      assert.equal(polls.has(loops[k]), raising ? expected.raising : expected.quiet, what);
    });
  });
}

Deno.test("with a raising callback, a loop's handler goes on to what follows the loop", () => {
  const sc = scenario({ name: "handlers" }, (s) => {
    const m = s.main;
    m.memprof.start({
      samplingRate: 0.001,
      callstackSize: 4,
      tracker: { allocMinor: cb.track().on(1_000_000, act.raise("E")) },
    });
    // The inner loop's handler goes to the outer loop's back-edge: both poll.
    m.call("S.a@s.ml:1:1-2", () => m.repeat(3, () => m.repeat(3, () => m.alloc(2))));
    // After an allocation, neither does.
    m.call("S.b@s.ml:1:1-2", () =>
      m.repeat(3, () => {
        m.alloc(2);
        m.repeat(3, () => m.alloc(2));
      }));
    // Inside an attempt, the loop has no handler of its own; the attempt's returns.
    m.call("S.c@s.ml:1:1-2", () => m.attempt(() => m.repeat(3, () => m.alloc(2))));
    // A loop followed by one that polls: its handler enters that loop, so it polls too.
    m.repeat(3, () => m.alloc(2));
    m.repeat(3, () => m.minorGc());
    m.memprof.stop();
  });
  const body = (st: Step | undefined): readonly Step[] =>
    st !== undefined && "body" in st ? st.body : [];
  const [a, b, c, d, e] = sc.steps.slice(1);
  const polls = backEdgePolls(sc);
  assert.deepEqual(
    [
      body(a)[0],
      body(body(a)[0])[0],
      body(b)[0],
      body(body(b)[0])[1],
      body(body(c)[0])[0],
      d,
      e,
    ].map((st) => polls.has(st)),
    [true, true, false, false, false, true, true],
  );
  // Without raising callbacks there are no handlers: an inner loop allocating does not poll.
  const quiet = scenario({ name: "quiet" }, (s) => {
    s.main.repeat(3, () => s.main.repeat(3, () => s.main.alloc(2)));
    s.main.repeat(3, () => s.main.alloc(2));
    s.main.repeat(3, () => s.main.minorGc());
  });
  const [q1, q2, q3] = quiet.steps;
  assert.deepEqual(
    [q1, body(q1)[0], q2, q3].map((st) => backEdgePolls(quiet).has(st)),
    [true, false, false, true],
  );
});

Deno.test("jump tables: a port of lambda/switch.ml's clustering, as ocamlopt 5.3 decides", () => {
  // match n with | c1 -> … | … | _ -> …: each arm its own action.
  const arms = (...cs: number[]) => cs.map((c, i) => [c, i + 1] as const);
  assert.equal(matchHasJumpTable(arms(1, 2)), false);
  assert.equal(matchHasJumpTable(arms(1, 2, 3)), true); // four sizes: 1, 2, 3 and the default
  assert.equal(matchHasJumpTable(arms(1, 50, 100)), false);
  assert.equal(matchHasJumpTable(arms(1, 50, 100, 200)), false);
  assert.equal(matchHasJumpTable(arms(1, 2, 4, 3)), true);
  assert.equal(matchHasJumpTable(arms(3, 4, 5, 6, 7)), true);
  assert.equal(matchHasJumpTable(arms(2, 3, 7)), true); // 2, 3, (4–6: the default), 7
  // keep.cycle's match: dropping arms share one action.
  assert.equal(matchHasJumpTable([[0, -1], [1, 2], [2, 3]]), true);
  assert.equal(matchHasJumpTable([[0, -1], [1, -1], [2, 3]]), false);
  assert.equal(matchHasJumpTable([[0, 1], [1, 2]]), false);
});
