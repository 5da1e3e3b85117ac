/**
 * Side by side with the real thing, in one run: the geometric draw against memprof.c's
 * algorithm compiled with gcc -O2 (bench/anchors/geom.c), and simulated allocation throughput
 * against the real OCaml 5.3 runtime allocating the same workload (bench/anchors/alloc.ml). The
 * anchors are built and run when this module loads; each line prints our figure, the anchor's
 * and the ratio. Without gcc, the OCaml toolchain (`deno task ocaml setup`; found through
 * MEMPROF_LAB_OCAML_PREFIX, .ci/.tools or the user cache) or the permissions to run them, the
 * line says so and gives our figure alone.
 *
 * Run: deno bench --allow-read --allow-write --allow-run --allow-env bench/anchors_bench.ts
 * @module
 */

import { MemprofRng, oneLog1mLambda } from "../lib/memprof/rng.ts";
import { ALLOCATIONS, allocWorkload } from "./_alloc_workload.ts";

const DRAWS = 10_000_000;
const LAMBDA = 1e-4;
const SEED = 1;
let sink = 0;

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

function here(path: string): string {
  return new URL(path, import.meta.url).pathname;
}

/** Our draw: DRAWS variates, best of 3 (ns per draw), and their sum. */
function oursGeom(): { ns: number; sum: bigint } {
  const o = oneLog1mLambda(LAMBDA);
  let best = Infinity, sum = 0n;
  for (let round = 0; round < 3; round++) {
    const rng = new MemprofRng(SEED); // seeded, no rand_init draw: as the C anchor
    let s = 0;
    const t0 = performance.now();
    for (let i = 0; i < DRAWS; i++) s += rng.geom(o);
    const ms = performance.now() - t0;
    best = Math.min(best, ms);
    sum = BigInt(s);
  }
  return { ns: best * 1e6 / DRAWS, sum };
}

/** Our allocations per second: median of 5 rounds after one warm-up. */
function oursAlloc(lambda: number | null): number {
  const f = allocWorkload(lambda);
  f();
  const times: number[] = [];
  for (let k = 0; k < 5; k++) {
    const t0 = performance.now();
    f();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return ALLOCATIONS / (times[2] / 1000);
}

function ocamlopt(): string | null {
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

function report(): void {
  const lines: string[] = ["", "anchors (median or best of several rounds, this machine, now):"];
  const geom = oursGeom();
  const canRun = granted("run") && granted("write");
  let dir: string | null = null;
  if (canRun) dir = Deno.makeTempDirSync({ prefix: "memprof-lab-anchors-" });
  // The draw.
  let geomLine = `geometric draw λ=${LAMBDA}: ours ${geom.ns.toFixed(2)} ns`;
  if (dir === null) geomLine += " (anchor unavailable: needs --allow-run --allow-write)";
  else {
    const exe = `${dir}/geom`;
    const cc = run("gcc", ["-O2", "-o", exe, here("./anchors/geom.c"), "-lm"]);
    if (!cc.ok) geomLine += ` (anchor unavailable: gcc: ${cc.err.split("\n")[0] || "not found"})`;
    else {
      const best = [0, 1, 2].map(() => run(exe, [String(LAMBDA), String(DRAWS), String(SEED)]))
        .filter((r) => r.ok).map((r) => r.out.trim().split(" "));
      const ns = Math.min(...best.map((b) => Number(b[0])));
      const same = best.length > 0 && BigInt(best[0][1]) === geom.sum;
      geomLine += `, memprof.c -O2 ${ns.toFixed(2)} ns, ratio ${(geom.ns / ns).toFixed(2)} ` +
        `(${same ? "same" : "DIFFERENT"} ${DRAWS.toLocaleString("en")} draws)`;
    }
  }
  lines.push(geomLine);
  // Allocation throughput.
  const opt = dir === null ? null : ocamlopt();
  let exe: string | null = null;
  let why = dir === null ? "needs --allow-run --allow-write" : "no OCaml 5.3 toolchain";
  if (opt !== null && dir !== null) {
    const src = `${dir}/alloc.ml`;
    Deno.copyFileSync(here("./anchors/alloc.ml"), src);
    const c = run(opt, ["-I", "+unix", "unix.cmxa", src, "-o", `${dir}/alloc`]);
    if (c.ok) exe = `${dir}/alloc`;
    else why = `ocamlopt: ${c.err.split("\n")[0]}`;
  }
  for (const lambda of [null, 1e-4, 1e-2]) {
    const ours = oursAlloc(lambda);
    const name = lambda === null ? "no profile" : `λ=${lambda}`;
    let line = `allocations, ${name}: ours ${(ours / 1e6).toFixed(1)} M/s`;
    if (exe === null) line += ` (anchor unavailable: ${why})`;
    else {
      const r = run(exe, [String(lambda ?? 0), "5"]);
      if (!r.ok) line += ` (anchor failed: ${r.err.split("\n")[0]})`;
      else {
        const real = Number(r.out.trim());
        line += `, OCaml 5.3 ${(real / 1e6).toFixed(1)} M/s, ratio ${(ours / real).toFixed(3)}`;
      }
    }
    lines.push(line);
  }
  if (dir !== null) Deno.removeSync(dir, { recursive: true });
  console.log(lines.join("\n") + "\n");
}

report();

Deno.bench(`geometric draw ×${DRAWS.toLocaleString("en")}, λ=${LAMBDA}`, {
  group: "anchored",
}, () => {
  const o = oneLog1mLambda(LAMBDA);
  const rng = new MemprofRng(SEED); // seeded, no rand_init draw: as the C anchor
  let s = 0;
  for (let i = 0; i < DRAWS; i++) s += rng.geom(o);
  sink += s;
});

globalThis.addEventListener("unload", () => {
  if (sink === -1) console.log(sink);
});
