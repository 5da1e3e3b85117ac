/**
 * The long fuzz campaign: `deno task fuzz [--cases N] [--seed S] [--target memtrace|ring|all]
 * [--json]`. Runs N structure-aware cases per target (default 200,000) with the harnesses of
 * tests/memtrace/fuzz_harness.ts and tests/runtime_events/fuzz_harness.ts, one worker per target
 * (in parallel), and reports cases, outcomes, escapes (with the first reproducers), hangs, the
 * slowest case, the largest output ratios and the process's peak memory.
 *
 * A worker reports every 100 cases; one silent for 60 s is counted as a hang (its last case
 * range is reported) and stopped. Escapes and broken bounds are counted, and the campaign goes on.
 * Exit status: 0 when there were no escapes and no hangs, 1 otherwise, 2 for a usage error.
 * @module
 */
import { parseArgs } from "node:util";

interface Report {
  target: string;
  cases: number;
  clean: number;
  rejected: number;
  escapes: number;
  firstEscapes: string[];
  checks: Record<string, number>;
  slowestMs: number;
  slowestCase: string;
  /** memtrace: most dump characters and copy bytes per input byte; rings: dump characters per
   * ring byte read. */
  maxRatios: Record<string, number>;
  elapsedMs: number;
}

type FromWorker =
  | { kind: "progress"; done: number }
  | { kind: "done"; report: Report };

interface Job {
  target: "memtrace" | "ring";
  cases: number;
  seed: number;
}

const HEARTBEAT_EVERY = 100;
const HANG_MS = 60_000;

// ---------------------------------------------------------------------------------------------
// Worker side.

async function runJob(job: Job, post: (m: FromWorker) => void): Promise<void> {
  const r: Report = {
    target: job.target,
    cases: 0,
    clean: 0,
    rejected: 0,
    escapes: 0,
    firstEscapes: [],
    checks: {},
    slowestMs: 0,
    slowestCase: "",
    maxRatios: {},
    elapsedMs: 0,
  };
  const t0 = performance.now();
  const ratio = (k: string, v: number) => {
    if (Number.isFinite(v)) r.maxRatios[k] = Math.max(r.maxRatios[k] ?? 0, v);
  };
  const count = (k: string) => {
    r.checks[k] = (r.checks[k] ?? 0) + 1;
  };
  const escape = (what: string) => {
    r.escapes++;
    if (r.firstEscapes.length < 10) r.firstEscapes.push(what.slice(0, 2000));
  };
  /** Counts a case that started at `t`, keeping the slowest, with a heartbeat now and then. */
  const caseDone = (where: string, t: number) => {
    const dt = performance.now() - t;
    if (dt > r.slowestMs) {
      r.slowestMs = dt;
      r.slowestCase = where.slice(0, 300);
    }
    r.cases++;
    if (r.cases % HEARTBEAT_EVERY === 0) post({ kind: "progress", done: r.cases });
  };
  if (job.target === "memtrace") {
    const m = await import("./memtrace/fuzz_harness.ts");
    for (let i = 0; i < job.cases; i++) {
      const s = m.seedFor(job.seed, i);
      const { bytes, desc } = m.mutant(s, job.seed, i);
      const where = `memtrace case ${i} (seed ${job.seed}) from ${s.name}: ${desc}`;
      const t = performance.now();
      try {
        const o = m.exercise(bytes, where);
        if (o.clean === 4) r.clean++;
        if (o.errors.length > 0) r.rejected++;
        for (const c of o.errors) count(c.replace(/[0-9a-f]{8,}|\d+/g, "N"));
        ratio("dump chars per input byte", o.dumpChars / Math.max(1, bytes.length));
        ratio("copy bytes per input byte", o.copyBytes / Math.max(1, bytes.length));
        ratio("backtrace frames", o.maxFrames);
      } catch (e) {
        escape(e instanceof Error ? e.message : String(e));
      }
      caseDone(where, t);
    }
  } else {
    const m = await import("./runtime_events/fuzz_harness.ts");
    for (let i = 0; i < job.cases; i++) {
      const c = m.ringCase(job.seed, i);
      const where = `ring case ${i} (seed ${job.seed}): ${c.desc}`;
      const t = performance.now();
      try {
        const o = m.exerciseRing(c.bytes, where, i % 16 === 0);
        if (o.error === null) r.clean++;
        else {
          r.rejected++;
          count(o.error.replace(/\d+/g, "N").replace(/^[^:]*: /, "").slice(0, 60));
        }
        ratio("dump chars per ring byte", o.chars / Math.max(1, o.ringBytes));
      } catch (e) {
        escape(e instanceof Error ? e.message : String(e));
      } finally {
        c.restore();
      }
      caseDone(where, t);
    }
  }
  r.elapsedMs = performance.now() - t0;
  post({ kind: "done", report: r });
}

// ---------------------------------------------------------------------------------------------
// Main side.

/** Peak resident memory of the process (workers included) in bytes, where /proc can be read
 * (Deno allows it only with all permissions). */
function peakRss(): number | undefined {
  try {
    const status = Deno.readTextFileSync("/proc/self/status");
    const kb = /^VmHWM:\s+(\d+) kB/m.exec(status)?.[1];
    return kb === undefined ? undefined : Number(kb) * 1024;
  } catch {
    return undefined;
  }
}

function runWorker(job: Job, onProgress: (done: number) => void): Promise<Report | string> {
  const w = new Worker(import.meta.url, { type: "module" });
  return new Promise((resolve) => {
    let last = Date.now(), done = 0;
    const timer = setInterval(() => {
      if (Date.now() - last > HANG_MS) {
        clearInterval(timer);
        w.terminate();
        resolve(
          `hang: no progress for ${HANG_MS / 1000} s after ${done} cases ` +
            `(a case among ${done} to ${done + HEARTBEAT_EVERY - 1})`,
        );
      }
    }, 1000);
    w.onmessage = (e: MessageEvent<FromWorker>) => {
      last = Date.now();
      if (e.data.kind === "progress") {
        done = e.data.done;
        onProgress(done);
      } else {
        clearInterval(timer);
        w.terminate();
        resolve(e.data.report);
      }
    };
    w.onerror = (e) => {
      e.preventDefault();
      clearInterval(timer);
      w.terminate();
      resolve(`worker crashed after ${done} cases: ${e.message}`);
    };
    w.postMessage(job);
  });
}

async function main(): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: Deno.args,
      options: {
        cases: { type: "string", default: "200000" },
        seed: { type: "string", default: "20240611" },
        target: { type: "string", default: "all" },
        json: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (e) {
    console.error(`error: ${(e as Error).message}`);
    return 2;
  }
  if (values.help) {
    console.log(
      "Usage: deno task fuzz [--cases N] [--seed S] [--target memtrace|ring|all] [--json]",
    );
    return 0;
  }
  const cases = Number(values.cases), seed = Number(values.seed);
  if (!Number.isSafeInteger(cases) || cases < 1 || !Number.isSafeInteger(seed)) {
    console.error("error: --cases and --seed take integers");
    return 2;
  }
  const targets = values.target === "all" ? ["memtrace", "ring"] : [values.target];
  if (!targets.every((t) => t === "memtrace" || t === "ring")) {
    console.error(`error: unknown target ${values.target}`);
    return 2;
  }
  const progress: Record<string, number> = {};
  // Resident memory of the whole process (both workers), sampled every 200 ms.
  let maxRss = Deno.memoryUsage().rss;
  const sampler = setInterval(() => {
    maxRss = Math.max(maxRss, Deno.memoryUsage().rss);
    if (!values.json && Deno.stderr.isTerminal()) {
      const p = targets.map((t) => `${t} ${progress[t] ?? 0}/${cases}`).join("  ");
      Deno.stderr.writeSync(new TextEncoder().encode(`\r${p}`));
    }
  }, 200);
  const results = await Promise.all(
    targets.map((t) =>
      runWorker(
        { target: t as Job["target"], cases, seed },
        (d) => progress[t] = d,
      )
    ),
  );
  clearInterval(sampler);
  maxRss = Math.max(maxRss, Deno.memoryUsage().rss);
  const peak = peakRss();
  const hangs = results.filter((r) => typeof r === "string") as string[];
  const reports = results.filter((r) => typeof r !== "string") as Report[];
  const summary = {
    seed,
    reports,
    hangs,
    peakRssBytes: peak ?? null,
    maxSampledRssBytes: maxRss,
  };
  if (values.json) console.log(JSON.stringify(summary, null, 2));
  else {
    if (Deno.stderr.isTerminal()) console.error("");
    for (const r of reports) {
      console.log(
        `${r.target}: ${r.cases} cases in ${
          (r.elapsedMs / 1000).toFixed(1)
        } s — ${r.clean} clean, ` +
          `${r.rejected} rejected with the typed error, ${r.escapes} escapes; ` +
          `slowest case ${r.slowestMs.toFixed(1)} ms`,
      );
      for (const [k, v] of Object.entries(r.maxRatios)) console.log(`  max ${k}: ${v.toFixed(1)}`);
      const top = Object.entries(r.checks).sort((a, b) => b[1] - a[1]);
      console.log(`  ${top.length} distinct errors; most frequent:`);
      for (const [k, v] of top.slice(0, 12)) console.log(`    ${String(v).padStart(7)}  ${k}`);
      for (const e of r.firstEscapes) console.log(`  ESCAPE: ${e}`);
    }
    for (const h of hangs) console.log(`HANG/CRASH: ${h}`);
    console.log(`hangs: ${hangs.length}`);
    const mib = (n: number) => `${(n / 2 ** 20).toFixed(0)} MiB`;
    console.log(
      `resident memory of the process (both workers): at most ${mib(maxRss)} sampled every ` +
        `200 ms${peak === undefined ? "" : `; peak ${mib(peak)}`}`,
    );
  }
  return hangs.length === 0 && reports.every((r) => r.escapes === 0) ? 0 : 1;
}

const inWorker = "WorkerGlobalScope" in globalThis &&
  globalThis instanceof (globalThis as unknown as { WorkerGlobalScope: typeof Object })
      .WorkerGlobalScope;

if (inWorker) {
  const scope = globalThis as unknown as {
    onmessage: ((e: MessageEvent<Job>) => void) | null;
    postMessage(m: FromWorker): void;
  };
  scope.onmessage = (e) => {
    runJob(e.data, (m) => scope.postMessage(m));
  };
} else if (import.meta.main) {
  Deno.exit(await main());
}
