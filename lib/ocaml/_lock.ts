/**
 * Internal: the build lock, a file created exclusively (`createNew`) holding the owner's pid, so
 * that two setups never build into the same prefix at once.
 *
 * @module
 */

import { OCamlToolchainError } from "./errors.ts";

/** How {@linkcode acquireLock} waits. */
export interface LockOptions {
  /** Give up (with an {@linkcode OCamlToolchainError}) after waiting this long. */
  timeoutMs: number;
  /** Check the lock again this often. */
  pollMs: number;
  /** Stops waiting (with an error) when aborted. */
  signal?: AbortSignal;
  /** Called once when the lock is held by a live process and we start waiting. */
  onWait(pid: number | undefined): void;
  /** Called when a lock left by a dead process is removed. */
  onStale(pid: number | undefined): void;
  /** Whether process `pid` is running. */
  isAlive(pid: number): boolean;
}

/** A lock file whose content is not (yet) a pid is stale after this long: its writer died
 * between creating and writing it. */
const UNWRITTEN_STALE_MS = 10_000;

/** The pid in a lock file's text (its first line), if any. */
export function lockPid(text: string): number | undefined {
  const first = text.split("\n")[0].trim();
  return /^[1-9][0-9]*$/.test(first) ? Number(first) : undefined;
}

async function readOrUndefined(path: string): Promise<string | undefined> {
  try {
    return await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    throw e;
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((done) => {
    if (signal?.aborted) return done();
    const onAbort = () => {
      clearTimeout(timer);
      done();
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      done();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Takes the lock at `path`: creates it exclusively with `<pid>\n<token>\n`, taking over a lock
 * whose process is dead, and otherwise waiting for it. Returns the function that releases it
 * (removes the file if it is still ours).
 */
export async function acquireLock(path: string, o: LockOptions): Promise<() => Promise<void>> {
  const token = crypto.randomUUID();
  const content = `${Deno.pid}\n${token}\n`;
  const started = Date.now();
  let waiting = false;
  for (;;) {
    if (o.signal?.aborted) {
      throw new OCamlToolchainError(`interrupted while waiting for the lock ${path}`);
    }
    try {
      const file = await Deno.open(path, { write: true, createNew: true });
      try {
        await file.write(new TextEncoder().encode(content));
      } finally {
        file.close();
      }
      return async () => {
        if ((await readOrUndefined(path)) === content) {
          await Deno.remove(path).catch(() => {});
        }
      };
    } catch (e) {
      if (!(e instanceof Deno.errors.AlreadyExists)) {
        throw new OCamlToolchainError(
          `cannot create the lock file ${path}: ${(e as Error).message}`,
          {
            cause: e,
          },
        );
      }
    }
    const text = await readOrUndefined(path);
    if (text === undefined) continue; // released just now
    const pid = lockPid(text);
    let stale: boolean;
    if (pid === undefined) {
      const mtime = (await Deno.stat(path).catch(() => undefined))?.mtime?.getTime();
      stale = mtime !== undefined && Date.now() - mtime > UNWRITTEN_STALE_MS;
    } else {
      stale = !o.isAlive(pid);
    }
    if (stale) {
      // Remove it only if it is still the lock we judged (not one a new owner just wrote).
      if ((await readOrUndefined(path)) === text) {
        await Deno.remove(path).catch(() => {});
        o.onStale(pid);
      }
      continue;
    }
    const waited = Date.now() - started;
    if (waited >= o.timeoutMs) {
      throw new OCamlToolchainError(
        `gave up after waiting ${Math.round(waited / 1000)} s for another setup (${
          pid === undefined ? "unknown pid" : `pid ${pid}`
        }) holding the lock ${path}; if no setup is running, delete that file and try again`,
      );
    }
    if (!waiting) {
      waiting = true;
      o.onWait(pid);
    }
    await sleep(Math.min(o.pollMs, o.timeoutMs - waited), o.signal);
  }
}
