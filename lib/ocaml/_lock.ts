/**
 * Internal: the build lock, so that two setups never build into the same prefix at once.
 *
 * The lock is a file holding the owner's pid and a random token (`<pid>\n<token>\n`). It is taken
 * by writing that to a temporary file beside it and hard-linking the temporary to the lock's path,
 * which fails when the path exists: the lock appears whole, or not at all. A lock whose pid is not
 * running is stale; breaking it must never remove a lock another process has just taken (two
 * waiters that both saw the stale lock would otherwise each remove "it", the second removing the
 * first's fresh lock). So a stale lock is removed only by the process that takes its break marker
 * `<lock>.break-<key>`, created the same exclusive way, where the key names that very lock file
 * (inode, modification time and content: the token makes it unique); holding the marker, it reads
 * the lock again and removes it only if its key is still the one judged stale. While the stale
 * lock is there no lock can be taken, and no one else may remove it, so what is removed is the
 * stale lock. A marker whose own process died is broken the same way.
 *
 * @module
 */

import { basename, dirname, join } from "node:path";
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

/** A lock (or break marker) file as read once: its text and the key naming this very file. */
interface Seen {
  readonly text: string;
  /** 16 hex digits from the inode, modification time and text. */
  readonly key: string;
  readonly mtimeMs: number | undefined;
}

/** Reads `path` through one descriptor (text and status of the same file); undefined when there
 * is no such file. */
async function readSeen(path: string): Promise<Seen | undefined> {
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { read: true });
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    throw e;
  }
  try {
    const st = await file.stat();
    const bytes = new Uint8Array(await new Response(file.readable).arrayBuffer());
    const text = new TextDecoder().decode(bytes);
    const mtimeMs = st.mtime?.getTime();
    const digest = await crypto.subtle.digest(
      "SHA-256",
      new TextEncoder().encode(`${st.dev}:${st.ino}:${mtimeMs}:${text}`),
    );
    const key = [...new Uint8Array(digest).subarray(0, 8)]
      .map((b) => b.toString(16).padStart(2, "0")).join("");
    return { text, key, mtimeMs };
  } finally {
    try {
      file.close();
    } catch { /* closed with its stream */ }
  }
}

/** The key of the lock (or marker) file at `path` as it is now, which its break marker is named
 * with (`<path>.break-<key>`); undefined when there is no such file. */
export async function lockKey(path: string): Promise<string | undefined> {
  return (await readSeen(path))?.key;
}

/** Whether a lock or marker file, as seen, was left by a process that is gone. */
function isStale(seen: Seen, isAlive: (pid: number) => boolean): boolean {
  const pid = lockPid(seen.text);
  if (pid !== undefined) return pid !== Deno.pid && !isAlive(pid);
  return seen.mtimeMs !== undefined && Date.now() - seen.mtimeMs > UNWRITTEN_STALE_MS;
}

function randomHex(bytes: number): string {
  return [...crypto.getRandomValues(new Uint8Array(bytes))]
    .map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** The temporary a lock or marker is written to before it is linked into place. */
function pendingName(path: string): string {
  return `${path}.${Deno.pid}-${randomHex(4)}.new`;
}

/**
 * Creates `path` holding `content`, whole, unless it exists: writes a temporary beside it and
 * hard-links it to `path` (where hard links cannot be made, creates `path` exclusively and writes
 * it). Returns false when `path` exists.
 */
async function createWhole(path: string, content: string): Promise<boolean> {
  const pending = pendingName(path);
  await Deno.writeTextFile(pending, content, { createNew: true });
  try {
    await Deno.link(pending, path);
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.AlreadyExists) return false;
    // No hard links here (some file systems): exclusive creation, then the content.
    try {
      await Deno.writeTextFile(path, content, { createNew: true });
      return true;
    } catch (e2) {
      if (e2 instanceof Deno.errors.AlreadyExists) return false;
      throw e2;
    }
  } finally {
    await Deno.remove(pending).catch(() => {});
  }
}

/** How deep markers of markers go (a breaker that died, then the one breaking its marker…). */
const MAX_BREAK_DEPTH = 3;

/**
 * Removes `target` if it is still the file of key `key` (judged stale by the caller): only the
 * process that creates the marker `<target>.break-<key>` may, so that two processes cannot both
 * remove "the stale lock". Returns "removed", "changed" (it is not that file any more: nothing
 * removed) or "busy" (another process holds the marker; a marker whose process died is broken
 * the same way, for a later try).
 */
async function removeIfUnchanged(
  target: string,
  key: string,
  content: string,
  isAlive: (pid: number) => boolean,
  depth = 0,
): Promise<"removed" | "changed" | "busy"> {
  const marker = `${target}.break-${key}`;
  if (!(await createWhole(marker, content))) {
    const other = await readSeen(marker);
    if (other !== undefined && depth < MAX_BREAK_DEPTH && isStale(other, isAlive)) {
      await removeIfUnchanged(marker, other.key, content, isAlive, depth + 1);
    }
    return "busy";
  }
  try {
    const now = await readSeen(target);
    if (now === undefined || now.key !== key) return "changed";
    await Deno.remove(target);
    return "removed";
  } finally {
    await Deno.remove(marker).catch(() => {});
  }
}

/** Removes what killed processes left beside the lock at `path`: temporaries (`.new`) and break
 * markers of processes that are gone. Called while holding the lock; best effort. */
async function removeLeftovers(
  path: string,
  content: string,
  isAlive: (pid: number) => boolean,
): Promise<void> {
  const dir = dirname(path), base = basename(path);
  const escaped = base.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const pending = new RegExp(
    `^${escaped}(?:\\.break-[0-9a-f]{16})*\\.([1-9][0-9]{0,9})-[0-9a-f]{8}\\.new$`,
  );
  const marker = new RegExp(`^${escaped}(?:\\.break-[0-9a-f]{16})+$`);
  try {
    for await (const e of Deno.readDir(dir)) {
      if (!e.isFile) continue;
      const m = pending.exec(e.name);
      if (m !== null) {
        const pid = Number(m[1]);
        if (pid !== Deno.pid && !isAlive(pid)) await Deno.remove(join(dir, e.name)).catch(() => {});
      } else if (marker.test(e.name)) {
        const seen = await readSeen(join(dir, e.name));
        if (seen !== undefined && isStale(seen, isAlive)) {
          await removeIfUnchanged(join(dir, e.name), seen.key, content, isAlive, 1);
        }
      }
    }
  } catch { /* cannot list or remove: leave them */ }
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
 * Takes the lock at `path`: creates it whole with `<pid>\n<token>\n`, taking over a lock whose
 * process is dead (see the module documentation), and otherwise waiting for it. Returns the
 * function that releases it (removes the file if it is still ours).
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
    let created: boolean;
    try {
      created = await createWhole(path, content);
    } catch (e) {
      throw new OCamlToolchainError(
        `cannot create the lock file ${path}: ${(e as Error).message}`,
        { cause: e },
      );
    }
    if (created) {
      await removeLeftovers(path, content, o.isAlive);
      return async () => {
        if ((await readOrUndefined(path)) === content) {
          await Deno.remove(path).catch(() => {});
        }
      };
    }
    const seen = await readSeen(path);
    if (seen === undefined) continue; // released just now
    const pid = lockPid(seen.text);
    let breaking = false;
    if (isStale(seen, o.isAlive)) {
      const outcome = await removeIfUnchanged(path, seen.key, content, o.isAlive);
      if (outcome === "removed") o.onStale(pid);
      if (outcome !== "busy") continue;
      breaking = true; // another process is taking it over: wait for it
    }
    const waited = Date.now() - started;
    if (waited >= o.timeoutMs) {
      throw new OCamlToolchainError(
        `gave up after waiting ${Math.round(waited / 1000)} s for another setup (${
          pid === undefined ? "unknown pid" : `pid ${pid}`
        }) holding the lock ${path}; if no setup is running, delete that file and try again`,
      );
    }
    if (!waiting && !breaking) {
      waiting = true;
      o.onWait(pid);
    }
    await sleep(Math.min(o.pollMs, o.timeoutMs - waited), o.signal);
  }
}
