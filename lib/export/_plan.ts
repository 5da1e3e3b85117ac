/**
 * The shape of an exported program, decided before any code is written: which domain runs which
 * top-level steps (segments), the profiles' slots, the exceptions callbacks raise, the systhreads
 * with programs; and the rules both the refusals (exportable.ts) and the emission follow: the
 * sizes a drawn size can take, the slots a keep statement needs, which blocks can be linked.
 * Planning reports what it cannot plan to a `refuse` function and goes on.
 * @module
 */
import type {
  Lifetime,
  ProfileSpec,
  Scenario,
  SizeSpec,
  Step,
  TrackerSpec,
} from "../scenario/spec.ts";
import {
  findStep,
  forEachStep,
  hasBody,
  someAction,
  usesThreadPrograms,
} from "../scenario/walk.ts";
import { MAX_YOUNG_WOSIZE } from "../runtime/mod.ts";

/** Callback kinds, in the order of a tracker's fields, with the number the log gives them. */
export const KIND_INDEX = {
  allocMinor: 0,
  allocMajor: 1,
  promote: 2,
  deallocMinor: 3,
  deallocMajor: 4,
} as const;
/** A callback kind of a tracker. */
export type CallbackKindName = keyof typeof KIND_INDEX;
/** The callback kinds in a tracker's field order. */
export const CALLBACK_KINDS = Object.keys(KIND_INDEX) as CallbackKindName[];

/** Frames recorded per allocation callback, at most. */
export const MAX_FRAMES_RECORDED = 1024;

/** Sites whose capacity would exceed this many slots are refused (memory of the program). */
export const MAX_SITE_CAPACITY = 50_000_000;

/** Why a domain does not spawn another while its profile samples and a callback may raise. */
export const SPAWN_RAISE =
  "a callback raising inside Domain.spawn (its allocations run the parent's " +
  "callbacks) would make it fail before or after the new domain started, which the exported " +
  "program cannot follow";

/** Why a domain is not joined while the joining domain samples and a callback may raise. */
export const JOIN_RAISE =
  "a callback raising at Domain.join's allocation (which runs the joining domain's " +
  "pending callbacks) aborts the join, and the exported program joins again, allocating once " +
  "more, which the simulation does not follow";

/** Where code is generated (or checked): on which domain, how deep in loops, inside what. */
export interface Ctx {
  /** The scenario's number of the domain running the code. */
  readonly ord: number;
  /** Loops enclosing the code on that domain. */
  readonly depth: number;
  /** Inside an `attempt`: exceptions propagate to it instead of being logged per step. */
  readonly inAttempt: boolean;
  /** Inside a tracker callback. */
  readonly inCallback: boolean;
  /** The most times the code can run (product of enclosing loop counts). */
  readonly bound: number;
  /** The systhread running the code (0: the main thread; k: the k-th with a program). */
  readonly thread: number;
  /** Step position, for errors. */
  readonly at: string;
  /** The step (or callback action) whose code this is: what its keep sites are recorded
   * under (`ExportedProgram.keepSites`' `owner`). */
  readonly owner?: object;
}

/** The top-level steps one domain runs in one turn. */
export interface Segment {
  /** The domain's number. */
  readonly ord: number;
  /** Its steps. */
  readonly steps: Step[];
  /** Domains whose termination this segment's domain waits for before it starts. */
  joins: number[];
  /** The segment ends with its domain's termination. */
  terminates: boolean;
}

/** A systhread with a program of its own (`d.thread(name, body)`). */
export type ThreadSpawnStep = Extract<Step, { kind: "threadSpawn" }>;

/** The program's shape (see the module doc). */
export interface ExportPlan {
  /** Domain number by name (the order of `sc.domains`). */
  readonly domainOrd: ReadonlyMap<string, number>;
  /** Systhreads with programs (thread k is `threadSteps[k - 1]`): the main domain's, which the
   * program's initialisation creates, then the spawned domains', which their domain creates
   * at their `thread` step; each in the order of the steps. */
  readonly threadSteps: readonly ThreadSpawnStep[];
  /** How many of `threadSteps` are the main domain's. */
  readonly initThreads: number;
  /** Thread number by name: "main" is 0, the threads with programs 1 to `threadSteps.length`,
   * then the main threads of the spawned domains that have threads with programs (named after
   * their domain), which pass their domain's baton. */
  readonly threadIndex: ReadonlyMap<string, number>;
  /** The spawned domains whose main threads have a thread number, in that order. */
  readonly batonDomains: readonly string[];
  /** Whether the program links the threads library. */
  readonly threadsLibrary: boolean;
  /** Whether each wait of a domain is one blocking section (the threads library and several
   * domains: lib/scenario/engine/_domain_waits.ts). */
  readonly countedWaits: boolean;
  /** The domain that spawns each domain (by number; the main domain's is 0). */
  readonly parentOrd: readonly number[];
  /** Profiles by slot. */
  readonly profiles: readonly ProfileSpec[];
  /** Slot by profile name. */
  readonly profileSlot: ReadonlyMap<string, number>;
  /** Position of the step that starts each profile (directly or through its callbacks). */
  readonly profileAt: readonly string[];
  /** Exceptions callbacks raise, numbered in order of appearance. */
  readonly exceptions: readonly string[];
  /** Whether a callback can raise. */
  readonly canRaise: boolean;
  /** Which domain runs which top-level steps. */
  readonly segments: readonly Segment[];
  /** Domains ended by a `join`: their function waits for the joiner to release it. */
  readonly joined: ReadonlySet<number>;
  /** Domains alive when the scenario ends. */
  readonly aliveAtEnd: readonly number[];
  /** Frames recorded per allocation callback. */
  readonly maxFrames: number;
  /** Whether the scenario makes external allocations (the program emulates memtrace's
   * `External`: lib/export/_emit_external.ts). */
  readonly external: boolean;
}

/** The thread number of domain `domain`'s main thread: its own if the domain has threads with
 * programs (it passes their baton), else the main thread's, 0 (it never passes one). */
export function domainThread(plan: ExportPlan, domain: string): number {
  return plan.threadIndex.get(domain) ?? 0;
}

/** Kinds of refusal (see exportable.ts, `ExportRefusal`). */
export type RefusalKind =
  | "unnamedProfile"
  | "profileRedefined"
  | "spawnWhileSampling"
  | "joinWhileSampling"
  | "domainStepNested"
  | "foreignDomainStep"
  | "mainTerminates"
  | "olderThreads"
  | "olderThreadsInCallback"
  | "unknownThread"
  | "unknownProfile"
  | "externalAlloc"
  | "customUserEvent"
  | "userEventName"
  | "userEventTypes"
  | "smallMajorAlloc"
  | "customBlockSize"
  | "variableSize"
  | "unboundedGeometric"
  | "combinedFrames"
  | "unlinkable"
  | "siteCapacity"
  | "callstackSize"
  | "programSize";

/** Receives a refusal: its kind, the step's position (or `settings`), and why. */
export type Refuse = (kind: RefusalKind, at: string, reason: string) => void;

/** Plans the program of `sc`, reporting to `refuse` what has no OCaml form in its structure
 * (systhreads and domains combined, profiles, domains' spawns, joins and terminations). */
export function planProgram(sc: Scenario, refuse: Refuse): ExportPlan {
  const domainOrd = new Map<string, number>();
  sc.domains.forEach((d, i) => domainOrd.set(d, i));
  const spawns = sc.steps.filter((st): st is ThreadSpawnStep => st.kind === "threadSpawn");
  const threadSteps = [
    ...spawns.filter((st) => st.domain === "main"),
    ...spawns.filter((st) => st.domain !== "main"),
  ];
  const threadIndex = new Map<string, number>([["main", 0]]);
  threadSteps.forEach((st, k) => threadIndex.set(st.thread, k + 1));
  const batonDomains = [...new Set(threadSteps.map((st) => st.domain))].filter((d) => d !== "main");
  batonDomains.forEach((d, k) => threadIndex.set(d, threadSteps.length + 1 + k));
  const threadsLibrary = threadSteps.length > 0 || usesThreadPrograms(sc);
  const profiles = collectProfiles(sc, refuse);
  const canRaise = profiles.specs.some((p) => someAction(p.tracker, (a) => a.kind === "raise"));
  const joined = new Set<number>();
  const segments = planSegments(sc, domainOrd, joined, refuse, { canRaise });
  const dead = new Set<number>();
  for (const st of sc.steps) {
    if (st.kind === "terminate") dead.add(domainOrd.get(st.domain)!);
    if (st.kind === "join") dead.add(domainOrd.get(st.target)!);
  }
  const parentOrd = sc.domains.map(() => 0);
  for (const st of sc.steps) {
    if (st.kind === "spawn") parentOrd[domainOrd.get(st.child)!] = domainOrd.get(st.domain)!;
  }
  return {
    domainOrd,
    threadSteps,
    initThreads: threadSteps.filter((st) => st.domain === "main").length,
    threadIndex,
    batonDomains,
    threadsLibrary,
    countedWaits: threadsLibrary && sc.domains.length > 1,
    parentOrd,
    profiles: profiles.specs,
    profileSlot: profiles.slot,
    profileAt: profiles.at,
    exceptions: profiles.exceptions,
    canRaise,
    segments,
    joined,
    aliveAtEnd: sc.domains.map((_, i) => i).filter((i) => !dead.has(i)),
    maxFrames: Math.max(0, ...profiles.specs.map((p) => p.callstackSize)),
    external: findStep(sc.steps, (st) => st.kind === "extAlloc") !== undefined,
  };
}

/** The profiles a scenario starts, numbered as {@linkcode profileSlots} numbers them, and the
 * exceptions their callbacks raise. */
function collectProfiles(sc: Scenario, refuse: Refuse) {
  const slot = new Map<string, number>();
  const specs: ProfileSpec[] = [];
  const at: string[] = [];
  const exceptions: string[] = [];
  const add = (p: ProfileSpec, where: string): void => {
    if (p.name === undefined) {
      refuse(
        "unnamedProfile",
        where,
        "a profile started by a callback needs a name (act.start({ name, … }))",
      );
      return;
    }
    const known = slot.get(p.name);
    if (known !== undefined) {
      if (JSON.stringify(specs[known]) !== JSON.stringify(p)) {
        refuse(
          "profileRedefined",
          where,
          `profile "${p.name}" is started with two different specifications`,
        );
      }
      return;
    }
    slot.set(p.name, specs.length);
    specs.push(p);
    at.push(where);
    forEachAction(p.tracker, (action) => {
      if (action.kind === "start") add(action.profile, where);
      if (action.kind === "raise" && !exceptions.includes(action.exn)) {
        exceptions.push(action.exn);
      }
    });
  };
  forEachStep(sc.steps, true, (st) => {
    if (st.kind === "memprofStart") add(st.profile, st.at);
    return true;
  });
  return { slot, specs, at, exceptions };
}

/** Calls `f` on each action of `tracker`, in the order of its callbacks and their actions. */
export function forEachAction(
  tracker: TrackerSpec,
  f: (action: TrackerAction, kind: CallbackKindName) => void,
): void {
  for (const k of CALLBACK_KINDS) {
    for (const { action } of tracker[k]?.actions ?? []) f(action, k);
  }
}

/** An action of a tracker's callback. */
export type TrackerAction = NonNullable<TrackerSpec["allocMinor"]>["actions"][number]["action"];

function planSegments(
  sc: Scenario,
  domainOrd: ReadonlyMap<string, number>,
  joined: Set<number>,
  refuse: Refuse,
  { canRaise }: { readonly canRaise: boolean },
): Segment[] {
  const segs: Segment[] = [];
  let cur: Segment | undefined;
  let pendingJoins: number[] = [];
  // Domains whose profile samples (a top-level start not yet stopped; a spawned domain takes
  // its parent's): Domain.spawn's and Domain.join's allocations there may run callbacks that
  // raise.
  const sampling = new Set<string>();
  const steps = sc.steps;
  for (const [k, st] of steps.entries()) {
    const domain = "domain" in st ? st.domain : undefined;
    if (st.kind === "memprofStart") sampling.add(st.domain);
    if (st.kind === "memprofStop") sampling.delete(st.domain);
    // Where the joining domain is when the joined one ends is the `join` race point, which the
    // simulation models (RacePoint); a `terminate` is joined by the next segment's domain.
    const joiner = st.kind === "join"
      ? st.domain
      : st.kind === "terminate"
      ? (steps.slice(k + 1).find((n) => "domain" in n && n.domain !== st.domain) as
        | { domain: string }
        | undefined)?.domain ?? "main"
      : undefined;
    if (st.kind === "spawn" && sampling.has(st.domain) && canRaise) {
      refuse(
        "spawnWhileSampling",
        st.at,
        `Domain.spawn while domain "${st.domain}" samples: ${SPAWN_RAISE}`,
      );
    }
    if (joiner !== undefined && sampling.has(joiner) && canRaise) {
      refuse(
        "joinWhileSampling",
        st.at,
        `Domain.join while domain "${joiner}" samples: ${JOIN_RAISE}`,
      );
    }
    if (st.kind === "spawn" && sampling.has(st.domain)) sampling.add(st.child);
    // Steps of no domain (release, runtime_events control) run on the current domain, or on
    // the main domain after a termination.
    const ord = domain !== undefined
      ? domainOrd.get(domain)!
      : cur !== undefined && !cur.terminates
      ? cur.ord
      : 0;
    if (cur === undefined || cur.ord !== ord || cur.terminates) {
      cur = { ord, steps: [], joins: pendingJoins, terminates: false };
      pendingJoins = [];
      segs.push(cur);
    }
    checkNesting(st, domain, refuse);
    cur.steps.push(st);
    if (st.kind === "terminate" || st.kind === "join") {
      const ending = st.kind === "join" ? domainOrd.get(st.target)! : ord;
      if (ending === 0) refuse("mainTerminates", st.at, "the main domain cannot terminate");
      if (st.kind === "join") joined.add(ending);
      if (st.kind === "terminate") {
        cur.terminates = true;
        pendingJoins.push(ord);
      }
    }
  }
  return segs;
}

/** Compound steps run on one domain only; spawn and terminate stay at the top level. */
function checkNesting(st: Step, domain: string | undefined, refuse: Refuse): void {
  if (!hasBody(st)) return;
  forEachStep(st.body, true, (inner) => {
    if (inner.kind === "spawn" || inner.kind === "terminate" || inner.kind === "join") {
      refuse(
        "domainStepNested",
        inner.at,
        `${inner.kind} inside a ${st.kind}: domains are spawned and terminated only at the ` +
          "top level of an exported scenario (each domain's steps run in one OCaml function)",
      );
    }
    if ("domain" in inner && inner.domain !== domain) {
      refuse(
        "foreignDomainStep",
        inner.at,
        `a step of domain "${inner.domain}" inside a ${st.kind} of domain "${domain}": ` +
          "an exported compound step holds the steps of its own domain only",
      );
    }
    return true;
  });
}

/** The sizes a drawn size can take, as the program's `match` lists them (at most 257 of a
 * range: one past {@linkcode MAX_YOUNG_WOSIZE} stands for the larger ones); undefined for a
 * geometric size without a maximum, which has no such list. */
export function drawnSizes(s: SizeSpec): number[] | undefined {
  if (typeof s === "number") return [s];
  if ("uniform" in s) {
    const [a, b] = s.uniform;
    return range(a, Math.min(b, MAX_YOUNG_WOSIZE + 1));
  }
  if ("choice" in s) return [...new Set(s.choice)];
  const { max } = s.geometric;
  if (max === undefined) return undefined;
  return range(1, Math.min(max, MAX_YOUNG_WOSIZE + 1));
}

function range(a: number, b: number): number[] {
  const out: number[] = [];
  for (let i = a; i <= b; i++) out.push(i);
  return out;
}

/** A lifetime kept in a site of its own (every kind but `drop` and `cycle`). */
export type SiteLifetime = Exclude<Lifetime, { kind: "drop" } | { kind: "cycle" }>;

/** Slots the keep site of lifetime `l` needs where `ctx` runs it: in a callback, where how many
 * blocks are alive at once cannot be bounded from the scenario alone, `callbackKeepCapacity`. */
export function keepCapacity(l: SiteLifetime, ctx: Ctx, callbackKeepCapacity: number): number {
  switch (l.kind) {
    case "forever":
    case "until":
      return ctx.inCallback ? callbackKeepCapacity : ctx.bound;
    case "steps":
      return ctx.inCallback ? callbackKeepCapacity : l.steps + 1;
    case "ring":
      return l.slots;
    case "list":
      return 1;
  }
}

/** The largest of `values` (-Infinity for none), without spreading them as arguments: a size
 * choice of a scenario made by hand can be longer than a call's arguments may be. */
export function largest(values: readonly number[]): number {
  let m = -Infinity;
  for (const v of values) if (v > m) m = v;
  return m;
}

/** The smallest of `values` (Infinity for none); see {@linkcode largest}. */
export function smallest(values: readonly number[]): number {
  let m = Infinity;
  for (const v of values) if (v < m) m = v;
  return m;
}

/** Whether an allocation step's block can be linked by `keep.list` (a young block allocated by
 * OCaml code or `Array.make`, whose first field may hold a pointer), given its sizes. */
export function allocLinkable(
  st: Extract<Step, { kind: "alloc" }>,
  sizes: readonly number[],
): boolean {
  switch (st.source) {
    case "caml":
      return largest(sizes) <= MAX_YOUNG_WOSIZE;
    case "array":
      return largest(sizes) <= MAX_YOUNG_WOSIZE;
    default:
      return false;
  }
}

/** Whether a tracker's callbacks pass the systhreads' baton (`act.yieldTo`, `act.yieldToNext`). */
export function passesBaton(tracker: TrackerSpec): boolean {
  return someAction(tracker, (a) => a.kind === "yieldTo" || a.kind === "yieldToNext");
}
