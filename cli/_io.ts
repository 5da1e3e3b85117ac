/**
 * Small I/O helpers shared by the command-line tools: buffered stdout, output files (written
 * through a temporary renamed into place, or in place for a device or FIFO; temporaries removed
 * on SIGINT/SIGTERM and stale ones swept) and uniform error reporting.
 * @module
 */
import { printableLines } from "../lib/util/printable.ts";
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";
import {
  commitTemporary,
  discardTemporary,
  liveTemporaries,
  openTemporary,
} from "../lib/util/atomic_file.ts";

const encoder = new TextEncoder();

/** Buffers text and writes it to stdout (or to `out`) in large chunks (line-by-line writes
 * are slow). */
export class StdoutBuffer {
  #parts: string[] = [];
  #size = 0;
  readonly #out: (text: string) => void;

  /** Buffers what goes to `out` (default: standard output). */
  constructor(out: (text: string) => void = writeStdout) {
    this.#out = out;
  }

  /** Adds a line (a newline is appended). */
  line(s: string): void {
    this.write(s + "\n");
  }

  /** Adds text as it is (newlines included). */
  write(s: string): void {
    this.#parts.push(s);
    this.#size += s.length;
    if (this.#size > 1 << 16) this.flush();
  }

  /** Writes everything buffered so far. */
  flush(): void {
    if (this.#parts.length === 0) return;
    const text = this.#parts.join("");
    this.#parts = [];
    this.#size = 0;
    this.#out(text);
  }
}

/** Something written to synchronously, such as `Deno.stdout` or a `Deno.FsFile`. */
export interface SyncWriter {
  writeSync(p: Uint8Array): number;
}

/**
 * Writes all of `data` (text as UTF-8) to `w`, looping over short writes. A write that takes
 * nothing throws `Deno.errors.WriteZero`; a reader that went away (EPIPE) throws
 * `Deno.errors.BrokenPipe`, which every command turns into a quiet exit 0
 * ({@linkcode exitStatusOf}). The one way the commands write their output.
 */
export function writeAll(w: SyncWriter, data: Uint8Array | string): void {
  const bytes = typeof data === "string" ? encoder.encode(data) : data;
  let off = 0;
  while (off < bytes.length) {
    const n = w.writeSync(bytes.subarray(off));
    if (n <= 0) throw new Deno.errors.WriteZero("write to output took no bytes");
    off += n;
  }
}

/** Writes all of `data` to standard output ({@linkcode writeAll}). */
export function writeStdout(data: Uint8Array | string): void {
  writeAll(Deno.stdout, data);
}

/** Writes all of `data` to standard error ({@linkcode writeAll}). */
export function writeStderr(data: Uint8Array | string): void {
  writeAll(Deno.stderr, data);
}

/**
 * The exit status for an error that ended a command, after reporting it on stderr through
 * `stderr`: 0 for a reader of the output that went away (`… | head`: nothing left to say),
 * 2 for a {@linkcode UsageError} (with its hint, or `usageHint`), 1 for anything else.
 */
export function exitStatusOf(
  e: unknown,
  stderr: (text: string) => void = writeStderr,
  usageHint?: string,
): number {
  if (e instanceof Deno.errors.BrokenPipe) return 0;
  if (e instanceof UsageError) {
    const hint = e.hint ?? usageHint;
    stderr(`error: ${printableLines(e.message)}\n${hint ? `${hint}\n` : ""}`);
    return 2;
  }
  stderr(`error: ${printableLines(e instanceof Error ? e.message : String(e))}\n`);
  return 1;
}

/** Whether process `pid` exists, where /proc can be read (Deno lets a program read it only
 * with all permissions); undefined where it cannot be known. */
export function processExists(pid: number): boolean | undefined {
  try {
    Deno.statSync("/proc/self");
  } catch {
    return undefined;
  }
  try {
    Deno.statSync(`/proc/${pid}`);
    return true;
  } catch {
    return false;
  }
}

/** A temporary of another process untouched for this long is taken as left by a killed
 * process, when /proc cannot tell (a live writer writes to its temporary all the time). */
export const STALE_TEMPORARY_MS = 10 * 60 * 1000;

/** Removes `<path>.<pid>.tmp` files left by processes killed while writing: those of a process
 * that no longer exists, or not modified for {@linkcode STALE_TEMPORARY_MS}. Best effort. */
function removeStaleTemporaries(path: string): void {
  const dir = dirname(path), base = basename(path);
  const prefix = base + ".";
  try {
    for (const e of Deno.readDirSync(dir)) {
      if (!e.isFile || !e.name.startsWith(prefix) || !e.name.endsWith(".tmp")) continue;
      const pidText = e.name.slice(prefix.length, -4);
      if (!/^[0-9]{1,10}$/.test(pidText)) continue;
      const pid = Number(pidText);
      if (pid === Deno.pid) continue;
      const tmp = join(dir, e.name);
      const exists = processExists(pid);
      if (exists === true) continue;
      if (exists === undefined) {
        const mtime = Deno.statSync(tmp).mtime?.getTime();
        if (mtime === undefined || Date.now() - mtime < STALE_TEMPORARY_MS) continue;
      }
      Deno.removeSync(tmp);
    }
  } catch { /* no permission to list or remove: leave them */ }
}

/**
 * Where an output goes: `"special"` for an existing file that is not a regular file once
 * symbolic links are followed (a device such as `/dev/null`, a FIFO), which is written in place
 * and never replaced; `"file"` for a regular file or a path that does not exist yet, written
 * through a temporary renamed into place. An existing directory throws
 * `Deno.errors.IsADirectory` before anything is written.
 */
export function outputKind(path: string): "file" | "special" {
  let st: Deno.FileInfo;
  try {
    st = Deno.statSync(path);
  } catch {
    return "file"; // does not exist (or cannot be checked): the open will tell
  }
  if (st.isDirectory) throw new Deno.errors.IsADirectory(`cannot write ${path}: it is a directory`);
  return st.isFile ? "file" : "special";
}

/** An output being written: a temporary beside it, or the special file itself. */
interface OpenOutput {
  readonly file: Deno.FsFile;
  /** The temporary (`<path>.<pid>.tmp`), or undefined for a special file written in place. */
  readonly tmp: string | undefined;
}

const STOP_SIGNALS: [Deno.Signal, number][] = [["SIGINT", 130], ["SIGTERM", 143]];
const stopCleanups = new Set<() => void>();
const stopHandlers: [Deno.Signal, () => void][] = [];

/**
 * Until the returned function is called, SIGINT and SIGTERM run `cleanup` (and those of every
 * other caller meanwhile), then end the process with status 130 and 143: the one way the commands
 * clean up after an interruption (temporaries of {@linkcode writeOutput}, `diff`'s run folders).
 * A cleanup should be quick and must not throw.
 */
export function onStopSignals(cleanup: () => void): () => void {
  const entry = () => cleanup();
  stopCleanups.add(entry);
  if (stopHandlers.length === 0) {
    for (const [signal, status] of STOP_SIGNALS) {
      const handler = () => {
        for (const c of stopCleanups) {
          try {
            c();
          } catch { /* the others still run */ }
        }
        Deno.exit(status);
      };
      try {
        Deno.addSignalListener(signal, handler);
        stopHandlers.push([signal, handler]);
      } catch { /* signal not supported here */ }
    }
  }
  return () => {
    if (!stopCleanups.delete(entry) || stopCleanups.size > 0) return;
    for (const [signal, handler] of stopHandlers.splice(0)) {
      Deno.removeSignalListener(signal, handler);
    }
  };
}

/** Removes the temporaries being written (on SIGINT/SIGTERM). */
function removeLiveTemporaries(): void {
  for (const t of liveTemporaries()) {
    try {
      Deno.removeSync(t);
    } catch { /* already gone */ }
  }
}

/** Opens the temporary beside a regular (or new) output `path` (lib/util/atomic_file.ts), after
 * removing those left by killed processes. */
function openOutputTemporary(path: string): OpenOutput {
  removeStaleTemporaries(path);
  return openTemporary(path);
}

/** Closes the output and renames its temporary into place. */
function commit(out: OpenOutput, path: string): void {
  if (out.tmp === undefined) out.file.close();
  else commitTemporary({ file: out.file, tmp: out.tmp }, path);
}

/** Closes the output and removes its temporary (a special file is left as it is). */
function discard(out: OpenOutput): void {
  if (out.tmp !== undefined) return discardTemporary({ file: out.file, tmp: out.tmp });
  try {
    out.file.close();
  } catch { /* already closed */ }
}

/**
 * Writes output file `path` through `fill`, which gets the open file: the one way the commands
 * write a file they are told to write. A regular file or a new path is written to
 * `<path>.<pid>.tmp` beside it, then renamed into place, so that readers never see a
 * half-written file; on any error the temporary is removed, and temporaries left by killed
 * processes are removed first. A special file (a device such as `/dev/null`, a FIFO, or a
 * symbolic link to one; {@linkcode outputKind}) is opened and written in place, never replaced.
 * A directory `path` is refused (`Deno.errors.IsADirectory`) before anything is written.
 *
 * From the start until the output is complete, SIGINT and SIGTERM remove the temporary and end
 * the process (status 130 and 143): a long `fill` should let the event loop run now and then
 * ({@linkcode advanceYielding}, {@linkcode nextTurn}); a signal received while it did not is
 * still honoured before the output is renamed into place (or before an error is reported).
 */
export async function writeOutput(
  path: string,
  fill: (file: Deno.FsFile) => Promise<void> | void,
): Promise<void> {
  const release = onStopSignals(removeLiveTemporaries);
  try {
    const special = outputKind(path) === "special";
    // A FIFO's open waits for a reader: asynchronously, so that a signal can end the wait.
    const out: OpenOutput = special
      ? { tmp: undefined, file: await Deno.open(path, { write: true }) }
      : openOutputTemporary(path);
    try {
      await fill(out.file);
      await settle(); // a signal received during `fill` wins over the rename
      commit(out, path);
    } catch (e) {
      discard(out);
      await settle(); // and over the error
      throw e;
    }
  } finally {
    release();
  }
}

/**
 * {@linkcode writeOutput} for a short write that does not yield: the same temporary and rename
 * (or a special file written in place), without signal handling (a signal kills the process at
 * once, and the temporary it leaves is removed by the next write of `path`).
 */
export function writeOutputSync(path: string, fill: (file: Deno.FsFile) => void): void {
  const special = outputKind(path) === "special";
  const out: OpenOutput = special
    ? { tmp: undefined, file: Deno.openSync(path, { write: true }) }
    : openTemporary(path);
  try {
    fill(out.file);
    commit(out, path);
  } catch (e) {
    discard(out);
    throw e;
  }
}

/** Writes `data` (text as UTF-8) to output file `path`, as {@linkcode writeOutputSync}. */
export function writeOutputData(path: string, data: Uint8Array | string): void {
  const bytes = typeof data === "string" ? encoder.encode(data) : data;
  writeOutputSync(path, (file) => writeAll(file, bytes));
}

/** Lets the event loop deliver a signal that came while the process was busy (a turn of it may
 * not be enough: the signal is read in one turn and its listener called in a later one). */
async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setTimeout(resolve, 1));
}

/** Time {@linkcode advanceYielding} works between two turns of the event loop, in ms. */
const YIELD_EVERY_MS = 50;

/**
 * Runs an iteration to its end `step` packets at a time, letting the event loop run (signal
 * handlers, timers) every {@linkcode YIELD_EVERY_MS} ms or so; `refill`, when given, is awaited
 * before each step (to read its input ahead).
 */
export async function advanceYielding(
  it: { advance(maxPackets: number): boolean },
  step = 16,
  refill?: () => Promise<void>,
): Promise<void> {
  let last = performance.now();
  for (;;) {
    await refill?.();
    if (!it.advance(step)) return;
    if (performance.now() - last >= YIELD_EVERY_MS) {
      await nextTurn();
      last = performance.now();
    }
  }
}

/** A stream that can be read both ways (Deno.stdin, a Deno.FsFile). */
export interface DualStream {
  read(p: Uint8Array): Promise<number | null>;
  readSync(p: Uint8Array): number | null;
  close?(): void;
}

/**
 * A stream read ahead asynchronously: {@linkcode fill} awaits data (so that signals are handled
 * while a pipe is idle), and {@linkcode readSync} then serves it without blocking. Reading past
 * what was filled falls back to a blocking read of the stream.
 */
export class ReadAhead {
  #chunks: Uint8Array[] = [];
  #first = 0;
  #available = 0;
  #ended = false;
  readonly #stream: DualStream;

  /** Reads ahead from `stream`. */
  constructor(stream: DualStream) {
    this.#stream = stream;
  }

  /** Reads until `bytes` bytes are buffered, or the stream ends. */
  async fill(bytes: number): Promise<void> {
    while (!this.#ended && this.#available < bytes) {
      const buf = new Uint8Array(1 << 16);
      const n = await this.#stream.read(buf);
      if (n === null) this.#ended = true;
      else if (n > 0) {
        this.#chunks.push(buf.subarray(0, n));
        this.#available += n;
      }
    }
  }

  /** Takes buffered bytes into `p`; returns the count, or null at the end. */
  readSync(p: Uint8Array): number | null {
    if (this.#available === 0) return this.#ended ? null : this.#stream.readSync(p);
    let n = 0;
    while (n < p.length && this.#chunks.length > 0) {
      const c = this.#chunks[0];
      const k = Math.min(p.length - n, c.length - this.#first);
      p.set(c.subarray(this.#first, this.#first + k), n);
      n += k;
      this.#first += k;
      if (this.#first === c.length) {
        this.#chunks.shift();
        this.#first = 0;
      }
    }
    this.#available -= n;
    return n;
  }

  /** Closes the stream. */
  close(): void {
    this.#stream.close?.();
  }
}

/** Lets the event loop run (timers, signal handlers) before going on. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/**
 * The real path of `path` (resolved from the working directory): symbolic links resolved in the
 * longest leading part of it that exists, the rest (to be created) appended as it is.
 */
export function realPathOfExisting(path: string): string {
  const rest: string[] = [];
  let p = resolve(path);
  for (;;) {
    try {
      return join(Deno.realPathSync(p), ...rest.reverse());
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound) && !(e instanceof Deno.errors.NotADirectory)) {
        throw e;
      }
    }
    const up = dirname(p);
    if (up === p) return join(p, ...rest.reverse());
    rest.push(basename(p));
    p = up;
  }
}

/** Whether `path` is `dir` or inside it, as paths (no file system access). */
export function isWithin(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel === "" || (rel !== ".." && !rel.startsWith("../") && !isAbsolute(rel));
}

/** A mistake on the command line. */
export class UsageError extends Error {
  override name = "UsageError";
  constructor(message: string, readonly hint?: string) {
    super(message);
  }
}

/** An input file the command will not read: not a regular file and longer than it reads from
 * a pipe or device (`/dev/zero` never ends), or not a file it can follow at all. */
export class InputFileError extends Error {
  override name = "InputFileError";
  constructor(message: string, readonly path: string) {
    super(message);
  }
}

/** Bytes {@linkcode readFileBounded} reads at most from a file that is not a regular file: the
 * ring decoder's own bound on such files (lib/runtime_events STREAM_IMAGE_LIMIT, 256 MiB). */
export const NON_REGULAR_READ_LIMIT = 256 * 1024 * 1024;

/**
 * Reads a whole input file. A regular file is read as it is (its size is known); anything else
 * (a pipe, a FIFO, a device such as `/dev/zero`) is read up to `limit` bytes, beyond which
 * {@linkcode InputFileError} is thrown, so that an endless input ends the command promptly
 * instead of filling memory. A directory throws `Deno.errors.IsADirectory`.
 */
export function readFileBounded(path: string, limit = NON_REGULAR_READ_LIMIT): Uint8Array {
  const file = Deno.openSync(path, { read: true });
  try {
    const st = file.statSync();
    if (st.isDirectory) throw new Deno.errors.IsADirectory(`${path} is a directory`);
    if (st.isFile) return Deno.readFileSync(path);
    const chunks: Uint8Array[] = [];
    let total = 0;
    for (;;) {
      const buf = new Uint8Array(1 << 20);
      const n = file.readSync(buf);
      if (n === null || n === 0) break;
      total += n;
      if (total > limit) {
        throw new InputFileError(
          `${path} is not a regular file and holds more than the ${limit} bytes read from a ` +
            `pipe or device; copy it to a regular file`,
          path,
        );
      }
      chunks.push(n === buf.length ? buf : buf.subarray(0, n));
    }
    const out = new Uint8Array(total);
    let off = 0;
    for (const c of chunks) {
      out.set(c, off);
      off += c.length;
    }
    return out;
  } finally {
    file.close();
  }
}

/** Throws {@linkcode InputFileError} unless `path` is a regular file or does not exist (yet):
 * for commands that follow a file as it grows, which a pipe or device cannot be. */
export function refuseNonRegular(path: string, what: string): void {
  let st: Deno.FileInfo;
  try {
    st = Deno.statSync(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return;
    throw e;
  }
  if (!st.isFile) {
    throw new InputFileError(`${what}: ${path} is not a regular file`, path);
  }
}
