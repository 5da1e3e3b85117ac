/**
 * The fixed part of an exported OCaml program: the harness that records callbacks into
 * preallocated int arrays, keeps blocks alive in preallocated slot arrays, counts steps, draws
 * the scenario's sizes and hands the baton between domains. Everything here is allocated when
 * the module initialises, before the scenario starts, and nothing in it allocates afterwards:
 * the program's heap holds only what the scenario declares. The tables it keeps are declared
 * from their one description (_harness_tables.ts), which the heap model reads too.
 * @module
 */
import { declOf, type HarnessShape } from "./_harness_tables.ts";

/** Sizes of the harness's tables, fixed when the program is written. */
export interface PreludeParams {
  /** Records the callback log can hold. */
  readonly logCapacity: number;
  /** Deepest loop nesting on any domain. */
  readonly maxDepth: number;
  /** Most callstack frames recorded per allocation callback. */
  readonly maxFrames: number;
  /** Number of domains the scenario names (main first). */
  readonly domains: number;
  /** Number of systhreads with programs of their own (their loops follow the domains'). */
  readonly threads: number;
  /** Profile slots (one per profile name). */
  readonly profiles: number;
  /** Keep-site capacities, by site. */
  readonly sites: readonly number[];
  /** Sites kept for a number of steps (ring buffers with due steps). */
  readonly fifoSites: readonly number[];
  /** Seed of the scenario's size generator. */
  readonly seed: number;
  /** Expected minor heap size in words. */
  readonly minorHeapWords: number;
  /** runtime_events ring size, log2 of words. */
  readonly ringLog2: number;
  /** Number of distinct exceptions callbacks raise. */
  readonly exceptions: number;
}

/** Record layout, in ints, shared with the log parser: see {@linkcode REC}. */
export const REC = {
  kind: 0,
  domain: 1,
  id: 2,
  size: 3,
  nSamples: 4,
  source: 5,
  outcome: 6,
  depth: 7,
  /** Loop indices follow, then the callstack length and the frames. */
  loops: 8,
} as const;

/** Record kinds, as the program writes them. */
export const KIND_NAMES = [
  "alloc_minor",
  "alloc_major",
  "promote",
  "dealloc_minor",
  "dealloc_major",
  "escaped",
  "caught",
  "tracer_failed",
] as const;

/** Outcome codes: 0 None, 1 Some, 2 unit (deallocation), 3 + k raised exception k. */
export const OUTCOME_RAISE_BASE = 3;

/** The OCaml text of the harness. */
export function prelude(p: PreludeParams): string {
  const stride = REC.loops + p.maxDepth + 1 + p.maxFrames;
  return `[@@@ocaml.warning "-a"]

(* ---- Harness. Allocated at initialisation; allocation-free afterwards. ---- *)

let z = Sys.opaque_identity 0
let expected_minor_heap_words = ${p.minorHeapWords}
let ring_log2 = ${p.ringLog2}

(* The callback log: ${p.logCapacity} records of ${stride} ints, outside the OCaml heap (a
   Bigarray's data is malloc'd), so that the program's bookkeeping does not grow the major heap. *)
let log_capacity = ${p.logCapacity}
let stride = ${stride}
let max_depth = ${p.maxDepth}
let max_frames = ${p.maxFrames}
let cblog : (int, Bigarray.int_elt, Bigarray.c_layout) Bigarray.Array1.t =
  Bigarray.Array1.create Bigarray.int Bigarray.c_layout (log_capacity * stride)
let () = Bigarray.Array1.fill cblog 0
${declOf("log_n", p)}
${declOf("log_overflow", p)}
${declOf("frozen", p)}
${declOf("serial", p)}

(* Per domain (by the scenario's domain number), then per systhread with a program: [depth; i1;
   i2; ...], the enclosing loops. *)
${declOf("loops", p)}
(* Domain.self_index () -> the scenario's number of what runs steps there (its domain, or the
   systhread holding the baton). *)
${declOf("ord_of_index", p)}

(* Executed steps, as the simulation counts them (lifetimes of kept blocks are in steps). *)
${declOf("step", p)}

(* Keep sites: slot arrays, ring buffers with due steps for keep.steps. *)
${declOf("site_capacity", p)}
${declOf("ks", p)}
${declOf("kd", p)}
${declOf("kh", p)}
${declOf("kt", p)}
${declOf("fifo_sites", p)}
${declOf("next_due", p)}

(* Profiles: handles and per-callback call counts, by profile slot. *)
${declOf("prof", p)}
${declOf("calls", p)}

(* Domains: handles and startup handshakes, by domain number. *)
${declOf("doms", p)}
${declOf("started", p)}

(* An empty weak array: [Weak.get] on it allocates nothing and then runs pending actions, as
   caml_process_pending_actions does. *)
${declOf("empty_weak", p)}

(* The scenario's own size generator (splitmix32, as lib/scenario/rng.ts). *)
${declOf("rng", p)}

let fail msg =
  prerr_string "memprof-lab harness: ";
  prerr_endline msg;
  exit 3

(* ---- Recording ---- *)

(* (issue 22, polls helper) The records are written by recursions, not loops: a loop's back-edge
   would poll, and a callback entered with an action pending (caml_callback makes it an
   interrupt) would do the GC work due there, which the simulation does at the callback's first
   allocation (its Some) or, for None, at the program's next allocation. No call is a tail call
   (a tail call to the function itself would poll too). *)
let rec record_loops b o j d =
  if j <= d then begin
    cblog.{b + ${REC.depth} + j} <- loops.(o + j);
    ignore (Sys.opaque_identity (record_loops b o (j + 1) d))
  end

let rec record_frames f cs j n =
  if j < n then begin
    cblog.{f + 1 + j} <- (Obj.magic (Printexc.get_raw_backtrace_slot cs j) : int);
    ignore (Sys.opaque_identity (record_frames f cs (j + 1) n))
  end

(* Two domains may record at once (a spawned domain's first callbacks and its parent's): the
   record's slot and the allocation's number are taken atomically (the refs are atomics' blocks). *)
let[@inline never] take (r : int ref) = Atomic.fetch_and_add (Obj.magic r : int Atomic.t) 1

let[@inline never] record kind id =
  if !frozen then -1
  else begin
    let r = take log_n in
    if r >= log_capacity then begin log_overflow := true; -1 end
    else begin
      let b = r * stride in
      let di = Domain.self_index () in
      cblog.{b + ${REC.kind}} <- kind;
      cblog.{b + ${REC.domain}} <- di;
      cblog.{b + ${REC.id}} <- id;
      let o = ord_of_index.(di) * (max_depth + 1) in
      let d = loops.(o) in
      cblog.{b + ${REC.depth}} <- d;
      record_loops b o 1 d;
      b
    end
  end

let[@inline never] next_id () = take serial + 1

let[@inline never] record_alloc kind id (info : Gc.Memprof.allocation) =
  let b = record kind id in
  if b >= 0 then begin
    cblog.{b + ${REC.size}} <- info.size;
    cblog.{b + ${REC.nSamples}} <- info.n_samples;
    cblog.{b + ${REC.source}} <-
      (match info.source with Gc.Memprof.Normal -> 0 | Gc.Memprof.Marshal -> 1 | Gc.Memprof.Custom -> 2);
    let cs = info.callstack in
    let n = Printexc.raw_backtrace_length cs in
    let n = if n > max_frames then max_frames else n in
    let f = b + ${REC.loops} + max_depth in
    cblog.{f} <- n;
    record_frames f cs 0 n
  end;
  b

let[@inline never] set_outcome b o = if b >= 0 then cblog.{b + ${REC.outcome}} <- o

let[@inline never] record_exn kind e =
  let b = record kind 0 in
  if b >= 0 then cblog.{b + ${REC.size}} <- e

let[@inline never] bump slot kind =
  let i = slot * 5 + kind in
  let n = calls.(i) + 1 in
  calls.(i) <- n;
  n

(* ---- Steps and lifetimes ---- *)

(* Releases are recursions, not loops: a loop's back-edge would poll between two releases,
   where the simulation releases everything due and then polls once (the release's own poll,
   below). No call here is a tail call (a tail call to the function itself would poll too), and
   ranges are halved, so that the recursion stays shallow. *)
let rec clear_range (a : Obj.t array) cap lo hi =
  if hi - lo = 1 then a.(lo mod cap) <- Obj.repr 0
  else if hi - lo > 1 then begin
    let mid = lo + (hi - lo) / 2 in
    clear_range a cap lo mid;
    ignore (Sys.opaque_identity (clear_range a cap mid hi))
  end

(* keep.steps site [s]: releases the blocks due from its head. *)
let rec release_due_at s cap =
  let h = kh.(s) in
  if h < kt.(s) && kd.(s).(h mod cap) <= !step then begin
    ks.(s).(h mod cap) <- Obj.repr 0;
    kh.(s) <- h + 1;
    ignore (Sys.opaque_identity (release_due_at s cap))
  end

(* The keep.steps sites from the [j]-th: releases what is due; returns the next due step. *)
let rec release_due_from j nd =
  if j >= Array.length fifo_sites then nd
  else begin
    let s = fifo_sites.(j) in
    let cap = Array.length ks.(s) in
    release_due_at s cap;
    let nd =
      if kh.(s) < kt.(s) && kd.(s).(kh.(s) mod cap) < nd then kd.(s).(kh.(s) mod cap) else nd
    in
    Sys.opaque_identity (release_due_from (j + 1) nd)
  end

(* Everything due is released and the next due step known before the one poll, so that a
   callback raising there leaves the releases done. *)
let[@inline never] release_due () =
  next_due := release_due_from 0 max_int;
  Sys.poll_actions ()

let[@inline never] tick () =
  step := !step + 1;
  if !step >= !next_due then release_due ()

let[@inline never] keep_steps s n (b : Obj.t) =
  let cap = Array.length ks.(s) in
  if kt.(s) - kh.(s) >= cap then fail (Printf.sprintf "keep site %d overflowed (%d slots)" s cap);
  let t = kt.(s) mod cap in
  ks.(s).(t) <- b;
  let due = !step + n + 1 in
  kd.(s).(t) <- due;
  kt.(s) <- kt.(s) + 1;
  if due < !next_due then next_due := due

let[@inline never] keep_slot s (b : Obj.t) =
  let cap = Array.length ks.(s) in
  if kt.(s) >= cap then fail (Printf.sprintf "keep site %d overflowed (%d slots)" s cap);
  ks.(s).(kt.(s)) <- b;
  kt.(s) <- kt.(s) + 1

(* keep.ring: slot k mod capacity, replacing (releasing) what was stored there. *)
let[@inline never] keep_ring s (b : Obj.t) =
  let cap = Array.length ks.(s) in
  let k = kt.(s) in
  ks.(s).(k) <- b;
  kt.(s) <- (if k + 1 = cap then 0 else k + 1)

let[@inline never] release_ring s =
  let cap = Array.length ks.(s) in
  clear_range ks.(s) cap 0 cap

(* keep.list: the block's first field links the previous head; the head is stored in slot 0. *)
let[@inline never] keep_list s (b : Obj.t) =
  Obj.set_field b 0 ks.(s).(0);
  ks.(s).(0) <- b

(* Named releases (each release step polls once, after them). *)
let[@inline never] release_site s =
  clear_range ks.(s) (Array.length ks.(s)) kh.(s) kt.(s);
  kh.(s) <- kt.(s)

let[@inline never] release_slots s =
  clear_range ks.(s) (Array.length ks.(s)) 0 kt.(s);
  kt.(s) <- 0

(* Marshal.from_string without its OCaml wrappers (which would add callstack frames). *)
external input_value_from_string : string -> int -> Obj.t = "caml_input_value_from_bytes"

let[@inline never] process_pending () = ignore (Sys.opaque_identity (Weak.get empty_weak 0))

(* ---- Sizes ---- *)

let[@inline never] rng_next () =
  let st = (!rng + 0x9e3779b9) land 0xffffffff in
  rng := st;
  let x = ((st lxor (st lsr 16)) * 0x85ebca6b) land 0xffffffff in
  let x = ((x lxor (x lsr 13)) * 0xc2b2ae35) land 0xffffffff in
  (x lxor (x lsr 16)) land 0xffffffff

let[@inline never] size_uniform lo hi =
  let f = Float.of_int (rng_next ()) /. 4294967296. in
  lo + int_of_float (f *. Float.of_int (hi - lo + 1))

let[@inline never] size_choice (c : int array) =
  let f = Float.of_int (rng_next ()) /. 4294967296. in
  c.(int_of_float (f *. Float.of_int (Array.length c)))

(* [l1mp] is log1p(-p) as the simulation computed it; [log] is the C library's. *)
let[@inline never] size_geometric p l1mp cap =
  if p >= 1. then 1
  else begin
    let u = 1. -. Float.of_int (rng_next ()) /. 4294967296. in
    let k = 1 + int_of_float (Float.floor (log u /. l1mp)) in
    if k > cap then cap else k
  end

(* ---- The baton: one domain runs scenario steps at a time ---- *)

${declOf("turn", p)}
${declOf("baton", p)}
${declOf("baton_moved", p)}

(* The waits are recursions, not loops: a loop's back-edge would poll, and run callbacks (made
   ready by the other domains' collections) with the baton's mutex held; the domain runs them
   once it has its turn (resume_dom). *)
let rec wait_turn_locked k =
  if !turn < k then begin
    Condition.wait baton_moved baton;
    ignore (Sys.opaque_identity (wait_turn_locked k))
  end

let[@inline never] wait_turn k =
  Mutex.lock baton;
  wait_turn_locked k;
  Mutex.unlock baton

let[@inline never] pass_turn k =
  Mutex.lock baton;
  turn := k;
  Condition.broadcast baton_moved;
  Mutex.unlock baton

(* One-way handshakes between domains, on the baton's mutex: a flag per domain number. *)
let[@inline never] raise_flag (flags : int array) ord =
  Mutex.lock baton;
  flags.(ord) <- 1;
  Condition.broadcast baton_moved;
  Mutex.unlock baton

let rec wait_flag_locked (flags : int array) ord =
  if flags.(ord) = 0 then begin
    Condition.wait baton_moved baton;
    ignore (Sys.opaque_identity (wait_flag_locked flags ord))
  end

let[@inline never] wait_flag (flags : int array) ord =
  Mutex.lock baton;
  wait_flag_locked flags ord;
  Mutex.unlock baton

(* A spawned domain says it started; a joined domain is let end. *)
${declOf("released", p)}
let announce_started ord = raise_flag started ord
let wait_started ord = wait_flag started ord
let release_domain ord = raise_flag released ord
let wait_released ord = wait_flag released ord
`;
}

/**
 * The OCaml text of the systhreads' baton (for scenarios with systhreads running programs of
 * their own, on the main domain): thread 0 is the main thread, thread `k` ≥ 1 runs
 * `run_thread_k`. Exactly one thread runs scenario steps at a time; the others wait for their
 * turn in `Condition.wait` on a condition of their own (a blocking section: the master lock is
 * free for the thread whose turn it is, and no other thread ever waits for that lock, so that
 * `Thread.yield` never switches). A thread gives the baton only where the scenario says. The
 * waits are not loops: a loop's back-edge would poll, and run callbacks, in the baton's code.
 */
export function threadsPrelude(p: {
  /** Systhreads with programs. */
  readonly threads: number;
  /** Domains (the threads' loop contexts follow theirs). */
  readonly domains: number;
  /** Counted waits (several domains): the baton's mutex is taken by spinning, never by a
   * blocking `Mutex.lock` (see {@linkcode countedWaitsPrelude}). */
  readonly spin?: boolean;
  /** How many of the threads the program's initialisation creates (the main domain's, first);
   * the others are a spawned domain's. Default: all. */
  readonly initThreads?: number;
  /** The domains whose main threads pass the baton of their threads (see
   * `HarnessShape.batonOrds`). */
  readonly batonOrds?: readonly number[];
  /** The domain of each thread with a program (see `HarnessShape.threadDomains`). */
  readonly threadDomains?: readonly number[];
}): string {
  // The thread tables depend on the numbers of threads and domains only.
  const t = { ...p, maxDepth: 0, profiles: 0, sites: [], exceptions: 0 };
  // With counted waits, the baton's mutex is spun for only where the scenario passes the baton:
  // at initialisation (th_create, th_start) a spinning thread would keep the domain's master
  // lock from the thread holding the mutex, which may need it back (caml_enter_blocking_section's
  // retry), and no profile runs then.
  return threadsPreludeText(t, p.spin === true);
}

/** Taking the baton's mutex without a blocking section (a contended `Mutex.lock` enters one),
 * with the counted waits. */
const SPIN_LOCK =
  `(* The baton's mutex, taken without a blocking section: a contended Mutex.lock enters one,
   whose end draws a sampling trigger (counted waits). Only another domain can hold it when
   the scenario passes the baton: the main domain's other threads hold it only inside their
   own waits. *)
let rec lock_baton () =
  if not (Mutex.try_lock baton) then begin
    Domain.cpu_relax ();
    ignore (Sys.opaque_identity (lock_baton ()))
  end
`;

function threadsPreludeText(t: HarnessShape, spin: boolean): string {
  // Threads of spawned domains: each domain's threads pass a baton of their own (th_lock), and
  // the loop context to set is the running domain's.
  const spawned = (t.batonOrds?.length ?? 0) > 0;
  const dom = spawned ? "Domain.self_index ()" : "0";
  // How th_pass, th_join and th_end take the baton's mutex, and th_wait waits.
  const lock = spawned ? "th_acquire me;" : spin ? "lock_baton ();" : "Mutex.lock baton;";
  const mutex = spawned ? "th_lock.(me)" : "baton";
  return `(* ---- Systhreads: one runs scenario steps at a time, the others wait for their turn ---- *)
${spin ? `\n${SPIN_LOCK}` : ""}
external thread_cleanup : unit -> unit = "caml_thread_cleanup"

${declOf("th_turn", t)}
${declOf("th_cond", t)}
${declOf("th_handed_by", t)}
${declOf("th_joiner", t)}
${declOf("th_ended", t)}
(* Created in the scenario (all are created before it runs), and waiting in a join. *)
${declOf("th_spawned", t)}
let () = th_spawned.(0) <- 1
${declOf("th_joining", t)}
${declOf("th_parked", t)}
${declOf("th_parked_cond", t)}
${declOf("th_handle", t)}
(* Each thread's loop context (see [loops]). *)
${declOf("th_ctx", t)}
(* Thread.id -> thread number, for callbacks (they run on the thread that allocated or polled). *)
${declOf("th_of_id", t)}
let[@inline never] th_self () = th_of_id.(Thread.id (Thread.self ()))
${
    spawned
      ? `${declOf("th_lock", t)}

(* Takes the mutex of thread [me]'s baton: the harness's, spinning (other domains take it),
   or its spawned domain's own. *)
let[@inline never] th_acquire me =
  let m = th_lock.(me) in
  if m == baton then lock_baton () else Mutex.lock m
`
      : ""
  }
(* With the baton's mutex held: waits until it is thread [me]'s turn. *)
let[@inline never] th_wait me =
  if !th_turn <> me then begin
    Condition.wait th_cond.(me) ${mutex};
    if !th_turn <> me then fail "a systhread woke up out of turn"
  end

(* Thread [me] passes the baton to thread [k] and waits for it to come back. *)
let[@inline never] th_pass me k =
  ${lock}
  th_turn := k;
  th_handed_by.(k) <- me;
  Condition.signal th_cond.(k);
  th_wait me;
  Mutex.unlock ${mutex};
  ord_of_index.(${dom}) <- th_ctx.(me)

(* Whether thread [k] can take the baton from a ring of threads (act.yieldToNext). *)
let th_can_run k = th_spawned.(k) = 1 && th_ended.(k) = 0 && th_joining.(k) = 0
${
    spawned
      ? `
(* The same, from thread [me]: a thread of another domain (whose baton's mutex is another)
   cannot take it. *)
let th_can_run_from me k = th_lock.(k) == th_lock.(me) && th_can_run k
`
      : ""
  }
(* Thread.join: thread [me] passes the baton to thread [k] until [k] ends (unless it did). *)
let[@inline never] th_join me k =
  if th_ended.(k) = 0 then begin
    ${lock}
    th_joining.(me) <- 1;
    th_joiner.(k) <- me;
    th_turn := k;
    th_handed_by.(k) <- me;
    Condition.signal th_cond.(k);
    th_wait me;
    th_joining.(me) <- 0;
    Mutex.unlock ${mutex};
    ord_of_index.(${dom}) <- th_ctx.(me)
  end;
  Thread.join (Obj.obj th_handle.(k) : Thread.t)

(* Thread [me]'s program ended: the baton goes to the thread joining it, or else back to the
   thread that last passed it. Then Thread.create's wrapper ends the thread. *)
let[@inline never] th_end me =
  ${lock}
  th_ended.(me) <- 1;
  let k = if th_joiner.(me) >= 0 then th_joiner.(me) else th_handed_by.(me) in
  th_turn := k;
  Condition.signal th_cond.(k);
  Mutex.unlock ${mutex}

(* Thread [me] starts, says so, and waits for its first turn. *)
let[@inline never] th_start me =
  th_of_id.(Thread.id (Thread.self ())) <- me;
  Mutex.lock baton;
  th_parked.(me) <- 1;
  Condition.broadcast th_parked_cond;
  th_wait me;
  Mutex.unlock baton;
  ord_of_index.(${dom}) <- th_ctx.(me)

(* At initialisation: thread [me] is created and waits for its first turn. *)
let th_create me (f : unit -> unit) =
  th_handle.(me) <- Obj.repr (Thread.create f ());
  Mutex.lock baton;
  while th_parked.(me) = 0 do Condition.wait th_parked_cond baton done;
  Mutex.unlock baton
${spawned ? SPAWNED_THREADS : ""}`;
}

/** Threads with programs of spawned domains, created by their domain during the run. Their
 * baton's mutex is their domain's own (`th_lock`), which no other domain takes: `Mutex.lock`
 * never waits for it there but at a thread's start, whose creator may still hold it. */
const SPAWNED_THREADS = `
(* A new thread takes its domain's mutex once its creator, waiting for it to park, released it
   (in Condition.wait, just after the domain's lock): it spins, where a contended Mutex.lock
   would enter a blocking section, whose end draws a sampling trigger. Thread.yield gives the
   domain's lock to a thread waiting for it, if any: a creator that takes it back inside
   Condition.wait's blocking section still holds the mutex. A recursion, not a loop (a loop's
   back edge would poll). *)
let rec th_take m =
  if not (Mutex.try_lock m) then begin
    Thread.yield ();
    ignore (Sys.opaque_identity (th_take m))
  end

(* Thread [me], a spawned domain's, starts, says so, and waits for its first turn. *)
let[@inline never] th_start_spawned me =
  th_of_id.(Thread.id (Thread.self ())) <- me;
  th_take th_lock.(me);
  th_parked.(me) <- 1;
  th_spawned.(me) <- 1;
  Condition.broadcast th_parked_cond;
  th_wait me;
  Mutex.unlock th_lock.(me);
  ord_of_index.(Domain.self_index ()) <- th_ctx.(me)

(* A spawned domain creates thread [me], which waits for its first turn (it can take the baton
   from then on: th_spawned), then stops the tick thread that Thread.create started again, and
   polls: the callbacks of Thread.create's blocks made in C run there, with the mutex released
   (they may pass the baton). The wait is no loop: a loop's back edge would poll, the mutex
   held. *)
let[@inline never] th_create_spawned me (f : unit -> unit) =
  th_handle.(me) <- Obj.repr (Thread.create f ());
  let m = th_lock.(me) in
  Mutex.lock m;
  if th_parked.(me) = 0 then begin
    Condition.wait th_parked_cond m;
    if th_parked.(me) = 0 then fail "a domain woke up before its new thread parked"
  end;
  Mutex.unlock m;
  thread_cleanup ();
  Sys.poll_actions ()
`;

/**
 * The OCaml text of the counted waits (a program linked with the threads library and running
 * several domains; lib/scenario/engine/_domain_waits.ts says why): it redefines the domains'
 * baton so that each wait of a domain is exactly one blocking section, whatever the timing.
 * The baton's mutex is taken by spinning on `Mutex.try_lock` (a contended `Mutex.lock` enters
 * a blocking section); each domain waits on a condition of its own, which is signalled only
 * for what it waits for; a wait whose event came already goes through `Unix.sleepf 0.`; and
 * `Domain.join` is called once the joined domain has finished, so that it never waits. The
 * spins are recursions, not loops (a loop's back-edge would poll); `Domain.cpu_relax` takes
 * part in the other domains' stop-the-world sections meanwhile.
 */
export function countedWaitsPrelude(p: {
  /** Domains the scenario names. */
  readonly domains: number;
}): string {
  const t = { domains: p.domains, maxDepth: 0, profiles: 0, sites: [], exceptions: 0 };
  return `(* ---- Counted waits: each wait of a domain is one blocking section ---- *)

${declOf("dom_cond", t)}

(* Domain [me] waits until its event came (turn [k], or a flag): with the baton's mutex held,
   on its own condition (one wake-up, the event's own signal), or, if the event came already,
   by sleeping for no time. Either way, one blocking section. *)
let[@inline never] wait_turn me k =
  lock_baton ();
  if !turn < k then begin
    Condition.wait dom_cond.(me) baton;
    let ok = !turn >= k in
    Mutex.unlock baton;
    if not ok then fail "a domain woke up out of turn"
  end else begin
    Mutex.unlock baton;
    Unix.sleepf 0.
  end

(* Turn [k] goes to domain [ord]. *)
let[@inline never] pass_turn k ord =
  lock_baton ();
  turn := k;
  Condition.signal dom_cond.(ord);
  Mutex.unlock baton

let[@inline never] raise_flag (flags : int array) ord waiter =
  lock_baton ();
  flags.(ord) <- 1;
  Condition.signal dom_cond.(waiter);
  Mutex.unlock baton

let[@inline never] wait_flag (flags : int array) ord me =
  lock_baton ();
  if flags.(ord) = 0 then begin
    Condition.wait dom_cond.(me) baton;
    let ok = flags.(ord) <> 0 in
    Mutex.unlock baton;
    if not ok then fail "a domain woke up before its handshake"
  end else begin
    Mutex.unlock baton;
    Unix.sleepf 0.
  end

(* Domain [ord], spawned by domain [parent], says it started; a joined domain is let end. *)
let announce_started ord parent = raise_flag started ord parent
let wait_started ord me = wait_flag started ord me
let release_domain ord = raise_flag released ord ord
let wait_released ord = wait_flag released ord ord

(* Until domain [d] has finished: its term_sync (stdlib/domain.ml: the handle's second field)
   holds Finished, and the domain released its mutex (runtime/domain.c, after
   domain_terminate). *)
let rec await_finished (ts : Obj.t) =
  let m : Mutex.t = Obj.obj (Obj.field ts 1) in
  if Obj.is_block (Obj.field ts 0) && Mutex.try_lock m then Mutex.unlock m
  else begin
    Domain.cpu_relax ();
    ignore (Sys.opaque_identity (await_finished ts))
  end
`;
}

/** The OCaml text that prints the log after the run (allocation no longer matters then). */
export function epilogue(): string {
  return `
let print_log ~minors ~majors =
  let out = Buffer.create 65536 in
  let p = Buffer.add_string out in
  p "memprof-lab differential log 1\\n";
  p (Printf.sprintf "minor_heap_words %d\\n" (Gc.get ()).Gc.minor_heap_size);
  for r = 0 to min !log_n log_capacity - 1 do
    let b = r * stride in
    let kind = cblog.{b + ${REC.kind}} in
    p (Printf.sprintf "%d %d %d %d %d %d %d %d" kind cblog.{b + ${REC.domain}} cblog.{b + ${REC.id}}
         cblog.{b + ${REC.size}} cblog.{b + ${REC.nSamples}} cblog.{b + ${REC.source}} cblog.{b + ${REC.outcome}}
         cblog.{b + ${REC.depth}});
    for j = 1 to cblog.{b + ${REC.depth}} do p (Printf.sprintf " %d" cblog.{b + ${REC.depth} + j}) done;
    if kind <= 1 then begin
      let f = b + ${REC.loops} + max_depth in
      let n = cblog.{f} in
      p (Printf.sprintf " | %d" n);
      for j = 0 to n - 1 do
        let slot : Printexc.raw_backtrace_slot = Obj.magic cblog.{f + 1 + j} in
        let name =
          match Printexc.Slot.name (Printexc.convert_raw_backtrace_slot slot) with
          | Some s -> s
          | None -> "?"
          | exception _ -> "?"
        in
        p " ";
        p name
      done
    end;
    p "\\n"
  done;
  p (Printf.sprintf "minor_collections %d\\n" minors);
  p (Printf.sprintf "major_cycles %d\\n" majors);
  p (Printf.sprintf "log_overflow %b\\n" !log_overflow);
  print_string (Buffer.contents out)
`;
}
