(* Anchors for bench/_anchors.ts: the real OCaml 5.3 runtime writing and reading user events of
   type int through the stdlib's Runtime_events, the event kind runtime_events_bench.ts's
   matching lines measure. Prints the median events per second over the given number of rounds
   (one untimed round first).

   Usage: events write N ROUNDS | events read ROUNDS
   - write: registers a user event "bench.int" of type int, starts runtime events, and times
     rounds of N calls to Runtime_events.User.write (each a C call that reads the monotonic
     clock and stores a 3-word event in this domain's ring: header, timestamp, value; the ring
     wraps, the writer moving the head past the oldest events). After the rounds a cursor reads
     the ring back and the program fails unless it finds the user events, so that a ring that
     did not start (where a write returns at once) cannot pass for a fast one.
   - read: fills its own ring with 30,000 user int events (more than a ring holds), pauses the
     ring (so that the reader's own allocations do not make the runtime write GC events over
     what it reads), then times rounds of: create a cursor on this process's ring
     (create_cursor None), read_poll everything with callbacks counting the user int events,
     free the cursor. Every round must count the same number of events.

   The ring's size comes from OCAMLRUNPARAM: bench/_anchors.ts runs this program with e=16
   (rings of 2^16 words, as the bench's producers) and d=4 (4 domain slots, as they have), and
   with OCAML_RUNTIME_EVENTS_DIR set to its temporary directory, where the runtime makes (and
   at exit removes) the <pid>.events file. Times come from Unix.gettimeofday. *)

type Runtime_events.User.tag += Bench_int

let ev = Runtime_events.User.register "bench.int" Bench_int Runtime_events.Type.int

(* The user int events a fresh cursor on this process's ring finds. *)
let count_user_ints () =
  let n = ref 0 in
  let cb =
    Runtime_events.Callbacks.create ()
    |> Runtime_events.Callbacks.add_user_event Runtime_events.Type.int
         (fun _domain _ts _ev _v -> incr n)
  in
  let cursor = Runtime_events.create_cursor None in
  ignore (Runtime_events.read_poll cursor cb None);
  Runtime_events.free_cursor cursor;
  !n

let write_events n =
  for i = 0 to n - 1 do
    Runtime_events.User.write ev i
  done

(* Runs [round] once untimed, then [rounds] times timed; returns the median in seconds. *)
let median_seconds rounds round =
  round ();
  let times = Array.init rounds (fun _ ->
    let t0 = Unix.gettimeofday () in
    round ();
    Unix.gettimeofday () -. t0) in
  Array.sort compare times;
  times.(rounds / 2)

let fail msg = prerr_endline ("events: " ^ msg); exit 1

let () =
  Runtime_events.start ();
  let per_second =
    match Sys.argv with
    | [| _; "write"; n; rounds |] ->
      let n = int_of_string n in
      let s = median_seconds (int_of_string rounds) (fun () -> write_events n) in
      Runtime_events.pause ();
      let found = count_user_ints () in
      if found < 1000 then fail (Printf.sprintf "the ring holds %d user int events" found);
      float_of_int n /. s
    | [| _; "read"; rounds |] ->
      write_events 30_000;
      Runtime_events.pause ();
      let expected = count_user_ints () in
      if expected < 1000 then fail (Printf.sprintf "the ring holds %d user int events" expected);
      let s = median_seconds (int_of_string rounds) (fun () ->
        let got = count_user_ints () in
        if got <> expected then fail (Printf.sprintf "read %d events, then %d" expected got)) in
      float_of_int expected /. s
    | _ -> prerr_endline "usage: events write N ROUNDS | events read ROUNDS"; exit 2
  in
  Printf.printf "%.0f\n" per_second
