(* A probe of OCaml 5.3.0 for issue 24 (systhreads with programs on a spawned domain, not built
   yet; docs/differential.md, "What is refused, and why"): what memprof samples, at rate 1, when a
   spawned domain creates a systhread and waits for it to run. It prints one line per sampled
   block: the step of the domain's function (phase), the domain, the size, the callstack's names.

   Build and run (the toolchain `deno task ocaml setup` builds; CI's is .ci/.tools/ocaml-5.3.0):
     P=.ci/.tools/ocaml-5.3.0; L=$P/lib/ocaml
     $P/bin/ocamlopt -g -I $L/threads -I $L/unix $L/unix/unix.cmxa $L/threads/threads.cmxa \
       docs/probes/thread_on_spawned_domain.ml -o /tmp/probe && /tmp/probe | grep 'dom=1'

   On 2026-11-29, 60 runs (and 30 more of this file) gave the same lines for domain 1 every time:
     phase=0 dom=1 size=2 n=3 minor src=normal [?]          caml_thread_domain_initialize_hook:
     phase=0 dom=1 size=3 n=4 minor src=normal [?]            the status, then the descriptor
     phase=0 dom=1 size=8 n=9 minor src=normal [Stdlib__Domain.DLS.create_dls Stdlib__Domain.spawn.body]
     phase=1 dom=1 size=4 n=5 minor src=normal [Thread.create.(fun) Thread_on_spawned_domain.on_domain Stdlib__Domain.spawn.body]
     phase=2 dom=1 size=1 n=2 minor src=normal [Thread.check_memprof_cb Thread.create.(fun)]
     phase=2 dom=1 size=2 n=3 minor src=normal [Thread.create Thread_on_spawned_domain.on_domain Stdlib__Domain.spawn.body]
     phase=2 dom=1 size=3 n=4 minor src=normal [Thread.create Thread_on_spawned_domain.on_domain Stdlib__Domain.spawn.body]
   That is: Thread.create's closure (4 words) is sampled at its allocation; caml_thread_new's two
   blocks from C (caml_threadstatus_new's 2 words, then caml_alloc_3's descriptor) have their
   callbacks run at the creator's next poll, which came after the new thread had run to its end
   (here it never blocks), whose wrapper's check_memprof_cb allocated a `ref ()` on its own
   two-frame stack; the waits and Thread.join sample nothing. The main domain's lines vary from
   run to run (the spawn's race between its result and the new domain's DLS array). *)

let n = ref 0
let recs : (int * int * int * int * string) array = Array.make 4096 (0, 0, 0, 0, "")
let phase = Atomic.make 0

let cb kind (info : Gc.Memprof.allocation) : unit option =
  let names =
    match Printexc.backtrace_slots info.callstack with
    | None -> "?"
    | Some slots ->
      Array.to_list slots
      |> List.map (fun s -> match Printexc.Slot.name s with Some n -> n | None -> "?")
      |> String.concat " "
  in
  let source =
    match info.source with
    | Gc.Memprof.Normal -> "normal"
    | Marshal -> "marshal"
    | Custom -> "custom"
  in
  if !n < Array.length recs then begin
    recs.(!n) <-
      ( Atomic.get phase, (Domain.self () :> int), info.size, info.n_samples,
        Printf.sprintf "%s src=%s [%s]" (if kind = 0 then "minor" else "major") source names );
    incr n
  end;
  None

let tracker : (unit, unit) Gc.Memprof.tracker =
  { Gc.Memprof.null_tracker with alloc_minor = cb 0; alloc_major = cb 1 }

let m = Mutex.create ()
let c = Condition.create ()
let parked = ref false

let[@inline never] worker () =
  Mutex.lock m;
  parked := true;
  Condition.signal c;
  Mutex.unlock m

let[@inline never] on_domain () =
  Atomic.set phase 1;
  let t = Thread.create worker () in
  Atomic.set phase 2;
  Mutex.lock m;
  while not !parked do Condition.wait c m done;
  Mutex.unlock m;
  Atomic.set phase 3;
  Thread.join t;
  Atomic.set phase 4

let () =
  let _p = Gc.Memprof.start ~sampling_rate:1.0 ~callstack_size:16 tracker in
  let d = Domain.spawn on_domain in
  while Atomic.get phase < 4 do Domain.cpu_relax () done;
  Domain.join d;
  Gc.Memprof.stop ();
  for i = 0 to !n - 1 do
    let ph, dom, size, ns, s = recs.(i) in
    Printf.printf "phase=%d dom=%d size=%d n=%d %s\n" ph dom size ns s
  done
