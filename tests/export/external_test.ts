// External allocations in the exported program: the emulation of memtrace's `External`
// (lib/export/_emit_external.ts). Its OCaml sampler, compiled with the real OCaml 5.3 toolchain,
// must draw exactly what the simulation's GeometricSampler draws (lib/tracer), for memtrace's
// seed, at several rates, without allocating, its generator the standard library's
// Random.State.make with that seed; its slow path must allocate only the callstack
// array (one word per frame, its own frame included) and leave the lock released. The programs'
// text is checked without a toolchain. (The library's tracer_reentrancy, judged whole by the real
// runtime, is tests/differential/library_agree_test.ts's.)
import assert from "node:assert/strict";
import { checkExportable, ExportError, exportOCaml, HARNESS_FRAMES } from "../../lib/export/mod.ts";
import { externalEmulationCode } from "../../lib/export/_emit_external.ts";
import { GeometricSampler, MEMTRACE_SAMPLER_SEED } from "../../lib/tracer/mod.ts";
import {
  act,
  cb,
  type DomainBuilder,
  keep,
  type RunEvent,
  runScenario,
  scenario,
  sizes,
} from "../../lib/scenario/mod.ts";
import { REAL_OCAML, skipNotice } from "../real_toolchain.ts";

const skip = REAL_OCAML.toolchain === undefined ? REAL_OCAML.why : undefined;
if (skip !== undefined) skipNotice("the emulated memtrace sampler on the real OCaml 5.3", skip);

/** Rates: the library's tracer_reentrancy and sources, one with many draws per sample, and
 * memtrace's `sampling_rate >= 1` case (every gap 1 word). */
const RATES = [0.01, 1e-4, 0.37, 1];
/** Draws printed per rate. */
const DRAWS = 300;
/** Raw draws compared with the standard library's `Random.State.bits`. */
const BITS = 10_000;
/** Bytes owed before the slow path is called (several draws at every rate). */
const OWED = -5_000;

/** A program running the emulation at each rate, each in a module of its own: its first
 * `bytes_before_ext_sample`, the next draws, the words 10,000 draws allocate, then a slow path
 * called from a function of its own: the bytes left, the words it allocated, the lock. */
function probeProgram(): string {
  const modules = RATES.map((rate, k) =>
    `module M${k} = struct\n${externalEmulationCode(rate)}\nend\n\n` +
    `let[@inline never] slow_${k} () = M${k}.ext_alloc_slowpath (); Sys.opaque_identity ()\n\n` +
    `let () =\n` +
    `  Printf.printf "rate ${k} first %d\\n" !M${k}.ext_bytes;\n` +
    `  for _ = 1 to ${DRAWS} do Printf.printf "%d\\n" (M${k}.ext_draw_bytes ()) done;\n` +
    `  let w0 = Gc.minor_words () in\n` +
    `  let s = ref 0 in\n` +
    `  for _ = 1 to 10_000 do s := !s + M${k}.ext_draw_bytes () done;\n` +
    `  let w1 = Gc.minor_words () in\n` +
    `  Printf.printf "draws_alloc %.0f sum %d\\n" (w1 -. w0) !s;\n` +
    `  M${k}.ext_bytes := ${OWED};\n` +
    `  let w2 = Gc.minor_words () in\n` +
    `  slow_${k} ();\n` +
    `  let w3 = Gc.minor_words () in\n` +
    `  Printf.printf "slow left %d alloc %.0f locked %b\\n" !M${k}.ext_bytes (w3 -. w2) !M${k}.ext_locked`
  );
  // The emulation's generator against the standard library's own Random.State.make, with
  // memtrace's seed (the probe may link Random; exported programs do not).
  const seed = MEMTRACE_SAMPLER_SEED.map((w) => `0x${w.toString(16)}`).join("; ");
  // A generator of its own, whose one draw so far is the initial bytes_before_ext_sample.
  const stdlib = `module MB = struct\n${externalEmulationCode(0.5)}\nend\n\n` +
    `let () =\n` +
    `  let r = Random.State.make [| ${seed} |] in\n` +
    `  ignore (Random.State.bits r);\n` +
    `  let m = ref 0 in\n` +
    `  for _ = 1 to ${BITS} do if MB.ext_bits () = Random.State.bits r then incr m done;\n` +
    `  Printf.printf "same bits %d\\n" !m`;
  return [
    "let empty_weak : int Weak.t = Weak.create 1",
    "let[@inline never] process_pending () = ignore (Sys.opaque_identity (Weak.get empty_weak 0))",
    ...modules,
    stdlib,
  ].join("\n\n") + "\n";
}

/** What the program must print for the rate in slot `k`, by the simulation's sampler. */
function expected(k: number): string[] {
  const g = new GeometricSampler(RATES[k]);
  const bytes = () => g.draw() * 8;
  const out = [`rate ${k} first ${bytes()}`];
  for (let i = 0; i < DRAWS; i++) out.push(`${bytes()}`);
  let sum = 0;
  for (let i = 0; i < 10_000; i++) sum += bytes();
  out.push(`draws_alloc 0 sum ${sum}`);
  let left = OWED;
  while (left <= 0) left += bytes();
  // The callstack array: the slow path's frame, slow_k's, the module initialiser's and
  // caml_program's, one word each, and its header.
  out.push(`slow left ${left} alloc 5 locked false`);
  return out;
}

Deno.test({
  name:
    "the emulated sampler draws what the simulation's GeometricSampler draws, allocating nothing; its slow path allocates only the callstack",
  ignore: skip !== undefined,
  async fn() {
    const dir = Deno.makeTempDirSync({ prefix: "memprof-lab-ext-" });
    try {
      Deno.writeTextFileSync(`${dir}/probe.ml`, probeProgram());
      const [cmd, ...lead] = REAL_OCAML.toolchain!.ocamlopt;
      const built = await new Deno.Command(cmd, {
        args: [...lead, "-g", "probe.ml", "-o", "probe"],
        cwd: dir,
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert(built.success, new TextDecoder().decode(built.stderr));
      const run = await new Deno.Command(`${dir}/probe`, {
        cwd: dir,
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert(run.success, new TextDecoder().decode(run.stderr));
      const lines = new TextDecoder().decode(run.stdout).trimEnd().split("\n");
      assert.deepEqual(lines, [...RATES.flatMap((_, k) => expected(k)), `same bits ${BITS}`]);
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  },
});

/** A scenario with external allocations on the main domain. */
function extScenario(name: string) {
  return scenario({ name, externalSamplingRate: 0.02 }, (s) => {
    s.main.memprof.start({ samplingRate: 0.1, callstackSize: 2 });
    s.main.repeat(10, () => {
      s.main.alloc(4, { lifetime: keep.steps(3) });
      s.main.extAlloc(500, keep.steps(7));
      s.main.extAlloc(sizes.uniform(100, 900));
    });
    s.main.memprof.stop();
  });
}

Deno.test("an external allocation is exported: the emulation once, the fast path where the step is, the token kept as its lifetime says", () => {
  const p = exportOCaml(extScenario("ext"));
  const src = p.source;
  assert.equal(src.split("let ext_rand =").length, 2);
  // No use of the Random module outside comments: the program does not link it.
  assert.doesNotMatch(src.replace(/\(\*[\s\S]*?\*\)/g, ""), /\bRandom\./);
  assert.ok(src.includes(externalEmulationCode(0.02)), "the emulation at the scenario's rate");
  const steps = src.split("\n").filter((l) => l.includes("ext_alloc_slowpath ();"));
  assert.equal(steps.length, 2);
  assert.match(steps[0], /let n = !ext_bytes - 500 in ext_bytes := n; if n <= 0 then begin/);
  assert.match(steps[0], /keep_steps \d+ 7 blk end/);
  assert.match(steps[1], /let n = !ext_bytes - size_uniform 100 900 in/);
  assert.match(steps[1], /ignore \(Sys\.opaque_identity \(Obj\.repr \(0\)\)\) end/);
  // The trackers: an allocation is not tracked while the tracer's lock is held.
  assert.equal(
    src.split(
      "if !ext_locked then begin set_outcome b 0; None end else begin set_outcome b 1; " +
        "Some id end",
    ).length,
    3,
  );
});

Deno.test("a program without external allocations has no emulation, and its trackers do not look at the lock", () => {
  const sc = scenario({ name: "plain" }, (s) => {
    s.main.memprof.start({ samplingRate: 0.1, callstackSize: 2 });
    s.main.alloc(4);
    s.main.memprof.stop();
  });
  const src = exportOCaml(sc).source;
  assert.doesNotMatch(src, /\bext_/);
  assert.ok(src.includes("set_outcome b 1; Some id"));
});

Deno.test("the emulation's initialisation is in the harness heap's model: the same scenario without it starts with another major heap", () => {
  const withExt = exportOCaml(extScenario("ext")).majorHeap;
  const without = exportOCaml(
    scenario({ name: "ext", externalSamplingRate: 0.02 }, (s) => {
      s.main.memprof.start({ samplingRate: 0.1, callstackSize: 2 });
      s.main.repeat(10, () => {
        s.main.alloc(4, { lifetime: keep.steps(3) });
        s.main.alloc(1, { lifetime: keep.steps(7) }); // a keep site as the token's
        s.main.alloc(1);
      });
      s.main.memprof.stop();
    }),
  ).majorHeap;
  assert.notDeepEqual(withExt, without);
});

Deno.test("external allocations are exported with domains, systhreads and raising callbacks; refused with baton-passing callbacks or an unbounded size", () => {
  const refusal = (sc: Parameters<typeof checkExportable>[0]) =>
    checkExportable(sc).find((r) => r.kind === "externalAlloc" || r.kind === "unboundedGeometric");
  // On a spawned domain, memtrace's ext_alloc returns at once: only the size is drawn.
  const domains = scenario({ name: "doms" }, (s) => {
    const d = s.main.spawn("d");
    s.main.extAlloc(100);
    d.extAlloc(sizes.uniform(8, 64));
    d.extAlloc(200);
    d.terminate();
  });
  assert.equal(refusal(domains), undefined);
  const doms = exportOCaml(domains).source;
  assert.match(doms, /tick \(\); \(ignore \(size_uniform 8 64\)\)/);
  assert.equal(doms.match(/ext_alloc_slowpath \(\);/g)?.length, 1, "the main domain's only");
  // A systhread with a program runs on the main domain: its allocations are sampled.
  const threads = scenario({ name: "thr" }, (s) => {
    s.main.thread("t", (t: DomainBuilder) => t.extAlloc(100));
    s.main.extAlloc(100);
  });
  assert.equal(refusal(threads), undefined);
  assert.equal(exportOCaml(threads).source.match(/ext_alloc_slowpath \(\);/g)?.length, 2);
  // A callback passing the baton could let another thread run while the lock is held.
  const passing = scenario({ name: "pass" }, (s) => {
    s.main.memprof.start({
      samplingRate: 0.5,
      callstackSize: 0,
      tracker: { allocMinor: cb.track().every(5, act.yieldToNext(["main", "t"])) },
    });
    s.main.thread("t", (t: DomainBuilder) => t.alloc(1));
    s.main.extAlloc(100);
    s.main.memprof.stop();
  });
  assert.match(refusal(passing)!.reason, /callbacks that pass the systhreads' baton/);
  assert.throws(() => exportOCaml(passing), ExportError);
  // Raising callbacks: the slow path catches what its locked part raises (mark_failed).
  const raising = scenario({ name: "raise" }, (s) => {
    s.main.memprof.start({
      samplingRate: 0.5,
      callstackSize: 0,
      tracker: { promote: cb.track().every(5, act.raise("E")) },
    });
    s.main.extAlloc(100, keep.steps(2));
    s.main.memprof.stop();
  });
  assert.equal(refusal(raising), undefined);
  const src = exportOCaml(raising).source;
  assert.ok(src.includes(externalEmulationCode(0.5, { exceptions: 1 })));
  assert.match(
    src,
    /\| exception e -> ext_locked := false; ext_failed := true; ext_report e; false/,
  );
  assert.match(
    src,
    /let\[@inline never\] ext_report e = match e with \| E_0 -> record_exn 7 0 \| _ -> \(\)/,
  );
  assert.match(src, /if ext_alloc_slowpath \(\) then begin let blk = Obj.repr \(0\)/);
  // Once failed, the trackers do not track, as memtrace's Is_stopped.
  assert.match(src, /if !ext_locked \|\| !ext_failed then begin set_outcome b 0; None end/);
  assert.match(
    src,
    /if !ext_failed then begin set_outcome b 0; None end else begin set_outcome b 1; Some v end/,
  );
  const unbounded = scenario({ name: "geo" }, (s) => void s.main.extAlloc(sizes.geometric(100)));
  assert.equal(refusal(unbounded)!.kind, "unboundedGeometric");
});

Deno.test("a callback raising under memtrace's lock fails the tracer: caught and recorded, no token, nothing tracked after", () => {
  const sc = scenario(
    { name: "fail", seed: 3, minorHeapWords: 4096, externalSamplingRate: 1 },
    (s) => {
      s.main.memprof.start({
        samplingRate: 0.2,
        callstackSize: 2,
        tracker: { allocMinor: cb.track().on(4, act.raise("Boom")), promote: cb.track() },
      });
      s.main.repeat(20, () => {
        s.main.alloc(2, { lifetime: keep.steps(30) });
        s.main.alloc(4, { source: "runtime", lifetime: keep.steps(30) });
        s.main.extAlloc(8, keep.steps(3));
      });
      s.main.minorGc();
      s.main.memprof.stop();
    },
  );
  const evs: RunEvent[] = [];
  const r = runScenario(sc, { onEvent: (e) => evs.push(e), harnessFrames: HARNESS_FRAMES });
  const k = evs.findIndex((e) => e.kind === "tracerFailed");
  assert.ok(k > 0, "the tracer failed");
  assert.deepEqual(evs[k], { kind: "tracerFailed", domain: 0, loops: evs[k].loops, exn: "Boom" });
  // The raiser ran just before, under the lock; nothing escaped the step.
  assert.deepEqual((evs[k - 1] as { outcome: unknown }).outcome, { raise: "Boom" });
  assert.equal(evs.filter((e) => e.kind === "escaped" || e.kind === "caught").length, 0);
  // From then on no allocation is tracked, and a promotion ends its block's tracking.
  const after = evs.slice(k + 1);
  assert.ok(after.some((e) => e.kind === "allocMinor"));
  for (const e of after) {
    if (e.kind === "allocMinor" || e.kind === "promote") assert.equal(e.outcome, "none");
  }
  let log = "";
  r.writeText("callbackLog", (c) => log += c);
  assert.match(log, /memtrace failed: exception Boom, External.alloc returns None/);
  assert.match(log, /-> None \(tracer failed\)/);
});
