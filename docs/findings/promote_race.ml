(* Two domains. Domain 1 allocates 64 tracked blocks (sampling rate 1), keeps them in a global
   array, and waits on a condition variable (a blocking section) while domain 0 stores 20,000
   young blocks in another global array and forces a minor collection. Each domain promotes a
   share of both remembered sets; domain 1's memprof then reports each tracked block promoted or
   dead. *)
let cache = Array.make 64 (Obj.repr 0)
(* Domain 0's own remembered set: many young blocks stored in a major array. *)
let big = Array.make 20_000 (Obj.repr 0)
let promoted = Atomic.make 0
let dead = Atomic.make 0
let tracker = {
  Gc.Memprof.null_tracker with
  alloc_minor = (fun _ -> Some ());
  promote = (fun () -> Atomic.incr promoted; Some ());
  dealloc_minor = (fun () -> Atomic.incr dead);
}
let m = Mutex.create ()
let c = Condition.create ()
let phase = ref 0
let set p = Mutex.lock m; phase := p; Condition.broadcast c; Mutex.unlock m
let wait p = Mutex.lock m; while !phase < p do Condition.wait c m done; Mutex.unlock m
let () =
  let d = Domain.spawn (fun () ->
    let _ = Gc.Memprof.start ~sampling_rate:1.0 ~callstack_size:0 tracker in
    for i = 0 to 63 do cache.(i) <- Obj.repr (Sys.opaque_identity (ref i)) done;
    set 1;
    wait 2;
    ignore (Sys.opaque_identity (ref 0)); (* an allocation: pending callbacks run *)
    Gc.Memprof.stop ()) in
  wait 1;
  for i = 0 to Array.length big - 1 do big.(i) <- Obj.repr (Sys.opaque_identity (ref i)) done;
  Gc.minor ();
  set 2;
  Domain.join d;
  Printf.printf "promoted %d dead %d\n" (Atomic.get promoted) (Atomic.get dead)
