/**
 * Lifetimes of the blocks a scenario allocates: each kept block is a GC root of the simulated
 * runtime, released when its lifetime ends (after a number of steps, at a named release, or
 * never). External allocations use the same lifetimes, ending in a free.
 * @module
 */
import type { Root, Runtime } from "../runtime/mod.ts";
import { type Release, ReleaseQueue } from "./schedule.ts";
import type { Lifetime } from "./spec.ts";

/** Keeps a block at `addr` of `wosize` words alive as its lifetime says. `reached` says the
 * block is reachable through another one just kept (a block of an unmarshalled value other
 * than its root): it is kept, but nothing is stored for it. */
export type Keeper = (addr: number, wosize: number, reached?: boolean) => void;

/** Reports a store of the block at `addr` into a slot of the major heap that held the block
 * at `old` (-1: nothing, or an immediate), for the remembered set. */
export type StoreHook = (addr: number, old: number) => void;

/** Where an exported program keeps the blocks of one keep statement: its keep site (an array
 * of the program's global data, lib/export/ocaml.ts) and the site's slots. */
export interface KeepSite {
  readonly site: number;
  readonly capacity: number;
}

/** The keep site of a block kept because another kept block holds it (a block of an
 * unmarshalled value other than its root): no slot of the program's, and no write barrier when
 * it goes (lib/runtime/roots.ts). */
const REACHED = -2;

/** The roots of one run and when they go. */
export class Lifetimes {
  readonly #due = new ReleaseQueue();
  readonly #named = new Map<string, (() => void)[]>();
  /** Releases run at every `release(name)` (rings), not only the first after a keep. */
  readonly #everyRelease = new Map<string, (() => void)[]>();
  readonly #forever: unknown[] = [];
  /** The exported program's `next_due`: the step whose tick runs `release_due` next. */
  #nextDue = Infinity;

  readonly #rt: Runtime;
  readonly #now: () => number;
  readonly #store: StoreHook;
  readonly #sites: ((l: Lifetime, owner?: object) => KeepSite | undefined) | undefined;

  /** `now()` is the number of the step being executed; `store` learns of every store a keep
   * makes in the program's global slots; `sites` gives the keep site of each keeper's lifetime
   * (in the exported program: its roots then say which slot holds their block, for the major
   * GC's marking), and of the step or callback action `owner` that keeps with it, if known. */
  constructor(
    rt: Runtime,
    now: () => number,
    store: StoreHook = () => {},
    sites?: (l: Lifetime, owner?: object) => KeepSite | undefined,
  ) {
    this.#rt = rt;
    this.#now = now;
    this.#store = store;
    this.#sites = sites;
  }

  /**
   * Releases what is due at step `step` (call at the start of each step). Returns whether the
   * exported program's `tick` runs `release_due` here, which polls once its releases are done.
   * It does at the step its `next_due` says, even when a named release (`release_site`) has
   * emptied the keep site whose block was due then: that release leaves `next_due` as it was,
   * and only `release_due` recomputes it, from the blocks still kept. So a block released by
   * name before its step still brings one poll at that step (the first such step only), and
   * none after.
   */
  tick(step: number): boolean {
    if (this.#nextDue > step) return false;
    this.#due.runDue(step);
    this.#due.dropWhile(released);
    this.#nextDue = this.#due.next;
    return true;
  }

  /** The step at whose start the next release is due (Infinity when none): steps before it
   * release nothing (and do not poll). */
  get nextDue(): number {
    return this.#nextDue;
  }

  /** Schedules `r` for the start of step `step` (`keep_steps`: `next_due` moves to it if it is
   * earlier). */
  #at(step: number, r: Release): void {
    this.#due.push(step, r);
    if (step < this.#nextDue) this.#nextDue = step;
  }

  /** `release(name)`: ends every lifetime waiting for `name`. */
  release(name: string): void {
    for (const release of this.#everyRelease.get(name) ?? []) release();
    const list = this.#named.get(name);
    if (list === undefined) return;
    this.#named.delete(name);
    for (const release of list) release();
  }

  /** A function keeping blocks alive as `l` says, or undefined for `drop`, for the step or
   * callback action `owner` (the exported program's keep statement it is). A `cycle` keeper
   * takes its lifetimes in turn, one per call. */
  keeper(l: Lifetime, owner?: object): Keeper | undefined {
    const at = l.kind === "drop" || l.kind === "cycle" ? undefined : this.#sites?.(l, owner);
    const site = at?.site ?? -1;
    const cap = Math.max(1, at?.capacity ?? 1);
    // The block each kept block links, for an unmarshalled value's blocks: the value's root
    // block holds the others, taken here as a chain through first fields.
    let last: Root | undefined;
    const linked = (r: Root, reached: boolean | undefined) => {
      if (reached && last !== undefined) last.link = r;
      last = r;
    };
    switch (l.kind) {
      case "drop":
        return undefined;
      case "forever": {
        let kt = 0; // keep_slot: the next free slot
        return (addr, wosize, reached) => {
          const r = this.#rt.root(addr, wosize, reached ? { site: REACHED } : { site, slot: kt++ });
          this.#forever.push(r);
          linked(r, reached);
          if (!reached) this.#store(addr, -1);
        };
      }
      case "steps":
        if (l.until === undefined) {
          // As below, the root itself in the release queue (no closure per block).
          const after = l.steps + 1;
          let kt = 0; // keep_steps: slots used in turn
          return (addr, wosize, reached) => {
            const r = this.#rt.root(
              addr,
              wosize,
              reached ? { site: REACHED } : { site, slot: kt++ % cap },
            );
            this.#at(this.#now() + after, r);
            linked(r, reached);
            if (!reached) this.#store(addr, -1);
          };
        }
      // falls through
      case "until": {
        // A fresh global slot per block, emptied (an immediate stored) at the release: in the
        // program, keep_steps' slots in turn, or keep_slot's from the first after each release.
        let kt = 0;
        const fifo = l.kind === "steps";
        if (!fifo && site >= 0) this.#onEveryRelease(l.name, () => kt = 0);
        return (addr, wosize, reached) => {
          const r = this.#rt.root(
            addr,
            wosize,
            reached ? { site: REACHED } : { site, slot: fifo ? kt++ % cap : kt++ },
          );
          this.end(l, () => r.release());
          linked(r, reached);
          if (!reached) this.#store(addr, -1);
        };
      }
      case "list": {
        // Each block links the one kept before it; the newest is stored in a global (slot 0 of
        // its site), whose write barrier darkens the block it held.
        let head: Root | undefined;
        return (addr, wosize, reached) => {
          const r = this.#rt.root(
            addr,
            wosize,
            reached ? { site: REACHED } : { site, slot: 0, link: head ?? null },
          );
          this.#waitFor(l.name, () => r.release());
          linked(r, reached);
          if (reached) return;
          this.#store(addr, head === undefined ? -1 : head.addr);
          if (head !== undefined && site >= 0) this.#rt.majorGc.writeBarrier(head.addr);
          head = r;
        };
      }
      case "ring": {
        // The program stores a value's root block in the slot (keep_ring); the other blocks of
        // an unmarshalled value live as long as it does, reached through it.
        const slots: (Root | undefined)[] = new Array(l.slots);
        const reachedOf: (Root[] | undefined)[] = new Array(l.slots);
        let k = 0;
        let held = -1; // the slot of the value whose blocks come now
        const dropReached = (j: number) => {
          for (const r of reachedOf[j] ?? []) r.release();
          reachedOf[j] = undefined;
        };
        if (l.name !== undefined) {
          this.#onEveryRelease(l.name, () => {
            slots.forEach((r, j) => {
              r?.clear();
              dropReached(j);
            });
          });
        }
        return (addr, wosize, reached) => {
          if (reached && held >= 0) {
            const r = this.#rt.root(addr, wosize, { site: REACHED });
            (reachedOf[held] ??= []).push(r);
            linked(r, reached);
            return;
          }
          let r = slots[k];
          const old = r === undefined ? -1 : r.addr;
          if (r === undefined) r = slots[k] = this.#rt.root(addr, wosize, { site, slot: k });
          else r.set(addr, wosize); // the block stored there before is released
          dropReached(k);
          r.link = null;
          linked(r, false);
          held = k;
          k = k + 1 === l.slots ? 0 : k + 1;
          this.#store(addr, old);
        };
      }
      case "cycle": {
        const keeps = l.lifetimes.map((x) => this.keeper(x, owner));
        let k = 0;
        return (addr, wosize, reached) => {
          const keep = keeps[k];
          k = k + 1 === keeps.length ? 0 : k + 1;
          keep?.(addr, wosize, reached);
        };
      }
    }
  }

  /** The fewest steps after which a block kept as `l` says may be due for release by the step
   * count (Infinity when none is: dropped, kept forever or until a named release). */
  delayOf(l: Lifetime): number {
    switch (l.kind) {
      case "steps":
        return l.steps;
      case "cycle":
        return l.lifetimes.reduce((m, x) => Math.min(m, this.delayOf(x)), Infinity);
      default:
        return Infinity;
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
        const once = new Once(release);
        // Released once the next `steps` steps have run: before the step after them.
        this.#at(this.#now() + l.steps + 1, once);
        if (l.until !== undefined) this.#waitFor(l.until, () => once.release());
        return;
      }
      case "until":
        return this.#waitFor(l.name, release);
      case "cycle":
      case "list":
      case "ring":
        throw new Error(`keep.${l.kind} applies to heap blocks only`); // refused by validation
    }
  }

  #onEveryRelease(name: string, release: () => void): void {
    const list = this.#everyRelease.get(name);
    if (list === undefined) this.#everyRelease.set(name, [release]);
    else list.push(release);
  }

  #waitFor(name: string, release: () => void): void {
    const list = this.#named.get(name);
    if (list === undefined) this.#named.set(name, [release]);
    else list.push(release);
  }
}

/** A release that runs once, whichever comes first: its step or its named release. */
class Once {
  #fn: (() => void) | null;
  constructor(fn: () => void) {
    this.#fn = fn;
  }
  /** Whether it ran. */
  get done(): boolean {
    return this.#fn === null;
  }
  /** Runs it, unless it ran. */
  release(): void {
    const fn = this.#fn;
    this.#fn = null;
    fn?.();
  }
}

/** Whether a scheduled release has nothing left to do: a block already released by name. */
function released(r: Release): boolean {
  return r instanceof Once && r.done;
}
