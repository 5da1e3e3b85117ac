/**
 * The code that runs the steps: a function per domain (its segments, each at its turn of the
 * baton), a function per systhread with a program, the named releases, and the program's main,
 * which runs the scenario from an empty minor heap and prints the log after it.
 * @module
 */
import { type Ctx, domainThread, type ThreadSpawnStep } from "./_plan.ts";
import type { Emitter } from "./_emit.ts";
import { guard, stepsCode } from "./_emit_steps.ts";
import { ocamlCommentString } from "./_ocaml_text.ts";

/** The turns of the baton between domains: one per segment, then one per domain alive at the
 * end (its final poll), then the run's end. */
export interface Turns {
  /** The first final-poll turn. */
  readonly flushBase: number;
  /** The turn at which the main domain ends the run. */
  readonly exitTurn: number;
  /** Domains the first final poll joins first (the last segment's domain, if it terminates). */
  readonly trailingJoins: readonly number[];
  /** Several domains: the baton is passed. */
  readonly multi: boolean;
}

/** The turns of `em`'s plan. */
export function turnsOf(em: Emitter): Turns {
  const { segments, aliveAtEnd } = em.plan;
  const flushBase = segments.length;
  const last = segments[segments.length - 1];
  return {
    flushBase,
    exitTurn: flushBase + aliveAtEnd.length,
    trailingJoins: last !== undefined && last.terminates ? [last.ord] : [],
    multi: em.sc.domains.length > 1,
  };
}

/** The function of domain `ord`: its segments, then its final poll. */
export function domainFunction(em: Emitter, ord: number, turns: Turns): string {
  const { segments, aliveAtEnd } = em.plan;
  const { flushBase, exitTurn, trailingJoins, multi } = turns;
  const fn = ord === 0 ? "run_main" : `run_${ord}`;
  const lines: string[] = [];
  // Counted waits (lib/export/_prelude.ts, `countedWaitsPrelude`): the waiting domain and the
  // one a turn goes to are named; the main domain does not wait for the first turn.
  const counted = em.plan.countedWaits;
  const waitTurn = (k: number) => counted ? `wait_turn ${ord} ${k};` : `wait_turn ${k};`;
  const passTurn = (k: number) =>
    counted ? `pass_turn ${k} ${turnOrd(em, turns, k)};` : `pass_turn ${k};`;
  const self = domainThread(em.plan, em.sc.domains[ord]);
  if (ord !== 0) {
    lines.push(
      `ord_of_index.(Domain.self_index ()) <- ${ord};`,
      ...(self === 0 ? [] : [
        `th_of_id.(Thread.id (Thread.self ())) <- ${self};`,
        `th_spawned.(${self}) <- 1;`,
      ]),
      counted ? `announce_started ${ord} ${em.plan.parentOrd[ord]};` : `announce_started ${ord};`,
    );
  }
  const joinCode = (joins: readonly number[]) =>
    joins.map((j) => `join_dom (Obj.obj doms.(${j}) : unit Domain.t);`);
  segments.forEach((seg, i) => {
    if (seg.ord !== ord) return;
    if (multi) {
      if (!(counted && i === 0)) lines.push(waitTurn(i));
      lines.push(...joinCode(seg.joins), "resume_dom ();");
    }
    const ctx: Ctx = {
      ord,
      depth: 0,
      inAttempt: false,
      inCallback: false,
      bound: 1,
      at: "",
      thread: self,
    };
    lines.push(stepsCode(em, seg.steps, ctx));
    if (multi) lines.push(passTurn(i + 1));
  });
  // A domain ended by a join waits, after its last step, for the joiner to let it end.
  // (issue 22, polls helper) Released, it drains what is still pending (the `terminate`
  // step's resume_dom: do_at_exit's poll would run it, and a raise there would end the domain
  // with an exception that Domain.join raises again for ever).
  if (em.plan.joined.has(ord)) lines.push(`wait_released ${ord};`, "resume_dom ();");
  const flushIndex = aliveAtEnd.indexOf(ord);
  if (flushIndex >= 0) {
    if (multi) {
      lines.push(waitTurn(flushBase + flushIndex));
      if (flushIndex === 0) lines.push(...joinCode(trailingJoins));
      lines.push("resume_dom ();");
    }
    lines.push("(* the simulation's final poll: pending callbacks run *)");
    lines.push(guard(em, "process_pending ()", false) + ";");
    if (multi) lines.push(passTurn(flushBase + flushIndex + 1));
    // The main domain ends the run after every flush; the others end after that.
    if (multi) lines.push(waitTurn(ord === 0 ? exitTurn : exitTurn + 1));
  }
  return `let[@inline never] ${fn} () =\n  ${lines.join("\n  ")}\n  Sys.opaque_identity ()`;
}

/** The domain that waits for turn `k` (counted waits): a segment's, a final poll's, then the
 * main domain, which ends the run. */
function turnOrd(em: Emitter, turns: Turns, k: number): number {
  const { segments, aliveAtEnd } = em.plan;
  if (k < turns.flushBase) return segments[k].ord;
  if (k < turns.exitTurn) return aliveAtEnd[k - turns.flushBase];
  return 0;
}

/** The function of thread `k` (a systhread with a program): it starts, waits for its first
 * turn, runs its steps, and passes the baton on at its end. (issue 22, polls helper) Before
 * that, it runs the callbacks still pending, each raise logged (`resume_dom`): they would run
 * in `Thread.create`'s wrapper (its `check_memprof_cb`), whose handler swallows what they
 * raise and allocates, running more of them. */
export function threadFunction(em: Emitter, st: ThreadSpawnStep, k: number): string {
  const ctx: Ctx = {
    ord: em.sc.domains.length + k - 1,
    depth: 0,
    inAttempt: false,
    inCallback: false,
    bound: 1,
    at: st.at,
    thread: k,
  };
  const body = stepsCode(em, st.body, ctx);
  // A spawned domain's thread takes its domain's own mutex, spinning (th_take, _prelude.ts).
  const start = st.domain === "main" ? "th_start" : "th_start_spawned";
  return `(* thread ${ocamlCommentString(st.thread)} *)
let[@inline never] run_thread_${k} () =
  ` +
    `${start} ${k};
  ${body}
  resume_dom ();
  th_end ${k}`;
}

/** The functions of the named releases, each clearing its sites, then polling once. */
export function releasesCode(em: Emitter): string[] {
  return [...em.releaseSites.entries()].map(([name, s], i) =>
    `(* release ${ocamlCommentString(name)} *)\nlet[@inline never] release_${i} () =\n  ${
      [
        ...s.fifo.map((k) => `release_site ${k};`),
        ...s.slots.map((k) => `release_slots ${k};`),
        ...s.rings.map((k) => `release_ring ${k};`),
      ]
        .join("\n  ")
    }\n  Sys.poll_actions ()`
  );
}

/** The program's main: the threads created, the heap collected, the run, the log printed; with
 * `ringMarks`, the ring's mark where the run ends (see `ExportOptions.ringMarks`). */
export function mainCode(
  em: Emitter,
  turns: Turns,
  options: { readonly ringMarks: boolean },
): string {
  const joins = em.plan.aliveAtEnd.filter((o) => o !== 0).map((o) =>
    `  Domain.join (Obj.obj doms.(${o}) : unit Domain.t);`
  );
  const marks = options.ringMarks;
  const threads = em.plan.initThreads;
  return [
    ...(marks
      ? [
        "(* The ring's mark where the run ends (deno task diff --rings). *)",
        'external ring_pause : unit -> unit = "caml_ml_runtime_events_pause"',
        'external ring_resume : unit -> unit = "caml_ml_runtime_events_resume"',
        'external ring_sys_exit : int -> unit = "caml_sys_exit"',
        "",
      ]
      : []),
    "let () =",
    "  ord_of_index.(Domain.self_index ()) <- 0;",
    ...(threads === 0 ? [] : [
      "  (* The systhreads, each waiting for its first turn; then the tick thread, which",
      "     interrupts the domain every 50 ms, is stopped: its interrupts would make the next",
      "     allocation enter the runtime and do GC work or run callbacks at a time that",
      "     depends on the clock. *)",
      ...em.plan.threadSteps.slice(0, em.plan.initThreads).map((_, k) =>
        `  th_create ${k + 1} run_thread_${k + 1};`
      ),
      "  thread_cleanup ();",
    ]),
    "  Gc.full_major ();",
    "  let s0 = Gc.quick_stat () in",
    "  (* An empty minor heap, as the simulation starts with; then nothing allocates but the",
    "     scenario. *)",
    "  Gc.minor ();",
    "  run_main ();",
    "  frozen := true;",
    "  let s1 = Gc.quick_stat () in",
    ...(marks ? ["  ring_pause ();", "  ring_resume ();"] : []),
    ...(!turns.multi
      ? []
      : em.plan.countedWaits
      ? em.plan.aliveAtEnd.filter((o) => o !== 0).map((o) =>
        `  pass_turn ${turns.exitTurn + 1} ${o};`
      )
      : [`  pass_turn ${turns.exitTurn + 1};`]),
    ...joins,
    "  print_log ~minors:(s1.Gc.minor_collections - s0.Gc.minor_collections - 1)",
    "    ~majors:(s1.Gc.major_collections - s0.Gc.major_collections)" + (marks ? ";" : ""),
    ...(marks
      ? [
        "  (* Every word allocated in the ring's counters: the minor heap emptied, a major slice",
        "     for the words allocated since the last one, and exit without at_exit's work. *)",
        "  flush stdout;",
        "  Gc.minor ();",
        "  ignore (Gc.major_slice 0);",
        "  ring_sys_exit 0",
      ]
      : []),
  ].join("\n");
}
