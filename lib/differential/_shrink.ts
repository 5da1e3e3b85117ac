/**
 * Structural shrinking of a generated program: candidates that remove a step, put a compound
 * step's body in its place, run a loop fewer times, or simplify an allocation or a profile,
 * largest first. random.ts tries them greedily after fast-check's own shrinking, which cannot
 * take a step out of the middle of a program built with `chain`.
 * @module
 */
import {
  CALLBACK_KINDS,
  closeReleases,
  type GenCallback,
  type GenProfile,
  type GenProgram,
  type GenStep,
  maxSize,
} from "./_gen_program.ts";

/** A path to a step: indices into nested bodies. */
type Path = readonly number[];

function stepAt(steps: readonly GenStep[], path: Path): GenStep {
  let list = steps;
  let st: GenStep | undefined;
  for (const i of path) {
    st = list[i];
    list = "body" in st ? st.body : [];
  }
  return st!;
}

/** `steps` with the step at `path` replaced by `by` (any number of steps). */
function replaceAt(steps: readonly GenStep[], path: Path, by: readonly GenStep[]): GenStep[] {
  const [i, ...rest] = path;
  if (rest.length === 0) return [...steps.slice(0, i), ...by, ...steps.slice(i + 1)];
  const st = steps[i] as GenStep & { body: readonly GenStep[] };
  return [
    ...steps.slice(0, i),
    { ...st, body: replaceAt(st.body, rest, by) } as GenStep,
    ...steps.slice(i + 1),
  ];
}

/** Paths of every step, each before the steps it holds. */
function paths(steps: readonly GenStep[], prefix: Path = []): Path[] {
  const out: Path[] = [];
  steps.forEach((st, i) => {
    const p = [...prefix, i];
    out.push(p);
    if ("body" in st) out.push(...paths(st.body, p));
  });
  return out;
}

/** Steps under a step, itself included. */
function size(st: GenStep): number {
  return 1 + ("body" in st ? st.body.reduce((n, b) => n + size(b), 0) : 0);
}

/** Smaller programs than `p`, the ones removing most first. */
export function* shrinkCandidates(p: GenProgram): Generator<GenProgram> {
  const all = paths(p.steps);
  const bySize = [...all].sort((a, b) => size(stepAt(p.steps, b)) - size(stepAt(p.steps, a)));
  const make = (steps: GenStep[]): GenProgram => ({ ...p, steps: closeReleases(steps) });
  // Remove a step (with everything it holds).
  for (const path of bySize) yield make(replaceAt(p.steps, path, []));
  // A compound step's body in its place.
  for (const path of bySize) {
    const st = stepAt(p.steps, path);
    // (A loop's body goes in its place only if no `every` in it counts its iterations.)
    if (
      st.k === "call" || st.k === "attempt" || st.k === "every" ||
      (st.k === "repeat" && !countsIterations(st.body))
    ) {
      yield make(replaceAt(p.steps, path, st.body));
    }
  }
  // Fewer iterations.
  for (const path of all) {
    const st = stepAt(p.steps, path);
    if (st.k === "repeat" && st.count > 1) {
      yield make(replaceAt(p.steps, path, [{ ...st, count: 1 }]));
      if (st.count > 2) {
        yield make(replaceAt(p.steps, path, [{ ...st, count: Math.ceil(st.count / 2) }]));
      }
      if (st.count > 3) {
        yield make(replaceAt(p.steps, path, [{ ...st, count: st.count - 1 }]));
      }
    }
  }
  // Simpler steps.
  for (const path of all) {
    for (const simpler of simplerSteps(stepAt(p.steps, path))) {
      yield make(replaceAt(p.steps, path, [simpler]));
    }
  }
  if (p.minorHeapWords !== 262_144) yield { ...p, minorHeapWords: 262_144 };
}

function simplerSteps(st: GenStep): GenStep[] {
  const out: GenStep[] = [];
  switch (st.k) {
    case "alloc":
      if (typeof st.size !== "number") {
        const s = st.size;
        const top = "uniform" in s ? s.uniform[1] : "choice" in s ? Math.max(...s.choice) : 1;
        out.push({ ...st, size: top });
      }
      if (st.lifetime.kind !== "drop") out.push({ ...st, lifetime: { kind: "drop" } });
      if (st.at !== undefined) out.push(withoutAt(st));
      break;
    case "combined":
      if (st.sizes.length > 1) {
        out.push({ ...st, sizes: st.sizes.slice(1), lifetimes: st.lifetimes.slice(1) });
      }
      if (st.lifetimes.some((l) => l.kind !== "drop")) {
        out.push({ ...st, lifetimes: st.lifetimes.map(() => ({ kind: "drop" })) });
      }
      if (st.at !== undefined) out.push(withoutAt(st));
      break;
    case "unmarshal":
      if (st.blocks.length > 1) out.push({ ...st, blocks: st.blocks.slice(0, 1) });
      if (st.lifetime.kind !== "drop") out.push({ ...st, lifetime: { kind: "drop" } });
      break;
    case "ext":
      if (typeof st.bytes !== "number") out.push({ ...st, bytes: maxSize(st.bytes) });
      if (st.lifetime.kind !== "drop") out.push({ ...st, lifetime: { kind: "drop" } });
      break;
    case "start":
      for (const profile of simplerProfiles(st.profile)) out.push({ ...st, profile });
      break;
    case "spawn":
      if (st.end === "join") out.push({ ...st, end: "terminate" });
      break;
  }
  return out;
}

function withoutAt<T extends GenStep & { at?: string }>(st: T): T {
  const { at: _, ...rest } = st;
  return rest as T;
}

function simplerProfiles(p: GenProfile): GenProfile[] {
  const out: GenProfile[] = [];
  for (const k of CALLBACK_KINDS) {
    const c = p.tracker[k];
    if (c === undefined) continue;
    const { [k]: _, ...rest } = p.tracker;
    out.push({ ...p, tracker: rest });
    c.actions.forEach((_, i) => {
      const actions = c.actions.filter((_, j) => j !== i);
      out.push({ ...p, tracker: { ...p.tracker, [k]: { ...c, actions } as GenCallback } });
    });
    if (c.result === "none") {
      out.push({ ...p, tracker: { ...p.tracker, [k]: { ...c, result: "track" } } });
    }
  }
  if (p.callstackSize > 0) out.push({ ...p, callstackSize: 0 });
  return out;
}

/** Whether an `every` in `body`, outside loops nested in it, uses the enclosing loop. */
function countsIterations(body: readonly GenStep[]): boolean {
  return body.some((b) =>
    b.k === "every" || (b.k !== "repeat" && "body" in b && countsIterations(b.body))
  );
}

/** Steps of a program as written (bodies included). */
export function programSteps(p: GenProgram): number {
  return p.steps.reduce((n, st) => n + size(st), 0);
}
