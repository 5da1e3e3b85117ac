/**
 * Lifetimes of the blocks a scenario allocates: each kept block is a GC root of the simulated
 * runtime, released when its lifetime ends (after a number of steps, at a named release, or
 * never). External allocations use the same lifetimes, ending in a free.
 * @module
 */
import type { Runtime } from "../runtime/mod.ts";
import { ReleaseQueue } from "./schedule.ts";
import type { Lifetime } from "./spec.ts";

/** Keeps a block at `addr` of `wosize` words alive as its lifetime says. */
export type Keeper = (addr: number, wosize: number) => void;

/** The roots of one run and when they go. */
export class Lifetimes {
  private readonly due = new ReleaseQueue();
  private readonly named = new Map<string, (() => void)[]>();
  private readonly forever: unknown[] = [];

  /** `now()` is the number of the step being executed. */
  constructor(private readonly rt: Runtime, private readonly now: () => number) {}

  /** Releases what is due at step `step` (call at the start of each step). */
  tick(step: number): void {
    if (this.due.next <= step) this.due.runDue(step);
  }

  /** `release(name)`: ends every lifetime waiting for `name`. */
  release(name: string): void {
    const list = this.named.get(name);
    if (list === undefined) return;
    this.named.delete(name);
    for (const release of list) release();
  }

  /** A function keeping blocks alive as `l` says, or undefined for `drop`. A `cycle` keeper
   * takes its lifetimes in turn, one per call. */
  keeper(l: Lifetime): Keeper | undefined {
    switch (l.kind) {
      case "drop":
        return undefined;
      case "forever":
        return (addr, wosize) => {
          this.forever.push(this.rt.root(addr, wosize));
        };
      case "steps":
        return (addr, wosize) => {
          const r = this.rt.root(addr, wosize);
          this.end(l, () => r.release());
        };
      case "until":
        return (addr, wosize) => {
          const r = this.rt.root(addr, wosize);
          this.end(l, () => r.release());
        };
      case "cycle": {
        const keeps = l.lifetimes.map((x) => this.keeper(x));
        let k = 0;
        return (addr, wosize) => {
          const keep = keeps[k];
          k = k + 1 === keeps.length ? 0 : k + 1;
          keep?.(addr, wosize);
        };
      }
    }
  }

  /** Runs `release` (once) when lifetime `l` ends: now for `drop`, never for `forever`. */
  end(l: Lifetime, release: () => void): void {
    switch (l.kind) {
      case "drop":
        return release();
      case "forever":
        return;
      case "steps": {
        let done = false;
        const once = () => {
          if (!done) release();
          done = true;
        };
        // Released once the next `steps` steps have run: before the step after them.
        this.due.push(this.now() + l.steps + 1, once);
        if (l.until !== undefined) this.waitFor(l.until, once);
        return;
      }
      case "until":
        return this.waitFor(l.name, release);
      case "cycle":
        throw new Error("keep.cycle applies to heap blocks only"); // refused by validation
    }
  }

  private waitFor(name: string, release: () => void): void {
    const list = this.named.get(name);
    if (list === undefined) this.named.set(name, [release]);
    else list.push(release);
  }
}
