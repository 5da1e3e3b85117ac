// Race points (issue 24): the simulation names the points whose real outcome depends on timing,
// runs with a given resolution of each, and reads the resolution that explains a real log from
// it. With an OCaml 5.3 toolchain, the shared-cache program runs 50 times on the real runtime,
// and every distinct outcome must be reproduced.
import assert from "node:assert/strict";
import {
  type RaceResolution,
  type RunEvent,
  runScenario,
  type Scenario,
  scenario,
} from "../../lib/scenario/mod.ts";
import { exportOCaml, HARNESS_FRAMES } from "../../lib/export/mod.ts";
import {
  compareLogs,
  diffScenario,
  resolveRaces,
  simulateCanonical,
} from "../../lib/differential/mod.ts";
import { DIFF_CACHE, DIFF_SKIP, REAL_OCAML, skipNotice } from "../real_toolchain.ts";
import sharedCache from "./shared_cache.ts";
import orphansRace from "./orphans_race.ts";
import domainsOrphans from "../../scenarios/domains_orphans.ts";
import loopIndices from "../../scenarios/loop_indices.ts";
import terminateSampling from "./terminate_sampling.ts";
import sharedCacheRuntime from "./shared_cache_runtime.ts";
import joinLate from "./join_late.ts";
import terminateLate from "./terminate_late.ts";
import fourWorkers from "./four_workers.ts";
import closureFirst from "./closure_first.ts";

const program = exportOCaml(sharedCache);
const model = { majorHeap: program.majorHeap, keepSites: program.keepSites };

/** The shared cache's promotion races (its domain is spawned before either samples: no spawn
 * race; its end, both domains holding tracked blocks, is the one join race point, after the
 * last callback). */
function racePoints(dead: ReadonlySet<number> = new Set()) {
  const all = runScenario(sharedCache, {
    harnessFrames: HARNESS_FRAMES,
    exportHarness: true,
    ...model,
    races: { deadAtPromotion: dead },
  }).racePoints;
  assert.deepEqual(all.filter((p) => p.kind !== "promotion"), [
    { kind: "join", join: 1, outcome: "late" },
  ]);
  return all.flatMap((p) => p.kind === "promotion" ? [p] : []);
}

Deno.test("the shared cache meets promotion races: tracked blocks the cache holds at a shared collection", () => {
  const points = racePoints();
  assert.ok(points.length >= 8, `${points.length} race points`);
  assert.ok(points.every((p) => p.kind === "promotion" && !p.dead));
  // No domain ends while another runs: no adoption race.
  // Each block races once (promoted, it is no longer young; reported dead, it is untracked).
  assert.equal(new Set(points.map((p) => p.id)).size, points.length);
});

Deno.test("a block resolved dead gets a deallocMinor callback instead of its promote, and stays untracked", () => {
  const points = racePoints();
  const id = points[0].id;
  const log = simulateCanonical(sharedCache, {
    ...model,
    races: { deadAtPromotion: new Set([id]) },
  });
  const base = simulateCanonical(sharedCache, model);
  const promote = base.lines.findIndex((l) =>
    l.startsWith("promote ") && l.endsWith(` id=${id} -> some`)
  );
  assert.ok(promote >= 0, `promote of ${id} in the default resolution`);
  assert.match(log.lines[promote], new RegExp(`^dealloc_minor .* id=${id}$`));
  assert.ok(
    !log.lines.some((l) => new RegExp(`^(promote|dealloc_major) .* id=${id}( |$)`).test(l)),
  );
  assert.ok(racePoints(new Set([id])).some((p) => p.kind === "promotion" && p.id === id && p.dead));
});

Deno.test("resolveRaces reads back the resolution that made a log, for many resolutions", () => {
  const ids = racePoints().map((p) => p.id);
  // Resolutions made by a fixed-seed generator: each subset of race points that a run could
  // take (a later point exists only if the earlier choices lead to it, so draw in order).
  let state = 7;
  const next = () => (state = (state * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  for (let trial = 0; trial < 5; trial++) {
    const dead = new Set<number>();
    for (const id of ids) if (next() < 0.4) dead.add(id);
    const made = simulateCanonical(sharedCache, { ...model, races: { deadAtPromotion: dead } });
    const { sim, resolution } = resolveRaces(sharedCache, made, model);
    const read = resolution.deadAtPromotion;
    assert.equal(compareLogs(sim, made).difference, undefined, `trial ${trial}`);
    // Only the races the made run met count: a dead block's later events never happen.
    const met = new Set(
      runScenario(sharedCache, {
        harnessFrames: HARNESS_FRAMES,
        exportHarness: true,
        ...model,
        races: { deadAtPromotion: dead },
      }).racePoints.flatMap((p) => p.kind === "promotion" && p.dead ? [p.id] : []),
    );
    assert.deepEqual(read, [...met].sort((a, b) => a - b), `trial ${trial}`);
  }
});

Deno.test("resolveRaces reads back combined resolutions: a join outcome that explains a difference only once a block is known dead", () => {
  // (100 real runs of this program gave 8 to 10 distinct outcomes; 3 of 400 had the closure
  // allocated across the collection, closureDuring, which the search found only by trying a
  // join's outcomes again once a racing block was known dead.)
  const prog = exportOCaml(terminateSampling);
  const m = { majorHeap: prog.majorHeap, keepSites: prog.keepSites };
  const combos: RaceResolution[] = [];
  for (const dead of [[], [6], [7]]) {
    for (const childFirst of [[], [1]]) {
      for (const join of ["late", "callbacksFirst", "closureFirst", "closureDuring"] as const) {
        combos.push({
          deadAtPromotion: new Set(dead),
          childFirst: new Set(childFirst),
          join: new Map([[1, join]]),
        });
      }
    }
  }
  let joinsRead = 0, duringRead = 0;
  for (const races of combos) {
    const made = simulateCanonical(terminateSampling, { ...m, races });
    const { sim, resolution } = resolveRaces(terminateSampling, made, m);
    const what = JSON.stringify({
      dead: [...races.deadAtPromotion!],
      childFirst: [...races.childFirst!],
      join: [...races.join!],
    });
    assert.equal(compareLogs(sim, made).difference, undefined, what);
    if (resolution.join.length > 0) joinsRead++;
    if (resolution.join.some(([, o]) => o === "closureDuring")) duringRead++;
  }
  // The join outcomes other than the default (late) show in the log, and are read back; so is
  // closureDuring where it differs from closureFirst (the closure neither promoted nor dead).
  assert.ok(joinsRead >= 18, `join outcomes read: ${joinsRead} of 24 combinations`);
  assert.ok(duringRead >= 3, `closureDuring read: ${duringRead}`);
});

Deno.test("a racing block whose allocation callback has not run at the collection: its race is decided once it has a number", () => {
  const prog = exportOCaml(sharedCacheRuntime);
  const m = { majorHeap: prog.majorHeap, keepSites: prog.keepSites };
  const events = (races: RaceResolution = {}) => {
    const out: RunEvent[] = [];
    const r = runScenario(sharedCacheRuntime, {
      harnessFrames: HARNESS_FRAMES,
      exportHarness: true,
      ...m,
      races,
      onEvent: (e) => out.push(e),
    });
    return { out, points: r.racePoints };
  };
  const base = events();
  // Blocks allocated from C (Array.make) whose allocation callback ran after a collection that
  // promoted them through the shared remembered set: their race point is recorded when the
  // callback ends, and their promote comes right after it.
  const idOf = (e: RunEvent | undefined) => e !== undefined && "id" in e ? e.id : -1;
  const late = base.points.flatMap((p) => {
    if (p.kind !== "promotion") return [];
    const k = base.out.findIndex((e) => e.kind === "allocMinor" && e.id === p.id);
    const next = base.out[k + 1];
    return k >= 0 && next?.kind === "promote" && idOf(next) === p.id ? [p.id] : [];
  });
  assert.ok(late.length > 0, "some blocks are promoted before their allocation callback runs");
  // Resolved dead: the allocation callback, then dealloc_minor at once, and no promote.
  const id = late[0];
  const dead = events({ deadAtPromotion: new Set([id]) }).out;
  const k = dead.findIndex((e) => e.kind === "allocMinor" && e.id === id);
  assert.equal(dead[k + 1].kind, "deallocMinor");
  assert.equal(idOf(dead[k + 1]), id);
  assert.ok(!dead.some((e) => e.kind === "promote" && e.id === id));
  // resolveRaces reads it back.
  const races = { deadAtPromotion: new Set([id]) };
  const made = simulateCanonical(sharedCacheRuntime, { ...m, races });
  const { sim, resolution } = resolveRaces(sharedCacheRuntime, made, m);
  assert.equal(compareLogs(sim, made).difference, undefined);
  assert.ok(resolution.deadAtPromotion.includes(id));
});

Deno.test("resolveRaces does not explain a difference that is no race", () => {
  const made = simulateCanonical(sharedCache, model);
  const changed = {
    ...made,
    lines: made.lines.map((l, i) => i === 5 ? l.replace("size=", "size=9") : l),
  };
  const { sim, resolution } = resolveRaces(sharedCache, changed, model);
  assert.deepEqual(resolution, {
    deadAtPromotion: [],
    adopter: [],
    childFirst: [],
    childBefore: [],
    join: [],
  });
  assert.equal(compareLogs(sim, changed).difference?.kind, "callback");
});

Deno.test("orphans adopted while another domain runs: an adoption race, its adopter chosen by the resolution", () => {
  const exported = exportOCaml(orphansRace);
  const m = { majorHeap: exported.majorHeap, keepSites: exported.keepSites };
  const run = (adopter?: ReadonlyMap<number, number>) =>
    runScenario(orphansRace, {
      harnessFrames: HARNESS_FRAMES,
      exportHarness: true,
      ...m,
      races: { adopter },
    });
  const points = run().racePoints.filter((p) => p.kind === "adoption");
  assert.equal(points.length, 1);
  const point = points[0];
  assert.ok(point.kind === "adoption");
  assert.deepEqual([...point.participants].sort(), [0, 2]);
  assert.equal(point.domain, 0); // the collecting domain, by default
  // Resolved the other way, the orphans' callbacks run on domain 2, and resolveRaces reads that
  // back from the log.
  const other = new Map([[point.id, 2]]);
  const made = simulateCanonical(orphansRace, { ...m, races: { adopter: other } });
  const base = simulateCanonical(orphansRace, m);
  const moved = made.lines.filter((l, k) => l !== base.lines[k]);
  assert.ok(moved.length > 0 && moved.every((l) => / d2 /.test(l)), moved.join("\n"));
  const { sim, resolution } = resolveRaces(orphansRace, made, m);
  assert.equal(compareLogs(sim, made).difference, undefined);
  assert.deepEqual(resolution.adopter, [[point.id, 2]]);
  // A domain that takes no part in the collection cannot adopt.
  assert.equal(
    run(new Map([[point.id, 1]])).racePoints.find((p) => p.kind === "adoption")?.domain,
    0,
  );
});

// A domain spawned while its parent samples every word: Domain.spawn's allocations in the
// parent (stdlib/domain.ml as OCaml 5.3.0 compiles it) and the new domain's DLS array.
const spawnWhileSampling = scenario({ name: "spawn_while_sampling", seed: 5 }, (s) => {
  const m = s.main;
  m.memprof.start({ name: "p", samplingRate: 1, callstackSize: 8, tracker: {} });
  const w = m.spawn("w");
  w.alloc(3);
  m.alloc(4);
  m.memprof.stop();
});

Deno.test("Domain.spawn while the parent samples: its allocations, then the race of its result with the new domain's DLS array", () => {
  const run = (childFirst?: ReadonlySet<number>) =>
    simulateWithSpawnRace(childFirst).lines.filter((l) => l.startsWith("alloc_minor"));
  const allocs = run();
  // Condition.create and Mutex.create (C: their callbacks wait for the next poll, the combined
  // allocation's slow path), term_sync and the closure (one combined allocation, sampled from
  // its highest component down as memprof.c does), the result record, then the DLS array in the
  // new domain.
  assert.deepEqual(
    allocs.slice(0, 6).map((l) =>
      /^alloc_minor (d[0-9]) .*size=([0-9]+) /.exec(l)!.slice(1, 3).join(" ")
    ),
    ["d0 2", "d0 2", "d0 3", "d0 5", "d0 2", "d1 8"],
  );
  // Domain.spawn's frame (a harness one) on top of the main domain's 3.
  assert.match(allocs[0], /stack=\[<harness> <harness> <harness> <harness>\]/);
  const points = runScenario(spawnWhileSampling, {
    harnessFrames: HARNESS_FRAMES,
    exportHarness: true,
  }).racePoints.filter((p) => p.kind === "spawn");
  // One callback of the new domain's first allocations (its DLS array) in this run.
  assert.deepEqual(points, [{ kind: "spawn", spawn: 1, childFirst: false, childCallbacks: 1 }]);
  // The other outcome: the DLS array's callback first, and resolveRaces reads it back.
  const flipped = run(new Set([1]));
  assert.deepEqual(
    flipped.slice(4, 6).map((l) =>
      /^alloc_minor (d[0-9]) .*size=([0-9]+) /.exec(l)!.slice(1, 3).join(" ")
    ),
    ["d1 8", "d0 2"],
  );
  const made = simulateWithSpawnRace(new Set([1]));
  const { sim, resolution } = resolveRaces(spawnWhileSampling, made);
  assert.equal(compareLogs(sim, made).difference, undefined);
  assert.deepEqual(resolution.childFirst, [1]);
});

function simulateWithSpawnRace(childFirst?: ReadonlySet<number>) {
  return simulateCanonical(spawnWhileSampling, { races: { childFirst } });
}

const cacheDir = DIFF_CACHE;
const skip = DIFF_SKIP;
if (skip !== undefined) {
  skipNotice("the shared cache's and the orphans' 50 runs on the real OCaml 5.3", skip);
}

/** Judges `sc` over 50 real runs: it must agree, with every distinct outcome reproduced. */
async function fiftyRuns(sc: Scenario) {
  const r = await diffScenario(sc, {
    ocamlopt: REAL_OCAML.toolchain!.ocamlopt,
    cacheDir: cacheDir!,
    racyRuns: 50,
  });
  assert.ok(r.status === "agree", r.status === "differs" ? JSON.stringify(r.races) : r.status);
  const races = r.races!;
  assert.equal(races.runs, 50);
  assert.equal(races.outcomes.reduce((n, o) => n + o.runs, 0), 50);
  assert.ok(races.outcomes.every((o) => o.reproduced));
  return races;
}

Deno.test({
  name: "shared cache, 50 runs on OCaml 5.3: several distinct outcomes, each reproduced",
  ignore: skip !== undefined,
  async fn() {
    const races = await fiftyRuns(sharedCache);
    // The race shows: more than one outcome in 50 runs (20 runs gave 9 when it was written).
    assert.ok(races.outcomes.length > 1, `${races.outcomes.length} outcome(s)`);
  },
});

Deno.test({
  name: "Domain.spawn while sampling every word, 50 runs on OCaml 5.3: both orders reproduced",
  ignore: skip !== undefined,
  async fn() {
    const outcomes = (await fiftyRuns(spawnWhileSampling)).outcomes;
    // The parent's result first in 43 of 50 runs when this was written, the DLS array in 7: a
    // single outcome in 50 runs would be a change worth knowing about.
    assert.equal(outcomes.length, 2, JSON.stringify(outcomes));
  },
});

Deno.test({
  name: "orphans adopted while another domain runs, 50 runs on OCaml 5.3: each adopter reproduced",
  ignore: skip !== undefined,
  async fn() {
    const outcomes = (await fiftyRuns(orphansRace)).outcomes;
    // Both adopters show (28 and 22 of 50 runs when this was written).
    assert.equal(outcomes.length, 2, JSON.stringify(outcomes));
  },
});

Deno.test({
  name: "shared cache with runtime allocations, 50 runs on OCaml 5.3: each outcome reproduced",
  ignore: skip !== undefined,
  async fn() {
    const outcomes = (await fiftyRuns(sharedCacheRuntime)).outcomes;
    // 100 runs gave 65 distinct outcomes when this was written; before the races of blocks
    // whose allocation callback had not run were modelled, 50 runs gave one that no
    // resolution explained.
    assert.ok(outcomes.length > 3, `${outcomes.length} outcome(s)`);
  },
});

Deno.test({
  name:
    "a worker spawned and terminated while sampling every word, 50 runs on OCaml 5.3: each outcome reproduced",
  ignore: skip !== undefined,
  async fn() {
    const outcomes = (await fiftyRuns(terminateSampling)).outcomes;
    // Its spawn, its blocks' promotion and its join race all show: 100 runs gave 9 to 11
    // distinct outcomes when this was written (500 runs, 15).
    assert.ok(outcomes.length > 3, JSON.stringify(outcomes));
  },
});

// A domain ending while the domain that joins it next samples (issue 24): the `join` race point.
// domains_orphans: worker1 ends while the main domain samples, the main domain collects while
// worker2 waits, then worker2 ends.
const orphansProgram = exportOCaml(domainsOrphans);
const orphansModel = {
  majorHeap: orphansProgram.majorHeap,
  keepSites: orphansProgram.keepSites,
};

function orphansPoints(races: RaceResolution = {}) {
  return runScenario(domainsOrphans, {
    harnessFrames: HARNESS_FRAMES,
    exportHarness: true,
    ...orphansModel,
    races,
  }).racePoints.filter((p) => p.kind !== "promotion");
}

Deno.test("domains_orphans: each domain's end is a join race point, and only with the export's harness", () => {
  assert.deepEqual(orphansPoints().filter((p) => p.kind === "join"), [
    { kind: "join", join: 1, outcome: "late" },
    { kind: "join", join: 2, outcome: "late" },
  ]);
  // By default the main domain's callbacks run after worker1 orphaned its tables: it adopts
  // them there, and no collection finds them waiting.
  assert.ok(!orphansPoints().some((p) => p.kind === "adoption"));
  // Without the harness nobody joins: no join point, and the goldens' runs are unchanged.
  const plain = runScenario(domainsOrphans, {}).racePoints;
  assert.ok(!plain.some((p) => p.kind === "join"));
});

Deno.test("domains_orphans: callbacksFirst leaves worker1's orphans to the next collection, whose participants race to adopt them", () => {
  const join = new Map([[1, "callbacksFirst" as const]]);
  const points = orphansPoints({ join });
  const adoption = points.find((p) => p.kind === "adoption");
  assert.ok(adoption?.kind === "adoption", JSON.stringify(points));
  assert.deepEqual([...adoption.participants].sort(), [0, 2]);
  assert.equal(adoption.domain, 0);
  // Adopted by the main domain, the log is the default's: the two outcomes are one to the log.
  const base = simulateCanonical(domainsOrphans, orphansModel);
  const early = simulateCanonical(domainsOrphans, { ...orphansModel, races: { join } });
  assert.equal(compareLogs(base, early).difference, undefined);
  // Adopted by worker2, which ends later and orphans them behind its own table: the final
  // collection reports worker2's blocks dead before worker1's.
  const adopter = new Map([[adoption.id, 2]]);
  const other = simulateCanonical(domainsOrphans, {
    ...orphansModel,
    races: { join, adopter },
  });
  const d = compareLogs(base, other).difference;
  assert.ok(d?.kind === "callback", JSON.stringify(d));
  const first = (log: typeof base) =>
    Number(
      /id=([0-9]+)/.exec(
        log.lines.find((l) =>
          l.startsWith("dealloc_major d0 ") &&
          !l.endsWith(" id=1")
        )!,
      )![1],
    );
  assert.ok(first(base) < 261 && first(other) > 260, `${first(base)} ${first(other)}`);
  // resolveRaces reads both choices back from the log.
  const { sim, resolution } = resolveRaces(domainsOrphans, other, orphansModel);
  assert.equal(compareLogs(sim, other).difference, undefined);
  assert.deepEqual(resolution.join, [[1, "callbacksFirst"]]);
  assert.deepEqual(resolution.adopter, [[adoption.id, 2]]);
});

Deno.test("domains_orphans: closureFirst samples the main domain's loop from a countdown drawn where its minor heap was empty", () => {
  const join = new Map([[1, "closureFirst" as const]]);
  const base = simulateCanonical(domainsOrphans, orphansModel);
  const made = simulateCanonical(domainsOrphans, { ...orphansModel, races: { join } });
  const d = compareLogs(base, made).difference;
  assert.ok(d?.kind === "callback", JSON.stringify(d));
  // The loop's samples come one iteration later: the closure's 4 words are no longer between
  // the countdown's draw and the loop.
  const loopIndex = (l: string) =>
    Number(/^alloc_minor d0 i=([0-9]+) .*Domains\.main_loop/.exec(l)![1]);
  assert.equal(loopIndex(made.lines[d.index - 1]), loopIndex(base.lines[d.index - 1]) + 1);
  const { sim, resolution } = resolveRaces(domainsOrphans, made, orphansModel);
  assert.equal(compareLogs(sim, made).difference, undefined);
  assert.deepEqual(resolution.join, [[1, "closureFirst"]]);
});

/** A recorded real log (tests/differential/real_logs/, whose README says where each comes
 * from) of scenario `sc`, as a canonical log: its collection counts, not recorded, are the
 * simulation's (every run of these programs makes the same). Returns it with the resolution
 * `resolveRaces` reads back from it and the simulation under that resolution. */
function recordedLog(sc: Scenario, file: string) {
  const program = exportOCaml(sc);
  const model = { majorHeap: program.majorHeap, keepSites: program.keepSites };
  const lines = Deno.readTextFileSync(new URL(`./real_logs/${file}`, import.meta.url))
    .trimEnd().split("\n");
  const real = { ...simulateCanonical(sc, model), lines };
  return { lines, real, model, ...resolveRaces(sc, real, model) };
}

Deno.test("domains_orphans: callbacksDuring, a recorded real log: worker1's last collection inside the main domain's batch draws it no countdown", () => {
  // A real run (OCaml 5.3.0, a loaded machine) that the four other outcomes do not explain: the
  // main domain's loop samples at i=10, 31, 47, 87, 97, not from the countdown drawn after its
  // batch (tests/differential/real_logs/README.md).
  const { lines, real, sim, resolution } = recordedLog(
    domainsOrphans,
    "domains_orphans_callbacks_during.txt",
  );
  assert.equal(compareLogs(sim, real).difference, undefined);
  assert.deepEqual(resolution.join, [[1, "callbacksDuring"]]);
  // worker1's orphans, made after the main domain's batch began, wait for its next collection,
  // where worker2 adopted them (and orphaned them again behind its own table at its end).
  assert.deepEqual(resolution.adopter, [[6, 2]]);
  const loop = (log: readonly string[]) =>
    log.flatMap((l) => /^alloc_minor d0 i=([0-9]+) .*Domains\.main_loop/.exec(l)?.[1] ?? [])
      .map(Number);
  assert.deepEqual(loop(lines), [10, 31, 47, 87, 97]);
  // The same resolution with the batch after the collection (callbacksFirst): the collection
  // draws the main domain a countdown, and its batch another, from which the loop samples.
  const races = {
    deadAtPromotion: new Set(resolution.deadAtPromotion),
    adopter: new Map<number, number>(resolution.adopter),
  };
  for (const outcome of ["late", "callbacksFirst", "closureFirst", "closureDuring"] as const) {
    const other = simulateCanonical(domainsOrphans, {
      ...orphansModel,
      races: { ...races, join: new Map([[1, outcome]]) },
    });
    assert.notDeepEqual(loop(other.lines), loop(lines), outcome);
  }
});

Deno.test("join_late: a join step's late outcome, a recorded real log: the joiner's callbacks run at its closure's allocation, before the closure", () => {
  const { lines, real, sim, resolution } = recordedLog(joinLate, "join_late_rnd_33_91.txt");
  assert.equal(compareLogs(sim, real).difference, undefined);
  assert.deepEqual(resolution.join, [[1, "late"]]);
  // w1 ended before the main domain called Domain.join: the main domain's callbacks (its own
  // blocks 5 and 6, w1's orphaned block 7) ran at the closure's allocation, and the closure
  // (3 words, block 8) was sampled from the countdown their batch's end drew, then died young.
  const at = (l: string) => lines.indexOf(l);
  const closure = lines.findIndex((l) => /^alloc_minor d0 i=- size=3 n=1 .* id=8 /.test(l));
  assert.ok(closure > 0);
  for (const l of ["promote d0 i=- id=5 -> some", "dealloc_minor d0 i=- id=6"]) {
    assert.ok(at(l) >= 0 && at(l) < closure, l);
  }
  assert.ok(at("dealloc_minor d0 i=- id=7") < closure);
  assert.equal(lines[closure + 1], "dealloc_minor d0 i=- id=8");
});

Deno.test("terminate_late: a terminate's late outcome, a recorded real log: the joiner's wait returns with its callbacks pending, which run at its closure's allocation, before the closure", () => {
  const { lines, model } = recordedLog(terminateLate, "terminate_late_rnd_35_190.txt");
  // The default resolution: no race point decided otherwise.
  const base = simulateCanonical(terminateLate, model);
  assert.equal(compareLogs(base, { ...base, lines }).difference, undefined);
  // w2's last collection made the main domain's callbacks ready (its block 35 dead, w2's block
  // 36 promoted, adopted): they ran at the closure's allocation, whose countdown their batch's
  // end drew, so the closure (3 words, block 37) was sampled; it died young.
  const closure = lines.indexOf(
    "alloc_minor d0 i=- size=3 n=1 src=normal id=37 stack=[<harness> <harness> <harness> " +
      "<harness>] -> some",
  );
  assert.ok(closure > 0);
  assert.ok(lines.indexOf("promote d0 i=- id=36 -> some") < closure);
  assert.equal(lines[closure + 1], "dealloc_minor d0 i=- id=37");
});

Deno.test("four_workers, a recorded real log: resolveRaces keeps the outcome that agrees furthest over every spawn and join, not the first point's", () => {
  const { real, sim, resolution } = recordedLog(fourWorkers, "four_workers_rnd_35_385.txt");
  assert.equal(compareLogs(sim, real).difference, undefined);
  // w1's DLS array before its parent's result; w2's and w3's joiner allocated its closure
  // before their last collections (it is promoted); a racing block (19) reported dead. The
  // first join's callbacksFirst agrees one callback further than w1's spawn alone (it moves
  // the closure's sample), but no further: only the later joins explain the rest.
  assert.deepEqual(resolution.childFirst, [1]);
  assert.deepEqual(resolution.join, [[2, "closureFirst"], [3, "closureFirst"]]);
  assert.deepEqual(resolution.deadAtPromotion, [19]);
});

Deno.test("closure_first, a recorded real log: a terminate's closureFirst, the joiner's pending callbacks run at its closure's allocation, before the closure", () => {
  const { lines, real, sim, resolution } = recordedLog(closureFirst, "closure_first_rnd_37_85.txt");
  assert.equal(compareLogs(sim, real).difference, undefined);
  assert.deepEqual(resolution.join, [[1, "closureFirst"]]);
  // Block 151's promotion (a collection a callback of w1 started) ran when the main domain's
  // wait returned, before its closure (block 170), which w1's last collection then promoted.
  const closure = lines.findIndex((l) => /^alloc_minor d0 i=- size=3 n=1 .* id=170 /.test(l));
  assert.ok(closure > 0);
  assert.equal(lines[closure - 1], "promote d0 i=- id=151 -> some");
  assert.equal(lines[closure + 1], "promote d0 i=- id=170 -> some");
});

Deno.test({
  name:
    "domains_orphans, 50 runs on OCaml 5.3: every outcome reproduced, joins and adoptions included",
  ignore: skip !== undefined,
  async fn() {
    const outcomes = (await fiftyRuns(domainsOrphans)).outcomes;
    const count = (f: (o: (typeof outcomes)[number]) => boolean) =>
      outcomes.filter(f).reduce((n, o) => n + o.runs, 0);
    console.log(
      `${outcomes.length} distinct outcomes in 50 runs; joiner callbacksFirst: ` +
        `${count((o) => o.join.some(([, j]) => j === "callbacksFirst"))}, closureFirst: ` +
        `${count((o) => o.join.some(([, j]) => j === "closureFirst"))}, worker1's orphans ` +
        `adopted by worker2: ${count((o) => o.adopter.length > 0)}`,
    );
    // 40 runs gave 19 distinct outcomes when this was written, 25 of them with worker1's
    // orphans adopted by worker2 (which only a joiner that ran its callbacks before worker1
    // orphaned its tables leaves possible), 2 with the closure allocated first.
    assert.ok(outcomes.length > 1, `${outcomes.length} outcome(s)`);
    assert.ok(count((o) => o.join.length > 0) > 0, JSON.stringify(outcomes));
  },
});

// loop_indices: the main domain, sampling, releases its worker and joins it at once (a `join`
// step): its closure usually comes before the worker's last collection (`closureFirst`, the
// default for a join step); when the worker was quicker, the main domain's loop after the join
// samples one iteration earlier.
const loopProgram = exportOCaml(loopIndices);
const loopModel = { majorHeap: loopProgram.majorHeap, keepSites: loopProgram.keepSites };

Deno.test("loop_indices: a join step's race point, closureFirst by default; late samples the next loop one iteration earlier", () => {
  const points = runScenario(loopIndices, {
    harnessFrames: HARNESS_FRAMES,
    exportHarness: true,
    ...loopModel,
  }).racePoints.filter((p) => p.kind === "join");
  assert.deepEqual(points, [{ kind: "join", join: 1, outcome: "closureFirst" }]);
  const base = simulateCanonical(loopIndices, loopModel);
  const late = simulateCanonical(loopIndices, {
    ...loopModel,
    races: { join: new Map([[1, "late"]]) },
  });
  const d = compareLogs(base, late).difference;
  assert.ok(d?.kind === "callback", JSON.stringify(d));
  const index = (l: string) => Number(/^alloc_minor d0 i=([0-9]+) /.exec(l)![1]);
  assert.equal(index(late.lines[d.index - 1]), index(base.lines[d.index - 1]) - 1);
  const { sim, resolution } = resolveRaces(loopIndices, late, loopModel);
  assert.equal(compareLogs(sim, late).difference, undefined);
  assert.deepEqual(resolution.join, [[1, "late"]]);
});

Deno.test({
  name: "loop_indices, 30 runs on OCaml 5.3: every outcome reproduced",
  ignore: skip !== undefined,
  async fn() {
    const r = await diffScenario(loopIndices, {
      ocamlopt: REAL_OCAML.toolchain!.ocamlopt,
      cacheDir: cacheDir!,
      racyRuns: 30,
    });
    assert.ok(r.status === "agree", r.status === "differs" ? JSON.stringify(r.races) : r.status);
    const outcomes = r.races!.outcomes;
    assert.equal(outcomes.reduce((n, o) => n + o.runs, 0), 30);
    assert.ok(outcomes.every((o) => o.reproduced));
    // 29 of 30 runs had the closure first when this was written, 1 the worker quicker (2 of 30
    // before the race was modelled): both are reproduced, neither is required to show.
    console.log(outcomes.map((o) => `${o.runs} runs: ${JSON.stringify(o.join)}`).join("; "));
  },
});
