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

function run(cmd: string, args: string[]): { ok: boolean; out: string; err: string } {
  try {
    const r = new Deno.Command(cmd, { args, stdout: "piped", stderr: "piped" }).outputSync();
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
let allocExe: string | { why: string } | null = null;

function buildGeom(): string | { why: string } {
  if (geomExe !== null) return geomExe;
  const dir = workDir();
  if (typeof dir !== "string") return geomExe = dir;
  const exe = `${dir}/geom`;
  const cc = run("gcc", ["-O2", "-o", exe, here("./anchors/geom.c"), "-lm"]);
  return geomExe = cc.ok ? exe : { why: `gcc: ${firstLine(cc.err, "not found")}` };
}

function buildAlloc(): string | { why: string } {
  if (allocExe !== null) return allocExe;
  const dir = workDir();
  if (typeof dir !== "string") return allocExe = dir;
  const opt = ocamlopt();
  if (opt === null) return allocExe = { why: "no OCaml 5.3 toolchain" };
  const src = `${dir}/alloc.ml`;
  Deno.copyFileSync(here("./anchors/alloc.ml"), src);
  const c = run(opt, ["-I", "+unix", "unix.cmxa", src, "-o", `${dir}/alloc`]);
  return allocExe = c.ok ? `${dir}/alloc` : { why: `ocamlopt: ${firstLine(c.err, "failed")}` };
}

/**
 * memprof.c's geometric draw at -O2: `draws` variates at `lambda` from lanes seeded with `seed`
 * (no `rand_init` draw), best of `runs` processes; or why it is unavailable.
 */
export function memprofCDraw(
  lambda: number,
  draws: number,
  seed: number,
  runs = 3,
): CDraw | string {
  const exe = buildGeom();
  if (typeof exe !== "string") return `unavailable (${exe.why})`;
  const results: CDraw[] = [];
  let err = "";
  for (let k = 0; k < runs; k++) {
    const r = run(exe, [String(lambda), String(draws), String(seed)]);
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
  const exe = buildAlloc();
  if (typeof exe !== "string") return `unavailable (${exe.why})`;
  const r = run(exe, [workload, String(rate ?? 0), String(rounds)]);
  if (!r.ok) return `failed (${firstLine(r.err, "no output")})`;
  const v = Number(r.out.trim());
  return Number.isFinite(v) && v > 0 ? v : `failed (printed ${JSON.stringify(r.out.trim())})`;
}
