/**
 * Checks of memprof's invariants, meant to run in tests after every step of a simulation:
 * entry-table cursors and flags ({@linkcode checkDomainInvariants}) and the balance of callbacks
 * for every tracked block ({@linkcode AuditTracker}).
 *
 * @module
 */

import { CB_ALLOC, CB_DEALLOC, CB_PROMOTE, cbMask, type Entries, type Runner } from "./entries.ts";
import type { MemprofDomain } from "./memprof.ts";
import type { AllocationInfo, Tracker } from "./profile.ts";

/** Thrown when an invariant does not hold. */
export class InvariantError extends Error {
  /** Error class name. */
  override name = "InvariantError";
}

function fail(where: string, what: string): never {
  throw new InvariantError(`${where}: ${what}`);
}

/**
 * Checks one table (outside any callback): `young`, `evict`, `active` ≤ `size`; no deleted
 * entry before `evict`; no pending callback before `active`; no offset entry (offsets exist only
 * inside `sample_young`); no young block before `young`; promoted implies allocated young; no
 * running callbacks — but those of systhreads blocked inside a callback (`blocked`): each such
 * entry is its thread's running entry, and a blocked thread's own table may hold the offset
 * entries of the allocation it is sampling (`offsetsAllowed`).
 */
export function checkEntries(
  es: Entries,
  where: string,
  isYoung: (addr: number) => boolean,
  blocked: { readonly runners?: ReadonlySet<Runner>; readonly offsetsAllowed?: boolean } = {},
): void {
  if (!(es.young >= 0 && es.young <= es.size)) fail(where, `young ${es.young} > size ${es.size}`);
  if (!(es.evict >= 0 && es.evict <= es.size)) fail(where, `evict ${es.evict} > size ${es.size}`);
  if (!(es.active >= 0 && es.active <= es.size)) {
    fail(where, `active ${es.active} > size ${es.size}`);
  }
  if (es.length < es.size) fail(where, `array shorter than size`);
  if (es.size > 0 && es.capacity < es.size) fail(where, `capacity ${es.capacity} < ${es.size}`);
  for (let i = 0; i < es.size; i++) {
    const e = es.view(i);
    const at = `${where}[${i}]`;
    if (e.deleted && i < es.evict) fail(at, `deleted entry before evict ${es.evict}`);
    if (e.offset && !blocked.offsetsAllowed) fail(at, "offset entry outside sample_young");
    if (
      e.runner &&
      !(blocked.runners?.has(e.runner) && e.runner.runningTable === es &&
        e.runner.runningIndex === i)
    ) fail(at, "callback still running");
    if (e.promoted && !e.allocYoung) fail(at, "promoted but not allocated young");
    if (e.deleted) continue;
    if (i < es.young && e.block !== null && isYoung(e.block)) {
      fail(at, `young block before young cursor ${es.young}`);
    }
    if (e.deallocated && e.block !== null) fail(at, "deallocated entry still has a block");
    const cbs = e.callbacks;
    if ((cbs & cbMask(CB_PROMOTE)) && !(cbs & cbMask(CB_ALLOC))) {
      fail(at, "promote callback before alloc callback");
    }
    // A dealloc callback blocked in a systhread (passing the baton) is running still: its
    // entry goes when it returns.
    if ((cbs & cbMask(CB_DEALLOC)) && !(e.runner && blocked.runners?.has(e.runner))) {
      fail(at, "entry survived its dealloc callback");
    }
    if (i < es.active && es.config !== null) {
      const pending = !(cbs & cbMask(CB_ALLOC)) ||
        (e.promoted && !(cbs & cbMask(CB_PROMOTE))) ||
        (e.deallocated && !(cbs & cbMask(CB_DEALLOC)));
      if (pending) fail(at, `pending callback before active ${es.active}`);
    }
  }
}

/** Checks every table of a domain (own, threads', orphans'). */
export function checkDomainInvariants(d: MemprofDomain): void {
  const isYoung = (a: number) => d.host.isYoung(a);
  // Systhreads other than the current one may be blocked inside a callback (sampling suspended).
  const runners = new Set<Runner>();
  for (const th of d.threads) {
    if (th.runningTable === null) continue;
    if (th === d.current || !th.suspended) {
      fail("thread", "running a callback outside any callback");
    }
    runners.add(th);
  }
  for (const { label, entries } of d.tables()) {
    const owner = d.threads.find((th) => th.entries === entries);
    checkEntries(entries, label, isYoung, {
      runners,
      offsetsAllowed: owner !== undefined && owner !== d.current && owner.suspended,
    });
  }
  if (d.current && d.threads.indexOf(d.current) < 0) fail("domain", "current thread not listed");
}

/** What happened to one tracked block, as seen through its callbacks. */
export interface AuditRecord {
  /** Serial number (allocation order). */
  readonly id: number;
  /** Allocated in the minor heap? */
  readonly minor: boolean;
  /** The allocation info. */
  readonly info: AllocationInfo;
  /** Promote callback ran. */
  promoted: boolean;
  /** A dealloc callback ran. */
  deallocated: boolean;
  /** Tracking ended without dealloc (a callback returned None or raised). */
  untracked: boolean;
}

/** Token the audit tracker returns as tracking value, wrapping the inner tracker's value. */
export interface Token {
  /** The block's audit record. */
  readonly rec: AuditRecord;
  /** The inner tracker's value. */
  readonly inner: unknown;
}

/**
 * Wraps a tracker and checks, callback by callback, that every tracked block gets its callbacks
 * in a legal order: alloc, then at most one promote (minor blocks only), then at most one dealloc
 * of the right kind, and nothing after. {@linkcode assertBalanced} checks at the end that every
 * block still tracked got its dealloc.
 */
export class AuditTracker {
  /** One record per allocation callback that returned a value (or raised). */
  readonly records: AuditRecord[] = [];
  /** Ordered log of callbacks: `alloc_minor 3`, `promote 3`, … */
  readonly log: string[] = [];
  /** The wrapping tracker to give to `start`. */
  readonly tracker: Tracker<Token, Token>;
  #next = 0;

  /**
   * Wraps `inner`.
   * @param inner the tracker under audit (its values are passed through).
   */
  constructor(inner: Tracker<unknown, unknown>) {
    /** Runs the inner tracker's alloc or promote callback `f` for block `rec`: its value is the
     * block's new token; returning None or raising ends the tracking. */
    const tracked = (rec: AuditRecord, f: () => unknown): Token | undefined => {
      let v: unknown;
      try {
        v = f();
      } catch (e) {
        rec.untracked = true;
        throw e;
      }
      if (v === undefined || v === null) {
        rec.untracked = true;
        return undefined;
      }
      return { rec, inner: v };
    };
    const alloc = (minor: boolean) => (info: AllocationInfo): Token | undefined => {
      const rec: AuditRecord = {
        id: this.#next++,
        minor,
        info,
        promoted: false,
        deallocated: false,
        untracked: false,
      };
      this.records.push(rec);
      this.log.push(`${minor ? "alloc_minor" : "alloc_major"} ${rec.id}`);
      return tracked(rec, () => minor ? inner.allocMinor?.(info) : inner.allocMajor?.(info));
    };
    this.tracker = {
      allocMinor: alloc(true),
      allocMajor: alloc(false),
      promote: (t: Token) => {
        const r = t.rec;
        if (!r.minor || r.promoted || r.deallocated || r.untracked) {
          throw new InvariantError(`illegal promote of block ${r.id}`);
        }
        r.promoted = true;
        this.log.push(`promote ${r.id}`);
        return tracked(r, () => inner.promote?.(t.inner));
      },
      deallocMinor: (t: Token) => {
        const r = t.rec;
        if (!r.minor || r.promoted || r.deallocated || r.untracked) {
          throw new InvariantError(`illegal dealloc_minor of block ${r.id}`);
        }
        r.deallocated = true;
        this.log.push(`dealloc_minor ${r.id}`);
        inner.deallocMinor?.(t.inner);
      },
      deallocMajor: (t: Token) => {
        const r = t.rec;
        if ((r.minor && !r.promoted) || r.deallocated || r.untracked) {
          throw new InvariantError(`illegal dealloc_major of block ${r.id}`);
        }
        r.deallocated = true;
        this.log.push(`dealloc_major ${r.id}`);
        inner.deallocMajor?.(t.inner);
      },
    };
  }

  /** Records still tracked (alloc ran and returned a value, no dealloc yet). */
  live(): AuditRecord[] {
    return this.records.filter((r) => !r.deallocated && !r.untracked);
  }

  /**
   * Checks that every block whose tracking did not end early got exactly one dealloc callback:
   * alloc callbacks = dealloc callbacks + blocks untracked by a None or an exception.
   */
  assertBalanced(): void {
    const live = this.live();
    if (live.length) {
      throw new InvariantError(
        `${live.length} tracked blocks never got a dealloc callback (first: ${live[0].id})`,
      );
    }
  }
}
