(* Anchor for bench/anchors_bench.ts: the real OCaml 5.3 runtime allocating the workload of
   bench/sampler_bench.ts's "memprof alloc" group — one million blocks of 1 to 6 words, every
   1,024th kept in a 64-slot table — under Gc.Memprof at the given rate (a tracker returning a
   value for every callback), or with no profile (rate 0). Prints the median allocations per
   second over the given number of rounds. *)
let sizes = [| 1; 2; 3; 4; 5; 6 |]
let keep = Array.make 64 (Obj.repr 0)

let[@inline never] block n : Obj.t =
  match n with
  | 1 -> Obj.repr (ref 0)
  | 2 -> Obj.repr (Sys.opaque_identity (0, 0))
  | 3 -> Obj.repr (Sys.opaque_identity (0, 0, 0))
  | 4 -> Obj.repr (Sys.opaque_identity (0, 0, 0, 0))
  | 5 -> Obj.repr (Sys.opaque_identity (0, 0, 0, 0, 0))
  | _ -> Obj.repr (Sys.opaque_identity (0, 0, 0, 0, 0, 0))

let round () =
  for i = 0 to 999_999 do
    let b = block sizes.(i mod 6) in
    if i land 1023 = 0 then keep.((i lsr 10) land 63) <- b
  done

let () =
  let rate = float_of_string Sys.argv.(1) and rounds = int_of_string Sys.argv.(2) in
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
