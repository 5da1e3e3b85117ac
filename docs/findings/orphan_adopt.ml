(* Domain A tracks 32 young blocks (sampling rate 1) and ends with its profile running: its
   tracked blocks become orphans, adopted by a domain at its next collection (memprof.c,
   orphans_adopt). Domain B is still running, allocating. The deallocation callbacks run on
   whichever domain adopted the orphans. *)
let on_main = Atomic.make 0
let on_b = Atomic.make 0
let b_index = Atomic.make (-1)
let tracker = {
  Gc.Memprof.null_tracker with
  alloc_minor = (fun _ -> Some ());
  dealloc_minor = (fun () ->
    if (Domain.self () :> int) = Atomic.get b_index then Atomic.incr on_b
    else Atomic.incr on_main);
}
let stop = Atomic.make false
let () =
  let b = Domain.spawn (fun () ->
    Atomic.set b_index (Domain.self () :> int);
    while not (Atomic.get stop) do ignore (Sys.opaque_identity (ref 0)) done) in
  while Atomic.get b_index < 0 do Domain.cpu_relax () done;
  let a = Domain.spawn (fun () ->
    let _ = Gc.Memprof.start ~sampling_rate:1.0 ~callstack_size:0 tracker in
    for i = 0 to 31 do ignore (Sys.opaque_identity (ref i)) done) in
  Domain.join a;
  Gc.minor ();
  Gc.minor ();
  Atomic.set stop true;
  Domain.join b;
  Printf.printf "dealloc callbacks on main %d, on B %d\n" (Atomic.get on_main) (Atomic.get on_b)
