/**
 * External allocations (`Memtrace.External.alloc`) in an exported program: the program emulates
 * the part of memtrace that the simulation models (lib/tracer/tracer.ts), so that the real
 * runtime runs what memtrace would make it run, and judges it:
 *
 * - the sampler: memtrace's `Geometric_sampler` on `Random.State.make` with memtrace's fixed
 *   seed (OCaml's LXM generator, built as the standard library builds it but from the
 *   runtime's primitives, without linking `Random`: the same draws), its double-precision
 *   `log_approx`, and `bytes_before_ext_sample`, drawn once at initialisation as
 *   `Memtrace.start` draws it;
 * - `ext_alloc`'s fast path (a subtraction, written where the step is) and
 *   `ext_alloc_slowpath` (a function of its own, never inlined, as memtrace's, whose frame is
 *   on the callstack it takes): the lock, the sampling loop (which polls at its back-edge, as
 *   memtrace's), `Printexc.get_callstack max_int` (the same primitive, so the same array
 *   allocated), then, still locked, the callbacks that allocation made ready, run where
 *   memtrace's trace writing would first poll or allocate;
 * - the trackers' decisions while the lock is held: an allocation is not tracked (the
 *   trackers' code, lib/export/_emit_tracker.ts); a promotion or deallocation returns as
 *   usual (memtrace defers only the writing of its event);
 * - `External.free`: a sampled allocation's token is kept as its lifetime says, so that its
 *   release falls on the step the simulation frees it at (memtrace's `ext_free` takes the lock
 *   and writes an event: trace writing only, with nothing for the runtime to run).
 *
 * Nothing of memtrace's trace writing is emulated: the simulation's tracer alone writes the
 * trace (see docs/differential.md, "External allocations").
 * @module
 */
import type { Step } from "../scenario/spec.ts";
import { externalSamplingRate } from "../scenario/walk.ts";
import { MEMTRACE_SAMPLER_SEED } from "../tracer/mod.ts";
import type { Ctx } from "./_plan.ts";
import { camlFloat, type Emitter } from "./_emit.ts";
import { keepCode, sizeCode } from "./_emit_alloc.ts";
import type { HarnessBlock } from "./_harness_heap.ts";

/** What building the generator allocates, in order (measured with memprof at rate 1 and
 * `Gc.minor_words`, 23 words): the `[| dim |]` of `Bigarray.Array1.create`, the state (a
 * Bigarray: a 6-word custom block with 32 bytes out of the heap, kept), the seed's bytes and
 * their two MD5 digests. */
export const EXT_RAND_BLOCKS: readonly HarnessBlock[] = [
  { wosize: 1, fields: "ints", via: "dead" },
  { wosize: 6, fields: "noscan", via: "root", customMem: 32 },
  { wosize: 5, fields: "noscan", via: "dead" },
  { wosize: 3, fields: "noscan", via: "dead" },
  { wosize: 3, fields: "noscan", via: "dead" },
];

/** The program's emulation of memtrace's `External` (once per program, with its blocks). */
function emulation(em: Emitter): void {
  if (em.externalReady) return;
  em.externalReady = true;
  const rate = externalSamplingRate(em.sc);
  const exceptions = em.plan.canRaise ? em.plan.exceptions.length : 0;
  em.inits.push(externalEmulationCode(rate, { exceptions }));
  em.initBlocks.push(...externalBlocks(rate, { canFail: exceptions > 0 }));
}

/** Options of {@linkcode externalEmulationCode}. */
export interface EmulationOptions {
  /** How many exceptions (`E_0`…) the scenario's callbacks raise: with any, the slow path
   * catches what its locked part raises and marks the tracer failed, as memtrace's. */
  readonly exceptions?: number;
}

/**
 * The OCaml text of the emulation at external sampling rate `rate` (see the module doc): it
 * defines `ext_rand`, `ext_bits ()` (`Random.State.bits ext_rand`), `ext_lambda`,
 * `ext_draw_bytes ()` (the next gap, in bytes),
 * `ext_bytes` (`bytes_before_ext_sample`), `ext_locked` and `ext_alloc_slowpath ()`, and
 * needs the prelude's `process_pending`. With callbacks that raise
 * ({@linkcode EmulationOptions.exceptions}), also `ext_failed`: the slow path then returns
 * whether the allocation was sampled, and an exception raised while it holds the lock marks
 * the tracer failed (memtrace's `mark_failed`), is recorded (`record_exn`, kind
 * `tracer_failed`: the `report_exn` the program gives memtrace), and the slow path returns
 * false; once failed, it returns false at once (memtrace's `Is_stopped`).
 */
export function externalEmulationCode(rate: number, options: EmulationOptions = {}): string {
  const exceptions = options.exceptions ?? 0;
  const seed = MEMTRACE_SAMPLER_SEED;
  const hex = (w: number) => `0x${w.toString(16)}L`;
  // A rate of 1 or more gives a static 0. (no block); otherwise the quotient is boxed.
  const lambda = rate >= 1 ? "0." : `1. /. log1p (-. (${camlFloat(rate)}))`;
  return `(* ---- Memtrace.External, emulated as far as the simulation models it (lib/tracer):
   the sampler, the lock, the callstack taken under it. memtrace's trace writing is not
   emulated: the simulation's tracer alone writes the trace. ---- *)

(* Geometric_sampler's generator: Random.State.make [| memtrace's seed |], built as
   stdlib/random.ml builds it (the seed's 64-bit words and a byte 1, then 2, through MD5; the
   LXM state's fixes) from the runtime's own primitives, so that the program does not link the
   Random module, whose initialisation (and Digest's) would change its heap; each draw is
   caml_lxm_next's, as in Random.State.bits. *)
external ext_lxm_next :
  (int64, Bigarray.int64_elt, Bigarray.c_layout) Bigarray.Array1.t -> (int64 [@unboxed])
  = "caml_lxm_next" "caml_lxm_next_unboxed" [@@noalloc]
external ext_md5 : string -> int -> int -> string = "caml_md5_string"
external ext_set64 : bytes -> int -> int64 -> unit = "%caml_bytes_set64"
external ext_get64 : string -> int -> int64 = "%caml_string_get64"
let ext_rand =
  let s = Bigarray.Array1.create Bigarray.int64 Bigarray.c_layout 4 in
  let b = Bytes.create 33 in
  ext_set64 b 0 ${hex(seed[0])}; ext_set64 b 8 ${hex(seed[1])};
  ext_set64 b 16 ${hex(seed[2])}; ext_set64 b 24 ${hex(seed[3])};
  Bytes.unsafe_set b 32 '\\001';
  let d1 = ext_md5 (Bytes.unsafe_to_string b) 0 33 in
  Bytes.unsafe_set b 32 '\\002';
  let d2 = ext_md5 (Bytes.unsafe_to_string b) 0 33 in
  Bigarray.Array1.unsafe_set s 0 (Int64.logor (ext_get64 d1 0) 1L);
  Bigarray.Array1.unsafe_set s 1 (ext_get64 d1 8);
  let x0 = ext_get64 d2 0 and x1 = ext_get64 d2 8 in
  Bigarray.Array1.unsafe_set s 2 (if x0 = 0L then 1L else x0);
  Bigarray.Array1.unsafe_set s 3 (if x1 = 0L then 2L else x1);
  s

(* Random.State.bits ext_rand. *)
let ext_bits () = Int64.to_int (ext_lxm_next ext_rand) land 0x3FFF_FFFF

(* Geometric_sampler's 1 / log1p (-rate). *)
let ext_lambda = ${lambda}

(* Geometric_sampler.draw, in bytes (a gap of words, times 8): memtrace's double-precision
   log_approx of 30 random bits, scaled. Allocates nothing. *)
let[@inline never] ext_draw_bytes () =
  let u = Int32.of_int (ext_bits ()) in
  let f = Int64.bits_of_float (Int32.to_float (Int32.add (Int32.shift_left u 1) Int32.one)) in
  let e = Float.of_int (Int64.to_int (Int64.shift_right f 52) - 895) in
  let x =
    Int64.float_of_bits
      (Int64.logor (Int64.logand f 0xF_FFFF_FFFF_FFFFL) 0x3FF0_0000_0000_0000L) in
  let l =
    x *. (2.104659476859 +. x *. (-0.720478916626 +. x *. 0.107132064797))
    +. (-111.701724334061 +. 0.6931471805 *. e) in
  (1 + int_of_float (l *. ext_lambda)) * 8

(* bytes_before_ext_sample, drawn as Memtrace.start draws it; the tracer's lock. *)
let ext_bytes = ref (ext_draw_bytes ())
let ext_locked = ref false
${exceptions === 0 ? plainSlowPath : failingSlowPath(exceptions)}`;
}

const plainSlowPath = `
(* ext_alloc_slowpath: the lock; the sampling loop (a call in it: its back-edge polls, as
   memtrace's does); the callstack (memtrace's Printexc call); then, still locked, what its
   allocation made ready runs, where memtrace's trace writing would first poll. *)
let[@inline never] ext_alloc_slowpath () =
  ext_locked := true;
  while !ext_bytes <= 0 do
    ext_bytes := !ext_bytes + ext_draw_bytes ()
  done;
  ignore (Sys.opaque_identity (Printexc.get_callstack max_int));
  process_pending ();
  ext_locked := false`;

/** The slow path when callbacks may raise: memtrace's `match … with exception e ->
 * mark_failed s e; Null` around its locked part, and its `Is_stopped` once failed. */
function failingSlowPath(exceptions: number): string {
  const arms = Array.from({ length: exceptions }, (_, i) => `| E_${i} -> record_exn 7 ${i}`);
  return `let ext_failed = ref false

(* memtrace's report_exn, as the program gives it to Memtrace.start: the exception recorded
   (kind tracer_failed), nothing printed or allocated. *)
let[@inline never] ext_report e = match e with ${arms.join(" ")} | _ -> ()

(* ext_alloc_slowpath: unless the tracer failed, the lock; the sampling loop (a call in it: its
   back-edge polls, as memtrace's does); the callstack (memtrace's Printexc call); then, still
   locked, what its allocation made ready runs, where memtrace's trace writing would first
   poll. What a callback raises there marks the tracer failed (mark_failed: the lock released
   and stopped) and is reported; the allocation is then not sampled (false). *)
let[@inline never] ext_alloc_slowpath () =
  if !ext_failed then false else
  match
    ext_locked := true;
    while !ext_bytes <= 0 do
      ext_bytes := !ext_bytes + ext_draw_bytes ()
    done;
    ignore (Sys.opaque_identity (Printexc.get_callstack max_int));
    process_pending ()
  with
  | () -> ext_locked := false; true
  | exception e -> ext_locked := false; ext_failed := true; ext_report e; false`;
}

/** The blocks the emulation's initialisation allocates, in order, at external sampling rate
 * `rate`: the generator's ({@linkcode EXT_RAND_BLOCKS}), the boxed `1 / log1p (-rate)` (none
 * at a rate of 1 or more: a constant), and the two references (three when the tracer `canFail`:
 * `ext_failed`). */
export function externalBlocks(rate: number, { canFail }: { canFail: boolean }): HarnessBlock[] {
  const ref = { wosize: 1, fields: "ints", via: "root" } as const;
  return [
    ...EXT_RAND_BLOCKS,
    ...(rate >= 1 ? [] : [{ wosize: 1, fields: "noscan", via: "root" } as const]),
    ref,
    ref,
    ...(canFail ? [ref] : []),
  ];
}

/** The code of an external allocation step (its tick is the caller's): `ext_alloc`'s fast path,
 * and for a sampled one the slow path, then its token kept as its lifetime says; on another
 * domain than the main one, only its size's draw. */
export function extAllocCode(
  em: Emitter,
  st: Extract<Step, { kind: "extAlloc" }>,
  ctx: Ctx,
): string {
  emulation(em);
  const bytes = sizeCode(em, st.bytes);
  // memtrace's ext_alloc on another domain than the main one returns at once (its size, an
  // argument, is computed all the same), on its threads too.
  if (!em.onMainDomain(ctx)) {
    return bytes.constant !== undefined ? "()" : `ignore (${bytes.draw})`;
  }
  const keep = keepCode(em, "0", st.lifetime, ctx, { linkable: false });
  const sampled = em.plan.canRaise
    ? `if ext_alloc_slowpath () then begin ${keep} end`
    : `ext_alloc_slowpath (); ${keep}`;
  return `let n = !ext_bytes - ${bytes.draw} in ext_bytes := n; ` +
    `if n <= 0 then begin ${sampled} end`;
}
