// Systhreads running programs of their own: which thread runs which callback when, threads
// blocked inside their own callbacks resuming there in any order, the baton's rules, and the
// resumable engine giving exactly the plain engine's results on every other scenario.
import assert from "node:assert/strict";
import {
  act,
  cb,
  keep,
  type RunEvent,
  runScenario,
  type Scenario,
  scenario,
  type ScenarioBuilder,
  ScenarioError,
} from "../../lib/scenario/mod.ts";
import { runScenarioResumable, usesThreadPrograms } from "../../lib/scenario/engine.ts";
import { scenarios } from "../../scenarios/index.ts";

/**
 * Three threads at sampling rate 1 (every allocation is sampled, `n` = size + 1): the main
 * thread's first callback passes the baton to `a`, whose first callback passes it to `b`,
 * whose first callback passes it back to the main thread — three threads inside callbacks at
 * once. The main thread resumes inside its callback (not `b`, which blocked last), allocates
 * again, then joins `a`, which resumes inside its own callback, ends (its end allocates, as
 * Thread.create's wrapper does) and hands the baton back to its joiner; the same for `b`.
 */
const exact = scenario({ name: "threads_exact", minorHeapWords: 8192 }, (s) => {
  const main = s.main;
  main.memprof.start({
    samplingRate: 1,
    callstackSize: 4,
    tracker: {
      allocMinor: cb.track()
        .on(1, act.yieldTo("a"))
        .on(2, act.yieldTo("b"))
        .on(3, act.yieldTo("main")),
    },
  });
  const a = main.thread("a", (t) => {
    t.alloc(2, { at: "A.f@a.ml:1:0-1" });
    t.alloc(3, { at: "A.g@a.ml:2:0-1" });
  });
  const b = main.thread("b", (t) => {
    t.alloc(4, { at: "B.f@b.ml:1:0-1" });
    t.alloc(5, { at: "B.g@b.ml:2:0-1" });
  });
  main.alloc(1, { at: "M.f@m.ml:1:0-1" });
  main.alloc(6, { at: "M.g@m.ml:2:0-1" });
  main.join(a);
  main.join(b);
  main.memprof.stop();
});

Deno.test("threads blocked inside their own callbacks resume there, in the order the baton comes back", () => {
  const callbackLog = withoutTimes(runScenario(exact).callbackLog);
  assert.equal(
    callbackLog,
    [
      "i=- main@0 p1 alloc_minor #1 size=1 n=2 src=normal stack=[M.f@m.ml:1:0-1] : yield to a",
      "i=- a@0 p1 alloc_minor #2 size=2 n=3 src=normal stack=[A.f@a.ml:1:0-1] : yield to b",
      "i=- b@0 p1 alloc_minor #3 size=4 n=5 src=normal stack=[B.f@b.ml:1:0-1] : yield to main",
      // main's callback returns while a and b are still inside theirs.
      "i=- main@0 p1 alloc_minor #1 size=1 n=2 src=normal stack=[M.f@m.ml:1:0-1] -> Some #1 id=0",
      "i=- main@0 p1 alloc_minor #4 size=6 n=7 src=normal stack=[M.g@m.ml:2:0-1] -> Some #4 id=1",
      "[6] main joins a",
      "i=- a@0 p1 alloc_minor #2 size=2 n=3 src=normal stack=[A.f@a.ml:1:0-1] -> Some #2 id=2",
      "i=- a@0 p1 alloc_minor #5 size=3 n=4 src=normal stack=[A.g@a.ml:2:0-1] -> Some #5 id=3",
      "[end of thread a] the baton goes to main",
      // Thread.create's wrapper allocates at the thread's end (check_memprof_cb).
      "i=- a@0 p1 alloc_minor #6 size=1 n=2 src=normal stack=[] -> Some #6 id=4",
      "[7] main joins b",
      "i=- b@0 p1 alloc_minor #3 size=4 n=5 src=normal stack=[B.f@b.ml:1:0-1] -> Some #3 id=5",
      "i=- b@0 p1 alloc_minor #7 size=5 n=6 src=normal stack=[B.g@b.ml:2:0-1] -> Some #7 id=6",
      "[end of thread b] the baton goes to main",
      "i=- b@0 p1 alloc_minor #8 size=1 n=2 src=normal stack=[] -> Some #8 id=7",
      "",
    ].join("\n"),
  );
});

Deno.test("callback records keep the order callbacks start in, each with its outcome when it ends", () => {
  const events: RunEvent[] = [];
  const r = runScenario(exact, { onEvent: (e) => events.push(e) });
  assert.deepEqual(
    events.map((e) => [e.kind, "id" in e ? e.id : 0, "outcome" in e ? e.outcome : ""]),
    [1, 2, 3, 4, 5, 6, 7, 8].map((id) => ["allocMinor", id, "some"]),
  );
  // The threads' harness frames sit below their own frames only.
  const withHarness = runScenario(exact, {
    harnessFrames: { main: 3, spawned: 2, thread: 2 },
    onEvent: (e) => events.push(e),
  });
  assert.equal(withHarness.summary.callbacks.allocMinor, 8);
  const stacks = events.slice(8).map((e) => "callstack" in e ? e.callstack.length : -1);
  // main: 1 + 3 harness frames (at most 4 recorded); a and b: 1 + 2; their ends: 2.
  assert.deepEqual(stacks, [4, 3, 3, 4, 3, 2, 3, 2]);
  // The steps' allocations: the threads' ends allocate outside any step.
  assert.equal(r.summary.allocations, 6);
});

/** main keeps a block `p` (tracked), blocks inside the callback of its next allocation and
 * lets `x` release `p` and collect: `p`'s deallocation callback runs on `x` meanwhile. */
Deno.test("other threads run callbacks while a thread is blocked inside one", () => {
  const sc = scenario({ name: "dealloc_while_blocked", minorHeapWords: 8192 }, (s) => {
    const main = s.main;
    main.memprof.start({
      samplingRate: 1,
      callstackSize: 0,
      tracker: { allocMinor: cb.track().on(2, act.yieldTo("x")) },
    });
    const x = main.thread("x", (t) => {
      s.release("p");
      t.minorGc();
      t.yieldTo("main");
    });
    main.alloc(2, { lifetime: keep.until("p") });
    main.alloc(3);
    main.join(x);
  });
  const lines = withoutTimes(runScenario(sc).callbackLog).split("\n");
  assert.deepEqual(lines.slice(0, 5), [
    "i=- main@0 p1 alloc_minor #1 size=2 n=3 src=normal stack=[] -> Some #1 id=0",
    "i=- main@0 p1 alloc_minor #2 size=3 n=4 src=normal stack=[] : yield to x",
    // x's collection finds #1 dead; x runs its callback while main is inside #2's.
    "i=- x@0 p1 dealloc_minor #1",
    "[2.3] x yields to main",
    "i=- main@0 p1 alloc_minor #2 size=3 n=4 src=normal stack=[] -> Some #2 id=1",
  ]);
});

Deno.test("Thread.yield runs pending callbacks on the same thread and switches to none", () => {
  const sc = scenario({ name: "yield_runs_pending" }, (s) => {
    s.main.memprof.start({ samplingRate: 1, callstackSize: 0 });
    s.main.thread("idle", (t) => t.alloc(1));
    s.main.alloc(2, { source: "runtime" }); // its callback waits for a poll
    s.main.yield();
    s.main.alloc(3);
  });
  const lines = withoutTimes(runScenario(sc).callbackLog).split("\n").filter((l) => l !== "");
  assert.deepEqual(lines.map((l) => l.replace(/ stack=.*/, "")), [
    "i=- main@0 p1 alloc_minor #1 size=2 n=3 src=normal",
    "i=- main@0 p1 alloc_minor #2 size=3 n=4 src=normal",
  ]);
});

Deno.test("act.yieldToNext passes the baton round a ring, skipping threads that cannot take it", () => {
  const sc = scenario({ name: "ring3", minorHeapWords: 8192 }, (s) => {
    const main = s.main;
    main.memprof.start({
      samplingRate: 1,
      callstackSize: 0,
      tracker: { allocMinor: cb.track().always(act.yieldToNext(["main", "a", "b"])) },
    });
    const a = main.thread("a", (t) => t.alloc(1));
    const b = main.thread("b", (t) => {
      t.alloc(1);
      t.alloc(1);
    });
    main.alloc(1);
    main.join(a);
    main.join(b);
  });
  const heads = withoutTimes(runScenario(sc).callbackLog).split("\n").filter((l) =>
    l.includes(" : ")
  );
  assert.deepEqual(
    heads.map((l) => l.replace(/^i=- (\w+)@0 p1 alloc_minor (#\d+).* : /, "$1 $2 ")),
    [
      "main #1 yield to a",
      "a #2 yield to b",
      "b #3 yield to main",
      // main joins a: a resumes in #2, ends; its end's callback no longer holds the baton.
      "a #4 no yield (thread a has ended)",
      // main joins b: b resumes in #3; main waits in join (the ring skips it), a has ended.
      "b #5 no thread to yield to",
      "b #6 no yield (thread b has ended)",
    ],
  );
});

function fails(build: (s: ScenarioBuilder) => void, step: string, problem: RegExp): void {
  assert.throws(
    () => runScenario(scenario({ name: "bad" }, build)),
    (e: unknown) => {
      assert.ok(e instanceof ScenarioError, String(e));
      assert.equal(e.step, step, e.message);
      assert.match(e.problem, problem);
      return true;
    },
  );
}

Deno.test("the DSL refuses threads with programs where they have no meaning", () => {
  fails((s) => s.main.repeat(2, () => s.main.thread("t", (t) => t.alloc(1))), "1.1", /top level/);
  fails(
    (s) => {
      const w = s.main.spawn("w");
      w.repeat(2, () => w.thread("t", (t) => t.alloc(1)));
    },
    "2.1",
    /top level/,
  );
  fails(
    (s) => {
      const w = s.main.spawn("w");
      w.thread("t", (t) => t.yieldTo(s.main));
    },
    "2.1",
    /"main" is a thread of domain "main": the baton passes between the threads of one domain/,
  );
  fails(
    (s) => {
      const w = s.main.spawn("w");
      w.thread("t", () => s.main.alloc(1));
    },
    "2.1",
    /a step of domain "main" in the program of thread "t", a thread of domain "w"/,
  );
  fails(
    (s) => {
      const w = s.main.spawn("w");
      const t = w.thread("t", (t) => t.alloc(1));
      s.main.join(t);
    },
    "3",
    /"t" is a thread of domain "w"/,
  );
  fails(
    (s) => {
      const w = s.main.spawn("w");
      s.main.thread("t", () => w.alloc(1));
    },
    "2.1",
    /a step of domain "w" in the program of thread "t"/,
  );
  fails((s) => s.main.thread("t", (t) => t.yieldTo("t")), "1.1", /cannot yield to itself/);
  fails((s) => s.main.yieldTo("nobody"), "1", /"nobody" is not a thread with a program/);
  fails(
    (s) => {
      s.main.thread("t", (t) => t.alloc(1));
      s.main.thread("u");
    },
    "2",
    /do not mix/,
  );
  fails(
    (s) => {
      s.main.thread("t", (t) => t.alloc(1));
      s.main.memprof.start({ tracker: { allocMinor: cb.track().on(1, act.yieldToNext(["t"])) } });
    },
    "2",
    /at least two threads/,
  );
  fails(
    (s) => {
      s.main.thread("t", (t) => t.alloc(1));
      s.main.memprof.start({ tracker: { allocMinor: cb.track().on(1, act.switchThread("t")) } });
    },
    "2",
    /do not mix/,
  );
});

Deno.test("the baton cannot go to a thread that ended, waits in a join, or is not created yet", () => {
  fails(
    (s) => {
      const t = s.main.thread("t", (t) => t.alloc(1));
      s.main.join(t);
      s.main.yieldTo(t);
    },
    "3",
    /thread "t" has ended/,
  );
  fails(
    (s) => {
      s.main.yieldTo("t");
      s.main.thread("t", (t) => t.alloc(1));
    },
    "1",
    /thread "t" is not created yet/,
  );
  fails(
    (s) => {
      const t = s.main.thread("t", (t) => t.yieldTo("main"));
      s.main.join(t);
    },
    "1.1",
    /thread "main" waits in join/,
  );
});

/** The library's scenarios without thread programs, as they run in the plain form. */
const plain: readonly Scenario[] = scenarios.filter((sc) => !usesThreadPrograms(sc));

Deno.test("the resumable engine gives the plain engine's outputs, byte for byte, on every other library scenario", () => {
  assert.ok(plain.length >= 40, `${plain.length}`);
  for (const sc of plain) {
    const a = runScenario(sc);
    const b = runScenarioResumable(sc);
    const name = sc.settings.name;
    assert.equal(b.callbackLog, a.callbackLog, name);
    assert.equal(b.traceDump, a.traceDump, name);
    assert.equal(b.eventsDump, a.eventsDump, name);
    assert.deepEqual(b.ctf, a.ctf, name);
    assert.deepEqual(b.summary, a.summary, name);
  }
});

Deno.test("scenarios with thread programs run in the resumable form, the others in the plain one", () => {
  const names = scenarios.filter(usesThreadPrograms).map((sc) => sc.settings.name);
  assert.deepEqual(names, [
    "threads",
    "blocking_in_callback",
    "threads_in_callbacks",
    "spawned_domain_threads",
  ]);
  assert.ok(usesThreadPrograms(exact));
});

/** The log without its `t=` times and its lifecycle lines (the tests here are about the order
 * of callbacks and threads). */
function withoutTimes(log: string): string {
  return log.replace(/ t=\d+/g, "").split("\n").filter((l) => !LIFECYCLE.test(l)).join("\n");
}

const LIFECYCLE =
  / : (Gc\.Memprof\.(start|stop|discard)|Domain\.(spawn|join)|domain terminates|Thread\.create)\b/;

/**
 * A spawned domain creating a thread with a program while it samples every word, as OCaml 5.3
 * does it (docs/probes/thread_on_spawned_domain.ml): `Thread.create`'s closure (4 words) is
 * sampled and its callback runs at once; `caml_thread_new`'s status (2 words) and descriptor
 * (3 words), allocated from C, are sampled then, their callbacks waiting for the creator's
 * poll after the new thread parked; the thread's end allocates its wrapper's `ref ()` (1 word).
 */
Deno.test("a spawned domain's thread is created at its step, sampled as OCaml 5.3 samples Thread.create", () => {
  const sc = scenario({ name: "spawned_thread", minorHeapWords: 8192 }, (s) => {
    const main = s.main;
    main.memprof.start({ samplingRate: 1, callstackSize: 0 });
    const w = main.spawn("w");
    w.alloc(7);
    const t = w.thread("t", (t) => {
      t.alloc(5);
      t.yieldTo(w);
      t.alloc(6);
    });
    w.yieldTo(t);
    w.alloc(8);
    w.join(t);
    w.terminate();
    main.memprof.stop();
  });
  const lines = withoutTimes(runScenario(sc).callbackLog).split("\n")
    .filter((l) => /@1 (p1 alloc_minor|: )/.test(l) || l.startsWith("["))
    .map((l) => l.replace(/^i=- (\w+)@1 p1 alloc_minor #\d+ (size=\d+).*$/, "$1 $2"));
  assert.deepEqual(lines.slice(lines.indexOf("w size=7")), [
    "w size=7",
    "w size=4", // Thread.create's closure
    "w size=2", // caml_threadstatus_new, from C
    "w size=3", // caml_alloc_3's descriptor, from C
    "[5] w yields to t",
    "t size=5",
    "[4.2] t yields to w",
    "w size=8",
    "[7] w joins t",
    "t size=6",
    "[end of thread t] the baton goes to w",
    "t size=1", // Thread.create's wrapper: check_memprof_cb's ref ()
  ]);
});

Deno.test("a domain cannot end while one of its threads with a program waits for its turn", () => {
  fails(
    (s) => {
      const w = s.main.spawn("w");
      const t = w.thread("t", (t) => {
        t.alloc(1);
        t.yieldTo(w);
        t.alloc(1);
      });
      w.yieldTo(t);
      w.terminate();
    },
    "4",
    /thread "t" of domain "w" has not ended when its domain ends: OCaml joins a domain's threads then/,
  );
  fails(
    (s) => {
      const w = s.main.spawn("w");
      w.thread("t", (t) => t.alloc(1));
    },
    "end",
    /thread "t" of domain "w" has not ended/,
  );
});

Deno.test("act.yieldToNext's ring skips the threads of other domains: each domain passes its own baton", () => {
  const sc = scenario({ name: "ring_domains", minorHeapWords: 8192 }, (s) => {
    const main = s.main;
    main.memprof.start({
      samplingRate: 1,
      callstackSize: 0,
      tracker: { allocMinor: cb.track().always(act.yieldToNext(["main", "a", "w", "b"])) },
    });
    const a = main.thread("a", (t) => t.alloc(1));
    main.join(a);
    const w = main.spawn("w");
    const b = w.thread("b", (t) => t.alloc(1));
    w.alloc(1);
    w.join(b);
    w.terminate();
    main.memprof.stop();
  });
  const heads = withoutTimes(runScenario(sc).callbackLog).split("\n").filter((l) =>
    l.includes(" : yield") || l.includes(" : no ")
  ).map((l) => l.replace(/^i=- (\w+)@\d p1 alloc_minor (#\d+).* : /, "$1 $2 "));
  // On w, the ring's "main" and "a" (the main domain's) are skipped.
  assert.ok(heads.length > 0, "callbacks passed the baton");
  for (const h of heads) assert.doesNotMatch(h, /yield to (main|a)$/, h);
  assert.ok(heads.some((h) => /^w #\d+ yield to b$/.test(h)), heads.join("\n"));
});
