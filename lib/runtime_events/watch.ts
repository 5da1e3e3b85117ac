/**
 * Watching a running program's ring file: poll it with a
 * {@linkcode RingFollower} until the program ends or the watch is aborted.
 *
 * The watch ends:
 * - when the file is removed (OCaml removes it at exit unless
 *   `OCAML_RUNTIME_EVENTS_PRESERVE` is set) or replaced by another file;
 * - when the process given by `pid` is gone (checked with `kill -0`, at most
 *   every 250 ms; see {@linkcode processAlive});
 * - shortly after EV_RING_STOP (the runtime writes it at exit);
 * - when `signal` is aborted (Ctrl-C).
 * In the first three cases what is left in the file is read before returning
 * (through the open handle, even after the file was removed).
 *
 * @module
 */

import type { ConsumerCallbacks, CursorOptions } from "./consumer.ts";
import { Lifecycle } from "./enums.ts";
import { RingFollower, RingNotReadyError } from "./follow.ts";

/** Why a watch ended. */
export type WatchEndReason = "removed" | "replaced" | "exited" | "ring_stopped" | "interrupted";

/** Options of {@linkcode watchRing}. */
export interface WatchOptions extends CursorOptions {
  /** The ring file, e.g. `eventsFilePath(dir, pid)`. */
  path: string;
  /** Process writing it: the watch ends when it is gone. */
  pid?: number;
  /** Time between polls in milliseconds (default 100). */
  intervalMs?: number;
  /** Aborting it ends the watch (reason `interrupted`). */
  signal?: AbortSignal;
  /** Receives the events. */
  callbacks: ConsumerCallbacks;
  /** Called after each poll with the number of events it delivered. */
  onPoll?(events: number): void;
  /** Called once if the file does not exist yet (or is not ready) when the watch starts. */
  onWaiting?(message: string): void;
  /** Whether process `pid` is running (default {@linkcode processAlive}). */
  isAlive?(pid: number): boolean;
}

/** How a watch went. */
export interface WatchResult {
  /** Why it ended. */
  reason: WatchEndReason;
  /** Events delivered (padding excluded). */
  events: number;
  /** Ring words reported lost (overwritten before they could be read). */
  lostWords: number;
  /** Polls made. */
  polls: number;
  /**
   * Rings that were written, with the tail seen at the last poll and the
   * reading position reached (equal when everything was read).
   */
  rings: { domain: number; position: number; tail: number }[];
}

/**
 * Whether process `pid` is running, as `kill -0 PID` says (Deno reads
 * `/proc` only with every permission, so the check runs `kill`, which needs
 * `--allow-run=kill`). When it cannot tell — no permission, no `kill`
 * program, Windows — it says true, and a watch then ends only when the file
 * goes away, after EV_RING_STOP, or on Ctrl-C.
 */
export function processAlive(pid: number): boolean {
  if (Deno.build.os === "windows") return true;
  try {
    return new Deno.Command("kill", {
      args: ["-0", String(pid)],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).outputSync().success;
  } catch (e) {
    if (
      e instanceof Deno.errors.NotCapable || e instanceof Deno.errors.PermissionDenied ||
      e instanceof Deno.errors.NotFound
    ) return true;
    throw e;
  }
}

/** Whether {@linkcode processAlive} can tell (the `kill` program may be run). */
export function canCheckProcesses(): boolean {
  return Deno.build.os !== "windows" &&
    Deno.permissions.querySync({ name: "run", command: "kill" }).state === "granted";
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}

function inodeOf(path: string): number | null | undefined {
  try {
    return Deno.statSync(path).ino;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    throw e;
  }
}

/**
 * Follows `options.path` until the program ends or `signal` is aborted,
 * delivering events to `options.callbacks` as they arrive and lost data
 * through `lostEvents`. Waits for the file to appear; throws if `pid` is
 * given and the process is gone before the file is there.
 */
export async function watchRing(options: WatchOptions): Promise<WatchResult> {
  const { path, pid, signal } = options;
  const interval = options.intervalMs ?? 100;
  const alive = options.isAlive ?? processAlive;
  const result: WatchResult = {
    reason: "interrupted",
    events: 0,
    lostWords: 0,
    polls: 0,
    rings: [],
  };
  let ringStopped = false;
  const user = options.callbacks;
  const callbacks: ConsumerCallbacks = {
    ...user,
    message: (d, pos, words, isUser, type) => {
      if (isUser || type !== 0) result.events++;
      user.message?.(d, pos, words, isUser, type);
    },
    lifecycle: (d, ts, event, data) => {
      if (event === Lifecycle.EV_RING_STOP) ringStopped = true;
      user.lifecycle?.(d, ts, event, data);
    },
    lostEvents: (d, words) => {
      result.lostWords += words;
      user.lostEvents?.(d, words);
    },
  };

  let follower: RingFollower | null = null;
  let announced = false;
  while (follower === null) {
    if (signal?.aborted) return result;
    try {
      follower = RingFollower.open(path, options);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound || e instanceof RingNotReadyError)) throw e;
      if (pid !== undefined && !alive(pid)) {
        throw new Error(
          `process ${pid} is not running and ${path} ${
            e instanceof RingNotReadyError ? "was never completed" : "does not exist"
          }`,
        );
      }
      if (!announced) {
        announced = true;
        options.onWaiting?.(
          `waiting for ${path}` + (pid !== undefined ? ` (process ${pid})` : ""),
        );
      }
      await sleep(interval, signal);
    }
  }
  const inode = inodeOf(path);
  let lastPidCheck = -Infinity;

  const poll = (): number => {
    const before = result.events;
    follower!.poll(callbacks);
    result.polls++;
    const n = result.events - before;
    options.onPoll?.(n);
    return n;
  };
  const ended = (): WatchEndReason | null => {
    const now = inodeOf(path);
    if (now === undefined) return "removed";
    if (inode !== null && inode !== undefined && now !== null && now !== inode) return "replaced";
    if (pid !== undefined) {
      const now = performance.now();
      if (now - lastPidCheck >= 250) {
        lastPidCheck = now;
        if (!alive(pid)) return "exited";
      }
    }
    return null;
  };

  try {
    let stopSeenAt = -1;
    for (;;) {
      poll();
      if (signal?.aborted) return result;
      const reason = ended();
      if (reason !== null || (ringStopped && stopSeenAt >= 0)) {
        // What the program wrote before it ended is in the file: read it all.
        while (poll() > 0);
        result.reason = reason ?? "ring_stopped";
        return result;
      }
      // After EV_RING_STOP the runtime only tears down: one more interval.
      if (ringStopped && stopSeenAt < 0) stopSeenAt = result.polls;
      await sleep(interval, signal);
      if (signal?.aborted) return result;
    }
  } finally {
    for (let d = 0; d < follower.maxDomains; d++) {
      const tail = follower.tail(d);
      if (tail > 0) result.rings.push({ domain: d, position: follower.position(d), tail });
    }
    follower.close();
  }
}
