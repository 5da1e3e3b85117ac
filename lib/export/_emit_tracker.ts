/**
 * The code of trackers: per profile, its five callbacks (each records its call into the log,
 * counts it, does the scenario's actions whose trigger holds, and returns what the scenario
 * says), the tracker record, and the function starting the profile. With raising callbacks, the
 * handlers that log what they raise, and (several domains or systhreads) how a domain resumes.
 * @module
 */
import type { CallbackAction, CallbackSpec, ProfileSpec, Trigger } from "../scenario/spec.ts";
import { CALLBACK_KINDS, type CallbackKindName, type Ctx, KIND_INDEX } from "./_plan.ts";
import { camlFloat, type Emitter, gcCode } from "./_emit.ts";
import { camlBlock, keepCode } from "./_emit_alloc.ts";
import { ocamlCommentString } from "./_ocaml_text.ts";

/** The callbacks, tracker and start function of the profile in slot `slot`. */
export function trackerCode(em: Emitter, slot: number, p: ProfileSpec): string {
  const spec = (k: CallbackKindName): CallbackSpec =>
    p.tracker[k] ?? { result: k.startsWith("dealloc") ? "none" : "track", actions: [] };
  const ctx: Ctx = {
    ord: 0,
    depth: 0,
    inAttempt: true,
    inCallback: true,
    bound: Infinity,
    at: em.plan.profileAt[slot],
    thread: 0,
  };
  const fns: string[] = [];
  for (const k of CALLBACK_KINDS) {
    const ki = KIND_INDEX[k];
    const s = spec(k);
    const acts = s.actions.map(({ when, action }) =>
      `if ${triggerCode(when)} then begin ${actionCode(em, action, slot, ctx)} end;`
    ).join("\n  ");
    const external = !em.plan.external ? "none" : em.plan.canRaise ? "canFail" : "locks";
    fns.push(callbackCode(`cb_${slot}_${ki}`, ki, slot, s, acts, external));
  }
  const tracker = `let trk_${slot} : (int, int) Gc.Memprof.tracker = {\n` +
    `  Gc.Memprof.alloc_minor = cb_${slot}_0; alloc_major = cb_${slot}_1;\n` +
    `  promote = cb_${slot}_2; dealloc_minor = cb_${slot}_3; dealloc_major = cb_${slot}_4 }`;
  const start = `let start_${slot} () =\n` +
    // (issue 22, polls helper) Five stores, not a loop: its back-edges would poll.
    `  ${[0, 1, 2, 3, 4].map((k) => `calls.(${slot * 5 + k}) <- 0;`).join(" ")}\n` +
    `  prof.(${slot}) <- Obj.repr (Gc.Memprof.start ~sampling_rate:(${
      camlFloat(p.samplingRate)
    }) ~callstack_size:${p.callstackSize} trk_${slot})\n` +
    `let () = start_fns.(${slot}) <- start_${slot}`;
  return `(* profile ${ocamlCommentString(p.name!)} *)\n${
    fns.join("\n\n")
  }\n\n${tracker}\n\n${start}`;
}

/** Callback `fn` of kind number `ki`, doing `acts`. After the run (`frozen`, from the final
 * poll on), callbacks do nothing: the program's own bookkeeping (printing the log) allocates and
 * collects, and the simulation, whose run ends at the final poll, has no such callbacks. With
 * memtrace's `External` emulated (`external` other than `none`), an allocation callback that
 * would track its block does not while the tracer's lock is held, as memtrace's tracer
 * (lib/tracer/tracer.ts): the lock is the tracker's, which the simulation's tracer is. When
 * callbacks may raise (`canFail`), the tracer can fail under its lock: from then on, as
 * memtrace's `Is_stopped`, an allocation callback does not track its block, and a promotion
 * ends its block's tracking. */
function callbackCode(
  fn: string,
  ki: number,
  slot: number,
  s: CallbackSpec,
  acts: string,
  external: "none" | "locks" | "canFail",
): string {
  const counted = `  let n = bump ${slot} ${ki} in\n  ignore n;\n  ${acts}\n`;
  if (ki <= 1) {
    const untracked = external === "canFail" ? "!ext_locked || !ext_failed" : "!ext_locked";
    const track = external !== "none"
      ? `if ${untracked} then begin set_outcome b 0; None end else begin set_outcome b 1; Some id end`
      : "set_outcome b 1; Some id";
    const ret = s.result === "track" ? track : "set_outcome b 0; None";
    return `let ${fn} (info : Gc.Memprof.allocation) : int option =\n` +
      `  if !frozen then None else begin\n` +
      `  let id = next_id () in\n  let b = record_alloc ${ki} id info in\n  ignore id;\n` +
      `${counted}  ${ret}\n  end`;
  }
  if (ki === 2) {
    const track = external === "canFail"
      ? "if !ext_failed then begin set_outcome b 0; None end else begin set_outcome b 1; Some v end"
      : "set_outcome b 1; Some v";
    const ret = s.result === "track" ? track : "set_outcome b 0; None";
    return `let ${fn} (v : int) : int option =\n  if !frozen then None else begin\n` +
      `  let b = record ${ki} v in\n${counted}  ${ret}\n  end`;
  }
  return `let ${fn} (v : int) : unit =\n  if !frozen then () else begin\n` +
    `  let b = record ${ki} v in\n${counted}  set_outcome b 2\n  end`;
}

/** The code of callback action `a` of the profile in slot `slot`. */
function actionCode(em: Emitter, a: CallbackAction, slot: number, ctx: Ctx): string {
  switch (a.kind) {
    case "raise":
      return `set_outcome b ${3 + em.exceptionOf(a.exn)}; raise E_${em.exceptionOf(a.exn)}`;
    case "stop":
      return "Gc.Memprof.stop ()";
    case "start":
      return `start_fns.(${em.profileSlot(a.profile.name)}) ()`;
    case "discard":
      return `Gc.Memprof.discard (Obj.obj prof.(${slot}))`;
    case "alloc":
      return keepCode(em, camlBlock(a.words), a.lifetime, { ...ctx, owner: a }, {
        linkable: true,
      });
    case "gc":
      return gcCode(a.what);
    case "switchThread":
    case "exitThread":
      throw new Error(`internal error: a ${a.kind} action passed checkExportable`);
    case "yieldTo":
      // The thread running the callback holds the baton: it passes it, and waits inside
      // (unless its program ended: the baton went on then).
      return `(let me = th_self () in if th_ended.(me) = 0 then th_pass me ${
        em.threadOf(a.thread)
      })`;
    case "yieldToNext": {
      // The first thread after the running one in the ring that can take the baton: a match
      // on the running thread, then tests in ring order (no loop: it would poll).
      // With spawned domains' threads, a thread of another domain cannot take it.
      const canRun = em.plan.batonDomains.length > 0 ? "th_can_run_from me" : "th_can_run";
      const ring = a.threads.map((t) => em.threadOf(t));
      const arms = ring.map((me, i) => {
        let pick = "-1";
        for (let j = ring.length - 1; j >= 1; j--) {
          const c = ring[(i + j) % ring.length];
          pick = `if ${canRun} ${c} then ${c} else ${pick}`;
        }
        return `| ${me} -> ${pick}`;
      });
      return `(let me = th_self () in if th_ended.(me) = 0 then begin let k = (match me with ` +
        `${arms.join(" ")} | _ -> fail "yieldToNext: not in the ring") in ` +
        `if k >= 0 then th_pass me k end)`;
    }
  }
}

function triggerCode(t: Trigger): string {
  switch (t.kind) {
    case "always":
      return "true";
    case "nth":
      return `n = ${t.n}`;
    case "every":
      return `(n >= ${t.offset} && (n - ${t.offset}) mod ${t.period} = 0)`;
  }
}

/** The handlers logging what callbacks raise (none when no callback raises). */
export function handlersCode(em: Emitter): string {
  if (!em.plan.canRaise) return "";
  const arms = (kind: number) =>
    em.plan.exceptions.map((_, i) => `| E_${i} -> record_exn ${kind} ${i}`).join(" ");
  return [
    `let[@inline never] escaped e = match e with ${arms(5)} | e -> raise e`,
    `let[@inline never] caught_at o k e = loops.(o) <- k; match e with ${arms(6)} | e -> raise e`,
    "(* A step's tick, whose release may poll: what a callback raises there is the step's. *)",
    "let[@inline never] tick_g () = try tick () with e -> escaped e",
  ].join("\n");
}

/**
 * How a domain resumes (several domains): at its turn, after a `Domain.join` and before its
 * final poll, it runs the callbacks that the other domains' collections made ready on it, all
 * of them (`process_pending`, retried after each exception, which is logged), as the
 * simulation drains a resuming domain (RunOptions.exportHarness). `Domain.join` polls in its
 * wait loop: a callback raising there aborts the join, which is retried until it returns.
 */
export function resumeCode(em: Emitter): string {
  // Counted waits: Domain.join once the domain has finished (lib/export/_prelude.ts).
  const join = em.plan.countedWaits
    ? "(await_finished (Obj.field (Obj.repr d) 1); Domain.join d)"
    : "Domain.join d";
  if (!em.plan.canRaise) {
    return [
      "let[@inline never] resume_dom () = process_pending ()",
      `let[@inline never] join_dom (d : unit Domain.t) = ${join}`,
    ].join("\n");
  }
  return [
    "(* A domain resuming runs every callback made ready on it by other domains' collections;",
    "   Domain.join polls, and a callback raising there aborts it: it is retried. *)",
    "let rec resume_dom () =",
    "  match process_pending () with",
    "  | () -> ()",
    "  | exception e -> escaped e; ignore (Sys.opaque_identity (resume_dom ()))",
    "let rec join_dom (d : unit Domain.t) =",
    `  match ${join} with`,
    "  | () -> ()",
    "  | exception e -> escaped e; ignore (Sys.opaque_identity (join_dom d))",
  ].join("\n");
}
