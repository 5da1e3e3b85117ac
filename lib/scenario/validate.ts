/**
 * Checks a scenario before it runs, so that a mistake is reported with the scenario's name, the
 * step and the problem instead of surfacing half-way through a run.
 *
 * Parameter checks are complete. State checks (memprof started/stopped, domains alive, threads)
 * follow the steps in order, running each `repeat` body twice when it repeats; when callbacks
 * themselves start, stop or discard profiles, the memprof state checks are left to run time
 * (the engine reports those failures with the step too).
 * @module
 */
import { ScenarioError } from "./errors.ts";
import type {
  CallbackAction,
  Lifetime,
  ProfileSpec,
  Scenario,
  SizeSpec,
  Step,
  TrackerSpec,
} from "./spec.ts";

import { maxSize } from "./polling.ts";
import { MAX_YOUNG_WOSIZE } from "../runtime/mod.ts";

/** Throws {@linkcode ScenarioError} for the first problem found. */
export function validateScenario(sc: Scenario): void {
  new Validator(sc).run();
}

class Validator {
  private readonly name: string;
  private readonly untilNames = new Set<string>();
  private readonly releaseNames = new Set<string>();
  private profileActions = false;
  // State followed along the steps.
  private readonly alive = new Set<string>(["main"]);
  private readonly threadAlive = new Map<string, boolean>();
  private readonly running = new Map<string, string | null>(); // domain → sampling profile
  private readonly status = new Map<string, "sampling" | "stopped" | "discarded">();
  private spawned = 1;

  constructor(private readonly sc: Scenario) {
    this.name = sc.settings.name;
  }

  private fail(at: string, problem: string): never {
    throw new ScenarioError(this.name, at, problem);
  }

  run(): void {
    this.settings();
    this.scan(this.sc.steps);
    this.loopRefs(this.sc.steps, new Map());
    for (const n of this.untilNames) {
      if (!this.releaseNames.has(n)) {
        this.fail("settings", `blocks are kept until "${n}" but nothing releases "${n}"`);
      }
    }
    this.threadAlive.set("main", true);
    this.running.set("main", null);
    this.follow(this.sc.steps);
  }

  private settings(): void {
    const s = this.sc.settings;
    const int = (v: number, what: string, min: number, max = Number.MAX_SAFE_INTEGER) => {
      if (!Number.isInteger(v) || v < min || v > max) {
        this.fail("settings", `${what} must be an integer in [${min}, ${max}], got ${v}`);
      }
    };
    int(s.seed, "seed", 0, 2 ** 32 - 1);
    this.rate("settings", s.samplingRate);
    if (s.externalSamplingRate !== undefined) this.rate("settings", s.externalSamplingRate);
    int(s.callstackSize, "callstackSize", 0, 1 << 20);
    int(s.minorHeapWords, "minorHeapWords", 4096, 1 << 28);
    if (s.minorHeapWords % 2 !== 0) this.fail("settings", "minorHeapWords must be even");
    int(s.ringLog2, "ringLog2", 5, 24);
    int(s.clockTickNs, "clockTickNs", 1, 1e12);
    int(s.maxDomains, "maxDomains", 1, 4096);
    int(s.pid, "pid", 1, 2 ** 31 - 1);
    if (!["default", "memprof_exact", "memprof_lifecycle"].includes(s.log.format)) {
      this.fail("settings", `unknown log format "${s.log.format}"`);
    }
  }

  private rate(at: string, r: number): void {
    if (typeof r !== "number" || !(r >= 0 && r <= 1)) {
      this.fail(at, `sampling rate must be within [0, 1], got ${r}`);
    }
  }

  private size(at: string, s: SizeSpec, what: string, min = 1, max = 1 << 30): void {
    const ok = (n: number) => Number.isInteger(n) && n >= min && n <= max;
    const bad = (detail: string) => this.fail(at, `${what}: ${detail}`);
    if (typeof s === "number") {
      if (!ok(s)) bad(`size must be an integer in [${min}, ${max}], got ${s}`);
    } else if ("uniform" in s) {
      const [a, b] = s.uniform;
      if (!ok(a) || !ok(b) || a > b) {
        bad(`uniform(${a}, ${b}) needs integers ${min} ≤ min ≤ max ≤ ${max}`);
      }
    } else if ("choice" in s) {
      if (s.choice.length === 0 || !s.choice.every(ok)) {
        bad(`choice needs one or more integers in [${min}, ${max}]`);
      }
    } else if ("geometric" in s) {
      const { mean, max: cap } = s.geometric;
      if (!(mean >= 1)) bad(`geometric mean must be ≥ 1, got ${mean}`);
      if (cap !== undefined && !ok(cap)) {
        bad(`geometric max must be an integer in [${min}, ${max}]`);
      }
    } else bad("unknown size distribution");
  }

  /** Every `when` refers to a loop enclosing it on its domain. */
  private loopRefs(steps: readonly Step[], depths: ReadonlyMap<string, number>): void {
    for (const st of steps) {
      if (st.kind === "when" && !(st.loop >= 1 && st.loop <= loopDepth(depths, st.domain))) {
        this.fail(st.at, `loop ${st.loop} does not enclose this step on domain "${st.domain}"`);
      }
      if (!("body" in st)) continue;
      if (st.kind === "repeat") {
        const inner = new Map(depths);
        inner.set(st.domain, loopDepth(depths, st.domain) + 1);
        this.loopRefs(st.body, inner);
      } else this.loopRefs(st.body, depths);
    }
  }

  private lifetime(at: string, l: Lifetime): void {
    if (l.kind === "steps") {
      if (!(Number.isInteger(l.steps) && l.steps >= 1)) {
        this.fail(at, `keep.steps needs a whole number ≥ 1, got ${l.steps}`);
      }
      if (l.until !== undefined) this.untilNames.add(l.until);
    }
    if (l.kind === "until" || l.kind === "list") this.untilNames.add(l.name);
    if (l.kind === "ring") {
      if (!(Number.isInteger(l.slots) && l.slots >= 1)) {
        this.fail(at, `keep.ring needs a whole number of slots ≥ 1, got ${l.slots}`);
      }
    }
    if (l.kind === "cycle") {
      if (l.lifetimes.length === 0) this.fail(at, "keep.cycle needs at least one lifetime");
      for (const x of l.lifetimes) {
        if (x.kind === "cycle") this.fail(at, "keep.cycle cannot nest");
        this.lifetime(at, x);
      }
    }
  }

  private profile(at: string, p: ProfileSpec): void {
    this.rate(at, p.samplingRate);
    if (!Number.isInteger(p.callstackSize) || p.callstackSize < 0) {
      this.fail(at, `callstack size must be a whole number ≥ 0, got ${p.callstackSize}`);
    }
    this.tracker(at, p.tracker);
  }

  private tracker(at: string, t: TrackerSpec): void {
    for (const [kind, spec] of Object.entries(t)) {
      if (!["allocMinor", "allocMajor", "promote", "deallocMinor", "deallocMajor"].includes(kind)) {
        this.fail(at, `unknown callback "${kind}"`);
      }
      if (spec === undefined) continue;
      if (spec.result !== "track" && spec.result !== "none") {
        this.fail(at, `${kind}: result must be "track" or "none"`);
      }
      for (const { when, action } of spec.actions) {
        if (when.kind === "nth" && !(Number.isInteger(when.n) && when.n >= 1)) {
          this.fail(at, `${kind}: call number must be a whole number ≥ 1, got ${when.n}`);
        }
        if (
          when.kind === "every" &&
          !(Number.isInteger(when.period) && when.period >= 1 && Number.isInteger(when.offset) &&
            when.offset >= 1)
        ) this.fail(at, `${kind}: every() needs a period and offset ≥ 1`);
        this.action(at, kind, action);
      }
    }
  }

  private action(at: string, kind: string, a: CallbackAction): void {
    switch (a.kind) {
      case "start":
        this.profileActions = true;
        this.profile(at, a.profile);
        break;
      case "stop":
      case "discard":
        this.profileActions = true;
        break;
      case "alloc":
        this.size(at, a.words, `${kind}: alloc`, 1, MAX_YOUNG_WOSIZE);
        this.lifetime(at, a.lifetime);
        break;
      case "switchThread":
        if (!this.sc.threads.has(a.thread)) this.fail(at, `${kind}: no thread named "${a.thread}"`);
        break;
      case "raise":
        if (!/^[A-Z][A-Za-z0-9_']*$/.test(a.exn)) {
          this.fail(at, `${kind}: "${a.exn}" is not an OCaml exception name`);
        }
        break;
      case "gc":
      case "exitThread":
        break;
      default:
        this.fail(at, `${kind}: unknown action`);
    }
  }

  /** Parameter checks of every step (first pass). */
  private scan(steps: readonly Step[]): void {
    for (const st of steps) {
      const at = st.at;
      switch (st.kind) {
        case "alloc":
          this.size(at, st.size, "alloc");
          if (st.source === "custom") {
            if (st.customMem === undefined) this.fail(at, "a custom block needs customMem");
            this.size(at, st.customMem, "customMem", 0);
          } else if (st.customMem !== undefined) {
            this.fail(at, 'customMem is only for source "custom"');
          }
          if (!["caml", "runtime", "array", "major", "custom", "unmarshal"].includes(st.source)) {
            this.fail(at, `unknown source "${st.source}"`);
          }
          this.lifetime(at, st.lifetime);
          break;
        case "allocCombined": {
          if (st.sizes.length === 0) this.fail(at, "allocCombined needs at least one size");
          let whsize = 0;
          for (const s of st.sizes) {
            this.size(at, s, "allocCombined", 1, MAX_YOUNG_WOSIZE);
            whsize += maxSize(s) + 1;
          }
          if (whsize - 1 > MAX_YOUNG_WOSIZE) {
            this.fail(
              at,
              `a combined allocation fits in ${
                MAX_YOUNG_WOSIZE + 1
              } words with headers; this one may take ${whsize}`,
            );
          }
          for (const l of st.lifetimes) this.lifetime(at, l);
          break;
        }
        case "unmarshal":
          if (st.blocks.length === 0) this.fail(at, "unmarshal needs at least one block");
          for (const b of st.blocks) this.size(at, b, "unmarshal");
          if (st.lifetime.kind === "cycle") {
            this.fail(at, "an unmarshalled value has one lifetime; keep.cycle does not apply");
          }
          this.lifetime(at, st.lifetime);
          break;
        case "extAlloc":
          this.size(at, st.bytes, "extAlloc bytes");
          if (
            st.lifetime.kind === "cycle" || st.lifetime.kind === "list" ||
            st.lifetime.kind === "ring"
          ) this.fail(at, `keep.${st.lifetime.kind} is for heap blocks only`);
          this.lifetime(at, st.lifetime);
          break;
        case "memprofStart":
          this.profile(at, st.profile);
          break;
        case "repeat":
          if (!Number.isInteger(st.count) || st.count < 0) {
            this.fail(at, `repeat count must be a whole number ≥ 0, got ${st.count}`);
          }
          this.scan(st.body);
          break;
        case "call":
        case "blocking":
        case "attempt":
          this.scan(st.body);
          break;
        case "when":
          if (!(Number.isInteger(st.every) && st.every >= 1)) {
            this.fail(at, `every needs a whole number ≥ 1, got ${st.every}`);
          }
          if (!(Number.isInteger(st.offset) && st.offset >= 0 && st.offset < st.every)) {
            this.fail(at, `every's offset must be in [0, ${st.every - 1}], got ${st.offset}`);
          }
          this.scan(st.body);
          break;
        case "join":
          if (st.target === st.domain) this.fail(at, "a domain cannot join itself");
          if (st.target === "main") this.fail(at, "the main domain cannot be joined");
          break;
        case "release":
          this.releaseNames.add(st.name);
          break;
        case "userEvent":
          if (st.name.length === 0 || st.name.length > 127 || st.name.includes("\0")) {
            this.fail(at, "user event names must have 1 to 127 characters and no NUL");
          }
          if (st.event.type === "int" && !Number.isSafeInteger(st.event.value)) {
            this.fail(at, "an int user event needs a safe integer value");
          }
          if (
            st.event.type === "custom" &&
            !st.event.bytes.every((b) => Number.isInteger(b) && b >= 0 && b <= 255)
          ) this.fail(at, "custom user event bytes must be integers in [0, 255]");
          break;
        default:
          break;
      }
    }
  }

  /** State checks, following the steps in order (second pass). */
  private follow(steps: readonly Step[]): void {
    for (const st of steps) {
      const at = st.at;
      if ("domain" in st && !this.alive.has(st.domain)) {
        this.fail(at, `domain "${st.domain}" is not running here`);
      }
      switch (st.kind) {
        case "spawn":
          if (++this.spawned > this.sc.settings.maxDomains) {
            this.fail(at, `more than maxDomains (${this.sc.settings.maxDomains}) domains`);
          }
          this.alive.add(st.child);
          this.threadAlive.set(st.child, true);
          this.running.set(st.child, this.running.get(st.domain) ?? null);
          break;
        case "terminate":
          if (st.domain === "main") this.fail(at, "the main domain cannot terminate");
          this.alive.delete(st.domain);
          break;
        case "join":
          if (!this.alive.has(st.target)) this.fail(at, `domain "${st.target}" is not running`);
          this.alive.delete(st.target);
          break;
        case "threadCreate":
          this.threadAlive.set(st.thread, true);
          break;
        case "threadSwitch":
        case "threadExit": {
          const owner = this.sc.threads.get(st.thread);
          if (owner !== st.domain) {
            this.fail(at, `thread "${st.thread}" does not belong to domain "${st.domain}"`);
          }
          if (this.threadAlive.get(st.thread) !== true) {
            this.fail(at, `thread "${st.thread}" is not running here`);
          }
          if (st.kind === "threadExit") {
            if (st.thread === st.domain) this.fail(at, "a domain's main thread cannot exit");
            this.threadAlive.set(st.thread, false);
          }
          break;
        }
        case "memprofStart":
          if (!this.profileActions) {
            const cur = this.running.get(st.domain);
            if (cur != null && this.status.get(cur) === "sampling") {
              this.fail(at, "Gc.Memprof.start: already started.");
            }
          }
          this.running.set(st.domain, st.profile.name!);
          this.status.set(st.profile.name!, "sampling");
          break;
        case "memprofStop":
          if (!this.profileActions) {
            const cur = this.running.get(st.domain);
            if (cur == null || this.status.get(cur) !== "sampling") {
              this.fail(at, "Gc.Memprof.stop: no profile running.");
            }
            this.status.set(cur, "stopped");
          }
          break;
        case "memprofDiscard":
          if (!this.sc.profiles.includes(st.profile)) {
            this.fail(at, `no profile named "${st.profile}"`);
          }
          if (!this.profileActions) {
            const s = this.status.get(st.profile);
            if (s === undefined) {
              this.fail(at, `profile "${st.profile}" is discarded before it starts`);
            }
            if (s === "sampling") this.fail(at, "Gc.Memprof.discard: profile not stopped.");
            if (s === "discarded") this.fail(at, "Gc.Memprof.discard: profile already discarded.");
            this.status.set(st.profile, "discarded");
          }
          break;
        case "repeat":
          for (let k = 0; k < Math.min(st.count, 2); k++) this.follow(st.body);
          break;
        case "call":
        case "blocking":
          this.follow(st.body);
          break;
        case "attempt":
          this.follow(st.body);
          // A raise may cut the body anywhere: memprof's state after it is known at run time only.
          if (hasMemprofStep(st.body)) this.profileActions = true;
          break;
        case "when":
          // Runs on some iterations only: memprof's state after it is known at run time only.
          this.follow(st.body);
          if (hasMemprofStep(st.body)) this.profileActions = true;
          break;
        default:
          break;
      }
    }
  }
}

function loopDepth(depths: ReadonlyMap<string, number>, domain: string): number {
  return depths.get(domain) ?? 0;
}

function hasMemprofStep(steps: readonly Step[]): boolean {
  return steps.some((st) =>
    st.kind === "memprofStart" || st.kind === "memprofStop" || st.kind === "memprofDiscard" ||
    (("body" in st) && hasMemprofStep(st.body))
  );
}
