/**
 * Native memtrace, run by the benches in the same run as our code: the executables of
 * `../shared/anchors/memtrace-native/bin.tar.xz` (Jane Street's memtrace built with OCaml 5.3.0;
 * see that folder's README), unpacked once per process into a temporary directory removed when
 * the process unloads.
 *
 * The folder is looked up as `MEMPROF_LAB_MEMTRACE_NATIVE` (a directory holding `bin.tar.xz`),
 * else `../shared/anchors/memtrace-native/` next to the repository. Without it (or without the
 * permissions to unpack and run it), every function returns a sentence saying why, which
 * {@linkcode printSideBySide} prints in place of a figure and a ratio.
 *
 * Besides the anchor, {@linkcode runMeasured} runs any command (ours or native) as a whole
 * process, for wall time and peak resident set size.
 * @module
 */

function granted(name: "run" | "write" | "env" | "read"): boolean {
  return Deno.permissions.querySync({ name }).state === "granted";
}

function here(path: string): string {
  return new URL(path, import.meta.url).pathname;
}

/** The command line, program first, that runs our `trace` CLI with `args` as a process of its
 * own (`deno run` of cli/trace.ts, reading and writing files): what the benches time beside
 * native memtrace's tools. */
export function ourTraceCommand(args: readonly string[]): string[] {
  return [
    Deno.execPath(),
    "run",
    "--config",
    here("../deno.json"),
    "--allow-read",
    "--allow-write",
    here("../cli/trace.ts"),
    ...args,
  ];
}

/** Where the anchor's `bin.tar.xz` should be. */
function anchorTarball(): string {
  const env = granted("env") ? Deno.env.get("MEMPROF_LAB_MEMTRACE_NATIVE") : undefined;
  return `${env ?? here("../../shared/anchors/memtrace-native")}/bin.tar.xz`;
}

let binDir: string | { why: string } | null = null;

/** The directory of the unpacked native executables, or why there is none. */
export function nativeBinDir(): string | { why: string } {
  if (binDir !== null) return binDir;
  if (!(granted("run") && granted("write") && granted("read"))) {
    return binDir = { why: "anchor not run: needs --allow-run --allow-write --allow-read" };
  }
  const tarball = anchorTarball();
  try {
    Deno.statSync(tarball);
  } catch {
    return binDir = { why: `anchor missing (no ${tarball})` };
  }
  const dir = Deno.makeTempDirSync({ prefix: "memprof-lab-memtrace-native-" });
  globalThis.addEventListener("unload", () => {
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch { /* already gone */ }
  });
  const r = runQuiet("tar", ["-xJf", tarball, "-C", dir]);
  if (!r.ok) return binDir = { why: `anchor not unpacked (tar: ${firstLine(r.err)})` };
  return binDir = `${dir}/bin`;
}

function firstLine(s: string): string {
  return s.split("\n").find((l) => l.trim() !== "")?.trim() ?? "failed";
}

function runQuiet(cmd: string, args: string[]): { ok: boolean; out: string; err: string } {
  try {
    const r = new Deno.Command(cmd, { args, stdout: "piped", stderr: "piped" }).outputSync();
    const dec = new TextDecoder();
    return { ok: r.success, out: dec.decode(r.stdout), err: dec.decode(r.stderr) };
  } catch (e) {
    return { ok: false, out: "", err: (e as Error).message };
  }
}

/** What one run of native memtrace's `mt_decode_bench` or `mt_copy_bench` reports. */
export interface NativeBenchRun {
  /** Events of the trace. */
  events: number;
  /** The timed reps' times, in seconds (after one untimed warm-up, a `Gc.full_major` before
   * each). */
  times: number[];
}

/**
 * Runs native memtrace's decode bench (`Reader.open_` + `iter ~parse_backtraces:true` +
 * `close`) or copy bench (the same plus re-encoding with `Writer.Multiplexed_domains` into
 * /dev/null) on the trace file `trace`, `reps` timed reps; or why it cannot.
 */
export function nativeCodecBench(
  kind: "decode" | "copy",
  trace: string,
  reps: number,
): NativeBenchRun | string {
  const dir = nativeBinDir();
  if (typeof dir !== "string") return dir.why;
  const r = runQuiet(`${dir}/mt_${kind}_bench`, [trace, String(reps)]);
  if (!r.ok) return `failed (${firstLine(r.err)})`;
  const field = (name: string) => r.out.split("\n").find((l) => l.startsWith(name + ":"));
  const events = Number(field("events")?.slice("events:".length));
  const times = (field("times_ms")?.slice("times_ms:".length).trim().split(/\s+/) ?? [])
    .map((t) => Number(t) / 1000);
  if (!(events > 0) || times.length !== reps || times.some((t) => !(t > 0))) {
    return `failed (unexpected output: ${JSON.stringify(r.out.slice(0, 200))})`;
  }
  return { events, times };
}

/** A whole process's cost. */
export interface ProcessCost {
  /** Wall time from spawn to exit, in seconds. */
  seconds: number;
  /** Peak resident set size in bytes, when /usr/bin/time could tell. */
  peakRss?: number;
}

/** Options of {@linkcode runMeasured}. */
export interface RunMeasuredOptions {
  /** Where standard output goes: discarded (default) or into this file. */
  stdoutFile?: string;
}

let gnuTime: boolean | null = null;

/**
 * Runs `cmd args` as a whole process (its start included), standard output discarded or
 * written to a file, and returns its wall time and (through GNU time, `/usr/bin/time -f %M`,
 * when present) its peak resident set size. Throws with the command's exit status and standard
 * error if it fails.
 */
export function runMeasured(
  cmd: string,
  args: string[],
  options: RunMeasuredOptions = {},
): ProcessCost {
  gnuTime ??= runQuiet("/usr/bin/time", ["-f", "%M", "true"]).ok;
  const rssFile = gnuTime ? Deno.makeTempFileSync({ prefix: "memprof-lab-rss-" }) : undefined;
  const argv = rssFile === undefined ? [cmd, ...args] : [
    "/usr/bin/time",
    "-o",
    rssFile,
    "-f",
    "%M",
    cmd,
    ...args,
  ];
  const out = options.stdoutFile === undefined ? "null" as const : "piped" as const;
  try {
    const t0 = performance.now();
    let ok: boolean, err: Uint8Array, code: number;
    if (out === "null") {
      const r = new Deno.Command(argv[0], { args: argv.slice(1), stdout: "null", stderr: "piped" })
        .outputSync();
      ok = r.success;
      err = r.stderr;
      code = r.code;
    } else {
      // Through the shell, so that the output streams to the file rather than through us.
      const quoted = argv.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
      const file = `'${options.stdoutFile!.replaceAll("'", "'\\''")}'`;
      const r = new Deno.Command("sh", {
        args: ["-c", `exec ${quoted} > ${file}`],
        stdout: "null",
        stderr: "piped",
      }).outputSync();
      ok = r.success;
      err = r.stderr;
      code = r.code;
    }
    const seconds = (performance.now() - t0) / 1000;
    if (!ok) {
      throw new Error(
        `${cmd} ${args.join(" ")} failed (exit status ${code}): ${new TextDecoder().decode(err)}`,
      );
    }
    if (rssFile === undefined) return { seconds };
    const kib = Number(Deno.readTextFileSync(rssFile).trim().split("\n").at(-1));
    return Number.isFinite(kib) ? { seconds, peakRss: kib * 1024 } : { seconds };
  } finally {
    if (rssFile !== undefined) Deno.removeSync(rssFile);
  }
}

/** The median of `values` (the mean of the two middle ones for an even count). */
export function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const n = s.length;
  return n % 2 === 1 ? s[n >> 1] : (s[n / 2 - 1] + s[n / 2]) / 2;
}
