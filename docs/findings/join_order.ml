(* Finding 4: where the joining domain is when the joined domain ends decides the order of its
   memprof callbacks. The main domain profiles every word, spawns a worker that only signals
   that it is about to end, waits for that signal, then calls Domain.join. The worker's last
   minor collection (domain_terminate) promotes the main domain's young tracked blocks (those
   Domain.spawn allocated), whose promote callbacks then wait for the main domain's next poll;
   Domain.join allocates a 3-word closure, whose alloc_minor callback runs at once. The program
   prints which of the two the main domain ran first. *)

let joining = ref false
let first = ref 0 (* 1: the join's closure sampled first; 2: a promotion first *)

let note k = if !joining && !first = 0 then first := k

let tracker =
  { Gc.Memprof.null_tracker with
    alloc_minor =
      (fun info ->
        if Domain.is_main_domain () && info.Gc.Memprof.size = 3 then note 1;
        Some ());
    promote = (fun () -> if Domain.is_main_domain () then note 2; Some ()) }

let mut = Mutex.create ()
let cond = Condition.create ()
let ending = ref false

let worker () =
  Mutex.lock mut;
  ending := true;
  Condition.signal cond;
  Mutex.unlock mut

let () =
  let _ = Gc.Memprof.start ~sampling_rate:1.0 ~callstack_size:1 tracker in
  let d = Domain.spawn worker in
  joining := true;
  Mutex.lock mut;
  while not !ending do Condition.wait cond mut done;
  Mutex.unlock mut;
  Domain.join d;
  Sys.poll_actions ();
  joining := false;
  Gc.Memprof.stop ();
  print_string
    (match !first with
     | 1 -> "the join's closure first\n"
     | 2 -> "the worker's collection first\n"
     | _ -> "neither\n")
