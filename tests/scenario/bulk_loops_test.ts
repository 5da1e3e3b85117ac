// Loops whose body only allocates run in bulk (lib/scenario/engine/_bulk.ts): the iterations up
// to the next thing that can happen at once (fixed sizes, nothing kept) or in a tight loop. A
// run with bulk runs must give exactly what the same run gives step by step
// (`skipQuietIterations: false`): the same trace, ring, callback log, summary, callback records
// and progress reports, on the library's scenarios and on random loops.
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  act,
  cb,
  keep,
  type Lifetime,
  type RunOptions,
  runScenario,
  type Scenario,
  scenario,
  sizes,
  type SizeSpec,
} from "../../lib/scenario/mod.ts";
import { scenarios } from "../../scenarios/index.ts";
import { usesThreadPrograms } from "../../lib/scenario/engine.ts";
import { sized } from "../tier.ts";

/** Everything a run gives, with its callback records and progress reports. */
function outputs(sc: Scenario, options: RunOptions): Record<string, unknown> {
  const events: unknown[] = [];
  const progress: [number, number][] = [];
  const r = runScenario(sc, {
    ...options,
    onEvent: (e) => events.push(e),
    onProgress: (done, total) => progress.push([done, total]),
  });
  return {
    ctf: r.ctf,
    traceDump: r.traceDump,
    eventsImage: r.eventsImage,
    eventsDump: r.eventsDump,
    callbackLog: r.callbackLog,
    summary: r.summary,
    // Outcomes are filled in when callbacks end: compared after the run.
    events: JSON.stringify(events),
    progress,
  };
}

function assertSameRuns(sc: Scenario, options: RunOptions = {}): void {
  const bulk = outputs(sc, options);
  const stepwise = outputs(sc, { ...options, skipQuietIterations: false });
  for (const key of Object.keys(bulk)) {
    assert.deepStrictEqual(bulk[key], stepwise[key], `${sc.settings.name}: ${key} differs`);
  }
}

for (const sc of scenarios.filter((s) => !usesThreadPrograms(s))) {
  Deno.test(`${sc.settings.name} gives the same outputs with and without bulk loop runs`, () => {
    assertSameRuns(sc);
  });
}

Deno.test("the bench's workloads give the same outputs with and without bulk loop runs", () => {
  const shortLived = scenario({ name: "short_lived" }, (s) => {
    s.main.memprof.start({ samplingRate: 1e-3, callstackSize: 16 });
    s.main.call(
      "Bench.main@bench.ml:1:0-10",
      () => s.main.repeat(50_000, () => s.main.alloc(2, { at: "Bench.loop@bench.ml:5:4-20" })),
    );
    s.main.memprof.stop();
  });
  const mixed = scenario({ name: "mixed", seed: 9, minorHeapWords: 4096 }, (s) => {
    s.main.memprof.start({ samplingRate: 1e-3, callstackSize: 16 });
    s.main.repeat(20_000, () => {
      s.main.alloc(sizes.uniform(1, 16), {
        lifetime: keep.cycle(keep.drop, keep.drop, keep.drop, keep.steps(1000)),
        at: "Bench.work@bench.ml:9:4-20",
      });
      s.main.allocCombined([2, 3], { at: "Bench.pair@bench.ml:12:4-20" });
    });
    s.main.memprof.stop();
  });
  assertSameRuns(shortLived);
  assertSameRuns(mixed);
});

// ---- random loops --------------------------------------------------------------------------

type SizeGen = { fixed: number } | { uniform: [number, number] } | { choice: number[] };

interface BodyStep {
  kind: "alloc" | "combined" | "every";
  size: SizeGen;
  size2: SizeGen;
  lifetime: number;
  framed: boolean;
  period: number;
}

interface LoopCase {
  seed: number;
  rate: number;
  minorHeapWords: number;
  count: number;
  before: number;
  body: BodyStep[];
  trackerGc: number;
  steps: number;
  nested: boolean;
}

const sizeGen: fc.Arbitrary<SizeGen> = fc.oneof(
  fc.integer({ min: 1, max: 40 }).map((n) => ({ fixed: n })),
  fc.tuple(fc.integer({ min: 1, max: 8 }), fc.integer({ min: 0, max: 30 }))
    .map(([a, b]) => ({ uniform: [a, a + b] as [number, number] })),
  fc.array(fc.integer({ min: 1, max: 20 }), { minLength: 1, maxLength: 5 })
    .map((c) => ({ choice: c })),
);

const bodyStep: fc.Arbitrary<BodyStep> = fc.record({
  kind: fc.constantFrom<BodyStep["kind"][]>("alloc", "alloc", "combined", "every"),
  size: sizeGen,
  size2: sizeGen,
  lifetime: fc.integer({ min: 0, max: 5 }),
  framed: fc.boolean(),
  period: fc.integer({ min: 1, max: 7 }),
});

const loopCase: fc.Arbitrary<LoopCase> = fc.record({
  seed: fc.integer({ min: 1, max: 1000 }),
  rate: fc.constantFrom(0, 1e-4, 1e-3, 0.01, 0.1),
  minorHeapWords: fc.constantFrom(4096, 8192, 32768, 262144),
  count: fc.integer({ min: 1, max: 3000 }),
  before: fc.integer({ min: 0, max: 4 }),
  body: fc.array(bodyStep, { minLength: 1, maxLength: 3 }),
  trackerGc: fc.integer({ min: 0, max: 40 }),
  steps: fc.integer({ min: 1, max: 50 }),
  nested: fc.boolean(),
});

function spec(g: SizeGen): SizeSpec {
  if ("fixed" in g) return g.fixed;
  if ("uniform" in g) return sizes.uniform(...g.uniform);
  return sizes.choice(...g.choice);
}

function lifetimeOf(k: number, steps: number): Lifetime {
  switch (k) {
    case 0:
    case 1:
      return keep.drop;
    case 2:
      return keep.steps(steps);
    case 3:
      return keep.cycle(keep.drop, keep.drop, keep.steps(steps));
    case 4:
      return keep.ring(3);
    default:
      return keep.steps(steps, "r");
  }
}

function loopScenario(c: LoopCase): Scenario {
  return scenario({ name: "random_loop", seed: c.seed, minorHeapWords: c.minorHeapWords }, (s) => {
    const d = s.main;
    const tracker = c.trackerGc === 0
      ? cb.track()
      : cb.track().every(c.trackerGc, c.trackerGc % 2 === 0 ? act.gc("minor") : act.alloc(3));
    d.memprof.start({ samplingRate: c.rate, callstackSize: 8, tracker: { allocMinor: tracker } });
    // Blocks kept before the loop: their releases fall inside it.
    for (let k = 0; k < c.before; k++) d.alloc(k + 1, { lifetime: keep.steps(7 * k + 3) });
    const body = () => {
      for (const st of c.body) {
        const at = st.framed ? "Loop.f@loop.ml:3:2-9" : undefined;
        if (st.kind === "alloc") {
          d.alloc(spec(st.size), { lifetime: lifetimeOf(st.lifetime, c.steps), at });
        } else if (st.kind === "combined") {
          d.allocCombined([spec(st.size), spec(st.size2)], {
            lifetime: [keep.drop, lifetimeOf(st.lifetime, c.steps)],
            at,
          });
        }
      }
    };
    const loop = () =>
      d.repeat(c.count, (i) => {
        body();
        const every = c.body.find((st) => st.kind === "every");
        if (every !== undefined) i.every(every.period, () => d.alloc(2));
      });
    if (c.nested) d.call("Outer.g@outer.ml:1:0-5", () => d.repeat(2, loop));
    else loop();
    s.release("r");
    d.memprof.stop();
  });
}

Deno.test("random allocation loops give the same outputs with and without bulk runs", () => {
  fc.assert(
    fc.property(loopCase, (c) => {
      assertSameRuns(loopScenario(c));
    }),
    { seed: 20261124, numRuns: sized(120, 25) },
  );
});
