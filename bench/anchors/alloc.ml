(* Anchors for bench/_anchors.ts: the real OCaml 5.3 runtime allocating the workloads our
   simulated runtime runs, under Gc.Memprof at the given rate (a tracker whose callbacks all
   return a value), or with no profile (rate 0). Prints the median allocations per second over
   the given number of rounds (one untimed round first).

   Usage: alloc WORKLOAD RATE ROUNDS, WORKLOAD one of
   - alloc: sampler_bench.ts's "memprof alloc" group, one million blocks of 1 to 6 words, every
     1,024th kept in a 64-slot table;
   - short_lived: scenario_bench.ts's first scenario, one million 2-word blocks, none kept;
   - mixed: scenario_bench.ts's "mixed" scenario, 500,000 times a block of 1 to 16 words (sizes
     drawn uniformly before timing), every fourth kept for 1,000 steps (a 250-slot ring), then
     a combined allocation of a 2-word and a 3-word block; one million allocations a round (the
     combined allocation counts as one, as in the scenario's figure). *)

let keep = Array.make 64 (Obj.repr 0)

(* A fresh block of n words whose fields are x. The fields must not be constants: ocamlopt
   compiles an immutable tuple of constants such as (0, 0) to one static block, so such a
   "block" allocates nothing (only [ref], being mutable, would have allocated). *)
let[@inline never] block n x : Obj.t =
  match n with
  | 1 -> Obj.repr (ref x)
  | 2 -> Obj.repr (Sys.opaque_identity (x, x))
  | 3 -> Obj.repr (Sys.opaque_identity (x, x, x))
  | 4 -> Obj.repr (Sys.opaque_identity (x, x, x, x))
  | 5 -> Obj.repr (Sys.opaque_identity (x, x, x, x, x))
  | 6 -> Obj.repr (Sys.opaque_identity (x, x, x, x, x, x))
  | 7 -> Obj.repr (Sys.opaque_identity (x, x, x, x, x, x, x))
  | 8 -> Obj.repr (Sys.opaque_identity (x, x, x, x, x, x, x, x))
  | 9 -> Obj.repr (Sys.opaque_identity (x, x, x, x, x, x, x, x, x))
  | 10 -> Obj.repr (Sys.opaque_identity (x, x, x, x, x, x, x, x, x, x))
  | 11 -> Obj.repr (Sys.opaque_identity (x, x, x, x, x, x, x, x, x, x, x))
  | 12 -> Obj.repr (Sys.opaque_identity (x, x, x, x, x, x, x, x, x, x, x, x))
  | 13 -> Obj.repr (Sys.opaque_identity (x, x, x, x, x, x, x, x, x, x, x, x, x))
  | 14 -> Obj.repr (Sys.opaque_identity (x, x, x, x, x, x, x, x, x, x, x, x, x, x))
  | 15 -> Obj.repr (Sys.opaque_identity (x, x, x, x, x, x, x, x, x, x, x, x, x, x, x))
  | _ -> Obj.repr (Sys.opaque_identity (x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x))

let sizes6 = [| 1; 2; 3; 4; 5; 6 |]

let alloc_round () =
  for i = 0 to 999_999 do
    let b = block sizes6.(i mod 6) i in
    if i land 1023 = 0 then keep.((i lsr 10) land 63) <- b
  done

let short_lived_round () =
  for i = 0 to 999_999 do
    ignore (Sys.opaque_identity (i, i))
  done

(* Both blocks are allocated in one basic block: ocamlopt combines them (one Alloc of 7 words). *)
let[@inline never] pair_and_triple i =
  let p = (i, i) and t = (i, i, i) in
  ignore (Sys.opaque_identity p);
  ignore (Sys.opaque_identity t)

let ring = Array.make 250 (Obj.repr 0)
let sizes16 =
  let st = Random.State.make [| 9 |] in
  Array.init 500_000 (fun _ -> 1 + Random.State.int st 16)

let mixed_round () =
  for i = 0 to 499_999 do
    let b = block sizes16.(i) i in
    if i land 3 = 3 then ring.((i lsr 2) mod 250) <- b;
    pair_and_triple i
  done

let () =
  let round =
    match Sys.argv.(1) with
    | "alloc" -> alloc_round
    | "short_lived" -> short_lived_round
    | "mixed" -> mixed_round
    | w -> prerr_endline ("alloc: unknown workload " ^ w); exit 2
  in
  let rate = float_of_string Sys.argv.(2) and rounds = int_of_string Sys.argv.(3) in
  let tracker = {
    Gc.Memprof.alloc_minor = (fun i -> Some i.Gc.Memprof.size);
    alloc_major = (fun i -> Some i.Gc.Memprof.size);
    promote = (fun x -> Some x);
    dealloc_minor = (fun _ -> ());
    dealloc_major = (fun _ -> ());
  } in
  let p = if rate > 0. then Some (Gc.Memprof.start ~sampling_rate:rate ~callstack_size:16 tracker) else None in
  round ();
  let times = Array.init rounds (fun _ ->
    let t0 = Unix.gettimeofday () in
    round ();
    Unix.gettimeofday () -. t0) in
  (match p with Some _ -> Gc.Memprof.stop () | None -> ());
  Array.sort compare times;
  Printf.printf "%.0f\n" (1e6 /. times.(rounds / 2))
