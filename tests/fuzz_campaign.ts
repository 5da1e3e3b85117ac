/**
 * The long fuzz campaign: `deno task fuzz [--cases N] [--seed S] [--target T] [--shard I/K]
 * [--heap-mib M] [--json]`, T one of memtrace, ring, scenario or all (default). Each target runs
 * in a process of its own (in parallel; a V8 heap of M MiB, default {@linkcode HEAP_MIB}), over
 * cases 0 … N − 1 (default 20,000; those ≡ I − 1 mod K with `--shard`):
 *
 * - memtrace: a structure-aware mutant of a trace (tests/memtrace/fuzz_harness.ts) read four ways
 *   (iterate, dump, copy and read back, iterate without backtraces), then through every `trace`
 *   command's path (tests/memtrace/fuzz_commands.ts: info, copy, subsample, strip-names,
 *   flamegraph, hotspots, identify, top, diff, export pprof/speedscope/folded, report);
 * - ring: a mutant of a runtime_events ring (tests/runtime_events/fuzz_harness.ts) dumped from
 *   memory and through a windowed source, then through every `events` command's path
 *   (tests/runtime_events/fuzz_commands.ts: dump, stats, gc-stats, export chrome, with and without
 *   a trace, clean or mutated, merged);
 * - scenario: a mutant of a library scenario validated and exported to OCaml as `deno task diff`
 *   exports it (tests/export/fuzz_harness.ts).
 *
 * It reports, per target: cases, outcomes per command (clean or rejected with the typed error),
 * the most frequent errors, escapes (any other exception; the first reproducers), broken bounds,
 * hangs (a case over {@linkcode CASE_HANG_MS}, or a process silent for {@linkcode SILENT_MS}),
 * the slowest case, the largest outputs per input byte, wall time, and the process's peak
 * resident memory (VmHWM of /proc/self/status, which Deno reads only with all permissions: the
 * task runs with -A). A failure names its case: `mutant(seedFor(S, i), S, i)`, `ringCase(S, i)`,
 * `scenarioCase(S, i)` rebuild it.
 *
 * Exit status: 0 when there were no escapes, broken bounds or hangs, 1 otherwise, 2 for a usage
 * error.
 * @module
 */
import { parseArgs } from "node:util";

/** A case taking longer than this is a hang (it is still counted when it ends). */
export const CASE_HANG_MS = 30_000;
/** A target process that reports nothing for this long is stopped, and counted as a hang. */
export const SILENT_MS = 120_000;
/** V8 heap (old space) of each target process, MiB (`--heap-mib`): the peak resident memory
 * then measures what the cases need, not how lazily V8 collects (without a limit it lets garbage
 * grow towards its default of several GiB); a case needing more crashes its process, which the
 * campaign reports. */
export const HEAP_MIB = 256;

const TARGETS = ["memtrace", "ring", "scenario"] as const;
type Target = typeof TARGETS[number];

/** A command's outcomes over the campaign. */
interface CommandTally {
  ok: number;
  rejected: number;
  /** Largest output per input byte. */
  maxRatio: number;
  slowestMs: number;
}

/** What a target process reports. */
export interface TargetReport {
  target: Target;
  seed: number;
  shard: string;
  cases: number;
  /** Cases where every path ended cleanly. */
  clean: number;
  /** Cases where some path ended with the typed error. */
  rejected: number;
  escapes: number;
  /** Broken bounds, invalid outputs, differences between two reads. */
  failures: number;
  firstFailures: string[];
  hangs: string[];
  commands: Record<string, CommandTally>;
  errors: Record<string, number>;
  slowestMs: number;
  slowestCase: string;
  peakRssBytes: number | null;
  /** The process's V8 heap limit, MiB. */
  heapMib: number;
  elapsedMs: number;
}

type FromChild =
  | { kind: "progress"; done: number; last: number }
  | { kind: "done"; report: TargetReport };

/** Peak resident memory of this process in bytes (null where /proc cannot be read). */
function peakRss(): number | null {
  try {
    const status = Deno.readTextFileSync("/proc/self/status");
    const kb = /^VmHWM:\s+(\d+) kB/m.exec(status)?.[1];
    return kb === undefined ? null : Number(kb) * 1024;
  } catch {
    return null;
  }
}

const norm = (s: string) => s.replace(/[0-9a-f]{8,}|\d+/g, "N").slice(0, 90);

// ---------------------------------------------------------------------------------------------
// A target process.

async function runTarget(
  target: Target,
  cases: number,
  seed: number,
  shard: [number, number],
  heapMib: number,
): Promise<TargetReport> {
  const r: TargetReport = {
    target,
    seed,
    shard: `${shard[0]}/${shard[1]}`,
    cases: 0,
    clean: 0,
    rejected: 0,
    escapes: 0,
    failures: 0,
    firstFailures: [],
    hangs: [],
    commands: {},
    errors: {},
    slowestMs: 0,
    slowestCase: "",
    peakRssBytes: null,
    heapMib,
    elapsedMs: 0,
  };
  const enc = new TextEncoder();
  const post = (m: FromChild) => Deno.stdout.writeSync(enc.encode(JSON.stringify(m) + "\n"));
  const t0 = performance.now();
  let lastPost = performance.now();
  const tally = (
    cmd: string,
    error: string | null,
    output: number,
    input: number,
    ms: number,
    record = true,
  ) => {
    const c = r.commands[cmd] ??= { ok: 0, rejected: 0, maxRatio: 0, slowestMs: 0 };
    if (error === null) c.ok++;
    else {
      c.rejected++;
      const k = `${cmd}: ${norm(error)}`;
      if (record) r.errors[k] = (r.errors[k] ?? 0) + 1;
    }
    const ratio = output / Math.max(1, input);
    if (Number.isFinite(ratio)) c.maxRatio = Math.max(c.maxRatio, ratio);
    c.slowestMs = Math.max(c.slowestMs, ms);
  };
  const failed = (e: unknown) => {
    const text = e instanceof Error ? e.message : String(e);
    if (/: escape: /.test(text)) r.escapes++;
    else r.failures++;
    if (r.firstFailures.length < 10) r.firstFailures.push(text.slice(0, 3000));
  };
  const memtrace = target === "memtrace" || target === "ring"
    ? await import("./memtrace/fuzz_harness.ts")
    : undefined;
  const commands = target === "memtrace" ? await import("./memtrace/fuzz_commands.ts") : undefined;
  const ring = target === "ring" ? await import("./runtime_events/fuzz_harness.ts") : undefined;
  const ringCommands = target === "ring"
    ? await import("./runtime_events/fuzz_commands.ts")
    : undefined;
  const scenario = target === "scenario" ? await import("./export/fuzz_harness.ts") : undefined;

  for (let i = shard[0] - 1; i < cases; i += shard[1]) {
    const t = performance.now();
    let where = "";
    let anyError = false;
    try {
      if (target === "memtrace") {
        const s = memtrace!.seedFor(seed, i);
        const { bytes, desc } = memtrace!.mutant(s, seed, i);
        where = `memtrace case ${i} (seed ${seed}) from ${s.name}: ${desc}`;
        const size = bytes.length;
        const o = memtrace!.exercise(bytes, where);
        for (const [pass, error] of Object.entries(o.passes)) {
          const out = pass === "dump" ? o.dumpChars : pass === "copy" ? o.copyBytes : 0;
          tally(`read: ${pass}`, error, out, size, 0);
          anyError ||= error !== null;
        }
        const c = commands!.exerciseCommands(bytes, where, {
          base: s.bytes,
          seed: (seed ^ Math.imul(i + 7, 0x2545f491)) >>> 0,
        });
        for (const [cmd, v] of Object.entries(c)) {
          const input = cmd.startsWith("diff") ? size + s.bytes.length : size;
          tally(cmd, v.error, v.output, input, v.ms);
          anyError ||= v.error !== null;
        }
      } else if (target === "ring") {
        const c = ring!.ringCase(seed, i);
        where = `ring case ${i} (seed ${seed}): ${c.desc}`;
        try {
          const o = ring!.exerciseRing(c.bytes, where, i % 16 === 0);
          tally("read: memory and source", o.error, o.chars, o.ringBytes, 0);
          anyError ||= o.error !== null;
          // --with-trace: the seed trace of the memtrace target's case i, or its mutant.
          const s = memtrace!.seedFor(seed, i);
          const trace = i % 2 === 0 ? s.bytes : memtrace!.mutant(s, seed, i).bytes;
          const rc = ringCommands!.exerciseRingCommands(c.bytes, where, {
            seed: (seed ^ Math.imul(i + 7, 0x2545f491)) >>> 0,
            trace,
          });
          for (const [cmd, v] of Object.entries(rc)) {
            const input = c.bytes.length + (cmd.includes("--with-trace") ? trace.length : 0);
            tally(cmd, v.error, v.output, input, v.ms);
            anyError ||= v.error !== null;
          }
        } finally {
          c.restore();
        }
      } else {
        const c = scenario!.scenarioCase(seed, i);
        where = `scenario case ${i} (seed ${seed}): ${c.desc}`;
        const capacity = 65_536 + ((i * 7919) % 1_000_000);
        const t1 = performance.now();
        const o = scenario!.exerciseScenario(c.json, where, capacity);
        const outcome = o.error === null ? null : o.error.replace(/:.*$/, "");
        const ms = performance.now() - t1;
        tally("validate + export", outcome, o.programChars, o.jsonChars, ms, false);
        if (o.error !== null) {
          const k = norm(o.error);
          r.errors[k] = (r.errors[k] ?? 0) + 1;
        }
        anyError = o.error !== null;
      }
      if (anyError) r.rejected++;
      else r.clean++;
    } catch (e) {
      failed(e);
    }
    const dt = performance.now() - t;
    if (dt > r.slowestMs) {
      r.slowestMs = dt;
      r.slowestCase = where.slice(0, 400);
    }
    if (dt > CASE_HANG_MS) r.hangs.push(`${dt.toFixed(0)} ms: ${where.slice(0, 400)}`);
    r.cases++;
    if (performance.now() - lastPost > 1000) {
      post({ kind: "progress", done: r.cases, last: i });
      lastPost = performance.now();
    }
  }
  r.elapsedMs = performance.now() - t0;
  r.peakRssBytes = peakRss();
  return r;
}

// ---------------------------------------------------------------------------------------------
// The campaign: one process per target.

function spawnTarget(
  target: Target,
  args: { cases: number; seed: number; shard: string; heapMib: number },
  onProgress: (done: number) => void,
): Promise<TargetReport | string> {
  const cmd = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      `--v8-flags=--max-old-space-size=${args.heapMib}`,
      import.meta.filename!,
      "--child",
      target,
      "--cases",
      String(args.cases),
      "--seed",
      String(args.seed),
      "--shard",
      args.shard,
      "--heap-mib",
      String(args.heapMib),
    ],
    stdout: "piped",
    stderr: "inherit",
  });
  const child = cmd.spawn();
  return new Promise((resolve) => {
    let last = Date.now(), done = 0, lastCase = -1, settled = false;
    const finish = (v: TargetReport | string) => {
      if (settled) return;
      settled = true;
      clearInterval(timer);
      resolve(v);
    };
    const timer = setInterval(() => {
      if (Date.now() - last > SILENT_MS) {
        try {
          child.kill("SIGKILL");
        } catch { /* already gone */ }
        finish(
          `${target}: hang: no progress for ${SILENT_MS / 1000} s after ${done} cases ` +
            `(a case after case ${lastCase} of seed ${args.seed}, shard ${args.shard})`,
        );
      }
    }, 1000);
    (async () => {
      for await (const line of linesOf(child.stdout)) {
        last = Date.now();
        let m: FromChild;
        try {
          m = JSON.parse(line);
        } catch {
          continue;
        }
        if (m.kind === "progress") {
          done = m.done;
          lastCase = m.last;
          onProgress(done);
        } else finish(m.report);
      }
      const status = await child.status;
      finish(
        `${target}: process ended (status ${status.code}${
          status.signal ? `, ${status.signal}` : ""
        }) after ${done} cases (a case after case ${lastCase})`,
      );
    })();
  });
}

/** The lines of a byte stream. */
async function* linesOf(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  let rest = "";
  const dec = new TextDecoder();
  for await (const bytes of stream) {
    rest += dec.decode(bytes, { stream: true });
    let nl;
    while ((nl = rest.indexOf("\n")) >= 0) {
      yield rest.slice(0, nl);
      rest = rest.slice(nl + 1);
    }
  }
  if (rest !== "") yield rest;
}

function printReport(r: TargetReport): void {
  const mib = (n: number | null) => n === null ? "?" : `${(n / 2 ** 20).toFixed(0)} MiB`;
  console.log(
    `${r.target} (seed ${r.seed}, shard ${r.shard}, heap ${r.heapMib} MiB): ${r.cases} cases in ${
      (r.elapsedMs / 1000).toFixed(1)
    } s — ${r.clean} clean, ${r.rejected} rejected with the typed errors, ${r.escapes} escapes, ` +
      `${r.failures} broken bounds, ${r.hangs.length} hangs; slowest case ` +
      `${r.slowestMs.toFixed(0)} ms; peak RSS ${mib(r.peakRssBytes)}`,
  );
  console.log(`  slowest: ${r.slowestCase.slice(0, 200)}`);
  console.log(
    `  ${"command".padEnd(28)} ${"clean".padStart(7)} ${"rejected".padStart(8)}  ` +
      `max out/in  slowest`,
  );
  for (const [cmd, c] of Object.entries(r.commands)) {
    console.log(
      `  ${cmd.padEnd(28)} ${String(c.ok).padStart(7)} ${String(c.rejected).padStart(8)}  ` +
        `${c.maxRatio.toFixed(1).padStart(10)}  ${
          c.slowestMs === 0 ? "    -" : `${c.slowestMs.toFixed(0).padStart(5)} ms`
        }`,
    );
  }
  const top = Object.entries(r.errors).sort((a, b) => b[1] - a[1]);
  console.log(`  ${top.length} distinct errors; most frequent:`);
  for (const [k, v] of top.slice(0, 10)) console.log(`    ${String(v).padStart(7)}  ${k}`);
  for (const e of r.firstFailures) console.log(`  FAILURE: ${e}`);
  for (const h of r.hangs) console.log(`  HANG: ${h}`);
}

async function main(): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: Deno.args,
      options: {
        cases: { type: "string", default: "20000" },
        seed: { type: "string", default: "20240611" },
        target: { type: "string", default: "all" },
        shard: { type: "string", default: "1/1" },
        "heap-mib": { type: "string", default: String(HEAP_MIB) },
        child: { type: "string" },
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
      "Usage: deno task fuzz [--cases N] [--seed S] [--target memtrace|ring|scenario|all] " +
        "[--shard I/K] [--heap-mib M] [--json]",
    );
    return 0;
  }
  const cases = Number(values.cases), seed = Number(values.seed);
  const heapMib = Number(values["heap-mib"]);
  const m = /^(\d+)\/(\d+)$/.exec(values.shard);
  const shard: [number, number] | undefined = m === null ? undefined : [Number(m[1]), Number(m[2])];
  if (
    !Number.isSafeInteger(cases) || cases < 1 || !Number.isSafeInteger(seed) ||
    !Number.isSafeInteger(heapMib) || heapMib < 16 ||
    shard === undefined || shard[0] < 1 || shard[0] > shard[1]
  ) {
    console.error(
      "error: --cases, --seed and --heap-mib (>= 16) take integers, --shard I/K with 1 <= I <= K",
    );
    return 2;
  }
  if (values.child !== undefined) {
    const report = await runTarget(values.child as Target, cases, seed >>> 0, shard, heapMib);
    Deno.stdout.writeSync(
      new TextEncoder().encode(JSON.stringify({ kind: "done", report }) + "\n"),
    );
    return 0;
  }
  const targets = values.target === "all" ? [...TARGETS] : [values.target as Target];
  if (!targets.every((t) => (TARGETS as readonly string[]).includes(t))) {
    console.error(`error: unknown target ${values.target}`);
    return 2;
  }
  const progress: Record<string, number> = {};
  const perShard = Math.ceil((cases - (shard[0] - 1)) / shard[1]);
  const ticker = setInterval(() => {
    if (!values.json && Deno.stderr.isTerminal()) {
      const p = targets.map((t) => `${t} ${progress[t] ?? 0}/${perShard}`).join("  ");
      Deno.stderr.writeSync(new TextEncoder().encode(`\r${p}`));
    }
  }, 500);
  const t0 = performance.now();
  const results = await Promise.all(
    targets.map((t) =>
      spawnTarget(
        t,
        { cases, seed: seed >>> 0, shard: values.shard, heapMib },
        (d) => progress[t] = d,
      )
    ),
  );
  clearInterval(ticker);
  const wallMs = performance.now() - t0;
  const lost = results.filter((r) => typeof r === "string") as string[];
  const reports = results.filter((r) => typeof r !== "string") as TargetReport[];
  const ok = lost.length === 0 &&
    reports.every((r) => r.escapes === 0 && r.failures === 0 && r.hangs.length === 0);
  if (values.json) {
    console.log(JSON.stringify({ seed, shard: values.shard, wallMs, reports, lost }, null, 2));
  } else {
    if (Deno.stderr.isTerminal()) console.error("");
    for (const r of reports) printReport(r);
    for (const l of lost) console.log(`HANG/CRASH: ${l}`);
    console.log(
      `wall time ${(wallMs / 1000).toFixed(1)} s; ${ok ? "no" : "SOME"} escapes, ` +
        `broken bounds or hangs`,
    );
  }
  return ok ? 0 : 1;
}

if (import.meta.main) Deno.exit(await main());
