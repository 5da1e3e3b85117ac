// The `diff` command, run in-process with the toolchain, the differential runs, files and
// consoles replaced.
import assert from "node:assert/strict";
import { type DiffCliIO, run, USAGE } from "../../cli/diff.ts";
import {
  compareLogs,
  type DiffOptions,
  type DiffResult,
  type KnownDifference,
  type RingJudgement,
} from "../../lib/differential/mod.ts";
import type { Scenario } from "../../lib/scenario/mod.ts";
import type { Toolchain } from "../../lib/ocaml/mod.ts";
import { scenarios } from "../../scenarios/index.ts";
import { callbackLines, canonical, resultOf } from "./helpers.ts";

const TOOLCHAIN: Toolchain = {
  ocamlopt: ["/opt/ocaml/bin/ocamlopt"],
  version: "5.3.0",
  origin: "user",
};
const KNOWN = "/repo/known.json";

const agree = (name: string, n = 4) =>
  resultOf(name, compareLogs(canonical(callbackLines(n)), canonical(callbackLines(n))));
/** Differs at callback `at` (1-based) of 5. */
const differsAt = (name: string, at: number) => {
  const real = callbackLines(5);
  real[at - 1] = "promote d0 i=- id=1 -> some";
  return resultOf(name, compareLogs(canonical(callbackLines(5)), canonical(real)));
};

interface Stub extends DiffCliIO {
  out: string;
  err: string;
  calls: { scenario: string; opts: DiffOptions }[];
  toolchainCalls: Parameters<DiffCliIO["toolchain"]>[0][];
}

function stub(
  opts: {
    results?: Record<string, DiffResult>;
    files?: Record<string, string>;
    env?: Record<string, string>;
    toolchain?: Toolchain | undefined;
    terminal?: boolean;
    modules?: Record<string, { default?: unknown }>;
  } = {},
): Stub {
  const io: Stub = {
    out: "",
    err: "",
    calls: [],
    toolchainCalls: [],
    stdout(t) {
      io.out += t;
    },
    stderr(t) {
      io.err += t;
    },
    isTerminal: () => opts.terminal ?? false,
    env: (name) => (opts.env ?? { HOME: "/home/u" })[name],
    readTextFile: (path) => opts.files?.[path],
    importModule(path) {
      const m = opts.modules?.[path];
      return m ? Promise.resolve(m) : Promise.reject(new Error(`Module not found "${path}"`));
    },
    toolchain(o) {
      io.toolchainCalls.push(o);
      return Promise.resolve("toolchain" in opts ? opts.toolchain : TOOLCHAIN);
    },
    diff(sc: Scenario, o: DiffOptions) {
      const name = sc.settings.name;
      io.calls.push({ scenario: name, opts: o });
      o.onProgress?.(`running ${name}`);
      return Promise.resolve(opts.results?.[name] ?? agree(name));
    },
  };
  return io;
}

const knownFile = (...entries: KnownDifference[]) => ({ [KNOWN]: JSON.stringify(entries) });

Deno.test("diff exits 0 when every scenario agrees, printing one line each, a table and totals", async () => {
  const io = stub();
  assert.equal(await run(["ref_loop", "triple_cons", "--no-known"], io), 0);
  assert.deepEqual(io.calls.map((c) => c.scenario), ["ref_loop", "triple_cons"]);
  assert.match(io.out, /^ref_loop: agree \(4 callbacks\)$/m);
  assert.match(io.out, /^triple_cons: agree \(4 callbacks\)$/m);
  assert.match(
    io.out,
    /^scenario +status +callbacks +minor +major$/m,
  );
  assert.match(io.out, /^ref_loop +agree +4\/4 +1\/1 +0\/0$/m);
  assert.match(
    io.out,
    /^2 scenarios: 2 agree, 0 differ \(0 known\), 0 not exportable, 0 errors; 8 callbacks compared$/m,
  );
  assert.equal(io.err, "");
});

Deno.test("diff exits 1 on an unexpected difference and shows the lines around it", async () => {
  const io = stub({ results: { ref_loop: differsAt("ref_loop", 3) }, files: knownFile() });
  assert.equal(await run(["ref_loop", "triple_cons", "--known", KNOWN], io), 1);
  assert.match(io.out, /^ref_loop: differs at callback 3$/m);
  assert.match(io.out, /^ {2}simulation:$/m);
  assert.match(io.out, /^ {2}> 3 alloc_minor d0 i=3 /m);
  assert.match(io.out, /^ {2}real OCaml 5\.3:$/m);
  assert.match(io.out, /^ {2}> 3 promote d0 i=- id=1 -> some$/m);
  assert.match(io.out, /^ref_loop +differs at callback 3 +/m);
  assert.match(io.out, /1 agree, 1 differ \(0 known\)/);
});

Deno.test("diff exits 0 on a known difference at the listed place, printing its reason", async () => {
  const io = stub({
    results: { ref_loop: differsAt("ref_loop", 3) },
    files: knownFile({ scenario: "ref_loop", at: "callback 3", reason: "the remembered set" }),
  });
  assert.equal(await run(["ref_loop", "--known", KNOWN], io), 0);
  assert.match(io.out, /^ref_loop: differs at callback 3 \(known: the remembered set\)$/m);
  assert.match(io.out, /^ref_loop +differs at callback 3 \(known\)/m);
  assert.match(io.out, /1 scenarios: 0 agree, 1 differ \(1 known\)/);
});

Deno.test("diff exits 1 when a listed difference now agrees: remove it from the list", async () => {
  const io = stub({
    files: knownFile({ scenario: "ref_loop", at: "callback 3", reason: "why" }),
  });
  assert.equal(await run(["ref_loop", "--known", KNOWN], io), 1);
  assert.match(
    io.out,
    /^ref_loop: agree \(4 callbacks\), but it is listed as a known difference at callback 3: remove it from the known differences$/m,
  );
});

Deno.test("diff exits 1 when a listed difference moved: update the list", async () => {
  const io = stub({
    results: { ref_loop: differsAt("ref_loop", 2) },
    files: knownFile({ scenario: "ref_loop", at: "callback 3", reason: "why" }),
  });
  assert.equal(await run(["ref_loop", "--known", KNOWN], io), 1);
  assert.match(
    io.out,
    /^ref_loop: differs at callback 2, but the known differences list it at callback 3: update the list$/m,
  );
});

Deno.test("diff --no-known tolerates no difference, even a listed one", async () => {
  const io = stub({
    results: { ref_loop: differsAt("ref_loop", 3) },
    files: knownFile({ scenario: "ref_loop", at: "callback 3", reason: "why" }),
  });
  assert.equal(await run(["ref_loop", "--known", KNOWN, "--no-known"], io), 1);
  assert.doesNotMatch(io.out, /known:/);
});

Deno.test("diff judges listed scenarios only when they run, and stale entries on a full run", async () => {
  const files = knownFile({ scenario: "gone", at: "overflow", reason: "why" });
  // A run of some scenarios: the entry is not about them.
  const some = stub({ files });
  assert.equal(await run(["ref_loop", "--known", KNOWN], some), 0);
  // A run of the whole library: a listed scenario that does not exist fails the run.
  const all = stub({ files });
  assert.equal(await run(["--known", KNOWN], all), 1);
  assert.deepEqual(all.calls.map((c) => c.scenario), scenarios.map((s) => s.settings.name));
  assert.match(all.out, /^known difference for "gone": no such scenario in the library$/m);
  const json = stub({ files });
  assert.equal(await run(["--known", KNOWN, "--json"], json), 1);
  const parsed = JSON.parse(json.out);
  assert.deepEqual(parsed.staleKnownDifferences, [{
    scenario: "gone",
    at: "overflow",
    reason: "why",
  }]);
  assert.equal(parsed.ok, false);
});

Deno.test("diff exits 1 on an error, and on a named scenario it cannot export unless --allow-refused", async () => {
  const results: Record<string, DiffResult> = {
    ref_loop: { scenario: "ref_loop", status: "not exportable", reason: "threads" },
  };
  const refused = stub({ results });
  assert.equal(await run(["ref_loop", "triple_cons", "--no-known"], refused), 1);
  assert.match(
    refused.out,
    /^ref_loop: not exportable: threads; nothing was judged: make it exportable .*, or pass --allow-refused to tolerate it$/m,
  );
  assert.match(refused.out, /^ref_loop +not exportable$/m);
  assert.match(refused.out, /1 not exportable, 0 errors; 4 callbacks compared/);
  // Alone, it is the reason nothing was compared: the summary says so, not to sample more.
  const alone = stub({ results });
  assert.equal(await run(["ref_loop", "--no-known"], alone), 1);
  assert.match(alone.out, /^no callback was compared: no scenario could be judged \(see above\)/m);
  assert.doesNotMatch(alone.out, /give a scenario whose profiles sample/);
  const allowed = stub({ results });
  assert.equal(await run(["ref_loop", "triple_cons", "--allow-refused"], allowed), 0);
  assert.match(allowed.out, /^ref_loop: not exportable: threads$/m);
  const error = stub({
    results: { ref_loop: { scenario: "ref_loop", status: "error", message: "it crashed" } },
  });
  assert.equal(await run(["ref_loop", "triple_cons", "--no-known"], error), 1);
  assert.match(error.out, /^ref_loop: error: it crashed$/m);
  assert.match(error.out, /0 not exportable, 1 errors/);
});

Deno.test("diff exits 1 when no callback was compared, unless --allow-refused", async () => {
  const none = () => stub({ results: { ref_loop: agree("ref_loop", 0) } });
  const io = none();
  assert.equal(await run(["ref_loop", "--no-known"], io), 1);
  assert.match(io.out, /0 callbacks compared\nno callback was compared, so nothing was judged: /);
  const json = none();
  assert.equal(await run(["ref_loop", "--no-known", "--json"], json), 1);
  assert.equal(JSON.parse(json.out).ok, false);
  assert.equal(await run(["ref_loop", "--no-known", "--allow-refused"], none()), 0);
});

Deno.test("diff over the library: a refused scenario must be listed as not exportable, with why", async () => {
  const refusedRef = { ref_loop: { scenario: "ref_loop", status: "not exportable", reason: "x" } };
  // Unlisted: the run fails and says what to do.
  const unlisted = stub({ results: refusedRef as Record<string, DiffResult>, files: knownFile() });
  assert.equal(await run(["--known", KNOWN], unlisted), 1);
  assert.match(
    unlisted.out,
    /^ref_loop: not exportable: x; list it in the known differences \("at": "not exportable"\) with why, or make it exportable$/m,
  );
  // Listed: tolerated, with the list's reason.
  const entry = { scenario: "ref_loop", at: "not exportable", reason: "older-form threads" };
  const listed = stub({
    results: refusedRef as Record<string, DiffResult>,
    files: knownFile(entry),
  });
  assert.equal(await run(["--known", KNOWN], listed), 0);
  assert.match(listed.out, /^ref_loop: not exportable \(known: older-form threads\)$/m);
  // Listed but exportable now: the list must be brought up to date.
  const now = stub({ files: knownFile(entry) });
  assert.equal(await run(["--known", KNOWN], now), 1);
  assert.match(
    now.out,
    /^ref_loop: agree \(4 callbacks\), but it is listed as not exportable: remove it from the known differences$/m,
  );
  // Listed at a difference but refused now.
  const moved = stub({
    results: refusedRef as Record<string, DiffResult>,
    files: knownFile({ scenario: "ref_loop", at: "callback 3", reason: "why" }),
  });
  assert.equal(await run(["--known", KNOWN], moved), 1);
  assert.match(
    moved.out,
    /^ref_loop: not exportable: x; the known differences list it at callback 3: update the list$/m,
  );
});

Deno.test("diff --json prints the results, verdicts and totals as JSON", async () => {
  const io = stub({
    results: {
      ref_loop: differsAt("ref_loop", 3),
      triple_cons: differsAt("triple_cons", 5),
      lifecycle: { scenario: "lifecycle", status: "not exportable", reason: "no" },
    },
    files: knownFile({ scenario: "ref_loop", at: "callback 3", reason: "known one" }),
  });
  const code = await run(
    ["ref_loop", "triple_cons", "lifecycle", "comballoc", "--json", "--known", KNOWN],
    io,
  );
  assert.equal(code, 1);
  const out = JSON.parse(io.out);
  assert.deepEqual(out.toolchain, { ocamlopt: TOOLCHAIN.ocamlopt, version: "5.3.0" });
  assert.deepEqual(out.totals, {
    scenarios: 4,
    agree: 1,
    differ: 2,
    known: 1,
    notExportable: 1,
    errors: 0,
    callbacksCompared: 3 + 5 + 4,
    ringsCompared: 0,
    ringsAgree: 0,
    ringsKnown: 0,
    ringEventsCompared: 0,
  });
  assert.equal(out.ok, false);
  assert.deepEqual(out.results.map((r: { scenario: string }) => r.scenario), [
    "ref_loop",
    "triple_cons",
    "lifecycle",
    "comballoc",
  ]);
  assert.deepEqual(out.results[0].verdict, {
    kind: "known",
    entry: { scenario: "ref_loop", at: "callback 3", reason: "known one" },
  });
  assert.deepEqual(out.results[1].verdict, { kind: "unexpected" });
  assert.equal(out.results[1].comparison.difference.index, 5);
  assert.deepEqual(out.results[2].verdict, { kind: "unexpected" });
  assert.deepEqual(out.results[3].verdict, { kind: "ok" });
  assert.deepEqual(out.staleKnownDifferences, []);
  assert.equal(io.err, "");
});

Deno.test("diff --json says ok when everything agrees", async () => {
  const io = stub();
  assert.equal(await run(["ref_loop", "--json", "--no-known"], io), 0);
  const out = JSON.parse(io.out);
  assert.equal(out.ok, true);
  assert.equal(out.totals.agree, 1);
});

Deno.test("diff without a toolchain exits 1 and says how to get one", async () => {
  const io = stub({ toolchain: undefined });
  assert.equal(await run(["ref_loop"], io), 1);
  assert.match(io.err, /^error: no OCaml 5\.3 toolchain found: run `deno task ocaml setup`/);
  assert.match(io.err, /--setup/);
  assert.deepEqual(io.calls, []);
  assert.equal(io.out, "");
});

Deno.test("diff passes the toolchain options on, and builds it with --setup", async () => {
  const io = stub();
  await run(["ref_loop", "--no-known", "--prefix", "/p", "--ocamlopt", "/x/ocamlopt"], io);
  assert.deepEqual(io.toolchainCalls, [{
    prefix: "/p",
    ocamlopt: "/x/ocamlopt",
    ocamlfind: undefined,
    setup: false,
  }]);
  const setup = stub();
  await run(["ref_loop", "--no-known", "--setup", "--ocamlfind", "/y/ocamlfind"], setup);
  assert.equal(setup.toolchainCalls[0].setup, true);
  assert.equal(setup.toolchainCalls[0].ocamlfind, "/y/ocamlfind");
});

Deno.test("diff gives each run the compiler, cache folder, context and timeout", async () => {
  const io = stub({
    env: { MEMPROF_LAB_DIFF_CACHE: "/env/cache", XDG_CACHE_HOME: "/xdg", HOME: "/h" },
  });
  assert.equal(await run(["ref_loop", "--no-known", "--context", "5", "--timeout", "7"], io), 0);
  const o = io.calls[0].opts;
  assert.deepEqual(o.ocamlopt, TOOLCHAIN.ocamlopt);
  assert.equal(o.cacheDir, "/env/cache");
  assert.equal(o.context, 5);
  assert.equal(o.timeoutMs, 7000);
  const dflt = stub({ env: { HOME: "/h" } });
  await run(["ref_loop", "--no-known"], dflt);
  assert.equal(dflt.calls[0].opts.cacheDir, "/h/.cache/memprof-lab/differential");
  assert.equal(dflt.calls[0].opts.context, 3);
  assert.equal(dflt.calls[0].opts.timeoutMs, 300_000);
  const xdg = stub({ env: { XDG_CACHE_HOME: "/xdg", HOME: "/h" } });
  await run(["ref_loop", "--no-known"], xdg);
  assert.equal(xdg.calls[0].opts.cacheDir, "/xdg/memprof-lab/differential");
  const opt = stub({ env: { MEMPROF_LAB_DIFF_CACHE: "/env/cache" } });
  await run(["ref_loop", "--no-known", "--cache", "/mine"], opt);
  assert.equal(opt.calls[0].opts.cacheDir, "/mine");
});

Deno.test("diff shows progress on a terminal only, and never with --json", async () => {
  const tty = stub({ terminal: true });
  assert.equal(await run(["ref_loop", "triple_cons", "--no-known"], tty), 0);
  assert.ok(tty.err.includes("[1/2] running ref_loop"));
  assert.ok(tty.err.includes("[2/2] running triple_cons"));
  const pipe = stub({ terminal: false });
  await run(["ref_loop", "--no-known"], pipe);
  assert.equal(pipe.calls[0].opts.onProgress, undefined);
  assert.equal(pipe.err, "");
  const json = stub({ terminal: true });
  await run(["ref_loop", "--no-known", "--json"], json);
  assert.equal(json.calls[0].opts.onProgress, undefined);
});

Deno.test("diff loads a scenario module given as a path", async () => {
  const sc = scenarios.find((s) => s.settings.name === "alloc_counts")!;
  const io = stub({ modules: { "./mine.ts": { default: sc } } });
  assert.equal(await run(["./mine.ts", "--no-known"], io), 0);
  assert.deepEqual(io.calls.map((c) => c.scenario), ["alloc_counts"]);
});

Deno.test("diff exits 2 on a wrong command line", async () => {
  const cases: [string[], RegExp][] = [
    [
      ["--frob"],
      /^error: unknown option --frob\nRun 'memprof-lab diff --help' for usage\.\n$/,
    ],
    [["--context", "0"], /--context must be an integer ≥ 1, got '0'/],
    [["--timeout", "1.5"], /--timeout must be an integer ≥ 1, got '1\.5'/],
    [["nope"], /^error: no scenario named "nope"\nknown scenarios: ref_loop, /],
    [["ref_loop", "--known", "/no/such.json"], /no such file: \/no\/such\.json/],
  ];
  for (const [args, message] of cases) {
    const io = stub({ modules: { "./bad.ts": { default: 42 } } });
    assert.equal(await run(args, io), 2, args.join(" "));
    assert.match(io.err, message);
    assert.deepEqual(io.calls, [], args.join(" "));
  }
  // A module path that does not exist, when the IO can tell.
  const missing = stub();
  missing.exists = (path) => path !== "missing.ts";
  assert.equal(await run(["missing.ts"], missing), 2);
  assert.match(missing.err, /^error: cannot load missing\.ts: no such file\n$/);
});

Deno.test("diff exits 1, as scenario does, for a scenario module it cannot load", async () => {
  const cases: [string[], RegExp][] = [
    [["missing.ts"], /^error: cannot load missing\.ts: /],
    [["./bad.ts"], /^error: \.\/bad\.ts has no default export made with scenario/],
  ];
  for (const [args, message] of cases) {
    const io = stub({ modules: { "./bad.ts": { default: 42 } } });
    assert.equal(await run(args, io), 1, args.join(" "));
    assert.match(io.err, message);
    assert.deepEqual(io.calls, [], args.join(" "));
    assert.deepEqual(io.toolchainCalls, [], args.join(" "));
  }
});

Deno.test("diff exits 1 naming the file and entry of a malformed known-differences list", async () => {
  const io = stub({
    files: { [KNOWN]: '[{"scenario": "ref_loop", "at": "line 3", "reason": "r"}]' },
  });
  assert.equal(await run(["ref_loop", "--known", KNOWN], io), 1);
  assert.match(io.err, /^error: \/repo\/known\.json, entry 1: "at" must be/);
  assert.deepEqual(io.calls, []);
});

Deno.test("diff reads the default known-differences list when there is one", async () => {
  // The stub's files do not hold the default list: no known differences, no error.
  const none = stub({ results: { ref_loop: differsAt("ref_loop", 3) } });
  assert.equal(await run(["ref_loop"], none), 1);
  assert.equal(none.err, "");
  // The default list, by its path.
  const path = new URL("../../scenarios/known_differences.json", import.meta.url).pathname;
  const listed = stub({
    results: { ref_loop: differsAt("ref_loop", 3) },
    files: { [path]: JSON.stringify([{ scenario: "ref_loop", at: "callback 3", reason: "r" }]) },
  });
  assert.equal(await run(["ref_loop"], listed), 0);
  assert.match(listed.out, /\(known: r\)/);
});

Deno.test("diff --help prints the usage and exits 0", async () => {
  for (const args of [["--help"], ["-h"], ["ref_loop", "--help"]]) {
    const io = stub();
    assert.equal(await run(args, io), 0);
    assert.equal(io.out, USAGE);
    assert.equal(io.err, "");
    assert.deepEqual(io.calls, []);
    assert.deepEqual(io.toolchainCalls, []);
  }
  assert.match(USAGE, /^Usage: memprof-lab diff \[options\] \[NAME\|PATH \.\.\.\]/);
});

/** A ring judgement: agreeing, or differing at event `at` of ring 0; gc-stats equal unless
 * `gcOff`. */
function ringJudgement(
  opts: { at?: number; gcOff?: boolean; durations?: Record<string, number[]> } = {},
): RingJudgement {
  const figures = {
    allocated_words: 90,
    minor_words: 100,
    promoted_words: 20,
    major_words: 10,
    minor_collections: 3,
    major_collections: 1,
    forced_major_collections: 1,
  };
  return {
    status: "compared",
    ringLog2: 16,
    comparison: opts.at === undefined ? { compared: 12, rings: 1 } : {
      compared: opts.at,
      rings: 1,
      difference: {
        kind: "event",
        ring: 0,
        index: opts.at,
        sim: ["begin minor", "counter minor_promoted 8"],
        real: ["begin minor", "counter minor_promoted 16"],
        firstLine: opts.at - 1,
      },
    },
    callbacksChanged: { sim: false, real: false },
    gcStats: {
      real: {
        ring: figures,
        runtime: opts.gcOff ? { ...figures, minor_words: 101 } : figures,
        differences: opts.gcOff ? ["minor_words: 100 ≠ 101"] : [],
      },
      sim: { ring: figures, own: figures, differences: [] },
    },
    durations: {
      sim: opts.durations ?? { minor: [2000, 2200] },
      real: opts.durations ?? { minor: [800, 1000] },
    },
  };
}

function withRings(name: string, rings: RingJudgement): DiffResult {
  const r = agree(name);
  if (r.status !== "agree") throw new Error("agree() must agree");
  return { ...r, rings };
}

Deno.test("diff --rings asks for rings, prints each ring's verdict, gc-stats and the calibration table", async () => {
  const io = stub({
    results: {
      ref_loop: withRings("ref_loop", ringJudgement()),
      triple_cons: withRings("triple_cons", ringJudgement({ at: 5 })),
    },
    files: {
      "/repo/known.json": "[]",
      [new URL("../../scenarios/known_ring_differences.json", import.meta.url).pathname]: JSON
        .stringify([{ scenario: "triple_cons", at: "ring 0 event 5", reason: "a known one" }]),
    },
  });
  const code = await run(["ref_loop", "triple_cons", "--rings", "--known", KNOWN], io);
  assert.equal(code, 0, io.out);
  assert.deepEqual(io.calls.map((c) => c.opts.rings), ["always", "always"]);
  assert.match(io.out, /^ {2}rings \(e=16\): agree \(12 events on 1 ring\(s\)\)$/m);
  assert.match(io.out, /^ {2}rings \(e=16\): differ at ring 0 event 5 \(known: a known one\)$/m);
  assert.match(io.out, /gc-stats: the real ring's equal OCAMLRUNPARAM=v=0x400 \(3 minor, 1 major/);
  assert.match(io.out, /^rings: 2 compared, 1 agree, 1 differ as listed; 17 events compared$/m);
  // Pooled: sim 2000, 2200, 2000, 2200 → median 2000; real 800, 1000, 800, 1000 → 800.
  assert.match(io.out, /^minor\s+4\/4\s+2000\s+800\s+2\.50\s+2000–2200\s+800–1000$/m);
});

Deno.test("diff without --rings leaves rings to the scenarios that start runtime_events", async () => {
  const io = stub();
  assert.equal(await run(["ref_loop", "--no-known"], io), 0);
  assert.deepEqual(io.calls.map((c) => c.opts.rings), ["auto"]);
  assert.doesNotMatch(io.out, /rings/);
});

Deno.test("diff --rings fails on an unlisted ring difference, gc-stats that differ, or --random", async () => {
  const unlisted = stub({ results: { ref_loop: withRings("ref_loop", ringJudgement({ at: 5 })) } });
  assert.equal(await run(["ref_loop", "--rings", "--no-known"], unlisted), 1);
  assert.match(unlisted.out, /rings \(e=16\): differ at ring 0 event 5$/m);
  assert.match(unlisted.out, /^ {2}> 5 counter minor_promoted 8$/m);
  assert.match(unlisted.out, /^ {2}> 5 counter minor_promoted 16$/m);
  const gc = stub({ results: { ref_loop: withRings("ref_loop", ringJudgement({ gcOff: true })) } });
  assert.equal(await run(["ref_loop", "--rings", "--no-known"], gc), 1);
  assert.match(gc.out, /gc-stats of the real ring ≠ OCAMLRUNPARAM=v=0x400: minor_words: 100 ≠ 101/);
  const json = stub({ results: { ref_loop: withRings("ref_loop", ringJudgement()) } });
  assert.equal(await run(["ref_loop", "--rings", "--no-known", "--json"], json), 0);
  const out = JSON.parse(json.out);
  assert.equal(out.results[0].rings.durations, undefined);
  assert.equal(out.results[0].rings.comparison.compared, 12);
  assert.equal(out.calibration[0].phase, "minor");
  assert.equal(out.totals.ringsAgree, 1);
  const random = stub();
  assert.equal(await run(["--random", "3", "--rings"], random), 2);
  assert.match(random.err, /--rings compares named or library scenarios/);
});
