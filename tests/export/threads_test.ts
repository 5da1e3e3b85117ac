// Export of systhreads running programs of their own: the threads' functions, the baton passed
// where the scenario says (steps and callbacks), their creation before the run, the threads
// library on the command line, and what is still refused.
import assert from "node:assert/strict";
import { act, cb, scenario } from "../../lib/scenario/mod.ts";
import { exportOCaml } from "../../lib/export/mod.ts";
import { harnessBlocks, harnessMajorHeap } from "../../lib/export/_harness_heap.ts";
import { definition } from "./ocaml_lexer.ts";

const ring = scenario({ name: "ring", minorHeapWords: 8192 }, (s) => {
  const main = s.main;
  main.memprof.start({
    samplingRate: 0.1,
    callstackSize: 8,
    tracker: {
      allocMinor: cb.track().every(2, act.yieldToNext(["main", "a", "b"]), 1),
      deallocMinor: cb.none().on(3, act.yieldTo("b")),
    },
  });
  const a = main.thread(
    "a",
    (t) => t.call("Ring.a@ring.ml:1:0-10", () => t.repeat(4, () => t.alloc(2))),
  );
  const b = main.thread("b", (t) => {
    t.alloc(3);
    t.yieldTo("main");
    t.yield();
  });
  main.alloc(5);
  main.yieldTo(a);
  main.join(b);
  main.join(a);
  main.memprof.stop();
});

Deno.test("a scenario with threads links the threads library and Unix", () => {
  const p = exportOCaml(ring);
  assert.deepEqual(p.compileArgs, [
    "-g",
    "-I",
    "+unix",
    "-I",
    "+threads",
    "unix.cmxa",
    "threads.cmxa",
    "ring.ml",
  ]);
  assert.ok(p.source.includes("ocamlopt -g -I +unix -I +threads unix.cmxa threads.cmxa ring.ml"));
});

Deno.test("each thread with a program becomes a function that waits for its turn and hands the baton on at its end", () => {
  const { source } = exportOCaml(ring);
  for (const k of [1, 2]) {
    const run = definition(source, `run_thread_${k}`);
    assert.match(
      run,
      new RegExp(`^let\\[@inline never\\] run_thread_${k} \\(\\) =\\n  th_start ${k};`),
    );
    assert.match(run, new RegExp(`th_end ${k}$`));
  }
  // Thread b's steps, passes and yield are in its own function, with its own thread number.
  const b = definition(source, "run_thread_2");
  assert.match(b, /tick \(\); th_pass 2 0;/);
  assert.match(b, /Thread\.yield \(\)/);
  // Thread a's loop keeps its indices in its own context: after the domain's, context 1.
  const a = definition(source, "run_thread_1");
  assert.match(a, /^ {2}f\d+ \(\);$/m);
  assert.match(source, /loops\.\(\(1 \* \(max_depth \+ 1\)\)\) <- 1;/);
  // The main thread passes the baton to a (1), then joins b (2) and a (1).
  const main = definition(source, "run_main");
  assert.match(
    main,
    /tick \(\); th_pass 0 1;[^]*tick \(\); th_join 0 2;[^]*tick \(\); th_join 0 1;/,
  );
  // The threads' steps mark them as created; the steps' ticks count as the simulation's.
  assert.match(main, /tick \(\); th_spawned\.\(1\) <- 1;[^]*tick \(\); th_spawned\.\(2\) <- 1;/);
});

Deno.test("the threads are created before the run, then the tick thread is stopped", () => {
  const { source } = exportOCaml(ring);
  const init = source.slice(source.lastIndexOf("let () ="));
  const order = [
    "th_create 1 run_thread_1;",
    "th_create 2 run_thread_2;",
    "thread_cleanup ();",
    "Gc.full_major ();",
    "run_main ();",
  ].map((s) => init.indexOf(s));
  assert.ok(order.every((i) => i >= 0), `${order}`);
  assert.deepEqual([...order].sort((x, y) => x - y), order);
  assert.match(source, /external thread_cleanup : unit -> unit = "caml_thread_cleanup"/);
});

Deno.test("callbacks pass the baton from the thread running them, unless its program ended", () => {
  const { source } = exportOCaml(ring);
  // act.yieldTo("b"): thread 2.
  assert.ok(
    source.includes("(let me = th_self () in if th_ended.(me) = 0 then th_pass me 2)"),
  );
  // act.yieldToNext([main, a, b]): the first thread after the running one that can run.
  assert.ok(source.includes(
    "| 0 -> if th_can_run 1 then 1 else if th_can_run 2 then 2 else -1 " +
      "| 1 -> if th_can_run 2 then 2 else if th_can_run 0 then 0 else -1 " +
      "| 2 -> if th_can_run 0 then 0 else if th_can_run 1 then 1 else -1 " +
      '| _ -> fail "yieldToNext: not in the ring"',
  ));
});

Deno.test("the baton's waits are not loops, whose back-edges would poll", () => {
  const { source } = exportOCaml(ring);
  for (const fn of ["th_wait me", "th_pass me k", "th_join me k", "th_end me", "th_start me"]) {
    const start = source.indexOf(`let[@inline never] ${fn} =`);
    assert.ok(start >= 0, fn);
    const body = source.slice(start, source.indexOf("\n\n", start));
    assert.doesNotMatch(body, /\bwhile\b|\bfor\b/, fn);
  }
});

Deno.test("a scenario without threads has neither the library nor the baton", () => {
  const plain = scenario({ name: "plain" }, (s) => {
    s.main.memprof.start({ samplingRate: 0.5 });
    s.main.alloc(2);
    s.main.memprof.stop();
  });
  const p = exportOCaml(plain);
  assert.deepEqual(p.compileArgs, ["-g", "plain.ml"]);
  assert.ok(!p.source.includes("th_pass"));
  assert.ok(!p.source.includes("thread_cleanup"));
});

Deno.test("threads with programs in a scenario with several domains: every wait of a domain is one blocking section", () => {
  const sc = scenario({ name: "thr_dom" }, (s) => {
    const w = s.main.spawn("w");
    const t = s.main.thread("t", (t) => t.alloc(1));
    w.alloc(2);
    s.main.join(t);
    w.terminate();
  });
  const { source } = exportOCaml(sc);
  // The counted waits redefine the domains' baton after the systhreads' part.
  const counted = source.indexOf("(* ---- Counted waits");
  assert.ok(counted > source.indexOf("th_pass"));
  assert.ok(source.includes("let dom_cond = Array.init 2 (fun _ -> Condition.create ())"));
  // The spins and waits are recursions or straight code, never loops (a back-edge polls).
  for (const fn of ["wait_turn me k", "pass_turn k ord", "wait_flag (flags : int array) ord me"]) {
    const start = source.indexOf(`let[@inline never] ${fn} =`, counted);
    assert.ok(start >= 0, fn);
    const body = source.slice(start, source.indexOf("\n\n", start));
    assert.doesNotMatch(body, /\bwhile\b|\bfor\b/, fn);
    assert.doesNotMatch(body, /Mutex\.lock/, `${fn}: a contended Mutex.lock is a blocking section`);
  }
  // The main domain does not wait for the first turn; a turn names the domain it goes to; the
  // parent waits for its child by number; Domain.join waits for the domain to finish first.
  assert.ok(!source.includes("wait_turn 0 0;"));
  assert.match(source, /pass_turn 1 1;/);
  assert.match(source, /wait_started 1 0/);
  assert.match(source, /announce_started 1 0;/);
  assert.ok(source.includes("(await_finished (Obj.field (Obj.repr d) 1); Domain.join d)"));
});

Deno.test("a spawn while the parent's callbacks pass the baton exports: on the new domain, the ring skips the parent's threads", () => {
  const sc = scenario({ name: "thr_dom_cb" }, (s) => {
    s.main.memprof.start({
      samplingRate: 0.1,
      tracker: { allocMinor: cb.track().every(3, act.yieldToNext(["main", "t", "w", "u"])) },
    });
    const t = s.main.thread("t", (t) => t.alloc(1));
    const w = s.main.spawn("w");
    const u = w.thread("u", (u) => u.alloc(1));
    w.alloc(2);
    w.join(u);
    w.terminate();
    s.main.join(t);
    s.main.memprof.stop();
  });
  const { source } = exportOCaml(sc);
  // Thread numbers: main 0, t 1 (created at initialisation), u 2 (created by w), w's own 3.
  assert.match(source, /th_create 1 run_thread_1;/);
  assert.doesNotMatch(source, /th_create 2 /);
  assert.match(source, /th_create_spawned 2 run_thread_2/);
  assert.match(source, /th_of_id\.\(Thread\.id \(Thread\.self \(\)\)\) <- 3;/);
  // The ring's test names the thread running the callback: another domain's thread cannot run.
  assert.match(source, /if th_can_run_from me 2 then 2/);
  assert.match(
    source,
    /let th_can_run_from me k = th_lock\.\(k\) == th_lock\.\(me\) && th_can_run k/,
  );
  // w's threads wait on w's own mutex; a new thread takes it spinning.
  assert.match(source, /let th_lock = Array\.make 4 baton/);
  assert.match(source, /th_take th_lock\.\(me\);/);
});

Deno.test("the threads library's data moves the harness's major GC work as OCaml 5.3.0's debug runtime measured", () => {
  // Two exported programs alike but for threads.cmxa: at their scenario's start, the debug
  // runtime (OCAMLRUNPARAM=v=0x800) reported the work counter 25,284 words further (three
  // forced cycles with two more pools to sweep and the libraries' data to mark) and the
  // allocation counter 1,228 words further: 24,056 words more work ahead. (With 236 words of
  // marking a cycle for that data the model fell 64 words short; 255 were measured since.)
  const p = { domains: 1, maxDepth: 1, profiles: 1, sites: [], exceptions: 0 };
  const extra = [{ wosize: 200, fields: "ints" as const, via: "root" as const }];
  const without = harnessMajorHeap(harnessBlocks(p, extra), 32_768);
  const withLib = harnessMajorHeap(harnessBlocks(p, extra), 32_768, { threadsLibrary: true });
  const ahead = withLib.workAhead - without.workAhead;
  assert.ok(Math.abs(ahead - 24_056) <= 8, `${ahead} vs 24056`);
  assert.deepEqual(
    withLib.pools.map((x) => x.sz).filter((sz) => !without.pools.some((y) => y.sz === sz)),
    [12, 14],
  );
});
