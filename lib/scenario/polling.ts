/**
 * Where OCaml code polls: which loops of the exported program get a poll at their back-edge.
 *
 * ocamlopt 5.3 (asmcomp/polling.ml, `polled_loops_analysis`) runs a backward dataflow analysis
 * over each function: a loop head is "safe" when every path from it goes through an `Ialloc` (an
 * allocation by OCaml code), an `Ipoll` (`Sys.poll_actions`, which is `%poll`), a return or a
 * tail call before it comes back; every other loop gets an `Ipoll` at its back-edge. Calls and C
 * primitives count for nothing, but they may raise (`operation_can_raise`: calls, external calls,
 * bound checks), and the exception's path counts too: from inside a `try`, it goes to the
 * handler and on from there (to a loop's back-edge without an allocation, say). A path leaving
 * the function by an exception is safe. A loop may run zero times, so a nested loop counts only
 * for what follows it; a `switch` (a `match` compiled to a jump table) counts as unsafe
 * whatever its arms do (asmcomp/dataflow.ml folds a switch's arms from the bottom value,
 * "unsafe").
 *
 * {@linkcode backEdgePolls} runs that analysis over the program lib/export writes for a
 * scenario, whose shapes it mirrors: each leaf step is a call (`tick ()`, or `tick_g ()` when a
 * callback may raise) then its code, in its own handler when callbacks raise outside attempts; a
 * loop is `loops.(…) <- i` (a bound check) then its body; loops and attempts have handlers when
 * callbacks raise; `call` frames and threads' and domains' programs are functions of their own.
 * The simulation polls at a `repeat`'s back-edge by it, so both agree on where polls are.
 * @module
 */
import type { Lifetime, Scenario, SizeSpec, Step } from "./spec.ts";
import { forEachStep, segmentStarts, someAction } from "./walk.ts";
import { matchHasJumpTable } from "./_ocaml_switch.ts";

import { MAX_YOUNG_WOSIZE } from "../runtime/mod.ts";

/** The largest size a spec can give (Infinity when unbounded). */
export function maxSize(s: SizeSpec): number {
  if (typeof s === "number") return s;
  if ("uniform" in s) return s.uniform[1];
  if ("choice" in s) return s.choice.reduce((m, v) => Math.max(m, v), -Infinity);
  return s.geometric.max ?? Infinity;
}

/** The sizes the exported program's `match` lists for a size drawn from `s` (as lib/export's
 * `sizeCode`: up to one past the largest young size, which stands for all larger ones). */
function matchSizes(s: SizeSpec): number[] {
  const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => a + i);
  if (typeof s === "number") return [s];
  if ("uniform" in s) return range(s.uniform[0], Math.min(s.uniform[1], MAX_YOUNG_WOSIZE + 1));
  if ("choice" in s) return [...new Set(s.choice)];
  return range(1, Math.min(s.geometric.max ?? Infinity, MAX_YOUNG_WOSIZE + 1));
}

/** ocamlopt's verdict on a program point: every path from it polls (`Safe`), or not. */
type Safe = boolean;

/** Where code is: inside an `attempt` of its function (the export then gives its leaves no
 * handler of their own), and the value of its innermost handler's path (`exn`). */
interface Place {
  readonly inAttempt: boolean;
  readonly exn: Safe;
}

/**
 * The `repeat` steps of `sc` whose loops poll at their back-edge in the exported program (see
 * the module's documentation). Scenarios the export refuses get the verdict of the closest
 * program.
 */
export function backEdgePolls(sc: Scenario): ReadonlySet<Step> {
  const cached = CACHE.get(sc);
  if (cached !== undefined) return cached;
  const polls = new PollAnalysis(sc).run();
  CACHE.set(sc, polls);
  return polls;
}

const CACHE = new WeakMap<Scenario, ReadonlySet<Step>>();

class PollAnalysis {
  readonly #sc: Scenario;
  /** Callbacks may raise: the export then gives steps and loops handlers. */
  readonly #canRaise: boolean;
  /** Each loop's verdict so far (the analysis' fixpoint starts from "unsafe"). */
  readonly #safe = new Map<Step, Safe>();
  #changed = false;

  constructor(sc: Scenario) {
    this.#sc = sc;
    let raises = false;
    forEachStep(sc.steps, true, (st) => {
      if (st.kind === "memprofStart" && someAction(st.profile.tracker, (a) => a.kind === "raise")) {
        raises = true;
      }
      return true;
    });
    this.#canRaise = raises;
  }

  run(): ReadonlySet<Step> {
    for (const body of this.#functions()) {
      // The least fixpoint: loops start unsafe and become safe, until nothing changes.
      do {
        this.#changed = false;
        this.#seq(body.steps, true, { inAttempt: body.inAttempt, exn: true });
      } while (this.#changed);
    }
    const polls = new Set<Step>();
    forEachStep(this.#sc.steps, true, (st) => {
      if (st.kind === "repeat" && this.#safe.get(st) !== true) polls.add(st);
      return true;
    });
    return polls;
  }

  /** The program's functions holding steps: each domain's (its top-level steps, in order),
   * each thread's, and each `call` frame's. What follows a function's steps (baton passes,
   * joins, the final poll's handler) is calls, then a return: safe. */
  #functions(): { steps: readonly Step[]; inAttempt: boolean }[] {
    const byDomain = new Map<string, Step[]>();
    // A top-level step runs on its segment's domain (none but the main one without segments).
    const { starts } = segmentStarts(this.#sc);
    let domain = "main";
    for (const st of this.#sc.steps) {
      domain = starts.get(st)?.domain ?? domain;
      const list = byDomain.get(domain) ?? [];
      list.push(st);
      byDomain.set(domain, list);
    }
    const fns: { steps: readonly Step[]; inAttempt: boolean }[] = [...byDomain.values()].map(
      (steps) => ({ steps, inAttempt: false }),
    );
    forEachStep(this.#sc.steps, false, (st, inAttempt) => {
      if (st.kind === "threadSpawn") fns.push({ steps: st.body, inAttempt: false });
      if (st.kind === "call") fns.push({ steps: st.body, inAttempt });
      return st.kind === "threadSpawn" ? false : inAttempt || st.kind === "attempt";
    });
    return fns;
  }

  /** The verdict before `steps`, `next` being the verdict after them. */
  #seq(steps: readonly Step[], next: Safe, at: Place): Safe {
    let v = next;
    for (let k = steps.length - 1; k >= 0; k--) v = this.#step(steps[k], v, at);
    return v;
  }

  #step(st: Step, next: Safe, at: Place): Safe {
    const { exn } = at;
    switch (st.kind) {
      case "repeat":
        return this.#repeat(st, next, at);
      case "attempt": {
        // (try body; () with e -> caught_at … e): the handler calls, then goes on.
        if (!this.#canRaise) return this.#seq(st.body, next, { ...at, inAttempt: true });
        return this.#seq(st.body, next, { inAttempt: true, exn: next && exn });
      }
      case "when":
        // if loops.(…) mod every = offset then begin body end: a bound check, then a test.
        return exn && this.#seq(st.body, next, at) && next;
      case "call":
        // f () (the frame's function, analysed on its own).
        return exn && next;
      case "blocking":
        // Not exported (systhreads of the older form): a call around its body.
        return exn && this.#seq(st.body, next, at);
      case "terminate":
      case "threadSpawn":
      case "yieldTo":
      case "threadJoin":
        // tick (); then calls (the thread's function, the baton).
        return exn && next;
      default:
        return this.#leaf(st, next, at);
    }
  }

  /**
   * `loops.(o) <- k; for i = 1 to n do loops.(o + k) <- i; body done; loops.(o) <- d`, inside
   * `(try … with e -> loops.(o) <- d; escaped e)` when callbacks raise outside attempts. The
   * loop head: its first bound check, then the body, then the back-edge (the loop's own
   * verdict) or the exit.
   */
  #repeat(st: Extract<Step, { kind: "repeat" }>, next: Safe, at: Place): Safe {
    const guarded = this.#canRaise && !at.inAttempt;
    const handler = guarded ? next && at.exn : at.exn;
    const inside: Place = { inAttempt: at.inAttempt, exn: handler };
    const afterLoop = handler && next;
    const head = this.#safe.get(st) ?? false;
    const body = handler && this.#seq(st.body, afterLoop && head, inside);
    if (body && !head) {
      this.#safe.set(st, true);
      this.#changed = true;
    }
    // Entering: a bound check, then `if 1 > n` (the exit, or the loop's head).
    return handler && afterLoop && (this.#safe.get(st) ?? false);
  }

  /**
   * A leaf step: `tick (); code`, or `tick (); (let n = draw in code)` for a size drawn
   * without frames, where `code` is in a handler of its own (`try … with e -> escaped e`) when
   * callbacks raise outside attempts.
   */
  #leaf(st: Step, next: Safe, at: Place): Safe {
    const exn = this.#canRaise && !at.inAttempt ? next && at.exn : at.exn;
    let code: Safe;
    switch (st.kind) {
      case "poll":
        code = true; // Sys.poll_actions (): an Ipoll
        break;
      case "alloc":
        // (A size drawn without frames is drawn by a call before the step's handler: its
        // exception path is the tick's.)
        code = this.#alloc(st, next, exn);
        break;
      case "allocCombined":
        // let b{n-1} = (…) in … (components of at most 256 words): an Ialloc, or f () when
        // the components have frames.
        code = (st.frames[0] ?? []).length > 0 ? exn && next : true;
        break;
      default:
        // Calls and C primitives: collections, memprof control, unmarshalling, releases,
        // runtime_events, Thread.yield; an external allocation's fast path (a subtraction, a
        // store, then for a sampled one the emulated slow path and the token's keep: calls).
        code = exn && next;
    }
    return at.exn && code;
  }

  /** An `alloc` step's code (after the tick and the draw). */
  #alloc(st: Extract<Step, { kind: "alloc" }>, next: Safe, exn: Safe): Safe {
    if (st.frames.length > 0) return exn && next; // f () (a chain of frame functions)
    const keep = this.#keep(st.lifetime, next, exn);
    if (st.source !== "caml") return exn && keep; // Array.make, Bytes.create, Bigarray, input
    const sizes = matchSizes(st.size);
    if (sizes.length === 1) return sizes[0] <= MAX_YOUNG_WOSIZE || (exn && keep);
    // match n with | a -> (…) | … | _ -> (largest), or | n -> Array.make n z when some size
    // is over 256 words: one action per arm.
    const small = sizes.filter((n) => n <= MAX_YOUNG_WOSIZE).sort((a, b) => a - b);
    const allSmall = small.length === sizes.length && small.length > 0;
    const arms = (allSmall ? small.slice(0, -1) : small).map((n, i) => [n, i + 1] as const);
    if (matchHasJumpTable(arms)) return false;
    return allSmall || (exn && keep);
  }

  /** Keeping a block as `l` says, then `next`. */
  #keep(l: Lifetime, next: Safe, exn: Safe): Safe {
    switch (l.kind) {
      case "drop":
        return next; // ignore (Sys.opaque_identity …)
      case "cycle": {
        // (let k = !c in c := …; match k with | 0 -> … | 1 -> … | _ -> ()): the dropping
        // arms (`ignore blk`) share one action; every other arm keeps in a site of its own.
        const arms = l.lifetimes.map((x, i) => [i, x.kind === "drop" ? -1 : i + 1] as const);
        if (matchHasJumpTable(arms)) return false;
        return l.lifetimes.every((x) => this.#keep(x, next, exn)) && next;
      }
      default:
        return exn && next; // keep_slot, keep_steps, keep_ring, keep_list: calls
    }
  }
}
