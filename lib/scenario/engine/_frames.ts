/**
 * Callstacks of a run: the frames of each thread's enclosing `call` steps, the `<harness>`
 * frames below them (see `RunOptions.harnessFrames`), and the cache allocation steps build
 * their callstacks with.
 * @module
 */
import type { Domain, Thread } from "../../runtime/mod.ts";
import type { RunOptions } from "../result.ts";

/** The placeholder frame of {@linkcode RunOptions.harnessFrames}. */
export const HARNESS_FRAME = "<harness>";

/** Runs of `<harness>` frames, shared, by length. */
const HARNESS_RUNS: (readonly string[])[] = [];

/** The frames `n` standard-library functions (`Domain.spawn`, `Domain.join`, …) put on a
 * step's callstack: with the export's harness (`exportHarness`), `n` `<harness>` frames, as the
 * exported program's own; without, none (a run's callstacks hold the scenario's frames only). */
export function stdlibFrames(exportHarness: boolean | undefined, n: number): readonly string[] {
  if (exportHarness !== true) n = 0;
  return HARNESS_RUNS[n] ??= new Array<string>(n).fill(HARNESS_FRAME);
}

/** The frames of a thread's enclosing `call` steps, outermost first. `version` changes at every
 * push and pop, so that allocation steps can reuse the callstack they built last time. */
interface FrameStack {
  readonly frames: string[];
  version: number;
}

/** The frame stacks of every thread of a run. */
export class Frames {
  readonly #stacks = new Map<Thread, FrameStack>();
  /** Runtime threads that run programs of their own (their callstacks start afresh). */
  readonly #programThreads = new Set<Thread>();
  readonly #harnessMain: readonly string[];
  readonly #harnessSpawned: readonly string[];
  readonly #harnessThread: readonly string[];
  /** Frames above the scenario's where an external allocation captures its callstack
   * (`RunOptions.harnessFrames.external`). */
  readonly externalFrames: readonly string[];
  readonly #mainDomain: Domain;
  #versions = 0;

  /** The frame stacks of a run whose main domain is `mainDomain`. */
  constructor(mainDomain: Domain, harness: RunOptions["harnessFrames"]) {
    const hf = harness ?? { main: 0, spawned: 0 };
    this.#harnessMain = new Array<string>(hf.main).fill(HARNESS_FRAME);
    this.#harnessSpawned = new Array<string>(hf.spawned).fill(HARNESS_FRAME);
    this.#harnessThread = new Array<string>(hf.thread ?? 0).fill(HARNESS_FRAME);
    this.externalFrames = new Array<string>(hf.external ?? 0).fill(HARNESS_FRAME);
    this.#mainDomain = mainDomain;
  }

  /** Thread `t` starts with no enclosing calls, or with those of `from` (a thread or domain
   * started by the thread `from`, inside its calls). */
  start(t: Thread, from?: Thread): void {
    const frames = from === undefined ? [] : [...this.#stack(from).frames];
    this.#stacks.set(t, { frames, version: ++this.#versions });
  }

  /** Thread `t` runs a program of its own: its callstacks have the thread harness below. */
  markProgram(t: Thread): void {
    this.#programThreads.add(t);
  }

  /** Thread `t` enters a call of `frame`. */
  push(t: Thread, frame: string): void {
    const fs = this.#stack(t);
    fs.frames.push(frame);
    fs.version = ++this.#versions;
  }

  /** Thread `t` leaves its innermost call. */
  pop(t: Thread): void {
    const fs = this.#stack(t);
    fs.frames.pop();
    fs.version = ++this.#versions;
  }

  /** The callstack of thread `t` for an allocation with extra frames `at` (innermost first). */
  stackOf(t: Thread, at: readonly string[]): string[] {
    const outer = this.#stack(t).frames;
    const harness = this.#programThreads.has(t)
      ? this.#harnessThread
      : t.domain === this.#mainDomain
      ? this.#harnessMain
      : this.#harnessSpawned;
    const all = outer.length === 0 && harness.length === 0
      ? at.slice()
      : [...harness, ...outer, ...at];
    return all.reverse();
  }

  /** `build(t)` for thread `t`, computed again only when the thread or its enclosing calls
   * changed since the last time (allocation steps build their callstacks with this). */
  cache<T>(build: (t: Thread) => T): (t: Thread) => T {
    let lastThread: Thread | undefined;
    let lastFs: FrameStack | undefined;
    let version = -1;
    let value!: T;
    return (t) => {
      if (t !== lastThread) {
        lastThread = t;
        lastFs = this.#stack(t);
        version = -1;
      }
      if (lastFs!.version !== version) {
        version = lastFs!.version;
        value = build(t);
      }
      return value;
    };
  }

  #stack(t: Thread): FrameStack {
    let fs = this.#stacks.get(t);
    if (fs === undefined) {
      fs = { frames: [], version: ++this.#versions };
      this.#stacks.set(t, fs);
    }
    return fs;
  }
}
