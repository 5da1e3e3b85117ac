/**
 * The random scenarios of `deno task diff --random`: a small program form that mirrors the
 * scenario builder's calls one to one (so that a program can be both built and written out as an
 * ordinary scenario module), and the fast-check arbitraries that generate it.
 *
 * The arbitraries aim at programs that are valid and exportable by construction: what the
 * exporter refuses, and what OCaml 5.3 does not do deterministically, is left out (one spawned
 * domain at a time, its own systhread joined before it ends; no callback passing the systhreads'
 * baton in a scenario with spawned domains; no profile started or discarded in an order
 * `Gc.Memprof` refuses). The campaign's
 * filter (random.ts) still builds and exports each program, so a miss is refused, never run.
 * @module
 */
import fc from "fast-check";
import { TRACKER_KINDS } from "../scenario/walk.ts";
import type {
  AllocSource,
  CallbackAction,
  GcKind,
  Lifetime,
  SizeSpec,
  Trigger,
  UserEventSpec,
} from "../scenario/mod.ts";

// ---- the program form --------------------------------------------------------------------------

/** One builder call on a domain (`d.alloc(…)`, `d.repeat(…)`, …) or on the scenario. */
export type GenStep =
  | {
    readonly k: "alloc";
    readonly size: SizeSpec;
    readonly source: AllocSource;
    readonly lifetime: Lifetime;
    readonly at?: string;
    readonly customMem?: SizeSpec;
  }
  | {
    readonly k: "combined";
    readonly sizes: readonly number[];
    readonly lifetimes: readonly Lifetime[];
    readonly at?: string;
  }
  | {
    readonly k: "unmarshal";
    readonly blocks: readonly number[];
    readonly lifetime: Lifetime;
    readonly at?: string;
  }
  /** `d.extAlloc(bytes, lifetime)`: memtrace's `External.alloc`. */
  | { readonly k: "ext"; readonly bytes: SizeSpec; readonly lifetime: Lifetime }
  | { readonly k: "gc"; readonly what: GcKind }
  | { readonly k: "poll" }
  | { readonly k: "repeat"; readonly count: number; readonly body: readonly GenStep[] }
  /** `i.every(period, body, offset)` on the innermost enclosing loop's index. */
  | {
    readonly k: "every";
    readonly period: number;
    readonly offset: number;
    readonly body: readonly GenStep[];
  }
  | { readonly k: "call"; readonly frame: string; readonly body: readonly GenStep[] }
  | { readonly k: "attempt"; readonly body: readonly GenStep[] }
  | { readonly k: "userEvent"; readonly name: string; readonly event: UserEventSpec }
  /** `s.release(name)` (recorded on the main domain's program). */
  | { readonly k: "release"; readonly name: string }
  | { readonly k: "start"; readonly profile: GenProfile }
  | { readonly k: "stop" }
  | { readonly k: "discard"; readonly profile: string }
  | { readonly k: "events"; readonly what: "start" | "pause" | "resume" }
  /** `const w = m.spawn(name)`, `w`'s steps, then `w.terminate()` or `m.join(w)`. */
  | {
    readonly k: "spawn";
    readonly name: string;
    readonly body: readonly GenStep[];
    readonly end: "terminate" | "join";
  }
  /** `const t = m.thread(name, (t) => …)`: a systhread with a program of its own. */
  | { readonly k: "thread"; readonly name: string; readonly body: readonly GenStep[] }
  /** `d.yieldTo(thread)` (`"main"`: the main domain's own thread). */
  | { readonly k: "yieldTo"; readonly thread: string }
  /** `m.join(t)` for a thread. */
  | { readonly k: "joinThread"; readonly thread: string }
  /** `d.yield()`: `Thread.yield ()`. */
  | { readonly k: "threadYield" };

/** A callback's behaviour: `cb.track()` or `cb.none()`, then `.on`/`.every`/`.always`. */
export interface GenCallback {
  /** What the callback returns: `cb.track()` keeps tracking the block, `cb.none()` does not. */
  readonly result: "track" | "none";
  /** The actions it takes, each on the calls its trigger picks. */
  readonly actions: readonly { readonly when: Trigger; readonly action: CallbackAction }[];
}

/** The five callbacks (absent ones keep the default). */
export interface GenTracker {
  /** The callback of a sampled minor allocation. */
  readonly allocMinor?: GenCallback;
  /** The callback of a sampled major allocation. */
  readonly allocMajor?: GenCallback;
  /** The callback of a tracked block's promotion. */
  readonly promote?: GenCallback;
  /** The callback of a tracked minor block's death. */
  readonly deallocMinor?: GenCallback;
  /** The callback of a tracked major block's death. */
  readonly deallocMajor?: GenCallback;
}

/** Arguments of `memprof.start`. */
export interface GenProfile {
  /** The profile's name in the scenario. */
  readonly name: string;
  /** Samples per word allocated. */
  readonly samplingRate: number;
  /** Frames kept in a sampled block's callstack. */
  readonly callstackSize: number;
  /** Its callbacks. */
  readonly tracker: GenTracker;
}

/** A whole generated program: settings and the main domain's steps. */
export interface GenProgram {
  /** The scenario's `seed` setting (its simulated sampler's). */
  readonly seed: number;
  /** The scenario's minor heap, in words. */
  readonly minorHeapWords: number;
  /** The builder calls, in order. */
  readonly steps: readonly GenStep[];
}

/** The callback kinds of a tracker, in the order the builder lists them. */
export const CALLBACK_KINDS: typeof TRACKER_KINDS = TRACKER_KINDS;

// ---- budgets -----------------------------------------------------------------------------------

/** Most words (headers included) a generated program may allocate, all loops unrolled. */
export const MAX_WORDS = 3_000_000;
/** Most samples a generated program is expected to draw (words × the highest rate). */
export const MAX_EXPECTED_SAMPLES = 20_000;
/** Most allocation steps executed (loops unrolled). */
export const MAX_EXECUTED_ALLOCS = 400_000;
/** Most leaf steps executed (loops unrolled), whatever they do: rnd-32-0 nested three loops
 * around a release, 1.7 billion steps that allocate nothing, which the simulation could not run
 * within the campaign's 15 minutes. */
export const MAX_EXECUTED_STEPS = 2_000_000;
/** Most collection work explicit collections may ask for, loops unrolled (a minor collection or
 * a slice counts 1, `Gc.major` 10, `Gc.full_major` 15, `Gc.compact` 20). */
export const MAX_GC_UNITS = 600;

/** Most collection work the callbacks' own collections may ask for: a `gc` action counted for
 * every callback expected to run it (the program's words times its profile's rate; `every` n,
 * one in n of those; `nth`, once). rnd-16-658 had `Gc.major` in every sampled minor allocation's
 * callback: some 15,000 of them over a growing heap, which the simulation could not run within the
 * campaign's 15 minutes (OCaml 5.3.0 runs it in seconds). */
export const MAX_CALLBACK_GC_UNITS = 600;

const GC_UNITS: Record<GcKind, number> = {
  minor: 1,
  majorSlice: 1,
  major: 10,
  fullMajor: 15,
  compact: 20,
};

/** Words allocated and allocation steps executed by `steps`, loops unrolled (the largest size
 * of a distribution; `every` bodies counted at their share of the loop). */
export function programCost(
  steps: readonly GenStep[],
): { words: number; allocs: number; gcUnits: number; callbackGcUnits: number; leaves: number } {
  let words = 0, allocs = 0, gcUnits = 0, leaves = 0;
  const callbackGc: { units: number; when: Trigger; rate: number }[] = [];
  const walk = (list: readonly GenStep[], times: number): void => {
    for (const st of list) {
      if (!("body" in st)) leaves += times;
      switch (st.k) {
        case "alloc":
          // A custom block's out-of-heap memory paces collections as words allocated do.
          words += times * (maxSize(st.size) + 1 + (st.customMem ? maxSize(st.customMem) : 0));
          allocs += times;
          break;
        case "combined":
          words += times * st.sizes.reduce((a, b) => a + b + 1, 0);
          allocs += times;
          break;
        case "unmarshal":
          words += times * st.blocks.reduce((a, b) => a + b + 1, 0);
          allocs += times;
          break;
        case "ext":
          // Out of the heap, but sampled per word as the heap's words are: counted as words so
          // that the expected samples (each a callstack array and its callbacks) stay bounded.
          words += times * Math.ceil(maxSize(st.bytes) / 8);
          allocs += times;
          break;
        case "gc":
          gcUnits += times * GC_UNITS[st.what];
          break;
        case "repeat":
          walk(st.body, times * st.count);
          break;
        case "every":
          walk(st.body, times / st.period);
          break;
        case "call":
        case "attempt":
        case "spawn":
        case "thread":
          walk(st.body, times);
          break;
        case "start":
          for (const k of CALLBACK_KINDS) {
            for (const { when, action } of st.profile.tracker[k]?.actions ?? []) {
              if (action.kind === "alloc") words += 64 * (action.words + 1);
              if (action.kind !== "gc") continue;
              gcUnits += 8 * GC_UNITS[action.what];
              callbackGc.push({
                units: GC_UNITS[action.what],
                when,
                rate: st.profile.samplingRate,
              });
            }
          }
          break;
      }
    }
  };
  walk(steps, 1);
  let callbackGcUnits = 0;
  for (const { units, when, rate } of callbackGc) {
    const expected = words * rate;
    const runs = when.kind === "nth"
      ? 1
      : Math.max(1, when.kind === "every" ? expected / when.period : expected);
    callbackGcUnits += units * runs;
  }
  return { words, allocs, gcUnits, callbackGcUnits, leaves };
}

/** The largest value a size can take. */
export function maxSize(s: SizeSpec): number {
  if (typeof s === "number") return s;
  if ("uniform" in s) return s.uniform[1];
  if ("choice" in s) return Math.max(...s.choice);
  return s.geometric.max ?? 256;
}

/** The highest sampling rate of any profile the program starts. */
export function highestRate(steps: readonly GenStep[]): number {
  let r = 0;
  const walk = (list: readonly GenStep[]): void => {
    for (const st of list) {
      if (st.k === "start") {
        r = Math.max(r, st.profile.samplingRate);
        for (const k of CALLBACK_KINDS) {
          for (const { action } of st.profile.tracker[k]?.actions ?? []) {
            if (action.kind === "start") r = Math.max(r, action.profile.samplingRate);
          }
        }
      }
      if ("body" in st) walk(st.body);
    }
  };
  walk(steps);
  return r;
}

// ---- the arbitraries ---------------------------------------------------------------------------

const FRAMES = Array.from({ length: 8 }, (_, i) => `Gen.f${i + 1}@gen.ml:${i + 1}:2-14`);
const SITES = Array.from({ length: 8 }, (_, i) => `Gen.site${i + 1}@gen.ml:${i + 21}:4-20`);
/** Names of `keep.until`, `keep.list` and `keep.ring` groups. */
const KEEP_NAMES = ["a", "b", "c"] as const;
const EXCEPTIONS = ["Exit", "Not_found", "Boom"] as const;
const EVENT_NAMES = ["gen.tick", "gen.count", "gen.span"] as const;
/** The sampling rates a profile takes: every decade from 1 down to 1e-5, and a few between. */
export const RATES = [1, 0.5, 0.1, 0.05, 0.01, 1e-3, 2.5e-4, 1e-4, 1e-5] as const;
/** The minor heap sizes (words) a program takes, from OCaml's minimum up to its default. */
export const MINOR_HEAPS = [4096, 8192, 16384, 32768, 65536, 262144] as const;

const w = <T>(weight: number, arbitrary: fc.Arbitrary<T>) => ({ weight, arbitrary });

const smallSize: fc.Arbitrary<number> = fc.oneof(
  w(6, fc.integer({ min: 1, max: 8 })),
  w(3, fc.integer({ min: 9, max: 64 })),
  w(1, fc.integer({ min: 65, max: 256 })),
);

/** A size for OCaml code's own allocations (at most 256 words: minor blocks). */
const camlSize: fc.Arbitrary<SizeSpec> = fc.oneof(
  w(8, smallSize),
  w(
    1,
    fc.integer({ min: 1, max: 16 }).chain((a) =>
      fc.integer({ min: a, max: a + 40 }).map(
        (b): SizeSpec => ({ uniform: [a, b] }),
      )
    ),
  ),
  w(
    1,
    fc.uniqueArray(smallSize, { minLength: 1, maxLength: 5 }).map((c): SizeSpec => ({ choice: c })),
  ),
  w(
    1,
    fc.record({ mean: fc.integer({ min: 1, max: 20 }), max: fc.integer({ min: 1, max: 256 }) })
      .map(({ mean, max }): SizeSpec => ({ geometric: { mean, max } })),
  ),
);

/** A size for runtime allocations (`Array.make`, `Bytes.create`): minor or major. */
const runtimeSize: fc.Arbitrary<SizeSpec> = fc.oneof(
  w(5, smallSize),
  w(3, fc.integer({ min: 257, max: 4096 })),
  w(1, fc.integer({ min: 200, max: 400 }).map((a): SizeSpec => ({ uniform: [a, a + 100] }))),
);

const lifetimeName = fc.constantFrom(...KEEP_NAMES);

/** Which lifetimes a step takes. */
interface Keeps {
  /** Anything may be kept (false while a spawned domain runs: every block is dropped). */
  readonly keeps: boolean;
  /** `keep.list` (blocks of at most 256 words made by OCaml code or `Array.make`). */
  readonly list?: boolean;
  /** `keep.cycle` (not for an unmarshalled value). */
  readonly cycle?: boolean;
  /** An external allocation's token: no `keep.ring` (nor `keep.list`, `keep.cycle`), which are
   * for heap blocks. */
  readonly token?: boolean;
}

/** A lifetime, as `k` allows. */
function lifetime(k: Keeps): fc.Arbitrary<Lifetime> {
  if (!k.keeps) return fc.constant<Lifetime>({ kind: "drop" });
  const simple: fc.Arbitrary<Lifetime> = fc.oneof(
    w(10, fc.constant<Lifetime>({ kind: "drop" })),
    w(
      3,
      fc.record({ n: fc.integer({ min: 1, max: 60 }), until: fc.option(lifetimeName, { freq: 4 }) })
        .map(({ n, until }): Lifetime =>
          until === null ? { kind: "steps", steps: n } : { kind: "steps", steps: n, until }
        ),
    ),
    w(2, lifetimeName.map((name): Lifetime => ({ kind: "until", name }))),
    w(1, fc.constant<Lifetime>({ kind: "forever" })),
    w(k.list ? 2 : 0, lifetimeName.map((name): Lifetime => ({ kind: "list", name }))),
    w(
      k.token ? 0 : 2,
      fc.record({ slots: fc.integer({ min: 1, max: 64 }), name: fc.option(lifetimeName) })
        .map(({ slots, name }): Lifetime =>
          name === null ? { kind: "ring", slots } : { kind: "ring", slots, name }
        ),
    ),
  );
  return fc.oneof(
    w(12, simple),
    w(
      k.cycle === false || k.token ? 0 : 1,
      fc.array(simple, { minLength: 1, maxLength: 4 }).map((ls): Lifetime => ({
        kind: "cycle",
        lifetimes: ls,
      })),
    ),
  );
}

const site = fc.option(fc.constantFrom(...SITES), { freq: 3, nil: undefined });

/** One allocation step. */
function allocStep(keeps: boolean, worker: boolean): fc.Arbitrary<GenStep> {
  const linked = lifetime({ keeps, list: true });
  const l = lifetime({ keeps });
  const whole = lifetime({ keeps, cycle: false });
  const caml = fc.record({ size: camlSize, lifetime: linked, at: site }).map((r): GenStep =>
    withAt({ k: "alloc", size: r.size, source: "caml", lifetime: r.lifetime }, r.at)
  );
  if (worker) return caml;
  return fc.oneof(
    w(14, caml),
    w(
      3,
      runtimeSize.chain((size) =>
        fc.record({ lifetime: maxSize(size) <= 256 ? linked : l, at: site }).map((r): GenStep =>
          withAt({ k: "alloc", size, source: "array", lifetime: r.lifetime }, r.at)
        )
      ),
    ),
    w(
      2,
      fc.record({ size: runtimeSize, lifetime: l, at: site }).map((r): GenStep =>
        withAt({ k: "alloc", size: r.size, source: "runtime", lifetime: r.lifetime }, r.at)
      ),
    ),
    w(
      2,
      fc.record({ size: fc.integer({ min: 257, max: 5000 }), lifetime: l, at: site }).map(
        (r): GenStep =>
          withAt({ k: "alloc", size: r.size, source: "major", lifetime: r.lifetime }, r.at),
      ),
    ),
    w(
      1,
      fc.record({
        size: fc.integer({ min: 6, max: 21 }),
        mem: fc.oneof(
          fc.integer({ min: 0, max: 64 }),
          fc.integer({ min: 1000, max: 40_000 }),
          fc.integer({ min: 1, max: 2000 }).map((a): SizeSpec => ({ uniform: [a, a * 2] })),
        ),
        lifetime: l,
        at: site,
      }).map((r): GenStep =>
        withAt({
          k: "alloc",
          size: r.size,
          source: "custom",
          customMem: r.mem,
          lifetime: r.lifetime,
        }, r.at)
      ),
    ),
    w(
      1,
      fc.record({ size: fc.integer({ min: 1, max: 400 }), lifetime: whole, at: site }).map(
        (r): GenStep =>
          withAt({ k: "alloc", size: r.size, source: "unmarshal", lifetime: r.lifetime }, r.at),
      ),
    ),
    w(
      2,
      fc.record({
        sizes: fc.array(fc.integer({ min: 1, max: 12 }), { minLength: 2, maxLength: 4 }),
        at: site,
      }).chain((r) =>
        fc.array(linked, { minLength: r.sizes.length, maxLength: r.sizes.length }).map(
          (ls): GenStep => withAt({ k: "combined", sizes: r.sizes, lifetimes: ls }, r.at),
        )
      ),
    ),
    w(
      1,
      fc.record({
        blocks: fc.array(fc.integer({ min: 1, max: 300 }), { minLength: 1, maxLength: 5 }),
        lifetime: whole,
        at: site,
      }).map((r): GenStep =>
        withAt({ k: "unmarshal", blocks: r.blocks, lifetime: r.lifetime }, r.at)
      ),
    ),
  );
}

/** An external allocation (memtrace's `External.alloc`): bytes from a word to 100 kB. */
function extStep(keeps: boolean): fc.Arbitrary<GenStep> {
  const bytes: fc.Arbitrary<SizeSpec> = fc.oneof(
    w(3, fc.integer({ min: 1, max: 64 })),
    w(3, fc.integer({ min: 65, max: 8192 })),
    w(1, fc.integer({ min: 8193, max: 100_000 })),
    w(1, fc.integer({ min: 8, max: 4000 }).map((a): SizeSpec => ({ uniform: [a, a * 2] }))),
  );
  return fc.record({ bytes, lifetime: lifetime({ keeps, token: true }) }).map((r): GenStep => ({
    k: "ext",
    bytes: r.bytes,
    lifetime: r.lifetime,
  }));
}

function withAt<T extends GenStep & { at?: string }>(st: T, at: string | undefined): T {
  return at === undefined ? st : { ...st, at };
}

const gcKind: fc.Arbitrary<GcKind> = fc.oneof(
  w(6, fc.constant<GcKind>("minor")),
  w(3, fc.constant<GcKind>("majorSlice")),
  w(2, fc.constant<GcKind>("major")),
  w(2, fc.constant<GcKind>("fullMajor")),
  w(1, fc.constant<GcKind>("compact")),
);

const userEvent: fc.Arbitrary<GenStep> = fc.oneof(
  fc.constant<GenStep>({ k: "userEvent", name: EVENT_NAMES[0], event: { type: "unit" } }),
  fc.integer({ min: 0, max: 1_000_000 }).map((value): GenStep => ({
    k: "userEvent",
    name: EVENT_NAMES[1],
    event: { type: "int", value },
  })),
);

/** Where a list of steps is generated. */
interface Place {
  /** Loops enclosing it. */
  readonly loops: number;
  /** Whether blocks may be kept (not while a spawned domain runs). */
  readonly keeps: boolean;
  /** On a spawned domain, or a thread's program: a lighter step mix. */
  readonly worker: boolean;
  /** Nesting depth so far. */
  readonly depth: number;
  /** Runtime events are on (user events may be written). */
  readonly events: boolean;
  /** Systhreads run (`Thread.yield` may be called). */
  readonly threads?: boolean;
  /** No explicit collection (a spawned domain's steps). */
  readonly light?: boolean;
  /** External allocations may be made. */
  readonly external?: boolean;
}

/** A list of plain steps (no profile control, no domains) at `place`. */
function steps(place: Place, maxLength: number): fc.Arbitrary<GenStep[]> {
  return fc.array(step(place), { minLength: 1, maxLength });
}

function step(place: Place): fc.Arbitrary<GenStep> {
  const leaf = fc.oneof(
    w(10, allocStep(place.keeps, place.worker)),
    w(
      place.light ? 0 : place.worker ? 1 : 3,
      place.worker
        ? fc.constant<GenStep>({ k: "gc", what: "minor" })
        : gcKind.map((what): GenStep => ({ k: "gc", what })),
    ),
    w(2, fc.constant<GenStep>({ k: "poll" })),
    w(place.external ? 3 : 0, extStep(place.keeps)),
    w(place.threads ? 1 : 0, fc.constant<GenStep>({ k: "threadYield" })),
    w(place.events ? 2 : 0, userEvent),
    w(
      place.keeps && !place.worker ? 1 : 0,
      lifetimeName.map((name): GenStep => ({ k: "release", name })),
    ),
  );
  if (place.depth >= 3) return leaf;
  const inner = (p: Partial<Place>) => steps({ ...place, depth: place.depth + 1, ...p }, 3);
  return fc.oneof(
    w(12, leaf),
    w(
      5,
      fc.record({
        count: fc.oneof(
          w(3, fc.integer({ min: 1, max: 20 })),
          w(3, fc.integer({ min: 21, max: 500 })),
          w(1, fc.integer({ min: 501, max: 5000 })),
        ),
        body: inner({ loops: place.loops + 1 }),
      }).map(({ count, body }): GenStep => ({ k: "repeat", count, body })),
    ),
    w(
      place.loops > 0 ? 2 : 0,
      fc.integer({ min: 2, max: 10 }).chain((period) =>
        fc.record({
          offset: fc.integer({ min: 0, max: period - 1 }),
          body: inner({}),
        }).map(({ offset, body }): GenStep => ({ k: "every", period, offset, body }))
      ),
    ),
    w(
      3,
      fc.record({ frame: fc.constantFrom(...FRAMES), body: inner({}) }).map(
        ({ frame, body }): GenStep => ({ k: "call", frame, body }),
      ),
    ),
    w(2, inner({}).map((body): GenStep => ({ k: "attempt", body }))),
  );
}

const trigger: fc.Arbitrary<Trigger> = fc.oneof(
  w(4, fc.integer({ min: 1, max: 30 }).map((n): Trigger => ({ kind: "nth", n }))),
  w(
    3,
    fc.integer({ min: 2, max: 12 }).chain((period) =>
      fc.integer({ min: 1, max: period }).map((offset): Trigger => ({
        kind: "every",
        period,
        offset,
      }))
    ),
  ),
  w(1, fc.constant<Trigger>({ kind: "always" })),
);

/** Actions a callback may take; `name` names a profile a callback may start, `multi` says
 * whether other domains run (a callback's block is then dropped). */
function callbackEntries(
  profileName: string,
  restartRate: number,
  shape: Shape,
  stops: Stops,
): fc.Arbitrary<{ when: Trigger; action: CallbackAction }[]> {
  const simple: fc.Arbitrary<CallbackAction[]> = fc.oneof(
    // With external allocations, less often: a raise under memtrace's lock ends its tracing.
    w(
      shape === "external" ? 2 : 4,
      fc.constantFrom(...EXCEPTIONS).map((exn): CallbackAction[] => [{ kind: "raise", exn }]),
    ),
    w(
      4,
      fc.record({
        words: smallSize,
        lifetime: lifetime({
          keeps: shape !== "domains" && shape !== "worker" && shape !== "workerThreads",
          list: true,
        }),
      }).map((
        { words, lifetime },
      ): CallbackAction[] => [{ kind: "alloc", words, lifetime }]),
    ),
    w(
      shape === "worker" || shape === "workerThreads" ? 0 : 3,
      gcKind.map((what): CallbackAction[] => [{ kind: "gc", what }]),
    ),
    // The thread running the callback hands the baton to the other, and waits inside it. A
    // worker's ring names the main thread first: the worker's tracked blocks may outlive it,
    // and their callbacks then run on the main domain, where the ring has no other thread.
    w(
      shape === "threads" || shape === "workerThreads" ? 3 : 0,
      fc.constant<CallbackAction[]>([{
        kind: "yieldToNext",
        threads: shape === "threads" ? ["main", "t1"] : ["main", WORKER, WORKER_THREAD],
      }]),
    ),
  );
  // Gc.Memprof.stop with no profile running fails: a callback stops the profile only from an
  // allocation callback (they run while it samples), once (`nth`), and with no stop after it
  // unless it restarts one.
  const stopping: fc.Arbitrary<CallbackAction[]> = fc.oneof(
    w(stops === "may end" ? 1 : 0, fc.constant<CallbackAction[]>([{ kind: "stop" }])),
    w(
      stops === "may end" ? 4 : 0,
      fc.constant<CallbackAction[]>([{ kind: "stop" }, { kind: "discard" }]),
    ),
    w(
      1,
      fc.constant<CallbackAction[]>([
        { kind: "stop" },
        {
          kind: "start",
          profile: {
            name: `${profileName}r`,
            samplingRate: restartRate,
            callstackSize: 4,
            tracker: {},
          },
        },
      ]),
    ),
  );
  const nth = fc.integer({ min: 1, max: 30 }).map((n): Trigger => ({ kind: "nth", n }));
  const entry = fc.oneof(
    w(6, fc.record({ when: trigger, actions: simple })),
    w(
      stops === "none" ? 0 : stops === "may end" ? 2 : 1,
      fc.record({ when: nth, actions: stopping }),
    ),
  );
  return fc.array(entry, { maxLength: 2 }).map((es) =>
    es.flatMap(({ when, actions }) => actions.map((action) => ({ when, action })))
  );
}

/** What a scenario runs besides the main domain (`external`: nothing, and it makes external
 * allocations, so that no callback raises: memtrace's lock would fail the tracer). */
type Shape =
  | "plain"
  | "external"
  | "domains"
  | "threads"
  | "threadsDomains"
  | "worker"
  | "workerThreads";

/** Which stops a profile's allocation callbacks may make: none, a restart (stop, then start
 * another profile), or also a plain stop (the episode then has no stop step of its own). */
type Stops = "none" | "restart" | "may end";

function callback(
  profileName: string,
  restartRate: number,
  shape: Shape,
  stops: Stops,
): fc.Arbitrary<GenCallback> {
  return fc.record({
    result: fc.oneof(w(5, fc.constant<"track">("track")), w(1, fc.constant<"none">("none"))),
    actions: callbackEntries(profileName, restartRate, shape, stops),
  });
}

/** A profile; a callback restarting it starts `<name>r`, at one rate for every callback. */
function profile(name: string, shape: Shape, stops: Stops): fc.Arbitrary<GenProfile> {
  return fc.constantFrom(...RATES.slice(2)).chain((restartRate) =>
    profileWith(name, restartRate, shape, stops)
  );
}

function profileWith(
  name: string,
  restartRate: number,
  shape: Shape,
  stops: Stops,
): fc.Arbitrary<GenProfile> {
  // Only allocation callbacks stop: the others also run after the profile stopped.
  const alloc = fc.option(callback(name, restartRate, shape, stops), { freq: 2, nil: undefined });
  // Only allocation callbacks pass the systhreads' baton: they run while the profile samples,
  // so never while the main thread waits in its final join.
  const other = fc.option(
    callback(
      name,
      restartRate,
      shape === "threads" ? "plain" : shape === "workerThreads" ? "worker" : shape,
      "none",
    ),
    {
      freq: 2,
      nil: undefined,
    },
  );
  return fc.record({
    samplingRate: fc.constantFrom(...RATES),
    callstackSize: fc.oneof(w(3, fc.integer({ min: 0, max: 16 })), w(1, fc.constant(64))),
    allocMinor: alloc,
    allocMajor: alloc,
    promote: other,
    deallocMinor: other,
    deallocMajor: other,
  }).map((r): GenProfile => {
    const tracker: Record<string, GenCallback> = {};
    for (const k of CALLBACK_KINDS) if (r[k] !== undefined) tracker[k] = r[k];
    return { name, samplingRate: r.samplingRate, callstackSize: r.callstackSize, tracker };
  });
}

/**
 * A spawned domain's episode, while the main domain has no profile running (`Domain.spawn`
 * allocates in the parent after the child has started, so a sampled allocation there races
 * with the child's first callbacks): the worker may start a profile of its own, runs light
 * steps, may stop it, then ends (terminating with its profile running leaves its tracked
 * blocks to the main domain).
 */
function spawnStep(k: number, events: boolean, external: boolean): fc.Arbitrary<GenStep> {
  // Half the workers keep blocks (their promotions at shared collections are race points);
  // half of them run a systhread with a program of its own.
  const work = fc.boolean().chain((keeps) => {
    const place: Place = { loops: 0, keeps, worker: true, light: true, depth: 1, events, external };
    return fc.record({
      body: steps(place, 4),
      thread: fc.oneof(
        w(1, fc.constant(undefined)),
        w(1, fc.array(steps({ ...place, threads: true }, 3), { minLength: 1, maxLength: 3 })),
      ),
    });
  });
  return work.chain((work) =>
    fc.record({
      // A worker with a thread: its allocation callbacks may pass the domain's baton (not with
      // external allocations: the export refuses those under memtrace's lock).
      profile: fc.option(
        profile(
          `q${k}`,
          work.thread !== undefined && !external ? "workerThreads" : "worker",
          "none",
        ),
        { freq: 3, nil: undefined },
      ),
      stop: fc.constantFrom("stop", "discard", "running"),
      end: fc.constantFrom<"terminate" | "join">("terminate", "join"),
    }).map(({ profile, stop, end }): GenStep => {
      const passing = profile !== undefined && passesTheBaton(profile);
      // The worker's steps and its thread's parts fit the budget each on its own, so that none
      // of its thread's steps (creation, turns, join) is dropped. When callbacks pass the baton
      // too, the thread hands it back only by ending, and the worker gives it no turn but its
      // join (a turn could come after the thread ended).
      const all: GenStep[] = work.thread === undefined
        ? fitWords(work.body, WORKER_WORDS)
        : workerThread(
          fitWords(work.body, WORKER_WORDS / 2),
          work.thread.map((p) => fitWords(p, WORKER_WORDS / (2 * work.thread!.length))),
          { turns: !passing },
        );
      if (profile !== undefined) {
        all.unshift({ k: "start", profile });
        if (stop !== "running") all.push({ k: "stop" });
        if (stop === "discard") all.push({ k: "discard", profile: profile.name });
      }
      return { k: "spawn", name: `w${k}`, body: all, end };
    })
  );
}

/** Whether a callback of profile `p` passes the systhreads' baton. */
function passesTheBaton(p: GenProfile): boolean {
  return CALLBACK_KINDS.some((k) =>
    p.tracker[k]?.actions.some((a) => a.action.kind === "yieldToNext")
  );
}

/** The worker's own name and its systhread's, until {@linkcode nameWorkers} names them. */
const WORKER = "w";
const WORKER_THREAD = "wt";

/** A worker's steps `body` with a systhread of its own (created first) running `parts`, the
 * worker passing it the baton between its steps and the thread passing it back between its
 * parts, then joining it (a domain ends with its threads ended). */
function workerThread(
  body: readonly GenStep[],
  parts: readonly GenStep[][],
  { turns }: { readonly turns: boolean },
): GenStep[] {
  const program: GenStep[] = [];
  parts.forEach((p, i) => {
    if (i > 0 && turns) program.push({ k: "yieldTo", thread: WORKER });
    program.push(...p);
  });
  const out: GenStep[] = [{ k: "thread", name: WORKER_THREAD, body: program }];
  body.forEach((st, i) => {
    out.push(st);
    if (i < parts.length && turns) out.push({ k: "yieldTo", thread: WORKER_THREAD });
  });
  for (let i = body.length; turns && i < parts.length; i++) {
    out.push({ k: "yieldTo", thread: WORKER_THREAD });
  }
  out.push({ k: "joinThread", thread: WORKER_THREAD });
  return out;
}

/** What the main domain keeps before its first worker starts (see {@linkcode genProgram}). */
export const BALLAST: GenStep = {
  k: "alloc",
  size: 65_536,
  source: "major",
  lifetime: { kind: "forever" },
};

/** Most words a spawned domain allocates: less than the smallest minor heap, so that no
 * collection runs while it does (the main domain waits in a blocking section meanwhile, and the
 * major work done at such collections depends on timing: seen as real programs printing other
 * logs or collection counts from run to run). */
const WORKER_WORDS = 1000;

/** `steps` with their largest loop counts halved until they allocate at most `limit` words. */
function fitWords(steps: readonly GenStep[], limit: number): GenStep[] {
  let out = [...steps];
  for (let k = 0; k < 100 && programCost(out).words > limit; k++) {
    const top = largestCount(out);
    if (top <= 1) return out.filter((st) => programCost([st]).words <= limit / 4);
    out = halveCount(out, top);
  }
  return out;
}

/** A systhread with a program (created at the start), the main thread passing it the baton
 * `yields` times and joining it at the end. */
function threadSteps(
  name: string,
  events: boolean,
  external: boolean,
): fc.Arbitrary<GenStep[][]> {
  const place: Place = {
    loops: 0,
    keeps: true,
    worker: true,
    depth: 1,
    events,
    threads: true,
    external,
  };
  return fc.record({
    parts: fc.array(steps(place, 3), { minLength: 1, maxLength: 3 }),
  }).map(({ parts }) => {
    // The thread's program: its parts, passing the baton back to main between them.
    const body: GenStep[] = [];
    parts.forEach((p, i) => {
      if (i > 0) body.push({ k: "yieldTo", thread: "main" });
      body.push(...p);
    });
    return [
      [{ k: "thread", name, body }],
      parts.map((): GenStep => ({ k: "yieldTo", thread: name })),
    ];
  });
}

/** Options of {@linkcode genProgram}. */
export interface GenOptions {
  /** Relative weight of a scenario with spawned domains (default 1 in 5). */
  readonly domainsWeight?: number;
  /** Relative weight of a scenario with a systhread with a program (default 1 in 6). */
  readonly threadsWeight?: number;
}

/**
 * The arbitrary of whole programs: settings, then on the main domain a prologue, one to three
 * profile episodes (start, steps, stop, sometimes discard) with steps, spawned domains and
 * systhread turns among them, and an epilogue. Releases for every kept group close the program.
 */
export function genProgram(): fc.Arbitrary<GenProgram> {
  return fc.record({
    seed: fc.integer({ min: 1, max: 1_000_000 }),
    minorHeapWords: fc.constantFrom(...MINOR_HEAPS),
    shape: fc.oneof(
      w(11, fc.constant<"plain">("plain")),
      w(3, fc.constant<"external">("external")),
      w(4, fc.constant<"domains">("domains")),
      w(3, fc.constant<"threads">("threads")),
      w(2, fc.constant<"threadsDomains">("threadsDomains")),
    ),
    events: fc.oneof(w(4, fc.constant(false)), w(1, fc.constant(true))),
  }).chain(({ seed, minorHeapWords, shape, events }) =>
    // External allocations: always in the `external` shape; in 1 of 4 programs with spawned
    // domains (memtrace samples them on the main domain only: a worker's return at once).
    // Not with the threads shape's callbacks, which pass the systhreads' baton (refused).
    (shape === "domains" || shape === "threadsDomains"
      ? fc.oneof(w(3, fc.constant(false)), w(1, fc.constant(true)))
      : fc.constant(shape === "external")).map((external) => ({
        seed,
        minorHeapWords,
        shape,
        events,
        external,
      }))
  ).chain(({ seed, minorHeapWords, shape, events, external }) => {
    // A systhread with a program and, at the end, spawned domains (counted waits,
    // lib/scenario/engine/_domain_waits.ts); its callbacks are the domains' (no baton pass: a
    // worker takes its parent's profile).
    const withThread = shape === "threads" || shape === "threadsDomains";
    const multi = shape === "domains" || shape === "threadsDomains";
    const cbShape: Shape = shape === "threadsDomains" ? "domains" : shape;
    const place: Place = {
      loops: 0,
      keeps: true,
      worker: false,
      depth: 0,
      events,
      threads: withThread,
      external,
    };
    const top = steps(place, 4);
    // An episode: a profile started, steps, then (unless a callback may end it, in the last
    // episode) a poll running the callbacks still pending and the stop; spawned domains after.
    const episode = (k: number, last: boolean) =>
      fc.oneof(
        w(5, fc.constant(true)),
        w(last && (shape === "plain" || shape === "external") ? 2 : 0, fc.constant(false)),
      ).chain((stop) =>
        fc.record({
          profile: profile(`p${k}`, cbShape, stop ? "restart" : "may end"),
          body: fc.array(top, { minLength: 1, maxLength: 3 }),
          after: multi && stop
            ? fc.array(spawnStep(k, events, external), { minLength: 0, maxLength: 2 })
            : fc.constant([]),
          discard: fc.boolean(),
          stop: fc.constant(stop),
          // Its workers spawned while its profile still samples (the last episode's only).
          during: multi && stop
            ? fc.oneof(w(1, fc.constant(false)), w(1, fc.constant(true)))
            : fc.constant(false),
        })
      );
    return fc.record({
      prologue: fc.option(top, { freq: 2, nil: [] as GenStep[] }),
      episodes: fc.array(fc.nat(), { minLength: 1, maxLength: 3 }).chain((ks) =>
        fc.tuple(...ks.map((_, i) => episode(i + 1, i === ks.length - 1)))
      ),
      epilogue: fc.option(top, { freq: 2, nil: [] as GenStep[] }),
      thread: withThread ? threadSteps("t1", events, external) : fc.constant(undefined),
      pause: fc.boolean(),
    }).map(({ prologue, episodes, epilogue, thread, pause }): GenProgram => {
      const out: GenStep[] = [];
      const passing = episodes.some((e) => passesTheBaton(e.profile));
      // When callbacks pass the baton too, the thread's program hands it back only by ending
      // (a turn it gave back explicitly could come while the main thread waits in its join).
      if (thread !== undefined) {
        out.push(
          ...(passing
            ? thread[0].map((t): GenStep =>
              t.k === "thread" ? { ...t, body: t.body.filter((b) => b.k !== "yieldTo") } : t
            )
            : thread[0]),
        );
      }
      if (events) out.push({ k: "events", what: "start" });
      out.push(...prologue);
      // The main thread's turns to the systhread: none when callbacks pass the baton too (the
      // thread may then have ended before a turn; the join at the end runs what is left).
      const yields = passing ? [] : thread?.[1] ?? [];
      const workers: GenStep[] = [];
      // The last episode may keep its profile running until the end, its workers and any
      // earlier episode's spawned while it samples (the spawn and join race points). No
      // callback of the program then raises (the export refuses a spawn or a join while the
      // domain samples in a program whose callbacks may raise: a raise inside Domain.spawn or
      // Domain.join), and the workers take that profile: they start, stop or discard none.
      const last = episodes[episodes.length - 1];
      const sampling = last.during && episodes.some((e) => e.after.length > 0);
      let finalStop: GenStep[] = [];
      episodes.forEach((e, i) => {
        const deferred = sampling && i === episodes.length - 1;
        out.push({ k: "start", profile: sampling ? withoutRaises(e.profile) : e.profile });
        for (const part of e.body) {
          out.push(...part);
          // The thread's turns come between the parts.
          const y = yields.shift();
          if (y !== undefined) out.push(y);
        }
        const stop: GenStep[] = [];
        if (e.stop) {
          stop.push({ k: "poll" }, { k: "stop" });
          if (e.discard) stop.push({ k: "discard", profile: e.profile.name });
        }
        if (deferred) finalStop = stop;
        else out.push(...stop);
        workers.push(...e.after);
      });
      out.push(...yields.splice(0));
      if (events && pause) {
        out.push({ k: "events", what: "pause" });
        out.push({ k: "poll" });
        out.push({ k: "events", what: "resume" });
      }
      out.push(...epilogue);
      // Spawned domains come last, each after a Gc.full_major (no major work left to share):
      // in OCaml 5.3, what the main domain does after a worker ended still varied from run to
      // run (collection counts, samples) in 5 of 40 generated programs.
      // And a ballast first (docs/findings.md, 3): a worker's collections, its termination's
      // above all, are stop-the-world minor collections at whose barrier the waiting main domain
      // does opportunistic major work for as long as it waits. With little live data, that
      // finished the main domain's cycle in 7 of 30 real runs of rnd-18-385 (one minor
      // collection and one cycle more); with 65,536 words kept, in none of 40.
      if (workers.length > 0) out.push(BALLAST);
      for (const sp of workers) {
        out.push({ k: "gc", what: "fullMajor" }, sampling ? withoutProfileSteps(sp) : sp);
      }
      out.push(...finalStop);
      if (thread !== undefined) out.push({ k: "joinThread", thread: "t1" });
      return fitBudget({ seed, minorHeapWords, steps: closeReleases(nameWorkers(out)) });
    });
  });
}

/** Spawn step `sp` with its worker's own profile steps (start, stop, discard) dropped: it takes
 * the profile running when it is spawned. */
function withoutProfileSteps(sp: GenStep): GenStep {
  if (sp.k !== "spawn") return sp;
  const body = sp.body.filter((b) => b.k !== "start" && b.k !== "stop" && b.k !== "discard");
  return { ...sp, body };
}

/** `p` with no callback that raises: its `raise` actions dropped, in the profiles its callbacks
 * start too. */
function withoutRaises<P extends { readonly tracker: GenTracker }>(p: P): P {
  const tracker: Record<string, GenCallback> = {};
  for (const k of CALLBACK_KINDS) {
    const c = p.tracker[k];
    if (c === undefined) continue;
    const actions = c.actions.flatMap((a) =>
      a.action.kind === "raise"
        ? []
        : a.action.kind === "start"
        ? [{ ...a, action: { ...a.action, profile: withoutRaises(a.action.profile) } }]
        : [a]
    );
    tracker[k] = { ...c, actions };
  }
  return { ...p, tracker };
}

/** `steps` with its spawned domains named `w1`, `w2`, … in order (names are unique), and a
 * worker's systhread `w1t`, …. */
export function nameWorkers(steps: readonly GenStep[]): GenStep[] {
  let n = 0;
  return steps.map((st) => {
    if (st.k !== "spawn") return st;
    const q = `q${++n}`;
    const names = new Map([[WORKER, `w${n}`], [WORKER_THREAD, `w${n}t`]]);
    const body = st.body.map((b): GenStep =>
      b.k === "start"
        ? { ...b, profile: renameProfile(b.profile, q, names) }
        : b.k === "discard"
        ? { ...b, profile: q }
        : renameThreads(b, names)
    );
    return { ...st, name: `w${n}`, body };
  });
}

/** Step `st` with the threads it names (a worker's own and its systhread) renamed. */
function renameThreads(st: GenStep, names: ReadonlyMap<string, string>): GenStep {
  switch (st.k) {
    case "thread":
      return {
        ...st,
        name: names.get(st.name) ?? st.name,
        body: st.body.map((b) => renameThreads(b, names)),
      };
    case "yieldTo":
    case "joinThread":
      return { ...st, thread: names.get(st.thread) ?? st.thread };
    default:
      return st;
  }
}

/** `p` named `name`, the profile its callbacks restart named `<name>r`. */
function renameProfile(
  p: GenProfile,
  name: string,
  threads: ReadonlyMap<string, string> = new Map(),
): GenProfile {
  const tracker: Record<string, GenCallback> = {};
  for (const k of CALLBACK_KINDS) {
    const c = p.tracker[k];
    if (c === undefined) continue;
    tracker[k] = {
      ...c,
      actions: c.actions.map((e) =>
        e.action.kind === "start"
          ? { ...e, action: { ...e.action, profile: { ...e.action.profile, name: `${name}r` } } }
          : e.action.kind === "yieldToNext"
          ? {
            ...e,
            action: { ...e.action, threads: e.action.threads.map((t) => threads.get(t) ?? t) },
          }
          : e
      ),
    };
  }
  return { ...p, name, tracker };
}

/** `steps` followed by a release of every kept group that has none after its last use. */
export function closeReleases(steps: readonly GenStep[]): GenStep[] {
  const pending = new Set<string>();
  const walk = (list: readonly GenStep[]): void => {
    for (const st of list) {
      if (st.k === "release") pending.delete(st.name);
      for (const l of lifetimesOf(st)) lifetimeNames(l, pending);
      if ("body" in st) walk(st.body);
    }
  };
  walk(steps);
  return [...steps, ...[...pending].sort().map((name): GenStep => ({ k: "release", name }))];
}

function lifetimesOf(st: GenStep): readonly Lifetime[] {
  switch (st.k) {
    case "alloc":
    case "unmarshal":
    case "ext":
      return [st.lifetime];
    case "combined":
      return st.lifetimes;
    case "start": {
      const out: Lifetime[] = [];
      for (const k of CALLBACK_KINDS) {
        for (const { action } of st.profile.tracker[k]?.actions ?? []) {
          if (action.kind === "alloc") out.push(action.lifetime);
        }
      }
      return out;
    }
    default:
      return [];
  }
}

function lifetimeNames(l: Lifetime, into: Set<string>): void {
  switch (l.kind) {
    case "until":
    case "list":
      into.add(l.name);
      break;
    case "steps":
      if (l.until !== undefined) into.add(l.until);
      break;
    case "cycle":
      for (const x of l.lifetimes) lifetimeNames(x, into);
      break;
  }
}

/** Whether `p` stays within the budgets (words, allocations, expected samples) that keep a
 * generated scenario to seconds. */
export function withinBudget(p: GenProgram): boolean {
  const { words, allocs, gcUnits, callbackGcUnits, leaves } = programCost(p.steps);
  return words <= MAX_WORDS && allocs <= MAX_EXECUTED_ALLOCS && gcUnits <= MAX_GC_UNITS &&
    callbackGcUnits <= MAX_CALLBACK_GC_UNITS && leaves <= MAX_EXECUTED_STEPS &&
    words * highestRate(p.steps) <= MAX_EXPECTED_SAMPLES;
}

/**
 * `p` brought within the budgets: the largest loop count halved until the words,
 * allocations, collections and steps fit, then every sampling rate lowered to the highest of {@linkcode RATES} whose
 * expected samples fit. (Applied after generation and after every shrink, so that a shrunk
 * program is fitted the same way.)
 */
export function fitBudget(p: GenProgram): GenProgram {
  let steps = p.steps;
  for (let k = 0; k < 200; k++) {
    const { words, allocs, gcUnits, callbackGcUnits, leaves } = programCost(steps);
    if (
      words <= MAX_WORDS && allocs <= MAX_EXECUTED_ALLOCS && gcUnits <= MAX_GC_UNITS &&
      callbackGcUnits <= MAX_CALLBACK_GC_UNITS && leaves <= MAX_EXECUTED_STEPS
    ) break;
    const top = largestCount(steps);
    if (top <= 1) break;
    steps = halveCount(steps, top);
  }
  const { words } = programCost(steps);
  const limit = RATES.find((r) => words * r <= MAX_EXPECTED_SAMPLES) ?? RATES[RATES.length - 1];
  if (highestRate(steps) > limit) steps = capRates(steps, limit);
  return { ...p, steps };
}

function largestCount(steps: readonly GenStep[]): number {
  let top = 0;
  for (const st of steps) {
    if (st.k === "repeat") top = Math.max(top, st.count);
    if ("body" in st) top = Math.max(top, largestCount(st.body));
  }
  return top;
}

/** `steps` with the first loop counting `count` halved. */
function halveCount(steps: readonly GenStep[], count: number): GenStep[] {
  let done = false;
  const walk = (list: readonly GenStep[]): GenStep[] =>
    list.map((st) => {
      if (done) return st;
      if (st.k === "repeat" && st.count === count) {
        done = true;
        return { ...st, count: Math.ceil(count / 2) };
      }
      return "body" in st ? { ...st, body: walk(st.body) } as GenStep : st;
    });
  return walk(steps);
}

function capRates(steps: readonly GenStep[], limit: number): GenStep[] {
  const cap = (p: GenProfile): GenProfile => ({
    ...p,
    samplingRate: Math.min(p.samplingRate, limit),
    tracker: Object.fromEntries(
      Object.entries(p.tracker).map(([k, c]) => [k, {
        ...c,
        actions: c.actions.map((e: GenCallback["actions"][number]) =>
          e.action.kind === "start"
            ? { ...e, action: { ...e.action, profile: cap(e.action.profile as GenProfile) } }
            : e
        ),
      }]),
    ),
  });
  return steps.map((st) =>
    st.k === "start"
      ? { ...st, profile: cap(st.profile) }
      : "body" in st
      ? { ...st, body: capRates(st.body, limit) } as GenStep
      : st
  );
}
