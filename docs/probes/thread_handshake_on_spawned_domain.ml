(* A probe of OCaml 5.3.0 for issue 24 (systhreads with programs on a spawned domain, not built
   yet): is creating a systhread on a spawned domain that samples deterministic, when the creator
   waits for the new thread to park (as the exported program's th_create does for the main
   domain's threads) and then stops the domain's tick thread (caml_thread_cleanup)? The spawned
   domain allocates 2,000 cells, creates the thread, waits for it to park, stops the tick thread,
   allocates 2,000 more, lets the thread allocate 2,000 and joins it, then allocates 2,000 more.
   It prints the spawned domain's samples (phase, domain, size, n_samples), each domain logging
   into its own array (one shared log would lose records to the other domain's callbacks, which
   run in parallel).

   Build and run (the argument is the sampling rate):
     P=.ci/.tools/ocaml-5.3.0; L=$P/lib/ocaml
     $P/bin/ocamlopt -g -I $L/threads -I $L/unix $L/unix/unix.cmxa $L/threads/threads.cmxa \
       docs/probes/thread_handshake_on_spawned_domain.ml -o /tmp/probe
     for i in $(seq 1 60); do /tmp/probe 0.3 | md5sum; done | sort | uniq -c

   On 2026-11-29: one outcome in 60 runs at each of the rates 0.05, 0.3 and 1. At rate 1, phase 1
   (Thread.create and the wait for the thread to park) samples three blocks on the spawned
   domain, 4, 2 and 3 words (the closure, then caml_thread_new's status and descriptor), whose
   callbacks all ran before phase 2 began (in the wait, or at caml_thread_cleanup's return: this
   probe does not tell which); the thread's 2,000 cells and its wrapper's `ref ()` come in
   phase 3. *)

let ns = [| ref 0; ref 0 |]
let recss = [| Array.make 100000 (0, 0, 0, 0); Array.make 100000 (0, 0, 0, 0) |]
let phase = Atomic.make 0

let cb (info : Gc.Memprof.allocation) : unit option =
  let d = (Domain.self () :> int) in
  let n = ns.(d) and recs = recss.(d) in
  if !n < Array.length recs then begin
    recs.(!n) <- (Atomic.get phase, d, info.size, info.n_samples);
    incr n
  end;
  None

let tracker : (unit, unit) Gc.Memprof.tracker =
  { Gc.Memprof.null_tracker with alloc_minor = cb; alloc_major = cb }

external thread_cleanup : unit -> unit = "caml_thread_cleanup"

let m = Mutex.create ()
let parked = Condition.create ()
let turn = Condition.create ()
let is_parked = ref false
let go = ref false
let sink = ref []

let[@inline never] alloc_loop k =
  for i = 1 to k do
    sink := [ i ]
  done

let[@inline never] worker () =
  Mutex.lock m;
  is_parked := true;
  Condition.broadcast parked;
  while not !go do Condition.wait turn m done;
  Mutex.unlock m;
  alloc_loop 2000

let[@inline never] on_domain () =
  alloc_loop 2000;
  Atomic.set phase 1;
  let t = Thread.create worker () in
  Mutex.lock m;
  while not !is_parked do Condition.wait parked m done;
  Mutex.unlock m;
  thread_cleanup ();
  Atomic.set phase 2;
  alloc_loop 2000;
  Atomic.set phase 3;
  Mutex.lock m;
  go := true;
  Condition.broadcast turn;
  Mutex.unlock m;
  Thread.join t;
  Atomic.set phase 4;
  alloc_loop 2000

let () =
  let rate = float_of_string Sys.argv.(1) in
  let _p = Gc.Memprof.start ~sampling_rate:rate ~callstack_size:4 tracker in
  let d = Domain.spawn on_domain in
  while Atomic.get phase < 4 do Domain.cpu_relax () done;
  Domain.join d;
  Gc.Memprof.stop ();
  for i = 0 to !(ns.(1)) - 1 do
    let ph, dom, size, k = recss.(1).(i) in
    Printf.printf "%d %d %d %d\n" ph dom size k
  done
