(* A loop allocates and drops 20,000 blocks of 500 words (each goes straight to the major heap)
   under a profile sampling about one word in 1,000; its deallocation callbacks run when a major
   cycle ends, and record the iteration the loop was at. The program prints the iteration at
   which the first cycle ended and how many deallocation callbacks ran. The loop runs on a
   spawned domain while the main domain waits in Domain.join, or, with ONE_DOMAIN set, on the
   main domain alone. *)
let iter = ref 0
let first_end = ref 0
let deallocs = ref 0
let tracker = {
  Gc.Memprof.null_tracker with
  alloc_major = (fun _ -> Some ());
  dealloc_major = (fun () ->
    if !first_end = 0 then first_end := !iter;
    incr deallocs);
}
let work () =
  let _ = Gc.Memprof.start ~sampling_rate:1e-3 ~callstack_size:0 tracker in
  for i = 1 to 20_000 do
    iter := i;
    ignore (Sys.opaque_identity (Array.make 500 i))
  done;
  Gc.Memprof.stop ()
let () =
  if Sys.getenv_opt "ONE_DOMAIN" <> None then work ()
  else Domain.join (Domain.spawn work);
  Printf.printf "first major cycle ended at iteration %d; %d deallocation callbacks\n"
    !first_end !deallocs
