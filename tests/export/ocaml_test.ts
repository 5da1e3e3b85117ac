// Export of scenarios to OCaml programs: the program's structure, its metadata, and every
// construct refused because it has no faithful OCaml form.
import assert from "node:assert/strict";
import {
  act,
  cb,
  keep,
  type Scenario,
  scenario,
  type ScenarioBuilder,
  sizes,
} from "../../lib/scenario/mod.ts";
import {
  defName,
  type ExportedProgram,
  ExportError,
  exportOCaml,
  HARNESS_FRAMES,
  moduleNameOf,
} from "../../lib/export/mod.ts";
import { scenarios } from "../../scenarios/index.ts";
import { definition } from "./ocaml_lexer.ts";

const tiny = scenario({ name: "tiny", minorHeapWords: 8192, ringLog2: 10 }, (s) => {
  const m = s.main;
  m.memprof.start({ samplingRate: 0.5, callstackSize: 8 });
  m.call(
    "Tiny.outer@tiny.ml:1:0-10",
    () => m.repeat(2, () => m.repeat(5, () => m.alloc(3, { at: "Tiny.leaf@tiny.ml:2:4-9" }))),
  );
  m.alloc(1);
  m.alloc(4, { source: "array" });
  m.alloc(6, { source: "runtime" });
  m.alloc(300);
  m.allocCombined([2, 3]);
  m.minorGc();
  m.memprof.stop();
});

/** The OCaml function standing for the frame whose definition name is `def`. */
function fnOf(p: ExportedProgram, def: string): string {
  const fns = [...p.frames].filter(([, d]) => d === def).map(([fn]) => fn);
  assert.equal(fns.length, 1, `frames named ${def}: ${fns.join(", ")}`);
  assert.ok(fns[0].startsWith(`${p.moduleName}.`), fns[0]);
  return fns[0].slice(p.moduleName.length + 1);
}

Deno.test("exportOCaml names the program after the scenario", () => {
  const p = exportOCaml(tiny);
  assert.equal(p.scenario, "tiny");
  assert.equal(p.moduleName, "Tiny");
  assert.equal(p.fileName, "tiny.ml");
  assert.ok(p.source.endsWith("\n"));
  const odd = exportOCaml(scenario({ name: "a-b.c" }, (s) => void s.main.alloc(1)));
  assert.equal(odd.moduleName, "A_b_c");
  assert.equal(odd.fileName, "a_b_c.ml");
  assert.deepEqual(odd.compileArgs, ["-g", "a_b_c.ml"]);
});

Deno.test("exportOCaml writes a repeat as a for loop with its count, nested loops inside", () => {
  const src = exportOCaml(tiny).source;
  const outer = src.indexOf("for i1 = 1 to 2 do");
  const inner = src.indexOf("for i2 = 1 to 5 do");
  assert.ok(outer >= 0 && inner > outer, "for i1 = 1 to 2 encloses for i2 = 1 to 5");
  // The loop indices the callbacks record: depth, then the index of each loop.
  assert.match(src, /loops\.\(\(0 \* \(max_depth \+ 1\)\) \+ 2\) <- i2;/);
  assert.match(src, /let max_depth = 2\n/);
  // After the loops, the depth is back to 0.
  assert.match(src, /done;\n {2}loops\.\(\(0 \* \(max_depth \+ 1\)\)\) <- 0;/);
});

Deno.test("exportOCaml writes minorGc as Gc.minor () and each collection as its Gc call", () => {
  const src = exportOCaml(tiny).source;
  assert.match(src, /tick \(\); \(Gc\.minor \(\)\);/);
  const all = exportOCaml(scenario({ name: "gcs" }, (s) => {
    s.main.minorGc().majorSlice().majorGc().fullMajor().compact();
  })).source;
  const calls = [
    "Gc.minor ()",
    "ignore (Gc.major_slice 0)",
    "Gc.major ()",
    "Gc.full_major ()",
    "Gc.compact ()",
  ];
  let at = -1;
  for (const c of calls) {
    const i = all.indexOf(`tick (); (${c});`);
    assert.ok(i > at, `${c} after the previous collection`);
    at = i;
  }
});

Deno.test("exportOCaml allocates an n-word caml block as a tuple of n fields, 1 word as ref z", () => {
  const src = exportOCaml(tiny).source;
  assert.match(src, /Obj\.repr \(Sys\.opaque_identity \(\(z, z, z\)\)\)/);
  assert.match(src, /Obj\.repr \(Sys\.opaque_identity \(ref z\)\)/);
  // Over 256 words, OCaml code allocates as Array.make does.
  assert.match(src, /Obj\.repr \(Sys\.opaque_identity \(Array\.make 300 z\)\)/);
  // A drawn size: one arm per possible size, drawn before the step's handler; when every size
  // is at most 256 words the largest is the catch-all, so every arm allocates inline.
  const drawn = exportOCaml(scenario({ name: "drawn" }, (s) => {
    s.main.alloc(sizes.uniform(2, 3));
  })).source;
  assert.match(
    drawn,
    /tick \(\); \(let n = size_uniform 2 3 in .*\(match n with \| 2 -> Obj\.repr \(Sys\.opaque_identity \(\(z, z\)\)\) \| _ -> Obj\.repr \(Sys\.opaque_identity \(\(z, z, z\)\)\)\)/,
  );
  // Sizes over 256 words fall to Array.make.
  const large = exportOCaml(scenario({ name: "large" }, (s) => {
    s.main.alloc(sizes.choice(2, 300));
  })).source;
  assert.match(
    large,
    /\(match n with \| 2 -> Obj\.repr \(Sys\.opaque_identity \(\(z, z\)\)\) \| n -> Obj\.repr \(Array\.make n z\)\)/,
  );
});

Deno.test("exportOCaml allocates an array source with Array.make and a runtime one with Bytes.create", () => {
  const src = exportOCaml(tiny).source;
  assert.match(src, /let n = 4 in .*Array\.make n z/);
  assert.match(src, /let n = 6 in .*Bytes\.create \(8 \* n - 1\)/);
  const major = exportOCaml(scenario({ name: "major" }, (s) => {
    s.main.alloc(300, { source: "major" });
  })).source;
  assert.match(major, /let n = 300 in .*Bytes\.create \(8 \* n - 1\)/);
});

Deno.test("exportOCaml evaluates a combined allocation's components in reverse layout order", () => {
  const src = exportOCaml(tiny).source;
  assert.match(
    src,
    /let b1 = Sys\.opaque_identity \(\(z, z, z\)\) in let b0 = Sys\.opaque_identity \(\(z, z\)\) in/,
  );
  const three = exportOCaml(scenario({ name: "three" }, (s) => {
    s.main.allocCombined([1, 2, 3], { lifetime: [keep.drop, keep.forever, keep.drop] });
  })).source;
  const b2 = three.indexOf("let b2 = Sys.opaque_identity ((z, z, z)) in");
  const b1 = three.indexOf("let b1 = Sys.opaque_identity ((z, z)) in");
  const b0 = three.indexOf("let b0 = Sys.opaque_identity (ref z) in");
  assert.ok(b2 >= 0 && b1 > b2 && b0 > b1, `order of b2, b1, b0: ${b2}, ${b1}, ${b0}`);
  // Each component keeps its own lifetime: only b1 is kept.
  assert.match(three, /let blk = Obj\.repr b1 in keep_slot \d+ blk/);
  assert.match(three, /ignore \(Sys\.opaque_identity \(Obj\.repr b0\)\)/);
});

Deno.test("exportOCaml writes frames as named functions and maps Module.fN to the frame's defname", () => {
  const p = exportOCaml(tiny);
  assert.deepEqual(new Set(p.frames.values()), new Set(["Tiny.outer", "Tiny.leaf"]));
  assert.equal(p.frames.size, 2);
  const leaf = fnOf(p, "Tiny.leaf");
  const outer = fnOf(p, "Tiny.outer");
  assert.match(leaf, /^f\d+$/);
  assert.match(outer, /^f\d+$/);
  // The caller's function calls the callee's, inside the loops; run_main calls the caller.
  assert.ok(definition(p.source, outer).includes(`${leaf} ()`));
  assert.ok(definition(p.source, outer).includes("for i2 = 1 to 5 do"));
  assert.ok(definition(p.source, "run_main").includes(`${outer} ();`));
  // The leaf's function allocates the 3-word block.
  assert.ok(definition(p.source, leaf).includes("(z, z, z)"));
  // Each frame function carries its frame in a comment, as a string literal (user text).
  assert.ok(p.source.includes(`(* "Tiny.leaf@tiny.ml:2:4-9" *)\nlet[@inline never] ${leaf} () =`));
});

Deno.test("exportOCaml gives one function per frame occurrence, several with one defname", () => {
  const p = exportOCaml(scenario({ name: "twice" }, (s) => {
    s.main.alloc(1, { at: ["M.a@m.ml:1:0-1", "M.b@m.ml:2:0-1"] });
    s.main.alloc(2, { at: "M.b@m.ml:3:0-1" });
  }));
  assert.equal(p.frames.size, 3);
  assert.deepEqual([...p.frames.values()].sort(), ["M.a", "M.b", "M.b"]);
  for (const fn of p.frames.keys()) assert.match(fn, /^Twice\.f\d+$/);
});

Deno.test("defName keeps what precedes the last @", () => {
  assert.equal(defName("Service.parse@service.ml:20:10-40"), "Service.parse");
  assert.equal(defName("<harness>"), "<harness>");
  assert.equal(defName("a@b@c.ml:1:0-1"), "a@b");
});

Deno.test("exportOCaml sets OCAMLRUNPARAM from minorHeapWords and ringLog2", () => {
  assert.deepEqual(exportOCaml(tiny).env, { OCAMLRUNPARAM: "s=8192,e=10" });
  const dflt = exportOCaml(scenario({ name: "dflt" }, (s) => void s.main.alloc(1)));
  assert.deepEqual(dflt.env, { OCAMLRUNPARAM: "s=262144,e=16" });
  assert.match(dflt.source, /let expected_minor_heap_words = 262144\n/);
  // The header tells how to build and run it.
  assert.ok(exportOCaml(tiny).source.includes("OCAMLRUNPARAM=s=8192,e=10 ./tiny"));
  assert.ok(exportOCaml(tiny).source.includes("ocamlopt -g tiny.ml -o tiny"));
});

Deno.test("the header builds with the toolchain memprof-lab uses: ocaml exec, or the command given", () => {
  const dflt = exportOCaml(tiny);
  assert.equal(dflt.build, "deno task ocaml exec ocamlopt -g tiny.ml -o tiny");
  assert.ok(dflt.source.includes(`\n     ${dflt.build}\n     OCAMLRUNPARAM=s=8192,e=10 ./tiny\n`));
  assert.ok(dflt.source.includes("`memprof-lab ocaml exec ocamlopt …`"));
  const path = exportOCaml(tiny, { buildCommand: ["/opt/ocaml-5.3.0/bin/ocamlopt"] });
  assert.equal(path.build, "/opt/ocaml-5.3.0/bin/ocamlopt -g tiny.ml -o tiny");
  assert.ok(path.source.includes(`\n     ${path.build}\n`));
  assert.ok(!path.source.includes("ocaml exec"));
  // A word a shell (or the OCaml comment) would not take as it is: the default instead.
  for (const bad of [["/opt/my ocaml/bin/ocamlopt"], ["ocamlopt*)"], ['"x"'], []]) {
    assert.equal(exportOCaml(tiny, { buildCommand: bad }).build, dflt.build, bad.join(" "));
  }
  // Only the header comment differs.
  const body = (source: string) => source.slice(source.indexOf("*)"));
  assert.equal(body(path.source), body(dflt.source));
});

Deno.test("exportOCaml links runtime_events only when the scenario uses events", () => {
  assert.deepEqual(exportOCaml(tiny).compileArgs, ["-g", "tiny.ml"]);
  assert.ok(!exportOCaml(tiny).source.includes("Runtime_events"));
  const ev = exportOCaml(scenario({ name: "ev" }, (s) => {
    s.events.start();
    s.main.userEvent("tick", { type: "int", value: 7 });
    s.events.pause();
    s.events.resume();
  }));
  assert.deepEqual(ev.compileArgs, ["-g", "-I", "+runtime_events", "runtime_events.cmxa", "ev.ml"]);
  assert.match(ev.source, /Runtime_events\.start \(\)/);
  assert.match(ev.source, /Runtime_events\.User\.write ev_0 \(7\)/);
  assert.match(ev.source, /Runtime_events\.User\.register "tick" Ev_0 Runtime_events\.Type\.int/);
  assert.ok(ev.source.includes("ocamlopt -g -I +runtime_events runtime_events.cmxa ev.ml -o ev"));
  // Starting events alone is enough.
  const start = exportOCaml(scenario({ name: "ev2" }, (s) => s.events.start()));
  assert.deepEqual(start.compileArgs, [
    "-g",
    "-I",
    "+runtime_events",
    "runtime_events.cmxa",
    "ev2.ml",
  ]);
});

Deno.test("exportOCaml starts profiles with their rate and callstack size, and tracks by default", () => {
  const src = exportOCaml(tiny).source;
  assert.match(src, /Gc\.Memprof\.start ~sampling_rate:\(0x1p-1\) ~callstack_size:8 trk_0/);
  assert.match(src, /tick \(\); \(start_fns\.\(0\) \(\)\);/);
  assert.match(src, /tick \(\); \(Gc\.Memprof\.stop \(\)\);/);
  // Default behaviours: allocation and promotion return Some, deallocations unit.
  assert.match(src, /let cb_0_0 [^]*?set_outcome b 1; Some id/);
  assert.match(src, /let cb_0_2 [^]*?set_outcome b 1; Some v/);
  assert.match(src, /let cb_0_3 [^]*?set_outcome b 2/);
  // The harness records up to the largest callstack size.
  assert.match(src, /let max_frames = 8\n/);
});

Deno.test("exportOCaml numbers the exceptions callbacks raise and logs escaping ones", () => {
  const sc = scenario({ name: "raises" }, (s) => {
    s.main.memprof.start({
      samplingRate: 1,
      tracker: {
        allocMinor: cb.track().raiseOn(2, "Boom"),
        promote: cb.none().on(1, act.raise("Bang")),
        deallocMinor: cb.none().always(act.raise("Boom")),
      },
    });
    s.main.alloc(2);
    s.main.attempt(() => s.main.alloc(3));
  });
  const p = exportOCaml(sc);
  assert.deepEqual(p.exceptions, ["Boom", "Bang"]);
  assert.match(p.source, /^exception E_0\nexception E_1$/m);
  assert.match(p.source, /if n = 2 then begin set_outcome b 3; raise E_0 end;/);
  assert.match(p.source, /if true then begin set_outcome b 3; raise E_0 end;/);
  assert.match(p.source, /if n = 1 then begin set_outcome b 4; raise E_1 end;/);
  assert.match(p.source, /\| E_0 -> record_exn 5 0 \| E_1 -> record_exn 5 1/);
  assert.match(p.source, /\(try .* with e -> escaped e\)/);
  assert.match(p.source, /with e -> caught_at /);
  // Without raising callbacks there are no handlers at all.
  assert.deepEqual(exportOCaml(tiny).exceptions, []);
  assert.ok(!exportOCaml(tiny).source.includes("escaped e"));
});

Deno.test("exportOCaml refuses a spawn or a join while the domain samples only when a callback may raise", () => {
  // A spawn while the parent samples is exported (its allocations are simulated, and the order
  // of its result and the new domain's DLS array is a race point); so is its domain ending, or
  // being joined, while the main domain samples (the `join` race point). A callback that may
  // raise would make Domain.spawn fail, or abort Domain.join, which the program then retries.
  const tracker = (raising: boolean) =>
    raising ? { allocMinor: cb.track().on(5, act.raise()) } : {};
  const spawning = (raising: boolean) =>
    scenario({ name: "spawning" }, (s) => {
      s.main.memprof.start({ samplingRate: 0.1, tracker: tracker(raising) });
      s.main.spawn("w").alloc(2);
    });
  exportOCaml(spawning(false));
  assert.throws(
    () => exportOCaml(spawning(true)),
    /step 2: Domain\.spawn while domain "main" samples: a callback raising inside Domain\.spawn/,
  );
  const ending = (raising: boolean) =>
    scenario({ name: "ending" }, (s) => {
      const w = s.main.spawn("w");
      s.main.memprof.start({ samplingRate: 0.1, tracker: tracker(raising) });
      w.terminate();
    });
  assert.match(exportOCaml(ending(false)).source, /join_dom \(Obj\.obj doms\.\(1\)/);
  assert.throws(
    () => exportOCaml(ending(true)),
    /step 3: Domain\.join while domain "main" samples: a callback raising at Domain\.join's/,
  );
  const joining = (raising: boolean) =>
    scenario({ name: "joining" }, (s) => {
      const w = s.main.spawn("w");
      w.alloc(2);
      s.main.memprof.start({ samplingRate: 0.1, tracker: tracker(raising) });
      s.main.join(w);
    });
  assert.match(exportOCaml(joining(false)).source, /release_domain 1; join_dom/);
  assert.throws(
    () => exportOCaml(joining(true)),
    /step 4: Domain\.join while domain "main" samples/,
  );
  // Stopped before the spawn, started by the worker: exported.
  exportOCaml(scenario({ name: "stopped" }, (s) => {
    s.main.memprof.start({ samplingRate: 0.1 });
    s.main.memprof.stop();
    const w = s.main.spawn("w");
    w.memprof.start({ samplingRate: 0.1 });
    w.alloc(2);
    w.memprof.stop();
    s.main.join(w);
  }));
});

Deno.test("exportOCaml runs a spawned domain's steps in its own function, handing a baton over", () => {
  const p = exportOCaml(scenario({ name: "doms" }, (s) => {
    const m = s.main;
    const w = m.spawn("w");
    w.memprof.start({ samplingRate: 0.1 });
    w.alloc(2, { at: "Doms.work@doms.ml:1:0-5" });
    w.terminate();
    m.alloc(1);
  }));
  const run1 = definition(p.source, "run_1");
  assert.match(run1, /announce_started 1;/);
  assert.ok(run1.includes(`${fnOf(p, "Doms.work")} ()`));
  const main = definition(p.source, "run_main");
  assert.match(main, /Domain\.spawn run_1/);
  // Joined (its end's callbacks on the main domain drained: join_dom, resume_dom) at the main
  // domain's next turn.
  assert.match(
    main,
    /wait_turn \d+;\s+join_dom \(Obj\.obj doms\.\(1\) : unit Domain\.t\);\s+resume_dom \(\);/,
  );
  // The spawning domain's minor heap is emptied first.
  assert.match(
    main,
    /\(Gc\.minor \(\)\); resume_dom \(\); \(doms\.\(1\) <- Obj\.repr \(Domain\.spawn/,
  );
  assert.match(run1, /pass_turn \d+;/);
});

Deno.test("HARNESS_FRAMES counts 3 frames below the scenario's on main, 2 on spawned domains and 2 on systhreads, and 1 above them where an external allocation takes its callstack", () => {
  assert.deepEqual({ ...HARNESS_FRAMES }, { main: 3, spawned: 2, thread: 2, external: 1 });
});

Deno.test("exportOCaml gives the same program twice", () => {
  for (const sc of [tiny, ...scenarios.filter((s) => s.settings.name === "service")]) {
    const a = exportOCaml(sc), b = exportOCaml(sc);
    assert.equal(a.source, b.source, sc.settings.name);
    assert.deepEqual([...a.frames], [...b.frames]);
    assert.deepEqual(a.compileArgs, b.compileArgs);
    assert.deepEqual(a.env, b.env);
    assert.deepEqual(a.exceptions, b.exceptions);
  }
});

Deno.test("exportOCaml sizes the callback log as asked", () => {
  assert.match(exportOCaml(tiny).source, /let log_capacity = 65536\n/);
  assert.match(exportOCaml(tiny, { logCapacity: 100 }).source, /let log_capacity = 100\n/);
});

Deno.test("moduleNameOf makes an OCaml module name of any scenario name", () => {
  assert.equal(moduleNameOf("service"), "Service");
  assert.equal(moduleNameOf("ref_loop"), "Ref_loop");
  assert.equal(moduleNameOf("a-b.c"), "A_b_c");
  assert.equal(moduleNameOf("1st"), "S_1st");
  assert.equal(moduleNameOf("_x"), "S__x");
  assert.equal(moduleNameOf("Already"), "Already");
});

// ---- refusals ----------------------------------------------------------------------------------

/** Asserts that exporting a scenario built by `build` throws an ExportError at step `step`
 * whose reason matches `reason`. */
function refuses(name: string, step: string, reason: RegExp, build: (s: ScenarioBuilder) => void) {
  const sc: Scenario = scenario({ name }, build);
  assert.throws(
    () => exportOCaml(sc),
    (e: unknown) => {
      assert.ok(e instanceof ExportError, `${name}: ${e}`);
      assert.equal(e.name, "ExportError");
      assert.equal(e.scenario, name);
      assert.equal(e.step, step, `${name}: ${e.message}`);
      assert.match(e.reason, reason);
      assert.equal(e.message, `cannot export scenario ${name}, step ${step}: ${e.reason}`);
      return true;
    },
  );
}

Deno.test("exportOCaml refuses systhreads of the older form, naming the step", () => {
  refuses("thr", "2", /systhreads of the older form .* are not exported/, (s) => {
    s.main.alloc(1);
    s.main.thread("t");
  });
  refuses("blk", "1", /systhreads of the older form .* are not exported/, (s) => {
    s.main.blocking(() => s.main.alloc(1));
  });
});

Deno.test("exportOCaml refuses an external allocation where callbacks pass the systhreads' baton, naming the step", () => {
  refuses(
    "ext",
    "4.1",
    /external allocations with callbacks that pass the systhreads' baton/,
    (s) => {
      s.main.memprof.start({
        samplingRate: 0.1,
        callstackSize: 0,
        tracker: { allocMinor: cb.track().every(3, act.yieldTo("t")) },
      });
      s.main.thread("t", (t) => t.alloc(1));
      s.main.alloc(1);
      s.main.repeat(3, () => s.main.extAlloc(100));
      s.main.memprof.stop();
    },
  );
});

Deno.test("exportOCaml refuses a custom block of 2 words, naming the step", () => {
  refuses("cust", "1", /a custom block of 2 words: .*6 to 21 words/, (s) => {
    s.main.alloc(2, { source: "custom", customMem: 10 });
  });
  refuses("cust_drawn", "1", /the custom block needs a constant size/, (s) => {
    s.main.alloc(sizes.uniform(6, 8), { source: "custom", customMem: 10 });
  });
  const ok = exportOCaml(scenario({ name: "cust_ok" }, (s) => {
    s.main.alloc(7, { source: "custom", customMem: 10 });
  }));
  assert.match(ok.source, /let dims\d+ = Array\.make 2 1/);
  assert.match(ok.source, /Bigarray\.Genarray\.create Bigarray\.char Bigarray\.c_layout dims\d+/);
});

Deno.test("exportOCaml refuses a size distribution in a combined allocation, naming the step", () => {
  refuses("comb", "1.1", /the combined allocation needs a constant size/, (s) => {
    s.main.call("C.f@c.ml:1:0-1", () => s.main.allocCombined([2, sizes.choice(1, 3)]));
  });
});

Deno.test("exportOCaml refuses combined components with different frames, naming the step", () => {
  refuses("comb_frames", "1", /combined-allocation components with different frames/, (s) => {
    s.main.allocCombined([2, 3], { at: [["C.f@c.ml:1:0-1"], ["C.g@c.ml:2:0-1"]] });
  });
  // Only the innermost frame's location may differ.
  const ok = exportOCaml(scenario({ name: "comb_loc" }, (s) => {
    s.main.allocCombined([2, 3], { at: [["C.f@c.ml:1:0-1"], ["C.f@c.ml:1:4-9"]] });
  }));
  assert.deepEqual([...ok.frames.values()], ["C.f"]);
});

Deno.test("exportOCaml refuses a direct major allocation of at most 256 words, naming the step", () => {
  refuses("maj", "2", /a direct major allocation of 100 words/, (s) => {
    s.main.alloc(1);
    s.main.alloc(100, { source: "major" });
  });
  refuses("maj256", "1", /a direct major allocation of 256 words/, (s) => {
    s.main.alloc(256, { source: "major" });
  });
  refuses("maj_drawn", "1", /a direct major allocation of 200 words/, (s) => {
    s.main.alloc(sizes.uniform(200, 400), { source: "major" });
  });
  assert.doesNotThrow(() =>
    exportOCaml(scenario({ name: "maj257" }, (s) => void s.main.alloc(257, { source: "major" })))
  );
});

Deno.test("exportOCaml refuses a geometric size without a maximum, naming the step", () => {
  refuses("geo", "1", /sizes\.geometric without a maximum/, (s) => {
    s.main.alloc(sizes.geometric(4));
  });
});

Deno.test("exportOCaml refuses a spawn inside a repeat, naming the step", () => {
  refuses("spawn_rep", "2.1", /spawn inside a repeat/, (s) => {
    s.main.alloc(1);
    s.main.repeat(1, () => s.main.spawn("w"));
  });
  refuses("spawn_call", "1.1", /spawn inside a call/, (s) => {
    s.main.call("S.f@s.ml:1:0-1", () => s.main.spawn("w"));
  });
});

Deno.test("exportOCaml refuses another domain's step inside a compound step, naming the step", () => {
  refuses("other_dom", "2.1.1", /a step of domain "w" inside a repeat of domain "main"/, (s) => {
    const w = s.main.spawn("w");
    s.main.repeat(2, () => s.main.attempt(() => w.alloc(1)));
  });
});

Deno.test("exportOCaml exports a termination while another spawned domain runs (orphan adoption is a race point)", () => {
  const p = exportOCaml(scenario({ name: "orphans" }, (s) => {
    const w1 = s.main.spawn("w1");
    const w2 = s.main.spawn("w2");
    w1.terminate();
    w2.terminate();
  }));
  assert.match(p.source, /Domain\.spawn run_1/);
  assert.match(p.source, /Domain\.spawn run_2/);
});

Deno.test("exportOCaml refuses an unnamed profile started by a callback, naming the step", () => {
  refuses("unnamed", "2", /a profile started by a callback needs a name/, (s) => {
    s.main.alloc(1);
    s.main.memprof.start({
      samplingRate: 1,
      tracker: {
        allocMinor: cb.track().on(
          1,
          act.stop(),
          act.start({ samplingRate: 0.5, callstackSize: 4, tracker: {} }),
        ),
      },
    });
  });
});

Deno.test("exportOCaml refuses one profile name started with two specifications, naming the step", () => {
  refuses("two_specs", "1", /profile "p1" is started with two different specifications/, (s) => {
    s.main.memprof.start({
      name: "p1",
      samplingRate: 1,
      callstackSize: 4,
      tracker: {
        allocMinor: cb.track().on(
          1,
          act.stop(),
          act.start({ name: "p1", samplingRate: 0.5, callstackSize: 4, tracker: {} }),
        ),
      },
    });
  });
});

Deno.test("exportOCaml refuses custom user events and one event name with two types", () => {
  refuses("custom_ev", "2", /custom user events are not exported/, (s) => {
    s.events.start();
    s.main.userEvent("c", { type: "custom", bytes: [1, 2] });
  });
  refuses("two_types", "3", /user event "x" is written with two types/, (s) => {
    s.events.start();
    s.main.userEvent("x", { type: "unit" });
    s.main.userEvent("x", { type: "int", value: 1 });
  });
});

Deno.test("exportOCaml exports blocks kept while several domains run (their promotion is a race point)", () => {
  const kept = exportOCaml(scenario({ name: "kept_dom" }, (s) => {
    const w = s.main.spawn("w");
    s.main.alloc(1);
    s.main.repeat(2, () => s.main.alloc(1, { lifetime: keep.cycle(keep.drop, keep.steps(2)) }));
    w.alloc(2, { lifetime: keep.forever });
    w.terminate();
  }));
  assert.match(kept.source, /keep_steps \d+ 2 blk/);
  assert.match(kept.source, /keep_slot \d+ blk/);
  // A callback keeping what it allocates, with several domains.
  const cbKeeps = exportOCaml(scenario({ name: "cb_keeps" }, (s) => {
    s.main.memprof.start({
      samplingRate: 1,
      tracker: { allocMinor: cb.track().always(act.alloc(2, keep.steps(3))) },
    });
    s.main.alloc(1);
    s.main.memprof.stop();
    s.main.spawn("w").terminate();
  }));
  assert.match(
    cbKeeps.source,
    /if true then begin let blk = .*\(z, z\).* in keep_steps \d+ 3 blk end;/,
  );
});

Deno.test("exportOCaml either exports each library scenario or refuses it with an ExportError", () => {
  const refused = new Map<string, string>();
  for (const sc of scenarios) {
    try {
      const p = exportOCaml(sc);
      assert.equal(p.scenario, sc.settings.name);
    } catch (e) {
      assert.ok(e instanceof ExportError, `${sc.settings.name}: ${e}`);
      assert.equal(e.scenario, sc.settings.name);
      refused.set(sc.settings.name, e.reason);
    }
  }
  assert.ok(!refused.has("tracer_reentrancy"), refused.get("tracer_reentrancy"));
  assert.match(refused.get("sources") ?? "", /custom block of 2 words/);
  for (const name of ["thread_block_in_callback", "thread_exit_in_callback"]) {
    assert.match(refused.get(name) ?? "", /systhreads of the older form/, name);
  }
  // threads is written with programs since issue 24; the older form is refused wherever used.
  assert.ok(!refused.has("threads"), refused.get("threads"));
  const older = scenario({ name: "older" }, (s) => {
    const t = s.main.thread("t");
    t.switchTo();
    s.main.alloc(1);
  });
  assert.throws(
    () => exportOCaml(older),
    (e: unknown) => e instanceof ExportError && /systhreads of the older form/.test(e.reason),
  );
  for (const name of ["domains_orphans", "domain_exit_tracked", "loop_indices"]) {
    assert.ok(!refused.has(name), `${name}: ${refused.get(name)}`);
  }
  for (const name of ["blocking_in_callback", "threads_in_callbacks"]) {
    assert.ok(!refused.has(name), `${name}: ${refused.get(name)}`);
  }
  for (const name of ["ref_loop", "triple_cons", "service", "lifecycle", "start_stop"]) {
    assert.ok(!refused.has(name), `${name}: ${refused.get(name)}`);
  }
});

Deno.test("a refused callback action names the step that starts its profile", () => {
  const sc = scenario({ name: "cb_exit" }, (s) => {
    s.main.alloc(1);
    s.main.memprof.start({
      samplingRate: 1,
      callstackSize: 0,
      tracker: { allocMinor: cb.track().on(1, act.exitThread()) },
    });
  });
  assert.throws(() => exportOCaml(sc), (e: unknown) => {
    assert.ok(e instanceof ExportError);
    assert.equal(e.step, "2");
    assert.match(e.message, /^cannot export scenario cb_exit, step 2: callbacks that switch/);
    return true;
  });
});

Deno.test("exportOCaml records every frame a profile asks for", () => {
  const deep = scenario({ name: "deep" }, (s) => {
    s.main.memprof.start({ samplingRate: 1, callstackSize: 100 });
    const nest = (k: number): void => {
      if (k === 0) return void s.main.alloc(1);
      s.main.call(`D.f${k}@d.ml:${k}:0-1`, () => nest(k - 1));
    };
    nest(70);
    s.main.memprof.stop();
  });
  const recorded = Number(/let max_frames = (\d+)/.exec(exportOCaml(deep).source)![1]);
  assert.equal(recorded, 100);
});

Deno.test("exportOCaml refuses a callstack size larger than the program can record", () => {
  const huge = scenario({ name: "huge" }, (s) => {
    s.main.memprof.start({ samplingRate: 1, callstackSize: 5000 });
    s.main.alloc(1);
  });
  assert.throws(() => exportOCaml(huge), /step 1: a callstack size of 5000: .* at most 1024/);
});

Deno.test("every becomes an if on the loop index; join releases and joins the domain", () => {
  const src = exportOCaml(scenario({ name: "every_join" }, (s) => {
    s.main.repeat(4, () =>
      s.main.repeat(30, (j) => {
        s.main.alloc(1);
        j.every(10, () => s.main.minorGc(), 3);
      }));
    const w = s.main.spawn("w");
    w.repeat(5, () => w.alloc(2));
    s.main.join(w);
    s.main.alloc(1);
  })).source;
  // Depth 2 of the main domain (number 0): loops.(0 * (max_depth + 1) + 2).
  assert.match(
    src,
    /if loops\.\(\(0 \* \(max_depth \+ 1\)\) \+ 2\) mod 10 = 3 then begin\s+tick \(\); \(Gc\.minor \(\)\);\s+end;/,
  );
  assert.match(
    src,
    /release_domain 1; join_dom \(Obj\.obj doms\.\(1\) : unit Domain\.t\); resume_dom \(\);/,
  );
  // The joined domain waits to be released after its last step, and has no final flush.
  const run1 = src.slice(
    src.indexOf("let[@inline never] run_1 () ="),
    src.indexOf("let[@inline never] run_main"),
  );
  // (and drains what is still pending on it: see the terminate step)
  assert.match(run1, /wait_released 1;\s+resume_dom \(\);\s+Sys\.opaque_identity \(\)/);
  assert.doesNotMatch(run1, /process_pending/);
});

Deno.test("join is refused inside a compound step", () => {
  assert.throws(
    () =>
      exportOCaml(scenario({ name: "join_nested" }, (s) => {
        const w = s.main.spawn("w");
        s.main.repeat(1, () => s.main.join(w));
      })),
    /step 2\.1: join inside a repeat/,
  );
});

Deno.test("ringMarks adds the ring's mark and the exit after the run only; off, nothing", () => {
  const sc = scenario({ name: "marks" }, (s) => {
    s.main.memprof.start({ samplingRate: 0.5, callstackSize: 0 });
    s.main.repeat(10, () => s.main.alloc(3));
  });
  const plain = exportOCaml(sc);
  const marked = exportOCaml(sc, { ringMarks: true });
  assert.ok(!/ring_pause|ring_resume|ring_sys_exit/.test(plain.source));
  // Everything up to the run's end is the same text.
  const runEnd = "  let s1 = Gc.quick_stat () in\n";
  const cut = (src: string) => src.slice(0, src.indexOf(runEnd) + runEnd.length);
  const withoutDecls = marked.source.replace(
    /\(\* The ring's mark[^\n]*\n(external ring_[^\n]*\n)+\n/,
    "",
  );
  assert.equal(cut(withoutDecls), cut(plain.source));
  const after = marked.source.slice(marked.source.indexOf(runEnd) + runEnd.length);
  assert.ok(after.startsWith("  ring_pause ();\n  ring_resume ();\n"), after);
  assert.ok(
    after.trimEnd().endsWith("Gc.minor ();\n  ignore (Gc.major_slice 0);\n  ring_sys_exit 0"),
  );
  assert.match(
    marked.source,
    /external ring_pause : unit -> unit = "caml_ml_runtime_events_pause"/,
  );
  assert.deepEqual(marked.compileArgs, plain.compileArgs);
  assert.deepEqual(marked.env, plain.env);
});
