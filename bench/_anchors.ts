/**
 * The real things our benches compare with, built and run on this machine: memprof.c's
 * geometric draw compiled with gcc -O2 (anchors/geom.c) and the real OCaml 5.3 runtime
 * allocating our workloads under Gc.Memprof (anchors/alloc.ml). Each anchor is built once per
 * process, in a temporary directory removed when the process unloads.
 *
 * Every function returns the anchor's figure, or a sentence saying why there is none (no gcc,
 * no OCaml toolchain, missing permissions, the program failed), ready for
 * {@linkcode printSideBySide}'s `anchor` field.
 *
 * The OCaml toolchain is the one of `deno task ocaml setup`, found through
 * MEMPROF_LAB_OCAML_PREFIX, .ci/.tools/ocaml-5.3.0 or the user cache.
 *
 * @module
 */

/** The workloads anchors/alloc.ml can run (see its header). */
export type AnchorWorkload =
  /** sampler_bench.ts's "memprof alloc": 1M blocks of 1–6 words, every 1,024th kept. */
  | "alloc"
  /** scenario_bench.ts's short-lived loop: 1M 2-word blocks. */
  | "short_lived"
  /** scenario_bench.ts's "mixed": 500k × (1–16 words, a quarter kept 1000 steps; 2+3 comballoc). */
  | "mixed";

/** memprof.c's draw, measured: nanoseconds per draw and the sum of the draws (mod 2^64). */
export interface CDraw {
  /** Best of the runs, in ns per draw. */
  ns: number;
  /** The sum of the draws, which our generator must reproduce. */
  sum: bigint;
}

function granted(name: "run" | "write" | "env"): boolean {
  return Deno.permissions.querySync({ name }).state === "granted";
}

function run(
  cmd: string,
  args: string[],
  env?: Record<string, string>,
): { ok: boolean; out: string; err: string } {
  try {
    const r = new Deno.Command(cmd, { args, env, stdout: "piped", stderr: "piped" }).outputSync();
    const dec = new TextDecoder();
    return { ok: r.success, out: dec.decode(r.stdout), err: dec.decode(r.stderr) };
  } catch (e) {
    return { ok: false, out: "", err: (e as Error).message };
  }
}

function firstLine(s: string, fallback: string): string {
  return s.split("\n").find((l) => l.trim() !== "")?.trim() ?? fallback;
}

function here(path: string): string {
  return new URL(path, import.meta.url).pathname;
}

let tempDir: string | null = null;

/** The process's anchor directory, or why there is none. */
function workDir(): string | { why: string } {
  if (!(granted("run") && granted("write"))) return { why: "needs --allow-run --allow-write" };
  if (tempDir === null) {
    tempDir = Deno.makeTempDirSync({ prefix: "memprof-lab-anchors-" });
    const dir = tempDir;
    globalThis.addEventListener("unload", () => {
      try {
        Deno.removeSync(dir, { recursive: true });
      } catch { /* already gone */ }
    });
  }
  return tempDir;
}

/** Path of OCaml 5.3's ocamlopt, or null. */
export function ocamlopt(): string | null {
  const env = granted("env") ? Deno.env.get("MEMPROF_LAB_OCAML_PREFIX") : undefined;
  const home = granted("env") ? Deno.env.get("HOME") : undefined;
  const candidates = [
    env,
    here("../.ci/.tools/ocaml-5.3.0"),
    home ? `${home}/.cache/memprof-lab/ocaml-5.3.0` : undefined,
  ];
  for (const p of candidates) {
    if (p === undefined) continue;
    try {
      Deno.statSync(`${p}/bin/ocamlopt`);
      return `${p}/bin/ocamlopt`;
    } catch { /* next */ }
  }
  return null;
}

let geomExe: string | { why: string } | null = null;
function buildGeom(): string | { why: string } {
  if (geomExe !== null) return geomExe;
  const dir = workDir();
  if (typeof dir !== "string") return geomExe = dir;
  const exe = `${dir}/geom`;
  const cc = run("gcc", ["-O2", "-o", exe, here("./anchors/geom.c"), "-lm"]);
  return geomExe = cc.ok ? exe : { why: `gcc: ${firstLine(cc.err, "not found")}` };
}

/** Options of {@linkcode memprofCDraw}. */
export interface CDrawOptions {
  /** What is drawn: `geom`, one variate per draw (default), or `binom`, memprof.c's `rand_binom`
   * for blocks of 1 to 16 words (block i has i mod 16 + 1; `next_rand_geom` starting at 0): then
   * `ns` is per block and `sum` the total number of samples. */
  mode?: "geom" | "binom";
  /** Processes run; the best is kept (default 3). */
  runs?: number;
}

/**
 * memprof.c's geometric draw at -O2: `draws` variates (or blocks, see {@linkcode CDrawOptions})
 * at `lambda` from lanes seeded with `seed` (no `rand_init` draw), best of the runs; or why it is
 * unavailable.
 */
export function memprofCDraw(
  lambda: number,
  draws: number,
  seed: number,
  { mode = "geom", runs = 3 }: CDrawOptions = {},
): CDraw | string {
  const exe = buildGeom();
  if (typeof exe !== "string") return `unavailable (${exe.why})`;
  const results: CDraw[] = [];
  let err = "";
  const args = [
    String(lambda),
    String(draws),
    String(seed),
    ...(mode === "binom" ? ["binom"] : []),
  ];
  for (let k = 0; k < runs; k++) {
    const r = run(exe, args);
    if (!r.ok) {
      err = firstLine(r.err, "failed");
      continue;
    }
    const [ns, sum] = r.out.trim().split(" ");
    results.push({ ns: Number(ns), sum: BigInt(sum) });
  }
  if (results.length === 0) return `failed (${err})`;
  return { ns: Math.min(...results.map((r) => r.ns)), sum: results[0].sum };
}

/**
 * The real OCaml 5.3 runtime's allocations per second on `workload` (median of `rounds` rounds
 * after one warm-up), profiling at `rate` (null or 0: no profile) with a tracker whose
 * callbacks all return a value; or why it is unavailable.
 */
export function ocamlAllocationsPerSecond(
  workload: AnchorWorkload,
  rate: number | null,
  rounds = 5,
): number | string {
  const exe = buildOcamlAnchor("alloc", ["unix"]);
  if (typeof exe !== "string") return `unavailable (${exe.why})`;
  return runForRate(exe, [workload, String(rate ?? 0), String(rounds)]);
}

/** Runs an anchor that prints one positive figure: the figure, or why there is none. */
function runForRate(exe: string, args: string[], env?: Record<string, string>): number | string {
  const r = run(exe, args, env);
  if (!r.ok) return `failed (${firstLine(r.err, "no output")})`;
  const v = Number(r.out.trim());
  return Number.isFinite(v) && v > 0 ? v : `failed (printed ${JSON.stringify(r.out.trim())})`;
}

/** Options of {@linkcode ocamlRuntimeEventsPerSecond}. */
export interface RuntimeEventsAnchorOptions {
  /** Events written per round in `write` mode (default 100,000). */
  events?: number;
  /** Timed rounds, after one untimed round (default 5). */
  rounds?: number;
}

const ocamlAnchors = new Map<string, string | { why: string }>();

/**
 * anchors/`name`.ml built with ocamlopt against the toolchain's libraries `libs` (e.g.
 * `["unix"]`), once per process: the executable's path, or why there is none.
 */
function buildOcamlAnchor(name: string, libs: string[]): string | { why: string } {
  let exe = ocamlAnchors.get(name);
  if (exe !== undefined) return exe;
  const dir = workDir();
  const opt = ocamlopt();
  if (typeof dir !== "string") exe = dir;
  else if (opt === null) exe = { why: "no OCaml 5.3 toolchain" };
  else {
    const src = `${dir}/${name}.ml`;
    Deno.copyFileSync(here(`./anchors/${name}.ml`), src);
    const includes = libs.flatMap((lib) => ["-I", `+${lib}`]);
    const c = run(opt, [
      ...includes,
      ...libs.map((lib) => `${lib}.cmxa`),
      src,
      "-o",
      `${dir}/${name}`,
    ]);
    exe = c.ok ? `${dir}/${name}` : { why: `ocamlopt: ${firstLine(c.err, "failed")}` };
  }
  ocamlAnchors.set(name, exe);
  return exe;
}

/**
 * The real OCaml 5.3 runtime's user int events per second through the stdlib's `Runtime_events`
 * (anchors/events.ml; median of the rounds after one untimed round), in rings of 2^16 words with
 * 4 domain slots (OCAMLRUNPARAM `e=16,d=4`, as runtime_events_bench.ts's producers): `write`,
 * `Runtime_events.User.write` in a loop (each event stamped with the monotonic clock); `read`, a
 * fresh cursor on the process's own full ring reading it all with `read_poll` and counting the
 * user int events. Or why it is unavailable.
 */
export function ocamlRuntimeEventsPerSecond(
  mode: "write" | "read",
  { events = 100_000, rounds = 5 }: RuntimeEventsAnchorOptions = {},
): number | string {
  const exe = buildOcamlAnchor("events", ["unix", "runtime_events"]);
  if (typeof exe !== "string") return `unavailable (${exe.why})`;
  const args = mode === "write"
    ? ["write", String(events), String(rounds)]
    : ["read", String(rounds)];
  // The runtime makes its <pid>.events file in OCAML_RUNTIME_EVENTS_DIR (else in the current
  // directory): the anchors' temporary directory.
  const env = {
    OCAMLRUNPARAM: "e=16,d=4",
    OCAML_RUNTIME_EVENTS_DIR: exe.slice(0, exe.lastIndexOf("/")),
  };
  return runForRate(exe, args, env);
}
