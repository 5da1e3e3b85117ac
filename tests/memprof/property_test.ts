/**
 * Random programs (allocations, roots, GCs, domains, threads, profiles, callbacks that raise or
 * stop) with the invariant checker after every step and the callback balance at the end.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { type Domain, type Root, Runtime } from "../../lib/runtime/mod.ts";
import { discard, type Profile, ProfileStatus } from "../../lib/memprof/mod.ts";
import { AuditTracker } from "../../lib/memprof/invariants.ts";
import { checkAll } from "./helpers.ts";

class Boom extends Error {}

type Cmd =
  | { op: "alloc"; size: number }
  | { op: "comb"; lens: number[] }
  | { op: "rtalloc"; size: number }
  | { op: "custom"; mem: number }
  | { op: "keep"; slot: number }
  | { op: "drop"; slot: number }
  | { op: "minor" | "full" | "compact" | "major" | "poll" | "loop" }
  | { op: "spawn" | "terminate" | "domain"; k: number }
  | { op: "thread" | "switch" | "exit"; k: number }
  | { op: "start"; rate: number; mode: number }
  | { op: "stop" | "discard" };

/** `{ op, size }` with a size in [min, max]. */
const sizeCmd = (op: "alloc" | "rtalloc", min: number, max: number): fc.Arbitrary<Cmd> =>
  fc.integer({ min, max }).map((size) => ({ op, size }));
/** `{ op, slot }` with one of the 8 root slots. */
const slotCmd = (op: "keep" | "drop"): fc.Arbitrary<Cmd> =>
  fc.integer({ min: 0, max: 7 }).map((slot) => ({ op, slot }));

const cmd: fc.Arbitrary<Cmd> = fc.oneof(
  { weight: 6, arbitrary: sizeCmd("alloc", 0, 300) },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant("comb" as const),
      lens: fc.array(fc.integer({ min: 1, max: 8 }), { minLength: 1, maxLength: 4 }),
    }),
  },
  { weight: 2, arbitrary: sizeCmd("rtalloc", 1, 20) },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant("custom" as const),
      mem: fc.integer({ min: 1, max: 500 }),
    }),
  },
  { weight: 4, arbitrary: slotCmd("keep") },
  { weight: 2, arbitrary: slotCmd("drop") },
  {
    weight: 4,
    arbitrary: fc.record({
      op: fc.constantFrom(
        "minor" as const,
        "full" as const,
        "compact" as const,
        "major" as const,
        "poll" as const,
        "loop" as const,
      ),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constantFrom("spawn" as const, "terminate" as const, "domain" as const),
      k: fc.nat(5),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constantFrom("thread" as const, "switch" as const, "exit" as const),
      k: fc.nat(5),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant("start" as const),
      rate: fc.constantFrom(0.01, 0.1, 0.5, 1),
      mode: fc.nat(4),
    }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constantFrom("stop" as const, "discard" as const) }) },
);

function run(cmds: Cmd[]): void {
  const rt = new Runtime({ minorHeapWords: 2048 });
  let d: Domain = rt.mainDomain;
  const slots: Root[] = Array.from({ length: 8 }, () => rt.root());
  let last = -1;
  let lastSize = 0;
  let raising = true;
  const profiles: { p: Profile; audit: AuditTracker }[] = [];
  let calls = 0;

  const guarded = (f: () => void) => {
    try {
      f();
    } catch (e) {
      if (!(e instanceof Boom)) throw e;
    }
  };

  for (const c of cmds) {
    guarded(() => {
      switch (c.op) {
        case "alloc":
          last = d.alloc(c.size);
          lastSize = c.size;
          break;
        case "comb":
          last = d.allocCombined(c.lens);
          lastSize = c.lens[0];
          break;
        case "rtalloc":
          last = d.allocFromRuntime(c.size);
          lastSize = c.size;
          break;
        case "custom":
          last = d.allocCustom(2, c.mem);
          lastSize = 2;
          break;
        case "keep":
          if (last >= 0 && (rt.isYoung(last) ? last >= d.youngPtr : true)) {
            slots[c.slot].set(last, lastSize);
          }
          break;
        case "drop":
          slots[c.slot].clear();
          break;
        case "minor":
          d.minorGc();
          break;
        case "full":
          d.fullMajor();
          break;
        case "compact":
          d.compact();
          break;
        case "major":
          d.majorGc();
          break;
        case "poll":
          d.processPendingActions();
          break;
        case "loop":
          for (let i = 0; i < 500; i++) d.alloc(i % 5);
          break;
        case "spawn":
          if (rt.domains.length < 4) rt.spawnDomain(d);
          break;
        case "terminate": {
          const others = rt.domains.filter((x) => x !== rt.mainDomain);
          if (others.length) {
            const victim = others[c.k % others.length];
            if (victim.current.memprof.suspended) break;
            rt.terminateDomain(victim);
            if (victim === d) d = rt.mainDomain;
          }
          break;
        }
        case "domain":
          d = rt.domains[c.k % rt.domains.length];
          break;
        case "thread":
          if (d.threads.length < 4) d.createThread();
          break;
        case "switch":
          d.switchTo(d.threads[c.k % d.threads.length]);
          break;
        case "exit":
          if (d.threads.length > 1) d.threads[c.k % d.threads.length].exit();
          break;
        case "start": {
          if (d.memprof.sampling()) break;
          const mode = c.mode;
          const audit = new AuditTracker({
            allocMinor: (i) => {
              calls++;
              if (raising && mode === 1 && calls % 3 === 0) throw new Boom();
              if (mode === 2 && calls % 4 === 0) return undefined;
              if (raising && mode === 3 && calls % 5 === 0) d.memprofStop();
              return i.size;
            },
            allocMajor: (i) => i.size,
            promote: (x) => {
              if (raising && mode === 1 && ++calls % 7 === 0) throw new Boom();
              return x;
            },
          });
          try {
            const p = d.memprofStart({
              samplingRate: c.rate,
              callstackSize: 3,
              tracker: audit.tracker,
            });
            profiles.push({ p, audit });
          } catch (e) {
            if (!(e instanceof Error && e.message.includes("already started"))) throw e;
          }
          break;
        }
        case "stop":
          try {
            d.memprofStop();
          } catch (e) {
            if (!(e instanceof Error && e.message.includes("no profile running"))) throw e;
          }
          break;
        case "discard": {
          const s = profiles.find((x) => x.p.status === ProfileStatus.STOPPED);
          if (s) discard(s.p);
          break;
        }
      }
    });
    checkAll(rt);
  }

  // Quiesce: no more raising, every thread runs its pending callbacks, every block dies.
  raising = false;
  for (const dom of [...rt.domains]) {
    for (const t of [...dom.threads]) {
      dom.switchTo(t);
      dom.processPendingActions();
    }
    if (dom.memprof.sampling()) dom.memprofStop();
  }
  for (const dom of rt.domains.filter((x) => x !== rt.mainDomain)) rt.terminateDomain(dom);
  for (const s of slots) s.release();
  const main = rt.mainDomain;
  for (let k = 0; k < 2; k++) {
    for (const t of [...main.threads]) {
      main.switchTo(t);
      main.fullMajor();
    }
  }
  checkAll(rt);
  for (const { p, audit } of profiles) {
    if (p.status !== ProfileStatus.DISCARDED) audit.assertBalanced();
  }
  assert.equal(rt.memprofShared.orphans, null);
  const st = rt.memprofShared.stats;
  coverage.alloc += st.alloc;
  coverage.promote += st.promote;
  coverage.dealloc += st.dealloc;
  coverage.exceptions += st.exceptions;
  coverage.orphaned += rt.minorCollections > 0 && profiles.length > 0 ? 1 : 0;
}

const coverage = { alloc: 0, promote: 0, dealloc: 0, exceptions: 0, orphaned: 0 };

Deno.test("random programs keep memprof's invariants and balance every tracked block", () => {
  fc.assert(fc.property(fc.array(cmd, { minLength: 30, maxLength: 150 }), (cmds) => run(cmds)), {
    numRuns: 200,
    seed: 0x5eed,
  });
  // The generated programs do exercise every kind of callback.
  assert.ok(coverage.alloc > 1000 && coverage.promote > 50 && coverage.dealloc > 500);
  assert.ok(coverage.exceptions > 10);
});
